//! A small deterministic environment and scripted policies for the integration tests.
#![allow(dead_code)] // Each test binary uses a different part.

use act_core::*;
use rand::RngExt;

/// Steps each episode may take.
pub const BUDGET: usize = 3;

/// Doors: task `i` has 2 doors (even `i`, type "two-doors") or 4 doors (odd `i`, type "four-doors"); the seed
/// hides the prize behind one. Admissible: `open door j` for every door, and `look` (which changes nothing).
/// Opening a door ends the episode, won if it hides the prize.
///
/// A uniform-random admissible policy with k doors picks among k + 1 actions each step, so within a budget of
/// B steps it wins with probability (1/(k+1)) * sum_{t<B} (1/(k+1))^t: 13/27 for 2 doors, 31/125 for 4.
pub struct Doors {
    tasks: usize,
    doors: usize,
    prize: usize,
    task: Option<TaskInfo>,
    with_expert: bool,
}

impl Doors {
    pub fn new(tasks: usize) -> Self {
        Doors { tasks, doors: 0, prize: 0, task: None, with_expert: true }
    }

    pub fn without_expert(mut self) -> Self {
        self.with_expert = false;
        self
    }
}

/// The analytic success probability of the random-admissible policy with `doors` doors.
pub fn random_success(doors: usize) -> f64 {
    let p = 1.0 / (doors + 1) as f64;
    (0..BUDGET as i32).map(|t| p * p.powi(t)).sum()
}

impl Environment for Doors {
    fn name(&self) -> &str {
        "doors"
    }

    fn num_tasks(&self, split: Split) -> Result<usize, EnvError> {
        match split {
            Split::Test => Ok(self.tasks),
            other => Err(EnvError::UnsupportedSplit(other)),
        }
    }

    fn reset(&mut self, task: &TaskRef, seed: u64) -> Result<Reset, EnvError> {
        let TaskRef::Index { split: Split::Test, index } = *task else {
            return Err(EnvError::UnknownTask(format!("{task:?}")));
        };
        if index >= self.tasks {
            return Err(EnvError::UnknownTask(format!("index {index}")));
        }
        self.doors = if index % 2 == 0 { 2 } else { 4 };
        self.prize = rng_from_seed(seed).random_range(0..self.doors);
        let info = TaskInfo {
            id: format!("doors-{index}"),
            task_type: if self.doors == 2 { "two-doors".into() } else { "four-doors".into() },
            split: Split::Test,
            description: "open the door that hides the prize".into(),
        };
        self.task = Some(info.clone());
        Ok(Reset {
            observation: format!("You see {} doors.", self.doors).into(),
            task: info,
            admissible_actions: self.admissible_actions(),
        })
    }

    fn step(&mut self, action: &str) -> Result<Transition, EnvError> {
        if self.task.is_none() {
            return Err(EnvError::NotReset);
        }
        let opened =
            action.strip_prefix("open door ").and_then(|d| d.parse::<usize>().ok()).filter(|&d| d < self.doors);
        let (observation, done, won) = match opened {
            Some(door) if door == self.prize => ("The prize!", true, true),
            Some(_) => ("Empty.", true, false),
            None if action == "look" => ("You see doors.", false, false),
            None => ("Nothing happens.", false, false),
        };
        Ok(Transition {
            observation: observation.into(),
            reward: if won { 1.0 } else { 0.0 },
            done,
            won,
            score: if won { 1.0 } else { 0.0 },
            admissible_actions: self.admissible_actions(),
            info: Default::default(),
        })
    }

    fn admissible_actions(&self) -> Option<Vec<Action>> {
        let mut actions: Vec<Action> = (0..self.doors).map(|d| format!("open door {d}").into()).collect();
        actions.push("look".into());
        Some(actions)
    }

    fn task(&self) -> Option<&TaskInfo> {
        self.task.as_ref()
    }

    fn step_budget(&self) -> usize {
        BUDGET
    }

    fn expert_action(&mut self) -> Result<Option<Action>, EnvError> {
        Ok(self.with_expert.then(|| format!("open door {}", self.prize).into()))
    }
}

/// A factory of `Doors` with `tasks` tasks.
pub fn doors(tasks: usize) -> impl EnvironmentFactory<Env = Doors> {
    move || Ok::<_, EnvError>(Doors::new(tasks))
}

/// A policy answering every action query with `f(state)` and every comparison with `g(actions)`.
pub struct Scripted<F> {
    pub name: String,
    pub act: F,
}

impl<F: Fn(&AgentState) -> String + Send + Sync> Policy for Scripted<F> {
    fn name(&self) -> &str {
        &self.name
    }

    fn generate(&self, queries: &[Query], _params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
        Ok(queries
            .iter()
            .map(|q| match &q.kind {
                QueryKind::Act(state) => (self.act)(state),
                QueryKind::Compare { state, .. } => (self.act)(state),
                // Free text, and kinds act-core may add.
                _ => String::new(),
            })
            .collect())
    }
}

pub fn scripted(
    name: &str,
    act: impl Fn(&AgentState) -> String + Send + Sync,
) -> Scripted<impl Fn(&AgentState) -> String + Send + Sync> {
    Scripted { name: name.to_owned(), act }
}
