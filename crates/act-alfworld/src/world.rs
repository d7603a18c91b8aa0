//! The world state of one game, its admissible commands and their effects.

use crate::commands::{Command, EntityNames};
use crate::config::GrammarVersion;
use crate::scene::Scene;
use crate::task::TaskType;
use crate::text::{self, ObjectLook, ReceptacleView};
use crate::vocab::ReceptacleClass;

/// A set of small indices below [`IndexSet::CAPACITY`], one bit each: the receptacles an object is in (upstream's
/// `inReceptacle` facts: usually one, none while held, several where a game states so, [`Scene::also_in`]), or the
/// locations it is at (`objectAtLocation`, by location number). A scene has at most that many receptacles and
/// locations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct IndexSet(u128);

impl IndexSet {
    /// The most receptacles, and the highest location number plus one, a scene may have (upstream's rooms have at
    /// most about 60 of either).
    pub const CAPACITY: usize = 128;

    /// Whether `index` is in the set.
    pub fn contains(self, index: usize) -> bool {
        self.0 >> index & 1 == 1
    }

    /// Adds `index`.
    pub fn insert(&mut self, index: usize) {
        self.0 |= 1 << index;
    }

    /// Removes `index`.
    pub fn remove(&mut self, index: usize) {
        self.0 &= !(1 << index);
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the two sets share an index.
    pub fn intersects(self, other: IndexSet) -> bool {
        self.0 & other.0 != 0
    }

    /// The indices, in increasing order.
    pub fn iter(self) -> impl Iterator<Item = usize> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let r = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                r
            })
        })
    }
}

impl FromIterator<usize> for IndexSet {
    fn from_iter<I: IntoIterator<Item = usize>>(indices: I) -> Self {
        let mut set = IndexSet::default();
        indices.into_iter().for_each(|i| set.insert(i));
        set
    }
}

/// The state flags of one object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ObjectState {
    /// `isHot`.
    pub hot: bool,
    /// `isCool`.
    pub cool: bool,
    /// `isClean`.
    pub clean: bool,
    /// `isSliced`.
    pub sliced: bool,
    /// `isToggled` (a lamp that was used).
    pub toggled: bool,
    /// `isOn`.
    pub on: bool,
}

/// The mutable part of a world: everything a command can change. Two worlds of one scene with
/// equal states behave identically.
///
/// Preconditions and effects follow upstream's PDDL domain (`alfworld/data/alfred.pddl`) as the
/// TextWorld engine grounds it: every receptacle at the agent's location is within reach; `take` needs empty hands and an open
/// receptacle if openable; `put` needs an open receptacle that `canContain` the object; heat, cool
/// and clean work with the appliance closed and leave the object in hand; `use` needs the lamp at
/// the agent's location; `slice` needs a held knife and the object at the location (even behind a
/// closed door); `examine O` is admissible for the held object only.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WorldState {
    /// Whether each receptacle is open.
    pub open: Vec<bool>,
    /// The receptacles each object is in.
    pub places: Vec<IndexSet>,
    /// Per object, the receptacles it was taken from and not put back into since (the `not_inReceptacle` facts
    /// upstream's engine asserts when `take` removes `inReceptacle`).
    pub taken_from: Vec<IndexSet>,
    /// Per object, the location numbers it is at (`objectAtLocation`: where it started, less where it was taken,
    /// plus where it was put down), which `slice` and `look` read.
    pub at: Vec<IndexSet>,
    /// Each object's flags.
    pub objects: Vec<ObjectState>,
    /// The receptacle the agent went to last (it stands at its location, with every receptacle there); `None` in
    /// the middle of the room.
    pub agent: Option<usize>,
    /// The held object.
    pub held: Option<usize>,
}

/// One game's world: the scene, its state, and the admissible commands in that state.
#[derive(Clone, Debug)]
pub struct World {
    scene: Scene,
    names: EntityNames,
    grammar: GrammarVersion,
    state: WorldState,
    /// Rank of each receptacle name, then each object name, among all names in string order:
    /// commands sort by (verb, rank, rank) exactly as their texts sort, without comparing strings.
    name_ranks: Vec<u16>,
    /// Whether admissible commands get their texts (off for the generator's solvability check).
    render: bool,
    admissible: Vec<(String, Command)>,
    scratch: Vec<(u64, Command)>,
}

