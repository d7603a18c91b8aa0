//! Competence on a small fixed set of native ALFWorld games: IL (packed conversation episodes, as the pipeline
//! trains them) reaches at least 90% greedy next-action accuracy on its own training states. A capacity and wiring
//! check of tokenizer, packing, trainer, generation and parsing together, not a generalisation result.

use act_core::{Prompter, SamplingParams, SftSample, Split};
use act_eval::{ItemEvalConfig, NextActionItem, evaluate_next_action};
use act_examples::config::{PromptStyle, SftStageConfig, TrainingConfig};
use act_examples::experiment::Benchmark;
use act_examples::pipeline::expert_trajectories;
use act_examples::prompts::prompt_config;
use act_examples::stages::{ModelContext, StageRun, StartFrom, load_model, model_dir};
use act_grpo::ScheduleKind;
use act_model::{ChatTemplate, ChatTokenizer, ModelPolicy, Qwen3Config};

const GAMES: usize = 4;

fn context(corpus: Vec<String>) -> ModelContext {
    ModelContext {
        tokenizer: ChatTokenizer::train_bpe(corpus, 512).unwrap(),
        template: ChatTemplate::default(),
        backend: "flex".parse().unwrap(),
    }
}

fn stage<'a>(
    name: &'static str,
    dir: &std::path::Path,
    context: &'a ModelContext,
    training: &'a TrainingConfig,
    start: StartFrom,
) -> StageRun<'a> {
    StageRun { name, dir: dir.join(name), context, training, start, seed: 3, probe: None }
}

#[test]
fn il_fits_its_training_states() {
    let bench = Benchmark::native_alfworld(GAMES);
    let config = prompt_config(PromptStyle::Conversation, &bench.environment, false);
    let prompter = Prompter::new(config.clone()).unwrap();
    let train = expert_trajectories(&bench.factory, Split::Train, GAMES, 0).unwrap();
    let samples: Vec<SftSample> = train
        .iter()
        .flat_map(|t| t.states(config.history_len))
        .map(|(s, a)| prompter.sft_sample(&s, a, None))
        .collect();
    let context = context(samples.iter().flat_map(|s| [s.prompt.clone(), s.completion.clone()]).collect());
    let training = TrainingConfig { max_length: 1024, checkpoint_every: 0, ..TrainingConfig::default() };
    let shape = Qwen3Config::preset("tiny", context.tokenizer.vocab_size()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let il =
        SftStageConfig { steps: 120, batch_size: GAMES, lr: 1e-2, schedule: ScheduleKind::Cosine, warmup_steps: 10 };
    stage("il", dir.path(), &context, &training, StartFrom::Fresh(shape)).sft(&il, samples).unwrap();

    let model = load_model(&model_dir(&dir.path().join("il")), &context.device().unwrap()).unwrap();
    let policy = ModelPolicy::new("IL", model, context.tokenizer.clone(), context.template.clone());
    let items: Vec<NextActionItem> =
        train.iter().flat_map(|t| NextActionItem::from_trajectory(t, config.history_len)).collect();
    let sampling = SamplingParams::greedy().with_max_new_tokens(24).with_stop("</action>");
    let eval = ItemEvalConfig::default().with_prompt(config).with_sampling(sampling).with_progress(false);
    let report = evaluate_next_action(&policy, &items, &eval).unwrap();
    let accuracy = report.summary.accuracy.value;
    assert!(accuracy >= 0.9, "IL next-action accuracy on its {} training states: {accuracy:.3}", items.len());
}
