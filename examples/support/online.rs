//! On-line RL in the environment: episode-level GRPO and GiGPO as verl-agent trains them, ActGuide-RL's
//! guided GRPO ([`crate::guided`]) and ICRL's solver and critic ([`crate::icrl`]). Each iteration plays groups of episodes with the current policy through
//! act-rollout (token ids and sampled log-probs kept), turns the outcomes into per-step advantages with
//! act-grpo's `gigpo_advantages`, and makes one update on every turn with `GrpoTrainer::update_episodes` (an
//! episode's turns packed into one sequence).
//!
//! Each iteration writes a line of the stage's `trainer/metrics.jsonl`: success and invalid-action rate of the
//! iteration's episodes, environment steps (this iteration's and the run's), the signal (groups without reward
//! variance, step-group sizes), the update's loss, KL and ratio, and where the wall time went (generation,
//! environment and driver, update). The run resumes from its last checkpoint like every stage: iteration `k`
//! plays tasks and samples drawn from `derive_seed(seed, k)`.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use act_core::{EnvironmentFactory, PromptConfig, Prompter, SamplingParams, TaskRef, derive_seed, rng_from_seed};
use act_grpo::{
    EpisodeRecord, GigpoConfig, GrpoConfig, GrpoTrainer, PreparedSequence, ScheduleKind, StepRecord, gigpo_advantages,
};
use act_model::Qwen3;
use act_rollout::{ActError, Actor, Decision, EpisodeSpec, PlayedEpisode, PolicyActor, Rollout, RolloutConfig, View};
use burn::module::Module;
use indicatif::{ProgressBar, ProgressStyle};
use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::config::{OnlineAlgorithm, OnlineReward, OnlineRlConfig};
use crate::stages::{BoxError, StageRecord, StageRun, StageTrainer, finish, latest_checkpoint, truncate_metrics};

/// The per-iteration metrics plotted in an on-line stage's `curves.svg`.
const ONLINE_CURVES: [&str; 8] = [
    "success",
    "score",
    "invalid_action_rate",
    "zero_std_episode_group_fraction",
    "hard_group_fraction",
    "rescued_group_fraction",
    "kl",
    "loss",
];

/// What one iteration did: a line of the stage's `trainer/metrics.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OnlineIterationMetrics {
    /// The iteration just completed (1-based; the trainer's step).
    pub step: usize,
    /// Episodes played.
    pub episodes: usize,
    /// Their success rate.
    pub success: f64,
    /// Their mean final score (WebShop's purchase reward; 0 or 1 on ALFWorld).
    #[serde(default)]
    pub score: f64,
    /// Invalid actions per step.
    pub invalid_action_rate: f64,
    /// Environment steps of this iteration.
    pub env_steps: usize,
    /// Environment steps of the run so far.
    pub env_steps_total: usize,
    /// Episode groups whose returns were all equal (no episode-level signal).
    pub zero_std_episode_group_fraction: f64,
    /// Step groups (anchor states) with a single member.
    pub singleton_step_group_fraction: f64,
    /// Mean members of a step group.
    pub mean_step_group_size: f64,
    /// Turns trained on.
    pub turns: usize,
    /// The update's loss.
    pub loss: f64,
    /// Mean per-token KL to the starting model.
    pub kl: f64,
    /// Mean importance ratio against the behaviour log-probs.
    pub ratio_mean: f64,
    /// Mean predictive entropy of the trained tokens.
    pub entropy: f64,
    /// Gradient norm before clipping.
    pub grad_norm: f64,
    /// Seconds in the policy's generation calls.
    pub generation_seconds: f64,
    /// Seconds of the rollout outside generation: environments (stepped in parallel), prompts, the driver.
    pub environment_seconds: f64,
    /// Seconds of the update (advantages, packing, forward, backward, optimizer).
    pub update_seconds: f64,
    /// Environment steps per second of the rollout (generation included).
    pub env_steps_per_second: f64,
    /// Groups without a rewarded episode in the policy's own rollout (ActGuide-RL guides these).
    #[serde(default)]
    pub hard_group_fraction: f64,
    /// ActGuide-RL: hard groups whose guided episodes earned a reward, of all groups.
    #[serde(default)]
    pub rescued_group_fraction: f64,
    /// ActGuide-RL: mean hint length (reference actions shown) over the hard groups.
    #[serde(default)]
    pub mean_hint_length: f64,
    /// ActGuide-RL: mean length of the hard groups' expert plans.
    #[serde(default)]
    pub mean_plan_length: f64,
    /// ActGuide-RL: probe episodes played (included in `env_steps`).
    #[serde(default)]
    pub probe_episodes: usize,
    /// ActGuide-RL: success of the guided episodes.
    #[serde(default)]
    pub guided_success: f64,
    /// ActGuide-RL: seconds of guided play (the expert's plans, the probes and the guided episodes).
    #[serde(default)]
    pub guidance_seconds: f64,
    /// ICRL: critiques written (one per failed first-round episode).
    #[serde(default)]
    pub critiques: usize,
    /// ICRL: the fraction of critiques with a parseable `<critic>` block.
    #[serde(default)]
    pub critique_parse_rate: f64,
    /// ICRL: the critics' mean reward.
    #[serde(default)]
    pub critic_reward: f64,
    /// ICRL: success of the second round (the retries with tips).
    #[serde(default)]
    pub second_round_success: f64,
    /// ICRL: the fraction of samples (rounds and critiques) the filter kept out of the update.
    #[serde(default)]
    pub masked_fraction: f64,
}