impl World {
    /// The world at the start of `scene`, speaking `grammar`.
    pub fn new(scene: Scene, grammar: GrammarVersion) -> World {
        World::build(scene, grammar, true)
    }

    /// A world whose admissible commands carry no texts (cheaper; [`World::parse`] finds nothing).
    pub(crate) fn new_unrendered(scene: Scene, grammar: GrammarVersion) -> World {
        World::build(scene, grammar, false)
    }

    fn build(scene: Scene, grammar: GrammarVersion, render: bool) -> World {
        let names = EntityNames {
            receptacles: (0..scene.receptacles.len())
                .map(|r| format!("{} {}", scene.named_class(r).name(), scene.receptacles[r].number))
                .collect(),
            objects: scene.objects.iter().map(|o| format!("{} {}", o.class.name(), o.number)).collect(),
        };
        let state = WorldState {
            open: vec![false; scene.receptacles.len()],
            places: (0..scene.objects.len()).map(|o| scene.start_receptacles(o).collect()).collect(),
            taken_from: vec![IndexSet::default(); scene.objects.len()],
            at: (0..scene.objects.len()).map(|o| scene.start_locations(o).map(usize::from).collect()).collect(),
            objects: (0..scene.objects.len())
                .map(|o| ObjectState { cool: scene.start_cool.binary_search(&o).is_ok(), ..ObjectState::default() })
                .collect(),
            agent: None,
            held: None,
        };
        let mut order: Vec<(&str, usize)> =
            names.receptacles.iter().chain(&names.objects).map(String::as_str).zip(0..).collect();
        order.sort_unstable();
        let mut name_ranks = vec![0u16; order.len()];
        for (rank, (_, entity)) in order.into_iter().enumerate() {
            name_ranks[entity] = u16::try_from(rank + 1).unwrap_or(u16::MAX);
        }
        let mut world =
            World { scene, names, grammar, state, name_ranks, render, admissible: Vec::new(), scratch: Vec::new() };
        world.rebuild_admissible();
        world
    }

    /// The sort key of a command: its texts sort in this order too.
    fn sort_key(&self, command: Command) -> u64 {
        let r = |i: usize| u64::from(self.name_ranks[i]);
        let o = |i: usize| u64::from(self.name_ranks[self.scene.receptacles.len() + i]);
        // Verbs in the string order of their texts.
        let (verb, first, second) = match command {
            Command::Clean { object, receptacle } => (0, o(object), r(receptacle)),
            Command::Close { receptacle } => (1, r(receptacle), 0),
            Command::Cool { object, receptacle } => (2, o(object), r(receptacle)),
            Command::ExamineReceptacle { receptacle } => (3, r(receptacle), 0),
            Command::ExamineObject { object } => (3, o(object), 0),
            Command::GoTo { receptacle } => (4, r(receptacle), 0),
            Command::Heat { object, receptacle } => (5, o(object), r(receptacle)),
            Command::Help => (6, 0, 0),
            Command::Inventory => (7, 0, 0),
            Command::Look => (8, 0, 0),
            Command::Put { object, receptacle } if self.grammar == GrammarVersion::V04 => (9, o(object), r(receptacle)),
            Command::Open { receptacle } => (10, r(receptacle), 0),
            Command::Put { object, receptacle } => (11, o(object), r(receptacle)),
            Command::Slice { object, knife } => (12, o(object), o(knife)),
            Command::Take { object, receptacle } => (13, o(object), r(receptacle)),
            Command::Use { object } => (14, o(object), 0),
        };
        verb << 32 | first << 16 | second
    }

    /// The scene.
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// The entity names.
    pub fn names(&self) -> &EntityNames {
        &self.names
    }

    /// The grammar version.
    pub fn grammar(&self) -> GrammarVersion {
        self.grammar
    }

