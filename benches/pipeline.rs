//! Throughput of the pipeline's two model-bound stages at tiny size, with the crates composed as the examples
//! compose them: critic-pair sampling from π₀ (expert states per second; act-pairs + act-model) and lockstep
//! on-line evaluation (environment steps per second; act-eval + act-model + act-alfworld).
//!
//! The policy is the `tiny` Qwen3 at its initialisation on a BPE tokenizer trained on the states' text, with
//! compact prompts: an untrained model writes until `max_new_tokens`, the most expensive case.
//!
//! `il/...` is one SFT step over the IL data of 8 training games, in the compact format (one sequence per expert
//! state) and the conversation format with and without prefix packing (one sequence per episode): the throughput
//! is in supervised targets (expert actions trained on), and each line's tokens per step are printed.
//!
//! ```sh
//! cargo bench --bench pipeline
//! ```

use act_alfworld::{AlfworldConfig, AlfworldFactory};
use act_core::{Prompter, SamplingParams, Split};
use act_eval::{Agent, EpisodeEvalConfig, evaluate_episodes};
use act_examples::config::PromptStyle;
use act_examples::pipeline::expert_trajectories;
use act_examples::prompts::prompt_config;
use act_grpo::{SftConfig, SftTrainer};
use act_model::{ChatTemplate, ChatTokenizer, ModelPolicy, Qwen3, Qwen3Config};
use act_pairs::{PairBuilder, PairConfig};
use burn::prelude::Device;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const ENVIRONMENT: &str = "the ALFRED Embodied Environment";
/// Actions of up to 24 tokens, as the pipeline generates them.
const ACTION_TOKENS: usize = 24;

fn bench_stages(c: &mut Criterion) {
    let factory = AlfworldFactory::new(AlfworldConfig::default().with_train_size(4));
    let train = expert_trajectories(&factory, Split::Train, 4, 0).expect("expert trajectories");
    let states: usize = train.iter().map(|t| t.steps.len()).sum();
    let prompt = prompt_config(PromptStyle::Compact, ENVIRONMENT, false);
    let prompter = Prompter::new(prompt.clone()).expect("prompter");
    let texts: Vec<String> =
        train.iter().flat_map(|t| t.states(prompt.history_len)).map(|(s, _)| prompter.act(&s)).collect();
    let tokenizer = ChatTokenizer::train_bpe(texts, 1024).expect("tokenizer");
    let config = Qwen3Config::preset("tiny", tokenizer.vocab_size()).expect("preset");
    let model = Qwen3::init(&config, 0, &Device::flex()).expect("model");
    let policy = ModelPolicy::new("π₀", model, tokenizer, ChatTemplate::default()).with_batch_size(64);
    let sampling = SamplingParams::default().with_max_new_tokens(ACTION_TOKENS).with_stop("</action>");

    let mut group = c.benchmark_group("pipeline");
    group.sample_size(10);
    group.throughput(Throughput::Elements(states as u64));
    let pairs = PairConfig::default().with_k(4).with_seed(0).with_prompt(prompt.clone()).with_sampling(sampling);
    let builder = PairBuilder::new(pairs.with_fallback(true).with_parallel(false), &policy).expect("pair builder");
    group.bench_function(format!("pairs/k4/{states}-states"), |b| b.iter(|| builder.build(&train, 0).expect("pairs")));

    let episodes = 16;
    let step_budget = 10;
    let eval = EpisodeEvalConfig::new(Split::EvalOutOfDistribution)
        .with_episodes(episodes)
        .with_step_budget(step_budget)
        .with_batch_size(episodes)
        .with_prompt(prompt)
        .with_sampling(SamplingParams::greedy().with_max_new_tokens(ACTION_TOKENS).with_stop("</action>"));
    // Greedy decoding: every run plays the same steps, so one run counts them.
    let steps: usize = evaluate_episodes(&factory, Agent::Policy(&policy), &eval)
        .expect("evaluation")
        .results
        .iter()
        .map(|r| r.steps)
        .sum();
    group.throughput(Throughput::Elements(steps as u64));
    group.bench_function(format!("eval/lockstep-{episodes}-episodes-{steps}-steps"), |b| {
        b.iter(|| evaluate_episodes(&factory, Agent::Policy(&policy), &eval).expect("evaluation"))
    });
    group.finish();
}

