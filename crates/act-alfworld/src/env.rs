//! [`AlfworldEnv`]: the native simulator behind act-core's [`Environment`] trait.

use act_core::{Action, EnvError, EnvSnapshot, Environment, Observation, Reset, Split, TaskInfo, TaskRef, Transition};
use serde_json::{Map, Value};

use std::sync::Arc;

use crate::bridge::{ALFWORLD_JSON_DIR, ALFWORLD_SPLIT_DIRS, GameSet};
use crate::commands::Command;
use crate::config::AlfworldConfig;
use crate::expert::Expert;
use crate::pddl::load_scene;
use crate::scene::Scene;
use crate::split::{generate_game, parse_task_id, split_size, task_id};
use crate::text;
use crate::world::World;

/// The native ALFWorld text environment.
///
/// Games are a pure function of the config's `dataset_seed`, the split and the index; the reset
/// `seed` is recorded but changes nothing, because the world and the expert are deterministic. With a
/// [`game_dir`](AlfworldConfig::game_dir), games are upstream's files instead, read when reset; the reset seed then
/// picks the task line's phrasing (upstream draws one of two at random).
#[derive(Clone, Debug, Default)]
pub struct AlfworldEnv {
    config: AlfworldConfig,
    /// Upstream's game files, when the config names a game directory.
    games: Option<Arc<GameSet>>,
    episode: Option<Episode>,
    /// The last game generated or read, with its id: GRPO-style groups reset the same game many times in a row.
    last_game: Option<((Split, usize), Scene, String)>,
}

#[derive(Clone, Debug)]
struct Episode {
    world: World,
    expert: Expert,
    task: TaskInfo,
    steps: usize,
    won: bool,
    done: bool,
    /// Per receptacle: whether a `go to` has reached it (for the memory line).
    visited: Vec<bool>,
}

impl Episode {
    /// Appends the memory line (`config.memory_line`) to `observation`.
    fn remember(&self, config: &AlfworldConfig, mut observation: String) -> String {
        if config.memory_line {
            let scene = self.world.scene();
            let unvisited = (0..scene.receptacles.len())
                .filter(|&r| !self.visited[r])
                .map(|r| (scene.named_class(r).name(), scene.receptacles[r].number));
            observation.push_str("\nUnvisited: ");
            push_ranges(&mut observation, unvisited);
            observation.push('.');
        }
        observation
    }
}

/// Appends `receptacles` (class name, number) as runs of consecutive numbers per class, classes in order of first
/// appearance, numbers ascending: `cabinet 1-4, cabinet 6, drawer 2-3`; `nothing` when there are none. A run's first
/// number is where the expert's search of a class goes next (it searches a class in ascending numbers), and a
/// kitchen's 35 receptacles take a dozen entries instead of 35.
fn push_ranges<'a>(out: &mut String, receptacles: impl Iterator<Item = (&'a str, u16)>) {
    let mut classes: Vec<(&str, Vec<u16>)> = Vec::new();
    for (class, number) in receptacles {
        match classes.iter_mut().find(|(c, _)| *c == class) {
            Some((_, numbers)) => numbers.push(number),
            None => classes.push((class, vec![number])),
        }
    }
    if classes.is_empty() {
        out.push_str("nothing");
    }
    let mut first = true;
    for (class, mut numbers) in classes {
        numbers.sort_unstable();
        let mut i = 0;
        while i < numbers.len() {
            let mut j = i;
            while j + 1 < numbers.len() && numbers[j + 1] == numbers[j] + 1 {
                j += 1;
            }
            if !first {
                out.push_str(", ");
            }
            first = false;
            out.push_str(&if i == j {
                format!("{class} {}", numbers[i])
            } else {
                format!("{class} {}-{}", numbers[i], numbers[j])
            });
            i = j + 1;
        }
    }
}