/// An actor that measures the time its inner actor spends deciding (the policy's generation).
struct Timed<A> {
    inner: A,
    seconds: Mutex<f64>,
}

impl<A: Actor> Actor for Timed<A> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn act(&self, views: &mut [View<'_>], seed: u64) -> Result<Vec<Option<Decision>>, ActError> {
        let started = Instant::now();
        let decisions = self.inner.act(views, seed);
        if let Ok(mut seconds) = self.seconds.lock() {
            *seconds += started.elapsed().as_secs_f64();
        }
        decisions
    }
}

/// The GiGPO settings of `config` for `algorithm`.
fn advantage_config(config: &OnlineRlConfig, algorithm: OnlineAlgorithm) -> GigpoConfig {
    let step_weight = match algorithm {
        OnlineAlgorithm::Gigpo => config.step_weight,
        OnlineAlgorithm::EpisodeGrpo | OnlineAlgorithm::ActGuide | OnlineAlgorithm::Icrl => 0.0,
    };
    GigpoConfig { gamma: config.gamma, step_weight, invalid_penalty: config.invalid_penalty, ..GigpoConfig::default() }
}

/// The estimator's view of played episodes: the observation an action answered is its anchor; the last step
/// carries `win_reward` times the win (0 or 1) or, with [`OnlineReward::Score`], times the final score.
fn episode_records(played: &[PlayedEpisode], win_reward: f64, reward: OnlineReward) -> Vec<EpisodeRecord<&str>> {
    played
        .iter()
        .map(|episode| {
            let last = episode.turns.len().saturating_sub(1);
            let outcome = match reward {
                OnlineReward::Win => f64::from(u8::from(episode.won())),
                OnlineReward::Score => episode.trajectory.outcome.score,
            };
            EpisodeRecord {
                group: episode.spec.group as u64,
                steps: episode
                    .turns
                    .iter()
                    .zip(&episode.trajectory.steps)
                    .enumerate()
                    .map(|(t, (turn, step))| StepRecord {
                        anchor: step.observation.as_str(),
                        reward: if t == last { win_reward * outcome } else { 0.0 },
                        invalid: !turn.valid,
                    })
                    .collect(),
            }
        })
        .collect()
}

/// On-line RL as a stage trainer: one iteration per trainer step.
struct OnlineTrainer<'a, F: EnvironmentFactory> {
    trainer: GrpoTrainer,
    run: &'a StageRun<'a>,
    factory: &'a F,
    prompter: Prompter,
    config: &'a OnlineRlConfig,
    advantages: GigpoConfig,
    /// Whether hard groups are played again with hints (ActGuide-RL).
    guided: bool,
    /// Whether failed episodes are critiqued and retried (ICRL).
    icrl: bool,
    tasks: &'a [TaskRef],
    log: act_grpo::MetricsLog,
    env_steps_total: usize,
    /// The success of the last iteration played, for the bar.
    last_success: Option<f64>,
    progress: ProgressBar,
}

