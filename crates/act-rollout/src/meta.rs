//! In-context training's meta-environment (ICT / MetaGym): its action is a system prompt, its step plays a batch of
//! tasks with an actor that follows that prompt, and its reward is the fraction of those episodes won.

use act_core::{
    Action, EnvError, Environment, EnvironmentFactory, Policy, Prompter, SamplingParams, Split, TaskRef, derive_seed,
    rng_from_seed,
};
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::actor::{Actor, Decision, PolicyActor, View};
use crate::driver::{Rollout, RolloutConfig};
use crate::episode::PlayedEpisode;
use crate::error::{ActError, RolloutError};
use crate::spec::EpisodeSpec;

/// Which tasks successive meta-steps play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskOrder {
    /// Each step plays the next tasks of a seeded shuffle of the pool, reshuffled once it is used up, so a prompt
    /// is always judged on tasks the previous steps did not play (MetaGym's training mode).
    #[default]
    Shuffled,
    /// Every step plays the same tasks from the same environment seeds (MetaGym's validation mode): rewards of
    /// different prompts compare directly.
    Fixed,
}

/// What a [`MetaEnvironment`] plays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MetaEnvConfig {
    /// The split the tasks come from.
    pub split: Split,
    /// Episodes (distinct tasks) per meta-step. Must be positive and at most the filtered pool's size.
    pub tasks_per_step: usize,
    /// Shuffled (new tasks each step) or fixed (the same tasks each step).
    pub order: TaskOrder,
    /// Task families (act-core's [`TaskInfo::task_type`](act_core::TaskInfo::task_type), ALFWorld's six task
    /// types) the pool keeps; empty keeps every family.
    pub families: Vec<String>,
    /// Task families the pool leaves out (held out for evaluation), applied after `families`.
    pub excluded_families: Vec<String>,
    /// Seeds the task order and the episodes' environment and sampling seeds.
    pub seed: u64,
    /// How the episodes are played (batch size, step budget, invalid actions).
    pub rollout: RolloutConfig,
}

impl Default for MetaEnvConfig {
    fn default() -> Self {
        MetaEnvConfig {
            split: Split::Train,
            tasks_per_step: 8,
            order: TaskOrder::Shuffled,
            families: Vec::new(),
            excluded_families: Vec::new(),
            seed: 0,
            rollout: RolloutConfig::default(),
        }
    }
}

impl MetaEnvConfig {
    /// Checks the settings that do not need the environment (the pool's size is checked by
    /// [`MetaEnvironment::new`]).
    pub fn validate(&self) -> Result<(), RolloutError> {
        if self.tasks_per_step == 0 {
            return Err(RolloutError::Config("tasks_per_step is 0".into()));
        }
        if let Some(family) = self.families.iter().find(|f| self.excluded_families.contains(f)) {
            return Err(RolloutError::Config(format!("family {family:?} is both kept and excluded")));
        }
        self.rollout.validate()
    }

    /// Whether the pool keeps tasks of `family`.
    pub fn keeps(&self, family: &str) -> bool {
        (self.families.is_empty() || self.families.iter().any(|f| f == family))
            && !self.excluded_families.iter().any(|f| f == family)
    }
}

/// An actor that follows a system prompt: what a meta-environment's action changes.
pub trait PromptFollower: Sync {
    /// A name for reports.
    fn name(&self) -> &str;

    /// The actor that plays under `system_prompt`.
    fn actor<'s>(&'s self, system_prompt: &str) -> Box<dyn Actor + 's>;
}

/// A [`Policy`] behind a prompt that begins with the system prompt ([`PolicyActor::with_system_prompt`]): the
/// follower of real checkpoints and of models trained on prompts with lessons.
pub struct PolicyFollower<'a> {
    policy: &'a dyn Policy,
    prompter: Prompter,
    sampling: SamplingParams,
}

impl<'a> PolicyFollower<'a> {
    /// `policy` prompted by `prompter`, sampling with `sampling` (its seed replaced by each call's).
    pub fn new(policy: &'a dyn Policy, prompter: Prompter, sampling: SamplingParams) -> Self {
        PolicyFollower { policy, prompter, sampling }
    }
}

impl PromptFollower for PolicyFollower<'_> {
    fn name(&self) -> &str {
        self.policy.name()
    }

    fn actor<'s>(&'s self, system_prompt: &str) -> Box<dyn Actor + 's> {
        Box::new(
            PolicyActor::new(self.policy, self.prompter.clone())
                .with_sampling(self.sampling.clone())
                .with_system_prompt(system_prompt),
        )
    }
}

