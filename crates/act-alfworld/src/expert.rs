//! The handcoded expert, after upstream's `alfworld/agents/expert/handcoded_expert.py`.

use crate::commands::Command;
use crate::config::SearchOrder;
use crate::task::TaskType;
use crate::vocab::ObjectClass;
use crate::world::World;

/// The expert's memory of one episode.
///
/// The strategy is upstream's: a sub-goal list per task type (find the object, take it, go to the
/// microwave / fridge / sink basin and heat / cool / clean it, or find the lamp and use it, then
/// find the receptacle and put it there; pick-two runs the simple list twice), where "find" goes to
/// where the class was last seen, and otherwise searches receptacles in prior order (receptacles
/// that may hold the class, last listed first, then all others); it opens closed receptacles it
/// searches and closes them again before moving on, and first returns a wrongly held object to
/// where it came from.
///
/// Unlike upstream, which parses its own observations and keeps a sub-goal index, this expert
/// reads sub-goal progress from the state (as upstream does with PDDL facts) and remembers what
/// every executed command revealed, whoever chose it. It can therefore take over from any state,
/// and it is deterministic (upstream's random tie-breaks pick the first candidate in listing order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expert {
    /// Per object: the receptacle it was last seen in, and when.
    seen: Vec<Option<(usize, u32)>>,
    /// Per receptacle: whether its inside has been seen.
    checked: Vec<bool>,
    /// A receptacle the agent opened and has neither closed, left, nor taken from.
    opened_here: Option<usize>,
    /// Where the held object was taken from.
    came_from: Option<usize>,
    tick: u32,
    order: SearchOrder,
}

impl Expert {
    /// A fresh memory for `world` at its start (only the receptacle list is known), searching in upstream's order.
    pub fn new(world: &World) -> Expert {
        Self::with_search_order(world, SearchOrder::LastListedFirst)
    }

    /// As [`Expert::new`], searching in `order`.
    pub fn with_search_order(world: &World, order: SearchOrder) -> Expert {
        Expert {
            seen: vec![None; world.scene().objects.len()],
            checked: vec![false; world.scene().receptacles.len()],
            opened_here: None,
            came_from: None,
            tick: 0,
            order,
        }
    }

    /// Records what `command`, just applied to `world`, revealed or changed.
    pub fn observe(&mut self, world: &World, command: Command) {
        self.tick += 1;
        match command {
            Command::GoTo { receptacle } => {
                self.opened_here = None;
                // What the agent sees on arrival: the receptacle it went to, and the open receptacles and
                // surfaces sharing its location.
                for r in
                    world.here_receptacles().filter(|&r| r == receptacle || world.accessible(r)).collect::<Vec<_>>()
                {
                    if world.accessible(r) {
                        self.reveal(world, r);
                    }
                }
            }
            Command::Open { receptacle } => {
                self.opened_here = Some(receptacle);
                self.reveal(world, receptacle);
            }
            Command::ExamineReceptacle { receptacle } if world.accessible(receptacle) => self.reveal(world, receptacle),
            Command::Close { .. } => self.opened_here = None,
            Command::Take { object, receptacle } => {
                self.seen[object] = None;
                self.came_from = Some(receptacle);
                self.opened_here = None;
            }
            Command::Put { object, receptacle } => {
                self.seen[object] = Some((receptacle, self.tick));
                self.came_from = None;
            }
            _ => {}
        }
    }

    fn reveal(&mut self, world: &World, receptacle: usize) {
        self.checked[receptacle] = true;
        for (object, place) in world.state().places.iter().enumerate() {
            if place.contains(receptacle) {
                self.seen[object] = Some((receptacle, self.tick));
            } else if self.seen[object].is_some_and(|(r, _)| r == receptacle) {
                self.seen[object] = None;
            }
        }
    }

    /// The expert's next command; `None` once the goal holds.
    pub fn next_command(&self, world: &World) -> Option<Command> {
        if world.goal_satisfied() {
            return None;
        }
        let scene = world.scene();
        let goal = scene.goal;
        let state = world.state();
        let Some(held) = state.held else {
            let exclude_done = goal.task_type == TaskType::PickTwoObjAndPlace;
            return Some(self.find(world, goal.object, exclude_done));
        };
        if scene.objects[held].class != goal.object {
            return Some(self.return_object(world, held));
        }
        if goal.task_type == TaskType::LookAtObjInLight {
            let lamp_class = goal.lamp?;
            return Some(self.find(world, lamp_class, false));
        }
        if let Some(appliance) = goal.task_type.appliance() {
            let flags = state.objects[held];
            let done = match goal.task_type {
                TaskType::PickHeatThenPlaceInRecep => flags.hot,
                TaskType::PickCoolThenPlaceInRecep => flags.cool,
                _ => flags.clean,
            };
            if !done {
                if let Some(at) = world.here_receptacles().find(|&r| scene.receptacles[r].class == appliance) {
                    return Some(match goal.task_type {
                        TaskType::PickHeatThenPlaceInRecep => Command::Heat { object: held, receptacle: at },
                        TaskType::PickCoolThenPlaceInRecep => Command::Cool { object: held, receptacle: at },
                        _ => Command::Clean { object: held, receptacle: at },
                    });
                }
                // Upstream's `goto` sub-goal: the first receptacle of that class in the room list.
                let first = scene.receptacles.iter().position(|r| r.class == appliance)?;
                return Some(Command::GoTo { receptacle: first });
            }
        }
        let parent = goal.receptacle?;
        let parent_of = |o: usize| state.places[o].iter().find(|&r| scene.receptacles[r].class == parent);
        let placed_twin = (goal.task_type == TaskType::PickTwoObjAndPlace)
            .then(|| {
                (0..scene.objects.len())
                    .find(|&o| o != held && scene.objects[o].class == goal.object && parent_of(o).is_some())
            })
            .flatten();
        let here_parent = world.here_receptacles().find(|&r| scene.receptacles[r].class == parent);
        let destination = match (placed_twin.and_then(parent_of), here_parent) {
            (Some(r), _) => r,
            (_, Some(at)) => at,
            // Upstream searches the receptacles of that class last-listed first.
            _ => scene.receptacles.iter().rposition(|r| r.class == parent)?,
        };
        Some(self.put_into(world, held, destination))
    }