/// A bar over the stage's episodes on stderr (hidden when stderr is not a terminal), its message the live
/// success of the iteration being played and the last iteration's.
fn episode_bar(iterations: usize, episodes_per_iteration: usize, done: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new((iterations * episodes_per_iteration) as u64);
    if let Ok(style) = ProgressStyle::with_template("    [{bar:30}] {pos}/{len} episodes ({eta} left) {msg}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_position((done * episodes_per_iteration) as u64);
    bar
}

/// A sampled completion as a turn of an update, trained under the prompt it was sampled after.
fn prepared(completion: &act_core::Completion, advantage: f64) -> PreparedSequence {
    PreparedSequence {
        prompt_ids: completion.prompt_ids.clone(),
        completion_ids: completion.token_ids.clone(),
        advantage,
        behaviour_log_probs: Some(completion.log_probs.clone()),
        training_prompt_ids: None,
        token_weights: None,
    }
}

/// What ICRL's update was made of, for the iteration's metrics.
#[derive(Debug, Default)]
struct IcrlStats {
    critiques: usize,
    parsed: usize,
    critic_reward: f64,
    second_round_success: f64,
    samples: usize,
    masked: usize,
}

impl<F: EnvironmentFactory> OnlineTrainer<'_, F> {
    /// The prompt ids `unguided` (the policy's prompts without hints or tips) gives the state before `step` of
    /// `episode`.
    fn unguided_prompt_ids(
        &self,
        unguided: &PolicyActor<'_>,
        episode: &PlayedEpisode,
        step: usize,
    ) -> Result<Vec<u32>, BoxError> {
        let state = episode.trajectory.state_at(step, usize::MAX).ok_or("a turn without its step")?;
        let prompt = unguided.query(&state).prompt;
        Ok(self.run.context.tokenizer.encode_prompt(&self.run.context.template, &prompt)?)
    }

    /// Every turn of `played` with its per-step advantage; a guided turn (sampled after a hint) is learnt under
    /// its prompt without the hint.
    fn sequences(
        &self,
        played: &[PlayedEpisode],
        advantages: &[Vec<f64>],
        guided: &[bool],
        unguided: &PolicyActor<'_>,
    ) -> Result<Vec<Vec<PreparedSequence>>, BoxError> {
        let mut episodes: Vec<Vec<PreparedSequence>> = Vec::with_capacity(played.len());
        for ((episode, advantages), &guided) in played.iter().zip(advantages).zip(guided) {
            let mut turns = Vec::with_capacity(episode.turns.len());
            for (turn, advantage) in episode.turns.iter().zip(advantages) {
                if !turn.completion.has_tokens() {
                    continue;
                }
                let training_prompt_ids =
                    if guided { Some(self.unguided_prompt_ids(unguided, episode, turn.step)?) } else { None };
                turns.push(PreparedSequence { training_prompt_ids, ..prepared(&turn.completion, *advantage) });
            }
            episodes.push(turns);
        }
        Ok(episodes)
    }

    /// ICRL's update: the first round's episodes, the critiques and the retries, each one sample of a (group,
    /// round, role) bucket with act-grpo's `icrl_advantages` (rewards: the raw outcome, a win 1 or the score, not
    /// `win_reward`); buckets the filter masks are left out. A retry's turns are learnt under the prompts without
    /// the tips: the old log-probs are the current weights' under those prompts (computed here, one pass per
    /// turn), and each token weighs `clamp(exp(old − sampled), 0, 2)`, the calibration weight.
    fn icrl_sequences(
        &self,
        played: &[PlayedEpisode],
        second: &crate::icrl::SecondRound,
        play: &crate::icrl::IcrlPlay<'_, F>,
        unguided: &PolicyActor<'_>,
    ) -> Result<(Vec<Vec<PreparedSequence>>, IcrlStats), BoxError> {
        use act_grpo::icrl::{IcrlRole, IcrlSample, calibration_weights, icrl_advantages, icrl_trained};
        let solver = |e: &PlayedEpisode, round| IcrlSample {
            group: e.spec.group,
            round,
            role: IcrlRole::Solver,
            reward: play.outcome(e),
            success: crate::guided::rewarded(e, play.reward),
        };
        let mut samples: Vec<IcrlSample> = played.iter().map(|e| solver(e, 1)).collect();
        samples.extend(second.critiques.iter().map(|c| IcrlSample {
            group: played[c.episode].spec.group,
            round: 1,
            role: IcrlRole::Critic,
            reward: c.reward,
            success: c.success,
        }));
        samples.extend(second.retries.iter().map(|e| solver(e, 2)));
        let advantages = icrl_advantages(&samples);
        let trained = icrl_trained(&samples, self.config.icrl.mask_threshold);
        let (n1, nc) = (played.len(), second.critiques.len());

        let mut episodes: Vec<Vec<PreparedSequence>> = Vec::new();
        for (i, episode) in played.iter().enumerate() {
            if trained[i] {
                let turns = episode.turns.iter().filter(|t| t.completion.has_tokens());
                episodes.push(turns.map(|t| prepared(&t.completion, advantages[i])).collect());
            }
        }
        for (k, critique) in second.critiques.iter().enumerate() {
            if trained[n1 + k] && critique.completion.has_tokens() {
                episodes.push(vec![prepared(&critique.completion, advantages[n1 + k])]);
            }
        }
        let model = self.trainer.model().valid();
        let temperature = f64::from(self.config.temperature);
        for (k, retry) in second.retries.iter().enumerate() {
            let j = n1 + nc + k;
            if !trained[j] {
                continue;
            }
            let mut turns = Vec::with_capacity(retry.turns.len());
            for turn in retry.turns.iter().filter(|t| t.completion.has_tokens()) {
                let prompt_ids = self.unguided_prompt_ids(unguided, retry, turn.step)?;
                let completion_ids = turn.completion.token_ids.clone();
                let sequence: Vec<u32> = prompt_ids.iter().chain(&completion_ids).copied().collect();
                let batch =
                    act_model::TokenBatch::new(sequence.clone(), vec![true; sequence.len()], 1, sequence.len())?;
                let old: Vec<f32> =
                    act_grpo::token_log_probs(&model, &batch, prompt_ids.len() - 1, 128, temperature, false)?
                        .log_probs
                        .into_data()
                        .convert::<f32>()
                        .try_to_vec::<f32>()
                        .map_err(|e| format!("log-probs: {e:?}"))?;
                let token_weights = Some(calibration_weights(&old, &turn.completion.log_probs));
                turns.push(PreparedSequence {
                    prompt_ids,
                    completion_ids,
                    advantage: advantages[j],
                    behaviour_log_probs: Some(old),
                    training_prompt_ids: None,
                    token_weights,
                });
            }
            episodes.push(turns);
        }
        episodes.retain(|e| !e.is_empty());
        let retries = second.retries.len().max(1) as f64;
        let stats = IcrlStats {
            critiques: nc,
            parsed: second.critiques.iter().filter(|c| c.tips.is_some()).count(),
            critic_reward: second.critiques.iter().map(|c| c.reward).sum::<f64>() / nc.max(1) as f64,
            second_round_success: second.retries.iter().filter(|e| crate::guided::rewarded(e, play.reward)).count()
                as f64
                / retries,
            samples: samples.len(),
            masked: trained.iter().filter(|&&t| !t).count(),
        };
        Ok((episodes, stats))
    }

    /// Appends the iteration's critiques to the stage's `critiques.jsonl`: the task, what the critic wrote, the
    /// tips parsed from it, its reward and whether the retry won (what the critic learnt, read at the start and end
    /// of training). An iteration played again after a resume appends its lines again.
    fn log_critiques(
        &self,
        iteration: usize,
        played: &[PlayedEpisode],
        second: &crate::icrl::SecondRound,
    ) -> Result<(), BoxError> {
        use std::io::Write;
        let path = self.run.dir.join("critiques.jsonl");
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path)?;
        for critique in &second.critiques {
            let line = serde_json::json!({
                "iteration": iteration,
                "task": played[critique.episode].trajectory.task,
                "completion": critique.completion.text,
                "tips": critique.tips,
                "reward": critique.reward,
                "retry_won": critique.success,
            });
            writeln!(file, "{line}").map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(())
    }

    /// Plays, scores and trains one iteration.
    fn iterate(&mut self) -> Result<OnlineIterationMetrics, BoxError> {
        let c = self.config;
        let iteration = self.trainer.steps_done();
        let seed = derive_seed(self.run.seed, iteration as u64);
        // The iteration's tasks: a partial shuffle of the pool.
        let mut rng = rng_from_seed(seed);
        let mut pool: Vec<usize> = (0..self.tasks.len()).collect();
        let n = c.tasks_per_iteration.min(pool.len());
        for i in 0..n {
            let j = rng.random_range(i..pool.len());
            pool.swap(i, j);
        }
        let tasks: Vec<TaskRef> = pool[..n].iter().map(|&i| self.tasks[i].clone()).collect();
        let specs = EpisodeSpec::groups(&tasks, c.group_size, seed);

        let width = specs.len();
        let policy =
            self.run.context.policy("online", self.trainer.model().valid(), width).with_prefix_reuse(4 * width);
        let sampling = SamplingParams::default()
            .with_temperature(c.temperature)
            .with_max_new_tokens(c.max_completion_tokens)
            .with_stop("</action>");
        let actor = Timed {
            inner: PolicyActor::new(&policy, self.prompter.clone()).with_tokens(true).with_sampling(sampling.clone()),
            seconds: Mutex::new(0.0),
        };
        let (finished, won) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let last = self.last_success.map_or(String::new(), |s| format!("; iteration {iteration}: {:.1}%", 100.0 * s));
        let on_episode = |episode: &PlayedEpisode| {
            let won = won.fetch_add(usize::from(episode.won()), Ordering::Relaxed) + usize::from(episode.won());
            let finished = finished.fetch_add(1, Ordering::Relaxed) + 1;
            self.progress.inc(1);
            self.progress.set_message(format!(
                "iteration {}: {won} of {finished} won ({:.1}%){last}",
                iteration + 1,
                100.0 * won as f64 / finished as f64
            ));
        };
        let started = Instant::now();
        let mut rollout_config =
            RolloutConfig::default().with_batch_size(width).with_step_budget(c.step_budget).with_seed(seed);
        if self.icrl {
            rollout_config = rollout_config.with_stop_after_repeats(c.icrl.stop_after_repeats);
        }
        let played =
            Rollout::new(self.factory, &actor).with_config(rollout_config).on_episode(&on_episode).play(&specs)?;
        let rollout_seconds = started.elapsed().as_secs_f64();
        let generation_seconds = actor.seconds.into_inner().map_err(|_| "a generation call panicked")?;
        // The policy's own play, before guidance replaces the hard groups' episodes.
        let episodes_played = played.len() as f64;
        let env_steps: usize = played.iter().map(PlayedEpisode::steps).sum();
        let invalid: usize = played.iter().map(PlayedEpisode::invalid_actions).sum();
        let success = played.iter().filter(|e| e.won()).count() as f64 / episodes_played;
        let score = played.iter().map(|e| e.trajectory.outcome.score).sum::<f64>() / episodes_played;
        let groups = c.tasks_per_iteration.min(self.tasks.len()).max(1) as f64;
        let hard_groups = crate::guided::hard_groups(&played, c.reward).len();

        let started = Instant::now();
        let (played, guided, guidance) = if self.guided {
            crate::guided::GuidedPlay {
                factory: self.factory,
                policy: &policy,
                prompter: &self.prompter,
                sampling: sampling.clone(),
                step_budget: c.step_budget,
                reward: c.reward,
                guidance: &c.guidance,
                seed,
            }
            .guide(played)?
        } else {
            let n = played.len();
            (played, vec![false; n], crate::guided::GuidanceStats::default())
        };
        let guidance_seconds = started.elapsed().as_secs_f64();
        let icrl_play = crate::icrl::IcrlPlay {
            factory: self.factory,
            policy: &policy,
            prompter: &self.prompter,
            sampling: sampling.clone(),
            // The action's stop string is not the critic's.
            critic_sampling: SamplingParams::default()
                .with_temperature(c.temperature)
                .with_max_new_tokens(c.icrl.critic_max_tokens)
                .with_stop("</critic>"),
            step_budget: c.step_budget,
            stop_after_repeats: Some(c.icrl.stop_after_repeats),
            reward: c.reward,
            seed,
        };
        let second = if self.icrl { Some(icrl_play.second_round(&played)?) } else { None };
        if let Some(second) = &second {
            self.log_critiques(iteration + 1, &played, second)?;
        }
        let unguided = PolicyActor::new(&policy, self.prompter.clone());
        let guided_episodes = guided.iter().filter(|&&g| g).count();
        let guided_success =
            played.iter().zip(&guided).filter(|(e, g)| **g && e.won()).count() as f64 / guided_episodes.max(1) as f64;

        let started = Instant::now();
        let advantages = gigpo_advantages(&episode_records(&played, c.win_reward, c.reward), &self.advantages)?;
        let (episodes, icrl_stats) = match &second {
            Some(second) => self.icrl_sequences(&played, second, &icrl_play, &unguided)?,
            None => (self.sequences(&played, &advantages.advantages, &guided, &unguided)?, IcrlStats::default()),
        };
        let update = self.trainer.update_episodes(&episodes)?;
        let update_seconds = started.elapsed().as_secs_f64();

        let iteration_env_steps = env_steps + guidance.env_steps + second.as_ref().map_or(0, |s| s.env_steps());
        self.env_steps_total += iteration_env_steps;
        let stats = advantages.stats;
        let mean = |values: &[usize]| values.iter().sum::<usize>() as f64 / values.len().max(1) as f64;
        let metrics = OnlineIterationMetrics {
            step: update.step,
            episodes: played.len(),
            success,
            score,
            invalid_action_rate: invalid as f64 / env_steps.max(1) as f64,
            env_steps: iteration_env_steps,
            env_steps_total: self.env_steps_total,
            zero_std_episode_group_fraction: stats.zero_std_episode_groups as f64 / stats.episode_groups.max(1) as f64,
            singleton_step_group_fraction: stats.singleton_step_groups as f64 / stats.step_groups.max(1) as f64,
            mean_step_group_size: stats.mean_step_group_size,
            turns: update.sequences,
            loss: update.loss,
            kl: update.kl,
            ratio_mean: update.ratio_mean,
            entropy: update.entropy,
            grad_norm: update.grad_norm,
            generation_seconds,
            environment_seconds: rollout_seconds - generation_seconds,
            update_seconds,
            env_steps_per_second: env_steps as f64 / rollout_seconds.max(1e-9),
            hard_group_fraction: hard_groups as f64 / groups,
            rescued_group_fraction: guidance.rescued_groups as f64 / groups,
            mean_hint_length: mean(&guidance.hint_lengths),
            mean_plan_length: mean(&guidance.plan_lengths),
            probe_episodes: guidance.probe_episodes,
            guided_success,
            guidance_seconds: if self.guided { guidance_seconds } else { 0.0 },
            critiques: icrl_stats.critiques,
            critique_parse_rate: icrl_stats.parsed as f64 / icrl_stats.critiques.max(1) as f64,
            critic_reward: icrl_stats.critic_reward,
            second_round_success: icrl_stats.second_round_success,
            masked_fraction: icrl_stats.masked as f64 / icrl_stats.samples.max(1) as f64,
        };
        self.log.write(&metrics)?;
        self.last_success = Some(metrics.success);
        Ok(metrics)
    }
}

