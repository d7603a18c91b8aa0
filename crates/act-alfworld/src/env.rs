//! [`AlfworldEnv`]: the native simulator behind act-core's [`Environment`] trait.

use act_core::{Action, EnvError, Environment, Observation, Reset, Split, TaskInfo, TaskRef, Transition};
use serde_json::{Map, Value};

use crate::config::AlfworldConfig;
use crate::expert::Expert;
use crate::scene::Scene;
use crate::split::{generate_game, parse_task_id, split_size, task_id};
use crate::text;
use crate::world::World;

/// The native ALFWorld text environment.
///
/// Games are a pure function of the config's `dataset_seed`, the split and the index; the reset
/// `seed` is recorded but changes nothing, because the world and the expert are deterministic.
#[derive(Clone, Debug, Default)]
pub struct AlfworldEnv {
    config: AlfworldConfig,
    episode: Option<Episode>,
    /// The last game generated: GRPO-style groups reset the same game many times in a row.
    last_game: Option<((Split, usize), Scene)>,
}

#[derive(Clone, Debug)]
struct Episode {
    world: World,
    expert: Expert,
    task: TaskInfo,
    steps: usize,
    won: bool,
    done: bool,
}

impl AlfworldEnv {
    /// An environment with `config`; fails with [`EnvError::Config`] on invalid settings.
    pub fn new(config: AlfworldConfig) -> Result<AlfworldEnv, EnvError> {
        config.validate().map_err(EnvError::Config)?;
        Ok(AlfworldEnv { config, episode: None, last_game: None })
    }

    /// The configuration.
    pub fn config(&self) -> &AlfworldConfig {
        &self.config
    }

    /// The world of the current episode.
    pub fn world(&self) -> Option<&World> {
        self.episode.as_ref().map(|e| &e.world)
    }

    /// Steps used in the current episode.
    pub fn steps_used(&self) -> usize {
        self.episode.as_ref().map_or(0, |e| e.steps)
    }

    fn resolve(&self, task: &TaskRef) -> Result<(Split, usize), EnvError> {
        match task {
            TaskRef::Index { split, index } => Ok((*split, *index)),
            TaskRef::Id(id) => parse_task_id(id),
        }
    }
}

fn actions(world: &World) -> Vec<Action> {
    world.admissible().iter().map(|(t, _)| Action::from(t.as_str())).collect()
}

impl Environment for AlfworldEnv {
    fn name(&self) -> &str {
        "alfworld"
    }

    fn num_tasks(&self, split: Split) -> Result<usize, EnvError> {
        split_size(&self.config, split)
    }

    fn reset(&mut self, task: &TaskRef, _seed: u64) -> Result<Reset, EnvError> {
        let (split, index) = self.resolve(task)?;
        let scene = match &self.last_game {
            Some((key, scene)) if *key == (split, index) => scene.clone(),
            _ => {
                let scene = generate_game(&self.config, split, index)?;
                self.last_game = Some(((split, index), scene.clone()));
                scene
            }
        };
        let info = TaskInfo {
            id: task_id(split, index),
            task_type: scene.goal.task_type.as_str().to_owned(),
            split,
            description: scene.goal.description(),
        };
        let world = World::new(scene, self.config.grammar);
        let expert = Expert::new(&world);
        let reset = Reset {
            observation: Observation::new(world.intro()),
            task: info.clone(),
            admissible_actions: Some(actions(&world)),
        };
        self.episode = Some(Episode { world, expert, task: info, steps: 0, won: false, done: false });
        Ok(reset)
    }

    fn step(&mut self, action: &str) -> Result<Transition, EnvError> {
        let budget = self.config.step_budget;
        let count_invalid = self.config.count_invalid_steps;
        let episode = self.episode.as_mut().filter(|e| !e.done).ok_or(EnvError::NotReset)?;
        let mut info = Map::new();
        let (observation, valid) = match episode.world.execute(action) {
            Some((command, feedback)) => {
                episode.expert.observe(&episode.world, command);
                (feedback, true)
            }
            None => (text::NOTHING_HAPPENS.to_owned(), false),
        };
        if valid || count_invalid {
            episode.steps += 1;
        }
        let newly_won = valid && !episode.won && episode.world.goal_satisfied();
        episode.won |= newly_won;
        episode.done = episode.won || episode.steps >= budget;
        info.insert("valid".into(), Value::Bool(valid));
        info.insert("steps_used".into(), Value::from(episode.steps));
        Ok(Transition {
            observation: Observation::new(observation),
            reward: if newly_won { 1.0 } else { 0.0 },
            done: episode.done,
            won: episode.won,
            score: if episode.won { 1.0 } else { 0.0 },
            admissible_actions: Some(actions(&episode.world)),
            info,
        })
    }

    fn admissible_actions(&self) -> Option<Vec<Action>> {
        self.episode.as_ref().map(|e| actions(&e.world))
    }

    fn task(&self) -> Option<&TaskInfo> {
        self.episode.as_ref().map(|e| &e.task)
    }

    fn step_budget(&self) -> usize {
        self.config.step_budget
    }

    fn expert_action(&mut self) -> Result<Option<Action>, EnvError> {
        let episode = self.episode.as_ref().ok_or(EnvError::NotReset)?;
        if episode.done {
            return Ok(None);
        }
        Ok(episode.expert.next_command(&episode.world).map(|c| Action::from(episode.world.command_text(c).as_str())))
    }
}

/// Makes independent [`AlfworldEnv`]s with one configuration (act-core's `EnvironmentFactory`).
#[derive(Clone, Debug, Default)]
pub struct AlfworldFactory {
    /// The configuration every environment gets.
    pub config: AlfworldConfig,
}

impl AlfworldFactory {
    /// A factory for `config`.
    pub fn new(config: AlfworldConfig) -> AlfworldFactory {
        AlfworldFactory { config }
    }
}

impl act_core::EnvironmentFactory for AlfworldFactory {
    type Env = AlfworldEnv;

    fn make(&self) -> Result<AlfworldEnv, EnvError> {
        AlfworldEnv::new(self.config.clone())
    }
}