/// One meta-step's tasks: which tasks, from which environment seeds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaBatch {
    /// The meta-step (0-based) that drew the batch.
    pub step: usize,
    /// The episodes to play: one per task, in the batch's order.
    pub specs: Vec<EpisodeSpec>,
}

impl MetaBatch {
    /// The tasks, in order.
    pub fn tasks(&self) -> Vec<TaskRef> {
        self.specs.iter().map(|s| s.task.clone()).collect()
    }
}

/// What a system prompt gave on a batch.
#[derive(Debug, Clone)]
pub struct MetaOutcome {
    /// The played episodes, in the batch's order.
    pub episodes: Vec<PlayedEpisode>,
    /// The fraction of them won: the meta-environment's reward.
    pub reward: f64,
}

/// ICT's meta-environment over any environment factory ([`TaskOrder`] for the two modes, family filters for held-out
/// families). A step draws the next [`MetaBatch`] and plays it with the actor a [`PromptFollower`] makes for the
/// step's system prompt; [`play`](Self::play) plays one batch under several prompts (a reflector's GRPO group, each
/// reflection scored on the same tasks from the same seeds).
///
/// ```
/// use act_alfworld::{AlfworldConfig, AlfworldEnv};
/// use act_core::Split;
/// use act_rollout::{LessonFollower, MetaEnvConfig, MetaEnvironment, RandomActor, RolloutConfig, TaskOrder};
///
/// let factory = || AlfworldEnv::new(AlfworldConfig::default().with_train_size(20));
/// let config = MetaEnvConfig {
///     split: Split::Train,
///     tasks_per_step: 4,
///     order: TaskOrder::Fixed,
///     excluded_families: vec!["pick_two_obj_and_place".into()],
///     rollout: RolloutConfig::default().with_batch_size(4).with_step_budget(20),
///     ..MetaEnvConfig::default()
/// };
/// let mut meta = MetaEnvironment::new(&factory, config)?;
/// let follower = LessonFollower::new(RandomActor);
/// let step = meta.step(&follower, "prefer: take\nprefer: put")?;
/// let won = step.outcome.episodes.iter().filter(|e| e.won()).count();
/// assert_eq!(step.outcome.reward, won as f64 / 4.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct MetaEnvironment<'a, F: EnvironmentFactory> {
    factory: &'a F,
    config: MetaEnvConfig,
    /// The tasks the filters keep, with their families, in the environment's order.
    pool: Vec<(TaskRef, String)>,
    /// The current shuffle of the pool (indices) and how far it has been used.
    order: Vec<usize>,
    cursor: usize,
    epoch: u64,
    step: usize,
}

/// A step's batch and what its prompt gave.
#[derive(Debug, Clone)]
pub struct MetaStep {
    /// The tasks played.
    pub batch: MetaBatch,
    /// The episodes and the reward.
    pub outcome: MetaOutcome,
}

/// The seed sub-stream of the task shuffles (per epoch); far from the episode streams.
const SHUFFLE_STREAM: u64 = 0x7368_7566_666c_6521; // "shuffle!"

impl<'a, F: EnvironmentFactory> MetaEnvironment<'a, F> {
    /// The meta-environment over `factory`'s tasks of `config.split` whose family the filters keep (each task is
    /// reset once to read its family).
    pub fn new(factory: &'a F, config: MetaEnvConfig) -> Result<Self, RolloutError> {
        config.validate()?;
        let pool = task_pool(factory, &config)?;
        if pool.len() < config.tasks_per_step {
            return Err(RolloutError::Config(format!(
                "the {:?} split has {} tasks of the kept families, fewer than tasks_per_step {}",
                config.split,
                pool.len(),
                config.tasks_per_step
            )));
        }
        let mut meta = MetaEnvironment { factory, config, pool, order: Vec::new(), cursor: 0, epoch: 0, step: 0 };
        meta.shuffle();
        Ok(meta)
    }

    /// The tasks the filters keep, with their families.
    pub fn pool(&self) -> &[(TaskRef, String)] {
        &self.pool
    }

    /// The settings.
    pub fn config(&self) -> &MetaEnvConfig {
        &self.config
    }

    /// Meta-steps drawn so far.
    pub fn steps_done(&self) -> usize {
        self.step
    }

    fn shuffle(&mut self) {
        self.order = (0..self.pool.len()).collect();
        let mut rng = rng_from_seed(derive_seed(derive_seed(self.config.seed, SHUFFLE_STREAM), self.epoch));
        self.order.shuffle(&mut rng);
        self.cursor = 0;
    }

