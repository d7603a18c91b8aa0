//! Throughput of the pipeline's two model-bound stages at quickstart size, with the crates composed as the examples
//! compose them: critic-pair sampling from π₀ (expert states per second; act-pairs + act-model) and lockstep
//! on-line evaluation (environment steps per second; act-eval + act-model + act-alfworld).
//!
//! The policy is the quickstart's `tiny` Qwen3 at its initialisation on a BPE tokenizer trained on the states'
//! text: an untrained model writes until `max_new_tokens`, the most expensive case, so the figures bound the
//! quickstart's stages from below.
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
use act_model::{ChatTemplate, ChatTokenizer, ModelPolicy, Qwen3, Qwen3Config};
use act_pairs::{PairBuilder, PairConfig};
use burn::prelude::Device;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const ENVIRONMENT: &str = "the ALFRED Embodied Environment";
/// As the quickstart: compact prompts, 24-token actions.
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

criterion_group! {
    name = benches;
    // act-eval's plotters build (embedded fonts, no system font lookup) leaves criterion's charts without a
    // font in this package; the numbers do not need them.
    config = Criterion::default().without_plots();
    targets = bench_stages
}
criterion_main!(benches);