impl<F: EnvironmentFactory> StageTrainer for OnlineTrainer<'_, F> {
    fn steps_done(&self) -> usize {
        self.trainer.steps_done()
    }

    fn train_steps(&mut self, steps: usize) -> Result<(), BoxError> {
        for _ in 0..steps {
            let m = self.iterate()?;
            self.progress.suspend(|| println!(
                "    iteration {:>3}: success {:>5.1}% of {} episodes, score {:.3}, invalid {:>4.1}%, {} env steps ({:.0}/s), kl {:.4}; \
                 generation {:.1} s, environment {:.1} s, update {:.1} s",
                m.step,
                100.0 * m.success,
                m.episodes,
                m.score,
                100.0 * m.invalid_action_rate,
                m.env_steps,
                m.env_steps_per_second,
                m.kl,
                m.generation_seconds,
                m.environment_seconds,
                m.update_seconds
            ));
            if m.critiques > 0 {
                self.progress.suspend(|| println!(
                    "                   ICRL: {} critiques ({:.0}% parsed, mean reward {:.2}), second round {:.1}% won, \
                     {:.0}% of samples masked",
                    m.critiques,
                    100.0 * m.critique_parse_rate,
                    m.critic_reward,
                    100.0 * m.second_round_success,
                    100.0 * m.masked_fraction
                ));
            }
            if m.guidance_seconds > 0.0 {
                self.progress.suspend(|| println!(
                    "                   guidance: {:.0}% of groups hard, {:.0}% rescued; hints of {:.1} of {:.1} expert \
                     actions; {} probe episodes; guided success {:.1}%; {:.1} s",
                    100.0 * m.hard_group_fraction,
                    100.0 * m.rescued_group_fraction,
                    m.mean_hint_length,
                    m.mean_plan_length,
                    m.probe_episodes,
                    100.0 * m.guided_success,
                    m.guidance_seconds
                ));
            }
        }
        Ok(())
    }

    fn model(&self) -> &Qwen3 {
        self.trainer.model()
    }
}