impl AlfworldEnv {
    /// An environment with `config`; fails with [`EnvError::Config`] on invalid settings.
    pub fn new(config: AlfworldConfig) -> Result<AlfworldEnv, EnvError> {
        config.validate().map_err(EnvError::Config)?;
        let games = match &config.game_dir {
            Some(dir) => Some(Arc::new(game_set(dir)?)),
            None => None,
        };
        Ok(AlfworldEnv { config, games, episode: None, last_game: None })
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
        match (task, &self.games) {
            (TaskRef::Index { split, index }, _) => Ok((*split, *index)),
            (TaskRef::Id(id), None) => parse_task_id(id),
            (TaskRef::Id(id), Some(games)) => {
                let (split, entry) = games.find(id)?;
                let index = games.split(split).and_then(|g| g.iter().position(|e| e == entry));
                Ok((split, index.expect("find returns an entry of the split")))
            }
        }
    }

    /// The scene of game `index` of `split`, and its task id.
    fn game(&self, split: Split, index: usize) -> Result<(Scene, String), EnvError> {
        match &self.games {
            None => Ok((generate_game(&self.config, split, index)?, task_id(split, index))),
            Some(games) => {
                let entry = games.get(split, index)?;
                Ok((load_scene(&entry.path)?, entry.id.clone()))
            }
        }
    }
}

/// The games under `dir`: an ALFWorld data download's three splits, or every game as the training split.
fn game_set(dir: &std::path::Path) -> Result<GameSet, EnvError> {
    let has_splits = [dir.to_path_buf(), dir.join(ALFWORLD_JSON_DIR)]
        .iter()
        .any(|root| ALFWORLD_SPLIT_DIRS.iter().any(|(folder, _)| root.join(folder).is_dir()));
    if has_splits { GameSet::from_alfworld_data(dir) } else { GameSet::from_dir(dir, Split::Train) }
}

fn actions(world: &World) -> Vec<Action> {
    world.admissible().iter().map(|(t, _)| Action::from(t.as_str())).collect()
}

impl Environment for AlfworldEnv {
    fn name(&self) -> &str {
        "alfworld"
    }

    fn num_tasks(&self, split: Split) -> Result<usize, EnvError> {
        match &self.games {
            None => split_size(&self.config, split),
            Some(games) => games.len(split),
        }
    }

    fn reset(&mut self, task: &TaskRef, seed: u64) -> Result<Reset, EnvError> {
        let (split, index) = self.resolve(task)?;
        let (mut scene, id) = match &self.last_game {
            Some((key, scene, id)) if *key == (split, index) => (scene.clone(), id.clone()),
            _ => {
                let (scene, id) = self.game(split, index)?;
                self.last_game = Some(((split, index), scene.clone(), id.clone()));
                (scene, id)
            }
        };
        if self.games.is_some() {
            scene.goal.phrasing = (seed & 1) as u8;
        }
        let info = TaskInfo {
            id,
            task_type: scene.goal.task_type.as_str().to_owned(),
            split,
            description: scene.goal.description(),
        };
        let world = World::new(scene, self.config.grammar);
        let expert = Expert::with_search_order(&world, self.config.expert_search);
        let intro = world.intro();
        let admissible_actions = Some(actions(&world));
        let visited = vec![false; world.names().receptacles.len()];
        let episode = Episode { world, expert, task: info.clone(), steps: 0, won: false, done: false, visited };
        let observation = Observation::new(episode.remember(&self.config, intro));
        self.episode = Some(episode);
        Ok(Reset { observation, task: info, admissible_actions })
    }

