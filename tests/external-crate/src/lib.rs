//! An outside crate built on act-core alone: [`Locks`], a toy [`Environment`] with an expert and snapshots;
//! [`FirstMention`], a [`Policy`] that reads its prompts' structured meaning; [`ExactAction`], a [`RewardFn`] for
//! next-action prompts. The tests drive them through act-core's own tools (expert collection, prompts, parsing,
//! comparison pairs, JSONL datasets), as another project would.

use std::collections::BTreeMap;

use act_core::{
    Action, EnvError, EnvSnapshot, Environment, Observation, Policy, PolicyError, Query, QueryKind, Reset, Reward,
    RewardError, RewardFn, RewardTarget, SamplingParams, Split, TaskInfo, TaskRef, Transition, action_completion,
    actions_match, answer_completion, parse_action,
};

/// A row of locks, each opened by its own key, which lies in the room; the task names the lock to open. Actions:
/// `take key N`, `open lock N`, `look`.
#[derive(Debug, Clone, Default)]
pub struct Locks {
    episode: Option<LockEpisode>,
}

#[derive(Debug, Clone, PartialEq)]
struct LockEpisode {
    task: TaskInfo,
    locks: usize,
    target: usize,
    held: Option<usize>,
    steps: usize,
    done: bool,
}

impl Locks {
    /// The environment, before its first reset.
    pub fn new() -> Self {
        Self::default()
    }

    fn episode(&self) -> Result<&LockEpisode, EnvError> {
        self.episode.as_ref().ok_or(EnvError::NotReset)
    }
}

impl LockEpisode {
    fn describe(&self) -> String {
        let held = self.held.map_or("nothing".to_owned(), |k| format!("key {k}"));
        format!("There are {} locks and {} keys here. You hold {held}.", self.locks, self.locks)
    }

    fn admissible(&self) -> Vec<Action> {
        let mut actions = vec![Action::from("look")];
        for n in 1..=self.locks {
            actions.push(format!("take key {n}").into());
            actions.push(format!("open lock {n}").into());
        }
        actions
    }
}

impl Environment for Locks {
    fn name(&self) -> &str {
        "locks"
    }

    fn num_tasks(&self, split: Split) -> Result<usize, EnvError> {
        match split {
            Split::Train => Ok(20),
            Split::EvalInDistribution => Ok(5),
            other => Err(EnvError::UnsupportedSplit(other)),
        }
    }

    fn reset(&mut self, task: &TaskRef, seed: u64) -> Result<Reset, EnvError> {
        let TaskRef::Index { split, index } = task else {
            return Err(EnvError::UnknownTask(format!("{task:?} (tasks are by index)")));
        };
        if *index >= self.num_tasks(*split)? {
            return Err(EnvError::UnknownTask(format!("index {index} of split `{split}`")));
        }
        // The seed picks the target lock, so every random choice flows from it.
        let locks = 2 + index % 4;
        let target = 1 + (seed as usize + index) % locks;
        let task = TaskInfo {
            id: format!("locks-{split}-{index}"),
            task_type: "open".into(),
            split: *split,
            description: format!("open lock {target}."),
        };
        let episode = LockEpisode { task: task.clone(), locks, target, held: None, steps: 0, done: false };
        let reset = Reset {
            observation: Observation::new(episode.describe()),
            task,
            admissible_actions: Some(episode.admissible()),
        };
        self.episode = Some(episode);
        Ok(reset)
    }

    fn step(&mut self, action: &str) -> Result<Transition, EnvError> {
        let budget = self.step_budget();
        let episode = self.episode.as_mut().filter(|e| !e.done).ok_or(EnvError::NotReset)?;
        episode.steps += 1;
        let number = |prefix: &str| action.strip_prefix(prefix).and_then(|n| n.parse::<usize>().ok());
        let mut won = false;
        let feedback = if action == "look" {
            episode.describe()
        } else if let Some(n) = number("take key ").filter(|n| (1..=episode.locks).contains(n)) {
            episode.held = Some(n);
            format!("You take key {n}.")
        } else if let Some(n) = number("open lock ").filter(|n| (1..=episode.locks).contains(n)) {
            if episode.held == Some(n) {
                won = n == episode.target;
                format!("Lock {n} opens.")
            } else {
                format!("Lock {n} stays shut.")
            }
        } else {
            "Nothing happens.".to_owned()
        };
        episode.done = won || episode.steps >= budget;
        Ok(Transition {
            observation: Observation::new(feedback),
            reward: if won { 1.0 } else { 0.0 },
            done: episode.done,
            won,
            score: if won { 1.0 } else { 0.0 },
            admissible_actions: Some(episode.admissible()),
            info: Default::default(),
        })
    }