/// The rollout success (in %) of on-line stages against the environment steps they had played, one series per
/// stage of `stages` (legend label, stage directory) that has metrics; the points are its iterations.
pub fn success_by_env_steps(stages: &[(&str, std::path::PathBuf)]) -> Result<Vec<act_eval::Series>, BoxError> {
    let mut series = Vec::new();
    for (label, dir) in stages {
        let iterations = read_iterations(&dir.join("trainer").join("metrics.jsonl"))?;
        if iterations.is_empty() {
            continue;
        }
        let points = iterations.iter().map(|m| (m.env_steps_total as f64, 100.0 * m.success)).collect();
        series.push(act_eval::Series { label: (*label).to_owned(), points });
    }
    Ok(series)
}

/// The metrics lines of a run so far (what a resumed run continues from).
fn read_iterations(path: &std::path::Path) -> Result<Vec<OnlineIterationMetrics>, BoxError> {
    if !path.is_file() {
        return Ok(Vec::new());
    }
    Ok(act_core::read_jsonl(path)?)
}

impl StageRun<'_> {
    /// On-line RL with `algorithm` on `tasks` (the environment's training tasks) from the stage's start, prompted
    /// with `prompt`.
    pub fn online<F: EnvironmentFactory>(
        &self,
        config: &OnlineRlConfig,
        algorithm: OnlineAlgorithm,
        factory: &F,
        prompt: PromptConfig,
        tasks: &[TaskRef],
    ) -> Result<StageRecord, BoxError> {
        if let Some(record) = self.skip() {
            return Ok(record);
        }
        if tasks.is_empty() {
            return Err(format!("stage {}: no training tasks", self.name).into());
        }
        let started = self.announce(config.iterations, tasks.len());
        let device = self.training_device()?;
        let mut grpo = GrpoConfig::default()
            .with_group_size(config.group_size)
            .with_prompts_per_step(config.tasks_per_iteration)
            .with_temperature(config.temperature)
            .with_max_completion_tokens(config.max_completion_tokens)
            .with_lr(config.lr)
            .with_kl(act_grpo::KlEstimator::K3, config.kl_coef)
            .with_entropy_coef(config.entropy_coef)
            .with_schedule(ScheduleKind::Constant, 2.min(config.iterations - 1))
            .with_seed(self.seed)
            .with_total_steps(config.iterations)
            .with_checkpoint_every(self.training.checkpoint_every.clamp(1, 5))
            .with_compute_dtype(self.compute_dtype(None));
        // About one packed episode per micro-batch: packed episodes are long.
        grpo = grpo.with_grad_accumulation_steps((config.tasks_per_iteration * config.group_size).div_ceil(2).max(1));
        let trainer_dir = self.dir.join("trainer");
        let metrics_path = trainer_dir.join("metrics.jsonl");
        let (tokenizer, template) = (self.context.tokenizer.clone(), self.context.template.clone());
        let reward = act_rewards::NextActionConfig::default().build()?; // Unused: the environment scores.
        let trainer = match latest_checkpoint(&trainer_dir) {
            Some((checkpoint, step)) => {
                println!("    resuming from {}", checkpoint.display());
                truncate_metrics(&metrics_path, step)?;
                GrpoTrainer::resume(&checkpoint, grpo, tokenizer, template, reward, Vec::new(), &device)?
            }
            None => {
                if metrics_path.is_file() {
                    std::fs::remove_file(&metrics_path)?;
                }
                let model = self.start.load(&device, self.seed)?;
                GrpoTrainer::new(grpo, model, tokenizer, template, reward, Vec::new())?
            }
        }
        .with_output_dir(&trainer_dir)?;
        let done = read_iterations(&metrics_path)?;
        let episodes_per_iteration = config.tasks_per_iteration.min(tasks.len()) * config.group_size;
        let mut online = OnlineTrainer {
            trainer,
            run: self,
            factory,
            prompter: Prompter::new(prompt)?,
            config,
            advantages: advantage_config(config, algorithm),
            guided: algorithm == OnlineAlgorithm::ActGuide,
            icrl: algorithm == OnlineAlgorithm::Icrl,
            tasks,
            log: act_grpo::MetricsLog::append(&metrics_path)?,
            env_steps_total: done.last().map_or(0, |m| m.env_steps_total),
            last_success: done.last().map(|m| m.success),
            progress: episode_bar(config.iterations, episodes_per_iteration, done.len()),
        };
        self.train_with_probe(&mut online, config.iterations, &ONLINE_CURVES)?;
        online.progress.finish_and_clear();
        let iterations = read_iterations(&metrics_path)?;
        // The success of the last quarter of the iterations: one iteration's episodes are few.
        let tail = &iterations[iterations.len() - iterations.len().div_ceil(4).min(iterations.len())..];
        let final_value = tail.iter().map(|m| m.success).sum::<f64>() / tail.len().max(1) as f64;
        let record = StageRecord {
            stage: self.name.to_owned(),
            started_from: self.start.dir(),
            steps: config.iterations,
            samples: tasks.len(),
            seconds: started.elapsed().as_secs_f64(),
            final_value,
        };
        finish(&self.dir, online.trainer.trained_model(), &record)?;
        println!(
            "    rollout success (last quarter of the iterations) {:.1}% ({:.1} s)",
            100.0 * final_value,
            record.seconds
        );
        Ok(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use act_core::{Action, Completion, Outcome, Split, Step, Trajectory};
    use act_rollout::Turn;

    fn episode(group: usize, observations: &[&str], valid: &[bool], won: bool) -> PlayedEpisode {
        let steps = observations
            .iter()
            .map(|o| Step {
                observation: (*o).into(),
                admissible_actions: vec![],
                action: Action::from("a"),
                reward: 0.0,
            })
            .collect();
        let turns = valid
            .iter()
            .enumerate()
            .map(|(step, &valid)| Turn {
                step,
                completion: Completion::text_only("a"),
                action: "a".into(),
                valid,
                parsed: true,
                snapped: false,
                reward: 0.0,
            })
            .collect();
        PlayedEpisode {
            spec: EpisodeSpec { index: 0, task: TaskRef::index(Split::Train, 0), seed: 0, sample_seed: 0, group },
            trajectory: Trajectory {
                env: "toy".into(),
                task_id: "t".into(),
                task_type: "t".into(),
                split: Split::Train,
                task: "t".into(),
                seed: 0,
                steps,
                outcome: Outcome { won, score: f64::from(u8::from(won)), steps_used: observations.len() },
            },
            turns,
        }
    }

    #[test]
    fn a_won_episode_is_rewarded_at_its_last_step_and_anchored_on_what_was_read() {
        let played = [episode(3, &["room", "shelf"], &[true, false], true), episode(3, &["room"], &[true], false)];
        let records = episode_records(&played, 10.0, OnlineReward::Win);
        assert_eq!(records[0].group, 3);
        assert_eq!(records[0].steps.iter().map(|s| s.reward).collect::<Vec<_>>(), vec![0.0, 10.0]);
        assert_eq!(records[0].steps.iter().map(|s| s.anchor).collect::<Vec<_>>(), vec!["room", "shelf"]);
        assert!(records[0].steps[1].invalid && !records[0].steps[0].invalid);
        assert_eq!(records[1].steps[0].reward, 0.0);
        // With the score as reward, a lost episode's partial score counts too.
        let mut partial = episode(3, &["shop"], &[true], false);
        partial.trajectory.outcome.score = 0.25;
        let partial = [partial];
        let records = episode_records(&partial, 10.0, OnlineReward::Score);
        assert_eq!(records[0].steps[0].reward, 2.5);
        // Episode-level GRPO has no step part; GiGPO's is weighted as configured.
        let config = OnlineRlConfig::default();
        assert_eq!(advantage_config(&config, OnlineAlgorithm::EpisodeGrpo).step_weight, 0.0);
        assert_eq!(advantage_config(&config, OnlineAlgorithm::Gigpo).step_weight, config.step_weight);
    }
}