    /// The current state.
    pub fn state(&self) -> &WorldState {
        &self.state
    }

    /// The opening text: welcome banner, the room, and the task line.
    pub fn intro(&self) -> String {
        let mut out = String::with_capacity(512);
        out.push_str(text::WELCOME);
        out.push_str("\n\nYou are in the middle of a room. Looking quickly around you, you see ");
        text::push_list(&mut out, self.names.receptacles.iter().map(String::as_str));
        out.push_str(".\n\nYour task is to: ");
        out.push_str(&self.scene.goal.description());
        out.push('.');
        out
    }

    /// The admissible commands with their texts, sorted by text and de-duplicated like upstream.
    pub fn admissible(&self) -> &[(String, Command)] {
        &self.admissible
    }

    /// The admissible command spelled `text` (surrounding whitespace ignored, case-sensitive).
    pub fn parse(&self, text: &str) -> Option<Command> {
        let text = text.trim();
        self.admissible.binary_search_by(|(t, _)| t.as_str().cmp(text)).ok().map(|i| self.admissible[i].1)
    }

    /// The text of `command` in this world's grammar.
    pub fn command_text(&self, command: Command) -> String {
        command.text(&self.names, self.grammar)
    }

    /// Whether `receptacle` is where the agent stands: at the location of the receptacle it went to last (upstream
    /// puts several receptacles at one location in real games; all of them are then within reach).
    pub fn here(&self, receptacle: usize) -> bool {
        let location = |r: usize| self.scene.receptacles[r].location;
        self.state.agent.is_some_and(|at| location(at) == location(receptacle))
    }