    fn put_into(&self, world: &World, object: usize, receptacle: usize) -> Command {
        if !world.here(receptacle) {
            Command::GoTo { receptacle }
        } else if !world.accessible(receptacle) {
            Command::Open { receptacle }
        } else {
            Command::Put { object, receptacle }
        }
    }

    fn return_object(&self, world: &World, held: usize) -> Command {
        let scene = world.scene();
        let class = scene.objects[held].class;
        let home = self
            .came_from
            .filter(|&r| scene.receptacles[r].class.can_contain(class))
            .or_else(|| scene.receptacles.iter().position(|r| r.class.can_contain(class)));
        match home {
            Some(receptacle) => self.put_into(world, held, receptacle),
            // A class no receptacle of this room accepts: in the procedural scenes every object starts in a
            // receptacle that accepts it; in upstream's games a papertowelroll or a teddybear, once taken, can
            // be put down nowhere (no `canContain` names them), and nothing is left to do with the hands.
            None => Command::Inventory,
        }
    }

    /// Finds an object of `class` and acts on it (take it, or use it when it is a lamp).
    fn find(&self, world: &World, class: ObjectClass, exclude_done: bool) -> Command {
        let scene = world.scene();
        let state = world.state();
        let goal = scene.goal;
        // Not the held object, which an upstream game may still list in another receptacle; with `exclude_done`,
        // not one already in a receptacle of the goal's class.
        let candidate = |o: usize| {
            scene.objects[o].class == class
                && state.held != Some(o)
                && !(exclude_done
                    && state.places[o].iter().any(|r| Some(scene.receptacles[r].class) == goal.receptacle))
        };
        // Within reach: the receptacles at the agent's location (the one it went to first).
        let mut here: Vec<usize> = world.here_receptacles().collect();
        if let Some(at) = state.agent {
            here.retain(|&r| r != at);
            here.insert(0, at);
        }
        for &at in &here {
            if world.accessible(at)
                && let Some(object) = world.contents(at).find(|&o| candidate(o))
            {
                let command =
                    if class.toggleable() { Command::Use { object } } else { Command::Take { object, receptacle: at } };
                return command;
            }
        }
        let known = (0..scene.objects.len())
            .filter(|&o| candidate(o))
            .filter_map(|o| self.seen[o].map(|(r, tick)| (tick, std::cmp::Reverse(o), r)))
            .max()
            .map(|(_, _, r)| r);
        for &at in &here {
            if known == Some(at) || (!self.checked[at] && !world.accessible(at)) {
                return Command::Open { receptacle: at };
            }
        }
        for &at in &here {
            if self.opened_here == Some(at) && state.open[at] {
                return Command::Close { receptacle: at };
            }
        }
        if let Some(receptacle) = known.filter(|&r| !world.here(r)) {
            return Command::GoTo { receptacle };
        }
        let unchecked = self.search_order(world, class).find(|&r| !self.checked[r] && !world.here(r));
        let receptacle = unchecked.or_else(|| self.search_order(world, class).find(|&r| !world.here(r))).unwrap_or(0);
        Command::GoTo { receptacle }
    }

    /// The search order: receptacles whose class may hold `class`, then the others, each part in `self.order`
    /// (upstream's: last listed first).
    fn search_order<'a>(&self, world: &'a World, class: ObjectClass) -> impl Iterator<Item = usize> + 'a {
        let receptacles = &world.scene().receptacles;
        let prior = move |r: usize| receptacles[r].class.can_contain(class);
        let n = receptacles.len();
        let listed: Vec<usize> = match self.order {
            SearchOrder::LastListedFirst => (0..n).rev().collect(),
            SearchOrder::NumbersDescending => {
                // The room lists each class's receptacles together: reverse the classes, keep each run's order.
                let mut runs: Vec<Vec<usize>> = Vec::new();
                for r in 0..n {
                    match runs.last_mut() {
                        Some(run) if receptacles[run[0]].class == receptacles[r].class => run.push(r),
                        _ => runs.push(vec![r]),
                    }
                }
                runs.into_iter().rev().flatten().collect()
            }
        };
        let (likely, others): (Vec<usize>, Vec<usize>) = listed.into_iter().partition(|&r| prior(r));
        likely.into_iter().chain(others)
    }
}