    /// The next step's batch: the next tasks of the shuffle (shuffled order) or the same first tasks (fixed order).
    /// Episode `i` of step `s` resets with `derive_seed(seed, s * 2^32 + i)` in shuffled order and
    /// `derive_seed(seed, i)` in fixed order (so fixed batches repeat exactly).
    pub fn next_batch(&mut self) -> MetaBatch {
        let n = self.config.tasks_per_step;
        let step = self.step;
        self.step += 1;
        let positions: Vec<usize> = match self.config.order {
            TaskOrder::Fixed => self.order[..n].to_vec(),
            TaskOrder::Shuffled => {
                if self.cursor + n > self.order.len() {
                    self.epoch += 1;
                    self.shuffle();
                }
                let taken = self.order[self.cursor..self.cursor + n].to_vec();
                self.cursor += n;
                taken
            }
        };
        let stream = match self.config.order {
            TaskOrder::Fixed => 0,
            TaskOrder::Shuffled => (step as u64) << 32,
        };
        let specs = positions
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                let seed = derive_seed(self.config.seed, stream + i as u64);
                EpisodeSpec { index: i, task: self.pool[p].0.clone(), seed, sample_seed: seed, group: i }
            })
            .collect();
        MetaBatch { step, specs }
    }

    /// Plays `batch` with the actor `follower` makes for `system_prompt`.
    pub fn play(
        &self,
        follower: &dyn PromptFollower,
        system_prompt: &str,
        batch: &MetaBatch,
    ) -> Result<MetaOutcome, RolloutError> {
        let actor = follower.actor(system_prompt);
        let episodes =
            Rollout::new(self.factory, actor.as_ref()).with_config(self.config.rollout.clone()).play(&batch.specs)?;
        let won = episodes.iter().filter(|e| e.won()).count();
        Ok(MetaOutcome { reward: won as f64 / episodes.len().max(1) as f64, episodes })
    }

    /// One meta-step: the next batch, played under `system_prompt`.
    pub fn step(&mut self, follower: &dyn PromptFollower, system_prompt: &str) -> Result<MetaStep, RolloutError> {
        let batch = self.next_batch();
        let outcome = self.play(follower, system_prompt, &batch)?;
        Ok(MetaStep { batch, outcome })
    }
}

/// Every task of the split whose family `config` keeps, with its family.
fn task_pool<F: EnvironmentFactory>(
    factory: &F,
    config: &MetaEnvConfig,
) -> Result<Vec<(TaskRef, String)>, RolloutError> {
    let env_error = |source: EnvError| RolloutError::Env { episode: 0, source };
    let mut env = factory.make().map_err(env_error)?;
    let count = env.num_tasks(config.split).map_err(env_error)?;
    let mut pool = Vec::new();
    for index in 0..count {
        let task = TaskRef::index(config.split, index);
        let reset = env.reset(&task, 0).map_err(|source| RolloutError::Env { episode: index, source })?;
        if config.keeps(&reset.task.task_type) {
            pool.push((task, reset.task.task_type));
        }
    }
    Ok(pool)
}

/// A scripted [`PromptFollower`] whose play depends on its system prompt, for meta-environments with tiny or no
/// models: every line `prefer: <words>` of the prompt is a lesson, in order. A lesson refines the fallback actor's
/// choice within its verb (the action's first word): where the fallback would act with a verb, the actor takes the
/// first admissible action with that verb that contains the words of the earliest lesson any such action matches,
/// preferring actions the episode has not taken yet; elsewhere the fallback decides.
///
/// So "prefer: go to countertop" sends an agent that was going somewhere to the countertops it has not visited yet,
/// and "prefer: take" makes one that picks something up pick up what the lesson names first: the prompt's lessons
/// change what it does and how often it wins, which is what a reflector must learn to write.
#[derive(Debug, Clone)]
pub struct LessonFollower<A> {
    fallback: A,
}

impl<A: Actor> LessonFollower<A> {
    /// Lessons first, `fallback` elsewhere.
    pub fn new(fallback: A) -> Self {
        LessonFollower { fallback }
    }
}

/// The lessons of a system prompt: the words of each `prefer:` line, lower-cased, in order.
pub fn parse_lessons(system_prompt: &str) -> Vec<String> {
    system_prompt
        .lines()
        .filter_map(|line| line.trim().strip_prefix("prefer:"))
        .map(|words| words.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase())
        .filter(|words| !words.is_empty())
        .collect()
}