    /// The receptacles where the agent stands, in listing order (none in the middle of the room).
    pub fn here_receptacles(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.scene.receptacles.len()).filter(|&r| self.here(r))
    }

    /// The receptacles where the agent stands, as a set.
    fn here_set(&self) -> IndexSet {
        self.here_receptacles().collect()
    }

    /// The agent's location number (`None` in the middle of the room).
    fn agent_location(&self) -> Option<usize> {
        self.state.agent.map(|r| usize::from(self.scene.receptacles[r].location))
    }

    /// What `look` lists "next to" the agent: upstream's objects at the agent's location (`objectAtLocation`) that
    /// are not in one of the receptacles there (`not_inReceptacle`, a fact upstream's engine holds only once `take`
    /// removed the object from that receptacle). So: objects taken from a receptacle here and put down again here,
    /// in another receptacle of the location (several receptacles share a location in real games). In listing order.
    pub fn next_to_agent(&self) -> impl Iterator<Item = usize> + '_ {
        let here = self.here_set();
        let location = self.agent_location();
        let state = &self.state;
        (0..self.scene.objects.len())
            .filter(move |&o| location.is_some_and(|l| state.at[o].contains(l)) && state.taken_from[o].intersects(here))
    }

    /// Whether the receptacle's inside can be seen and reached (not openable, or open).
    pub fn accessible(&self, receptacle: usize) -> bool {
        !self.scene.openable(receptacle) || self.state.open[receptacle]
    }

    /// Objects in `receptacle`, in listing order.
    pub fn contents(&self, receptacle: usize) -> impl Iterator<Item = usize> + '_ {
        self.state.places.iter().enumerate().filter(move |(_, p)| p.contains(receptacle)).map(|(i, _)| i)
    }

    fn receptacle_class(&self, receptacle: usize) -> ReceptacleClass {
        self.scene.receptacles[receptacle].class
    }

    fn push_view(&self, out: &mut String, receptacle: usize) {
        let view = match (self.scene.openable(receptacle), self.state.open[receptacle]) {
            (false, _) => ReceptacleView::Surface,
            (true, true) => ReceptacleView::Open,
            (true, false) => ReceptacleView::Closed,
        };
        let names = &self.names.objects;
        text::push_receptacle_view(
            out,
            view,
            &self.names.receptacles[receptacle],
            self.contents(receptacle).map(|o| names[o].as_str()),
        );
    }

    /// Runs `text` if admissible: the command and its feedback; `None` (nothing changed) otherwise.
    pub fn execute(&mut self, text: &str) -> Option<(Command, String)> {
        let command = self.parse(text)?;
        Some((command, self.apply(command)))
    }

    /// Applies an admissible `command` and returns its feedback. Callers get commands from
    /// [`World::admissible`] or [`World::parse`]; an inadmissible one is answered "Nothing happens."
    /// and changes nothing.
    pub fn apply(&mut self, command: Command) -> String {
        if !self.admissible.iter().any(|(_, c)| *c == command) {
            return text::NOTHING_HAPPENS.to_owned();
        }
        let mut out = String::with_capacity(128);
        let names = &self.names;
        match command {
            Command::Look => match self.state.agent {
                Some(_) => {
                    // Every receptacle at the location, in listing order: "the a, b, and c" (upstream's list
                    // without articles; two read "the a, and b").
                    out.push_str("You are facing the ");
                    let here: Vec<usize> = self.here_receptacles().collect();
                    for (i, &r) in here.iter().enumerate() {
                        if i > 0 {
                            out.push_str(if i + 1 == here.len() { ", and " } else { ", " });
                        }
                        out.push_str(&names.receptacles[r]);
                    }
                    out.push_str(". Next to it, you see ");
                    text::push_list(&mut out, self.next_to_agent().map(|o| names.objects[o].as_str()));
                    out.push('.');
                }
                None => out.push_str("You are in the middle of a room. Looking quickly around you, you see nothing."),
            },
            Command::Inventory => match self.state.held {
                Some(o) => {
                    out.push_str("You are carrying: a ");
                    out.push_str(&names.objects[o]);
                    out.push('.');
                }
                None => out.push_str("You are not carrying anything."),
            },
            Command::Help => out.push_str(text::HELP),
            Command::GoTo { receptacle } => {
                self.state.agent = Some(receptacle);
                out.push_str("You arrive at ");
                match self.grammar {
                    GrammarVersion::V03 => {
                        out.push_str("loc ");
                        out.push_str(&self.scene.receptacles[receptacle].location.to_string());
                    }
                    GrammarVersion::V04 => out.push_str(&names.receptacles[receptacle]),
                }
                out.push_str(". ");
                self.push_view(&mut out, receptacle);
            }
            Command::Open { receptacle } => {
                self.state.open[receptacle] = true;
                out.push_str("You open the ");
                out.push_str(&names.receptacles[receptacle]);
                out.push_str(". ");
                self.push_view(&mut out, receptacle);
            }
            Command::Close { receptacle } => {
                self.state.open[receptacle] = false;
                out.push_str("You close the ");
                out.push_str(&names.receptacles[receptacle]);
                out.push('.');
            }
            Command::Take { object, receptacle } => {
                // Upstream removes this receptacle's fact only: an object a game put in several stays in the others.
                self.state.places[object].remove(receptacle);
                self.state.taken_from[object].insert(receptacle);
                if let Some(location) = self.agent_location() {
                    self.state.at[object].remove(location);
                }
                self.state.held = Some(object);
                out.push_str("You pick up the ");
                out.push_str(&names.objects[object]);
                out.push_str(" from the ");
                out.push_str(&names.receptacles[receptacle]);
                out.push('.');
            }
            Command::Put { object, receptacle } => {
                self.state.places[object].insert(receptacle);
                self.state.taken_from[object].remove(receptacle);
                if let Some(location) = self.agent_location() {
                    self.state.at[object].insert(location);
                }
                self.state.held = None;
                let (verb, preposition) = match self.grammar {
                    GrammarVersion::V03 => ("You put the ", " in/on the "),
                    GrammarVersion::V04 => ("You move the ", " to the "),
                };
                out.push_str(verb);
                out.push_str(&names.objects[object]);
                out.push_str(preposition);
                out.push_str(&names.receptacles[receptacle]);
                out.push('.');
            }
            Command::Use { object } => {
                let lamp = &mut self.state.objects[object];
                lamp.on = !lamp.on;
                lamp.toggled = true;
                // Upstream tests `isToggled`, which stays true: every use "turns on" the lamp.
                out.push_str("You turn on the ");
                out.push_str(&names.objects[object]);
                out.push('.');
            }
            Command::Heat { object, receptacle }
            | Command::Cool { object, receptacle }
            | Command::Clean { object, receptacle } => {
                let flags = &mut self.state.objects[object];
                let verb = match command {
                    Command::Heat { .. } => {
                        flags.hot = true;
                        flags.cool = false;
                        "You heat the "
                    }
                    Command::Cool { .. } => {
                        flags.cool = true;
                        flags.hot = false;
                        "You cool the "
                    }
                    _ => {
                        flags.clean = true;
                        "You clean the "
                    }
                };
                out.push_str(verb);
                out.push_str(&names.objects[object]);
                out.push_str(" using the ");
                out.push_str(&names.receptacles[receptacle]);
                out.push('.');
            }
            Command::Slice { object, knife } => {
                self.state.objects[object].sliced = true;
                out.push_str("You sliced the ");
                out.push_str(&names.objects[object]);
                out.push_str(" with the ");
                out.push_str(&names.objects[knife]);
                out.push('.');
            }
            Command::ExamineReceptacle { receptacle } => self.push_view(&mut out, receptacle),
            Command::ExamineObject { object } => {
                let class = self.scene.objects[object].class;
                let s = self.state.objects[object];
                let look = ObjectLook {
                    receptacle_object: class.receptacle_object(),
                    clean: s.clean,
                    hot: s.hot,
                    cool: s.cool,
                    sliced: s.sliced,
                    toggleable: class.toggleable(),
                    toggled: s.toggled,
                    sliceable: class.sliceable(),
                };
                let inside = self.scene.contained.iter().filter(|(_, c)| *c == object).map(|(o, _)| *o);
                let mut inside: Vec<usize> = inside.collect();
                inside.sort_unstable();
                let contents = inside.into_iter().map(|o| names.objects[o].as_str());
                text::push_object_examination(&mut out, &names.objects[object], look, contents);
            }
        }
        self.rebuild_admissible();
        out
    }

    /// Whether the goal holds (upstream's PDDL goal of the task type).
    pub fn goal_satisfied(&self) -> bool {
        let goal = &self.scene.goal;
        let objects = &self.scene.objects;
        let in_target =
            |o: usize| self.state.places[o].iter().any(|r| Some(self.receptacle_class(r)) == goal.receptacle);
        let targets = || (0..objects.len()).filter(|&o| objects[o].class == goal.object);
        match goal.task_type {
            TaskType::PickAndPlaceSimple => targets().any(in_target),
            TaskType::PickCleanThenPlaceInRecep => targets().any(|o| in_target(o) && self.state.objects[o].clean),
            TaskType::PickHeatThenPlaceInRecep => targets().any(|o| in_target(o) && self.state.objects[o].hot),
            TaskType::PickCoolThenPlaceInRecep => targets().any(|o| in_target(o) && self.state.objects[o].cool),
            // Two objects of the class in one receptacle of the target class.
            TaskType::PickTwoObjAndPlace => (0..self.scene.receptacles.len())
                .filter(|&r| Some(self.receptacle_class(r)) == goal.receptacle)
                .any(|r| targets().filter(|&o| self.state.places[o].contains(r)).nth(1).is_some()),
            TaskType::LookAtObjInLight => {
                let holding = self.state.held.is_some_and(|h| objects[h].class == goal.object);
                // A toggled lamp in a receptacle at the agent's location (the PDDL goal's `receptacleAtLocation`).
                let lit = (0..objects.len()).any(|o| {
                    Some(objects[o].class) == goal.lamp
                        && self.state.objects[o].toggled
                        && self.state.places[o].iter().any(|r| self.here(r))
                });
                holding && lit
            }
        }
    }

    fn rebuild_admissible(&mut self) {
        let mut keyed = std::mem::take(&mut self.scratch);
        keyed.clear();
        let push = |keyed: &mut Vec<(u64, Command)>, c: Command| keyed.push((self.sort_key(c), c));
        push(&mut keyed, Command::Look);
        push(&mut keyed, Command::Inventory);
        if self.grammar == GrammarVersion::V04 {
            push(&mut keyed, Command::Help);
        }
        let state = &self.state;
        for r in 0..self.scene.receptacles.len() {
            if self.here(r) {
                push(&mut keyed, Command::ExamineReceptacle { receptacle: r });
                if self.scene.openable(r) {
                    push(
                        &mut keyed,
                        if state.open[r] { Command::Close { receptacle: r } } else { Command::Open { receptacle: r } },
                    );
                }
            } else {
                push(&mut keyed, Command::GoTo { receptacle: r });
            }
        }
        for at in self.here_receptacles() {
            let class = self.receptacle_class(at);
            let accessible = self.accessible(at);
            let held_class = state.held.map(|h| self.scene.objects[h].class);
            for (o, object) in self.scene.objects.iter().enumerate() {
                if !state.places[o].contains(at) {
                    continue;
                }
                if accessible && state.held.is_none() && object.class.pickupable() {
                    push(&mut keyed, Command::Take { object: o, receptacle: at });
                }
                if object.class.toggleable() {
                    push(&mut keyed, Command::Use { object: o });
                }
            }
            if let (Some(h), Some(hc)) = (state.held, held_class) {
                if accessible && class.can_contain(hc) {
                    push(&mut keyed, Command::Put { object: h, receptacle: at });
                }
                match class {
                    ReceptacleClass::Microwave if hc.heatable() => {
                        push(&mut keyed, Command::Heat { object: h, receptacle: at })
                    }
                    ReceptacleClass::Fridge if hc.coolable() => {
                        push(&mut keyed, Command::Cool { object: h, receptacle: at })
                    }
                    ReceptacleClass::SinkBasin if hc.cleanable() => {
                        push(&mut keyed, Command::Clean { object: h, receptacle: at })
                    }
                    _ => {}
                }
            }
        }
        // Upstream slices an object at the agent's location (`objectAtLocation`), in a receptacle or not.
        if let (Some(knife), Some(location)) = (state.held, self.agent_location())
            && self.scene.objects[knife].class.sharp()
        {
            for (o, object) in self.scene.objects.iter().enumerate() {
                if object.class.sliceable() && state.at[o].contains(location) {
                    push(&mut keyed, Command::Slice { object: o, knife });
                }
            }
        }
        if let Some(h) = state.held {
            push(&mut keyed, Command::ExamineObject { object: h });
        }
        keyed.sort_unstable_by_key(|&(key, _)| key);
        keyed.dedup_by_key(|&mut (key, _)| key);
        // Reuse the strings of the previous list to spare allocations on the hot path.
        let render = self.render;
        let mut list = std::mem::take(&mut self.admissible);
        list.truncate(keyed.len());
        for (i, &(_, command)) in keyed.iter().enumerate() {
            if i == list.len() {
                list.push((String::new(), command));
            }
            let (text, slot) = &mut list[i];
            *slot = command;
            text.clear();
            if render {
                command.write_text(&self.names, self.grammar, text);
            }
        }
        self.admissible = list;
        self.scratch = keyed;
    }
}

#[cfg(test)]
mod tests {
    use super::IndexSet;

    #[test]
    fn index_sets_hold_indices_up_to_their_capacity() {
        let mut set: IndexSet = [3, IndexSet::CAPACITY - 1, 0].into_iter().collect();
        assert_eq!(set.iter().collect::<Vec<_>>(), [0, 3, IndexSet::CAPACITY - 1]);
        assert!(set.contains(3) && !set.contains(4));
        set.remove(3);
        set.remove(5);
        assert_eq!(set.iter().collect::<Vec<_>>(), [0, IndexSet::CAPACITY - 1]);
        let one = |i: usize| std::iter::once(i).collect::<IndexSet>();
        assert!(set.intersects(one(0)) && !set.intersects(one(1)));
        set.remove(0);
        set.remove(IndexSet::CAPACITY - 1);
        assert!(set.is_empty() && IndexSet::default().iter().next().is_none());
    }
}