    fn admissible_actions(&self) -> Option<Vec<Action>> {
        self.episode.as_ref().map(LockEpisode::admissible)
    }

    fn task(&self) -> Option<&TaskInfo> {
        self.episode.as_ref().map(|e| &e.task)
    }

    fn step_budget(&self) -> usize {
        6
    }

    fn expert_action(&mut self) -> Result<Option<Action>, EnvError> {
        let episode = self.episode()?;
        if episode.done {
            return Ok(None);
        }
        let target = episode.target;
        Ok(Some(
            if episode.held == Some(target) { format!("open lock {target}") } else { format!("take key {target}") }
                .into(),
        ))
    }

    fn snapshot(&self) -> Option<EnvSnapshot> {
        self.episode.clone().map(|episode| EnvSnapshot::new("locks", episode))
    }

    fn restore(&mut self, snapshot: &EnvSnapshot) -> Result<(), EnvError> {
        self.episode = Some(snapshot.state::<LockEpisode>()?.clone());
        Ok(())
    }
}

/// A policy that acts on the first admissible action naming the task's number, and in a comparison picks the action
/// that names it; free-text queries it declines.
#[derive(Debug, Clone, Default)]
pub struct FirstMention;

impl FirstMention {
    fn task_number(task: &str) -> Option<&str> {
        task.split(|c: char| !c.is_ascii_digit()).find(|s| !s.is_empty())
    }

    fn names(action: &Action, number: Option<&str>) -> bool {
        number.is_some_and(|n| action.as_str().split(' ').any(|word| word == n))
    }
}

impl Policy for FirstMention {
    fn name(&self) -> &str {
        "first-mention"
    }

    fn generate(&self, queries: &[Query], _params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
        queries
            .iter()
            .map(|query| match &query.kind {
                QueryKind::Act(state) => {
                    let number = Self::task_number(&state.task);
                    let holding = state.observation.as_str().contains("You take key");
                    let verb = if holding { "open" } else { "take" };
                    let pick = state
                        .admissible_actions
                        .iter()
                        .find(|a| a.as_str().starts_with(verb) && Self::names(a, number))
                        .or_else(|| state.admissible_actions.first())
                        .ok_or_else(|| PolicyError::Unsupported {
                            policy: self.name().to_owned(),
                            reason: "the state lists no admissible actions".into(),
                        })?;
                    Ok(action_completion(pick.as_str()))
                }
                QueryKind::Compare { state, actions } => {
                    let number = Self::task_number(&state.task);
                    let first = Self::names(&actions[0], number);
                    Ok(answer_completion(if first { act_core::Choice::First } else { act_core::Choice::Second }))
                }
                _ => Err(PolicyError::Unsupported {
                    policy: self.name().to_owned(),
                    reason: "it only acts and compares".into(),
                }),
            })
            .collect()
    }
}

/// 1 for the expert's action in `<action>` tags (0.1 of it for the format alone), on next-action targets.
#[derive(Debug, Clone, Default)]
pub struct ExactAction;

impl RewardFn for ExactAction {
    fn name(&self) -> &str {
        "exact-action"
    }

    fn range(&self) -> (f64, f64) {
        (0.0, 1.0)
    }

    fn score(&self, target: &RewardTarget, completion: &str) -> Result<Reward, RewardError> {
        let RewardTarget::NextAction { expert, .. } = target else {
            return Err(RewardError::WrongTarget { reward: self.name().to_owned(), target: "non-next-action" });
        };
        let parsed = parse_action(completion, false);
        let correct = parsed.as_ref().is_ok_and(|p| actions_match(&p.action, expert.as_str()));
        let mut components = BTreeMap::new();
        components.insert("format".to_owned(), if parsed.is_ok() { 0.1 } else { 0.0 });
        components.insert("correct".to_owned(), if correct { 0.9 } else { 0.0 });
        Ok(Reward::from_components(components, parsed.is_ok()))
    }
}