/// An action's verb: its first word.
fn verb(action: &str) -> &str {
    action.split_whitespace().next().unwrap_or("")
}

/// The admissible action with `chosen`'s verb that the earliest matching lesson picks: the first not in `taken`,
/// else the first; `None` when no lesson matches an action with that verb.
fn lesson_action<'s>(lessons: &[String], admissible: &'s [Action], chosen: &str, taken: &[&str]) -> Option<&'s Action> {
    let verb = verb(chosen);
    let same_verb: Vec<&Action> = admissible.iter().filter(|a| self::verb(a.as_str()) == verb).collect();
    lessons.iter().find_map(|lesson| {
        let matching: Vec<&Action> =
            same_verb.iter().copied().filter(|a| a.as_str().to_lowercase().contains(lesson.as_str())).collect();
        matching.iter().find(|a| !taken.contains(&a.as_str())).or(matching.first()).copied()
    })
}

impl<A: Actor> PromptFollower for LessonFollower<A> {
    fn name(&self) -> &str {
        "lesson-follower"
    }

    fn actor<'s>(&'s self, system_prompt: &str) -> Box<dyn Actor + 's> {
        Box::new(LessonActor { lessons: parse_lessons(system_prompt), fallback: &self.fallback })
    }
}

/// [`LessonFollower`]'s actor for one prompt.
struct LessonActor<'s, A> {
    lessons: Vec<String>,
    fallback: &'s A,
}

impl<A: Actor> Actor for LessonActor<'_, A> {
    fn name(&self) -> &str {
        "lesson-follower"
    }

    fn act(&self, views: &mut [View<'_>], seed: u64) -> Result<Vec<Option<Decision>>, ActError> {
        // The fallback sees the whole batch (so its draws are those it makes alone); lessons override it.
        let fallback = self.fallback.act(views, seed)?;
        Ok(views
            .iter()
            .zip(fallback)
            .map(|(view, decided)| {
                let decision = decided?;
                let taken: Vec<&str> = view.state.history.iter().map(|h| h.action.as_str()).collect();
                let admissible = &view.state.admissible_actions;
                Some(match lesson_action(&self.lessons, admissible, decision.action.as_str(), &taken) {
                    Some(action) => Decision::action(action.clone()),
                    None => decision,
                })
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lessons_are_the_prefer_lines_in_order_and_refine_a_verb() {
        let prompt = "Be careful.\nprefer: take\n  prefer:   Go  to Countertop \nprefer:\nnot a lesson: put";
        assert_eq!(parse_lessons(prompt), ["take", "go to countertop"]);
        let admissible: Vec<Action> =
            ["go to countertop 1", "take apple 1 from table 1", "go to countertop 2", "go to fridge 1"]
                .into_iter()
                .map(Action::from)
                .collect();
        let lessons = parse_lessons(prompt);
        let pick = |chosen: &str, taken: &[&str]| {
            lesson_action(&lessons, &admissible, chosen, taken).map(|a| a.as_str().to_owned())
        };
        // Within the fallback's verb only: a `go` becomes the lesson's countertop, a `take` the lesson's take.
        assert_eq!(pick("go to fridge 1", &[]).as_deref(), Some("go to countertop 1"));
        assert_eq!(pick("take apple 1 from table 1", &[]).as_deref(), Some("take apple 1 from table 1"));
        // Actions not taken yet first.
        assert_eq!(pick("go to fridge 1", &["go to countertop 1"]).as_deref(), Some("go to countertop 2"));
        assert_eq!(
            pick("go to fridge 1", &["go to countertop 1", "go to countertop 2"]).as_deref(),
            Some("go to countertop 1")
        );
        assert_eq!(pick("open fridge 1", &[]), None);
    }

    #[test]
    fn config_checks_its_settings_and_filters() {
        assert!(MetaEnvConfig::default().validate().is_ok());
        assert!(MetaEnvConfig { tasks_per_step: 0, ..MetaEnvConfig::default() }.validate().is_err());
        let both = MetaEnvConfig {
            families: vec!["a".into()],
            excluded_families: vec!["a".into()],
            ..MetaEnvConfig::default()
        };
        assert!(both.validate().unwrap_err().to_string().contains("both kept and excluded"));
        let filtered = MetaEnvConfig {
            families: vec!["a".into(), "b".into()],
            excluded_families: vec!["b".into()],
            ..MetaEnvConfig::default()
        };
        assert!(filtered.keeps("a") && !filtered.keeps("b") && !filtered.keeps("c"));
        assert!(MetaEnvConfig::default().keeps("anything"));
    }
}