    fn step(&mut self, action: &str) -> Result<Transition, EnvError> {
        let budget = self.config.step_budget;
        let count_invalid = self.config.count_invalid_steps;
        let episode = self.episode.as_mut().filter(|e| !e.done).ok_or(EnvError::NotReset)?;
        let mut info = Map::new();
        let (observation, valid) = match episode.world.execute(action) {
            Some((command, feedback)) => {
                episode.expert.observe(&episode.world, command);
                if let Command::GoTo { receptacle } = command {
                    episode.visited[receptacle] = true;
                }
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
        let observation = episode.remember(&self.config, observation);
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

    /// The whole episode (world, expert, step count), cloned: a few kilobytes, microseconds.
    fn snapshot(&self) -> Option<EnvSnapshot> {
        self.episode.clone().map(|episode| EnvSnapshot::new("alfworld", episode))
    }

    fn restore(&mut self, snapshot: &EnvSnapshot) -> Result<(), EnvError> {
        let episode = snapshot.state::<Episode>()?;
        if episode.world.grammar() != self.config.grammar {
            return Err(EnvError::Config(format!(
                "the snapshot's episode speaks the {:?} grammar, this environment the {:?} one",
                episode.world.grammar(),
                self.config.grammar
            )));
        }
        self.episode = Some(episode.clone());
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use act_core::collect_expert_trajectory;

    fn ranges(receptacles: &[(&str, u16)]) -> String {
        let mut out = String::new();
        push_ranges(&mut out, receptacles.iter().copied());
        out
    }

    #[test]
    fn receptacles_print_as_runs_of_numbers_per_class() {
        assert_eq!(ranges(&[]), "nothing");
        assert_eq!(ranges(&[("desk", 1)]), "desk 1");
        let room = [("cabinet", 6), ("cabinet", 4), ("bed", 1), ("cabinet", 3), ("cabinet", 1), ("cabinet", 2)];
        assert_eq!(ranges(&room), "cabinet 1-4, cabinet 6, bed 1");
    }

    /// The memory line of `observation`, if it has one.
    fn memory_line(observation: &str) -> Option<&str> {
        observation.rsplit_once("\nUnvisited: ").map(|(_, line)| line)
    }

    #[test]
    fn the_memory_line_lists_the_receptacles_not_gone_to_yet() {
        let task = TaskRef::index(Split::Train, 2);
        let mut plain = AlfworldEnv::new(AlfworldConfig::default()).unwrap();
        let mut env = AlfworldEnv::new(AlfworldConfig::default().with_memory_line(true)).unwrap();
        let plain_reset = plain.reset(&task, 0).unwrap();
        assert_eq!(memory_line(plain_reset.observation.as_str()), None, "off by default");
        let reset = env.reset(&task, 0).unwrap();
        let receptacles: Vec<(&'static str, u16)> =
            env.world().unwrap().scene().receptacles.iter().map(|r| (r.class.name(), r.number)).collect();
        let line = |except: &[usize]| {
            let left = receptacles.iter().enumerate().filter(|(i, _)| !except.contains(i)).map(|(_, r)| *r);
            let mut out = String::new();
            push_ranges(&mut out, left);
            out + "."
        };
        assert_eq!(memory_line(reset.observation.as_str()), Some(line(&[]).as_str()));
        assert!(reset.observation.as_str().starts_with(plain_reset.observation.as_str()));

        // An invalid command changes nothing; each `go to` strikes its receptacle from the line.
        assert_eq!(memory_line(env.step("jump").unwrap().observation.as_str()), Some(line(&[]).as_str()));
        let names = env.world().unwrap().names().receptacles.clone();
        let second = format!("go to {}", names[1]);
        let after = env.step(&second).unwrap();
        assert_eq!(memory_line(after.observation.as_str()), Some(line(&[1]).as_str()));
        assert!(after.observation.as_str().starts_with(plain.step(&second).unwrap().observation.as_str()));
        for name in &names {
            if env.step(&format!("go to {name}")).unwrap().done {
                return;
            }
        }
        assert_eq!(memory_line(env.step("look").unwrap().observation.as_str()), Some("nothing."));
    }

    #[test]
    fn the_memory_line_changes_no_dynamics() {
        let mut plain = AlfworldEnv::new(AlfworldConfig::default()).unwrap();
        let mut env = AlfworldEnv::new(AlfworldConfig::default().with_memory_line(true)).unwrap();
        for index in 0..12 {
            let task = TaskRef::index(Split::EvalOutOfDistribution, index);
            let a = collect_expert_trajectory(&mut plain, &task, 0).unwrap();
            let b = collect_expert_trajectory(&mut env, &task, 0).unwrap();
            assert!(b.outcome.won);
            let actions = |t: &act_core::Trajectory| t.steps.iter().map(|s| s.action.clone()).collect::<Vec<_>>();
            assert_eq!(actions(&a), actions(&b));
            for (x, y) in a.steps.iter().zip(&b.steps) {
                assert!(y.observation.as_str().starts_with(x.observation.as_str()));
                assert!(memory_line(y.observation.as_str()).is_some());
            }
        }
    }
}