fn bench_il_formats(c: &mut Criterion) {
    let games = 8;
    let factory = AlfworldFactory::new(AlfworldConfig::default().with_train_size(games));
    let train = expert_trajectories(&factory, Split::Train, games, 0).expect("expert trajectories");
    let mut group = c.benchmark_group("il");
    group.sample_size(10);
    for (style, pack, preset) in [
        (PromptStyle::Compact, false, "tiny"),
        (PromptStyle::Conversation, false, "tiny"),
        (PromptStyle::Conversation, true, "tiny"),
        // The quickstart's model and format.
        (PromptStyle::Conversation, true, "small-400k"),
        // Unpacked, small-1m takes about 30 s a step here: only the packed format is timed.
        (PromptStyle::Conversation, true, "small-1m"),
    ] {
        let prompt = prompt_config(style, ENVIRONMENT, false);
        let prompter = Prompter::new(prompt.clone()).expect("prompter");
        let samples: Vec<_> = train
            .iter()
            .flat_map(|t| t.states(prompt.history_len))
            .map(|(s, a)| prompter.sft_sample(&s, a, None))
            .collect();
        let texts = samples.iter().flat_map(|s| [s.prompt.clone(), s.completion.clone()]);
        let tokenizer = ChatTokenizer::train_bpe(texts, 1024).expect("tokenizer");
        let shape = Qwen3Config::preset(preset, tokenizer.vocab_size()).expect("preset");
        let model = Qwen3::init(&shape, 0, &Device::flex().autodiff()).expect("model");
        // One step trains every sequence once: the whole data set is the batch.
        let base = SftConfig::default().with_prefix_packing(pack).with_max_length(0);
        let sequences = act_grpo::pack_prefixes(
            &samples
                .iter()
                .map(|s| {
                    let e = tokenizer.encode_chat(&ChatTemplate::default(), &s.prompt, &s.completion).expect("encode");
                    let prompt_len = e.prompt_ids.len();
                    (e.prompt_ids.into_iter().chain(e.completion_ids).collect::<Vec<u32>>(), prompt_len)
                })
                .collect::<Vec<_>>(),
            0,
        );
        let batch = if pack { sequences.len() } else { samples.len() };
        let config = base.with_batch_size(batch).with_lr(1e-4).with_total_steps(1_000_000);
        let mut trainer = SftTrainer::new(config, model, tokenizer, ChatTemplate::default(), samples.clone(), vec![])
            .expect("trainer");
        let first = trainer.step().expect("step");
        let tokens = (first.tokens_per_second * first.seconds).round();
        let name = format!("{}-{}/{preset}", slug(style), if pack { "packed" } else { "unpacked" });
        eprintln!("il/{name}: {} samples in {batch} sequences, {tokens} tokens per step", first.samples);
        group.throughput(Throughput::Elements(first.samples as u64));
        group.bench_function(name, |b| b.iter(|| trainer.step().expect("step")));
    }
    group.finish();
}

fn slug(style: PromptStyle) -> &'static str {
    match style {
        PromptStyle::Compact => "compact",
        PromptStyle::Conversation => "conversation",
        PromptStyle::Paper => "paper",
    }
}

criterion_group! {
    name = benches;
    // act-eval's plotters build (embedded fonts, no system font lookup) leaves criterion's charts without a
    // font in this package; the numbers do not need them.
    config = Criterion::default().without_plots();
    targets = bench_stages, bench_il_formats
}
criterion_main!(benches);
