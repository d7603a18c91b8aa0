//! Room layouts and seeded procedural scenes.

use std::sync::OnceLock;

use act_core::{derive_seed, rng_from_seed};
use rand::RngExt;
use rand::seq::{IndexedRandom, SliceRandom};
use serde::{Deserialize, Serialize};

use crate::task::{Goal, TaskType};
use crate::vocab::{ObjectClass, ReceptacleClass};

/// A room type of AI2-THOR / ALFRED.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoomType {
    /// Floor plans 1-30.
    Kitchen,
    /// Floor plans 201-230.
    LivingRoom,
    /// Floor plans 301-330.
    Bedroom,
    /// Floor plans 401-430.
    Bathroom,
}

impl RoomType {
    /// All four.
    pub const ALL: [RoomType; 4] = [RoomType::Kitchen, RoomType::LivingRoom, RoomType::Bedroom, RoomType::Bathroom];

    /// The snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            RoomType::Kitchen => "kitchen",
            RoomType::LivingRoom => "living_room",
            RoomType::Bedroom => "bedroom",
            RoomType::Bathroom => "bathroom",
        }
    }

    const fn plan_base(self) -> u16 {
        match self {
            RoomType::Kitchen => 0,
            RoomType::LivingRoom => 200,
            RoomType::Bedroom => 300,
            RoomType::Bathroom => 400,
        }
    }

    /// Whether upstream generates `task_type` in this room type (`GOALS_VALID`).
    pub const fn hosts(self, task_type: TaskType) -> bool {
        use RoomType::*;
        match task_type {
            TaskType::PickAndPlaceSimple | TaskType::PickTwoObjAndPlace => true,
            TaskType::LookAtObjInLight => matches!(self, LivingRoom | Bedroom),
            TaskType::PickCleanThenPlaceInRecep => matches!(self, Kitchen | Bathroom),
            TaskType::PickHeatThenPlaceInRecep | TaskType::PickCoolThenPlaceInRecep => matches!(self, Kitchen),
        }
    }

    /// (receptacle class, fewest, most) per room type.
    fn receptacle_spec(self) -> &'static [(ReceptacleClass, u8, u8)] {
        use ReceptacleClass as R;
        match self {
            RoomType::Kitchen => &[
                (R::Cabinet, 3, 13),
                (R::CoffeeMachine, 1, 1),
                (R::CounterTop, 1, 3),
                (R::DiningTable, 0, 2),
                (R::Drawer, 1, 9),
                (R::Fridge, 1, 1),
                (R::GarbageCan, 1, 1),
                (R::Microwave, 1, 1),
                (R::Shelf, 0, 3),
                (R::SideTable, 0, 1),
                (R::SinkBasin, 1, 2),
                (R::StoveBurner, 2, 4),
                (R::Toaster, 0, 1),
            ],
            RoomType::LivingRoom => &[
                (R::ArmChair, 0, 2),
                (R::Cabinet, 0, 4),
                (R::CoffeeTable, 0, 2),
                (R::DiningTable, 0, 1),
                (R::Drawer, 0, 5),
                (R::Dresser, 0, 1),
                (R::GarbageCan, 0, 1),
                (R::Ottoman, 0, 1),
                (R::Safe, 0, 1),
                (R::Shelf, 0, 5),
                (R::SideTable, 1, 3),
                (R::Sofa, 1, 1),
                (R::TvStand, 0, 1),
            ],
            RoomType::Bedroom => &[
                (R::ArmChair, 0, 1),
                (R::Bed, 1, 1),
                (R::Cabinet, 0, 2),
                (R::Desk, 0, 2),
                (R::Drawer, 1, 7),
                (R::Dresser, 0, 1),
                (R::GarbageCan, 0, 1),
                (R::LaundryHamper, 0, 1),
                (R::Safe, 0, 1),
                (R::Shelf, 0, 6),
                (R::SideTable, 0, 2),
            ],
            RoomType::Bathroom => &[
                (R::BathtubBasin, 0, 1),
                (R::Cabinet, 1, 4),
                (R::Cart, 0, 1),
                (R::CounterTop, 1, 1),
                (R::Drawer, 0, 4),
                (R::Dresser, 0, 1),
                (R::GarbageCan, 1, 1),
                (R::HandTowelHolder, 0, 2),
                (R::Shelf, 0, 3),
                (R::SinkBasin, 1, 2),
                (R::Toilet, 1, 1),
                (R::ToiletPaperHanger, 1, 1),
                (R::TowelHolder, 0, 2),
            ],
        }
    }

    /// Object classes found in this room type (besides lamps). Only classes of [`ObjectClass::PROCEDURAL`]: the
    /// pools are fixed lists, so the seeded scenes stay the same whatever classes the vocabulary gains.
    pub fn object_pool(self) -> &'static [ObjectClass] {
        use ObjectClass as O;
        match self {
            RoomType::Kitchen => &[
                O::Apple,
                O::Bowl,
                O::Bread,
                O::ButterKnife,
                O::CellPhone,
                O::CreditCard,
                O::Cup,
                O::DishSponge,
                O::Egg,
                O::Fork,
                O::GlassBottle,
                O::Kettle,
                O::Knife,
                O::Ladle,
                O::Lettuce,
                O::Mug,
                O::Pan,
                O::PepperShaker,
                O::Plate,
                O::Pot,
                O::Potato,
                O::SaltShaker,
                O::SoapBottle,
                O::Spatula,
                O::Spoon,
                O::Statue,
                O::Tomato,
                O::Vase,
                O::WineBottle,
            ],
            RoomType::LivingRoom => &[
                O::Book,
                O::Bowl,
                O::Box,
                O::Candle,
                O::CellPhone,
                O::CreditCard,
                O::KeyChain,
                O::Laptop,
                O::Newspaper,
                O::Pillow,
                O::Plate,
                O::RemoteControl,
                O::Statue,
                O::TissueBox,
                O::Vase,
                O::Watch,
                O::WateringCan,
            ],
            RoomType::Bedroom => &[
                O::AlarmClock,
                O::BaseballBat,
                O::BasketBall,
                O::Book,
                O::Bowl,
                O::Box,
                O::Cd,
                O::CellPhone,
                O::Cloth,
                O::CreditCard,
                O::KeyChain,
                O::Laptop,
                O::Mug,
                O::Pen,
                O::Pencil,
                O::Pillow,
                O::Statue,
                O::TennisRacket,
                O::Vase,
                O::Watch,
            ],
            RoomType::Bathroom => &[
                O::Candle,
                O::Cloth,
                O::DishSponge,
                O::HandTowel,
                O::Plunger,
                O::SoapBar,
                O::SoapBottle,
                O::SprayBottle,
                O::TissueBox,
                O::ToiletPaper,
                O::Towel,
            ],
        }
    }
}

/// A room: its receptacles and lamps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// The room type.
    pub room: RoomType,
    /// The floor-plan number (1-30, 201-230, 301-330, 401-430).
    pub number: u16,
    /// Receptacle classes (ascending) with their counts.
    pub receptacles: Vec<(ReceptacleClass, u8)>,
    /// Lamp classes standing in the room.
    pub lamps: Vec<ObjectClass>,
}

/// Layouts per room type.
pub const LAYOUTS_PER_ROOM: u16 = 30;
/// Layouts 1..=HELD_OUT of each room type are never used for training or in-distribution games.
pub const HELD_OUT_PER_ROOM: u16 = 6;
const LAYOUT_SEED: u64 = 0xA1F0_2020;

impl Layout {
    /// Whether training games use this layout (upstream: floor plans 7-30 of each room type).
    pub fn seen(&self) -> bool {
        self.number % 100 > HELD_OUT_PER_ROOM
    }

    /// The number of receptacles.
    pub fn num_receptacles(&self) -> usize {
        self.receptacles.iter().map(|&(_, n)| n as usize).sum()
    }

    fn has(&self, class: ReceptacleClass) -> bool {
        self.receptacles.iter().any(|&(c, n)| c == class && n > 0)
    }

    fn draw(room: RoomType, number: u16, attempt: u64) -> Layout {
        let mut rng = rng_from_seed(derive_seed(derive_seed(LAYOUT_SEED, u64::from(number)), attempt));
        let mut receptacles: Vec<(ReceptacleClass, u8)> = room
            .receptacle_spec()
            .iter()
            .map(|&(class, lo, hi)| (class, rng.random_range(lo..=hi)))
            .filter(|&(_, n)| n > 0)
            .collect();
        let mut lamps = Vec::new();
        if matches!(room, RoomType::LivingRoom | RoomType::Bedroom) {
            match rng.random_range(0..3u8) {
                0 => lamps.push(ObjectClass::DeskLamp),
                1 => lamps.push(ObjectClass::FloorLamp),
                _ => lamps.extend([ObjectClass::DeskLamp, ObjectClass::FloorLamp]),
            }
            if !receptacles.iter().any(|(c, _)| c.hosts_lamps()) {
                receptacles.push((ReceptacleClass::SideTable, 1));
                receptacles.sort();
            }
        }
        Layout { room, number, receptacles, lamps }
    }
}

/// The fixed catalog of 120 layouts (30 per room type), built once.
pub fn layouts() -> &'static [Layout] {
    static CATALOG: OnceLock<Vec<Layout>> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let mut all = Vec::new();
        for room in RoomType::ALL {
            let base = room.plan_base();
            let seen: Vec<Layout> =
                (HELD_OUT_PER_ROOM + 1..=LAYOUTS_PER_ROOM).map(|n| Layout::draw(room, base + n, 0)).collect();
            let mut held_out: Vec<Layout> = Vec::new();
            for n in 1..=HELD_OUT_PER_ROOM {
                // Redraw until the receptacle set is new: unseen means never seen in training.
                let layout = (0..)
                    .map(|attempt| Layout::draw(room, base + n, attempt))
                    .find(|candidate| {
                        seen.iter().chain(&held_out).all(|other| other.receptacles != candidate.receptacles)
                    })
                    .expect("an unbounded search over seeded layouts finds a new one");
                held_out.push(layout);
            }
            all.extend(held_out);
            all.extend(seen);
        }
        all
    })
}

/// A receptacle of a scene.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceptacleEntity {
    /// Its class.
    pub class: ReceptacleClass,
    /// Its number within the class ("cabinet 3").
    pub number: u16,
    /// Its location number ("loc 12", grammar 0.3).
    pub location: u16,
}

/// An object of a scene.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectEntity {
    /// Its class.
    pub class: ObjectClass,
    /// Its number within the class ("apple 2").
    pub number: u16,
    /// Index (into [`Scene::receptacles`]) of the receptacle it starts in.
    pub receptacle: usize,
}

/// One game: a layout filled with objects, and a goal.
///
/// Receptacles and objects are stored in the order upstream lists them: class ascending, number
/// descending ("a cabinet 2, a cabinet 1, a countertop 1").
///
/// A [`Layout`] is a room of one [`RoomType`] with a fixed set of receptacles (and lamps), like one
/// of AI2-THOR's floor plans. The catalog holds 30 layouts per room type, numbered like upstream's
/// floor plans (kitchens 1-30, living rooms 201-230, bedrooms 301-330, bathrooms 401-430). As in
/// upstream, layouts 1-6 of each room type are held out ([`Layout::seen`] is false): the
/// out-of-distribution split draws only from them, and no held-out layout has the receptacle set of
/// a seen one. A [`Scene`] is one game in a layout: objects placed where upstream allows them
/// (`canContain`), and a goal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scene {
    /// The room type.
    pub room: RoomType,
    /// The layout's floor-plan number.
    pub layout: u16,
    /// The receptacles, in listing order.
    pub receptacles: Vec<ReceptacleEntity>,
    /// The objects (lamps included), in listing order.
    pub objects: Vec<ObjectEntity>,
    /// What to do.
    pub goal: Goal,
    /// Objects inside movable receptacles, as upstream's games state them (`inReceptacleObject`): pairs of (object,
    /// container), indices into [`Scene::objects`]. Upstream's domain never changes these facts, so `examine` of a
    /// container lists the same objects whatever happens; the objects themselves lie in their receptacle like any
    /// other. The procedural scenes have none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contained: Vec<(usize, usize)>,
    /// Further receptacles objects start in, beyond [`ObjectEntity::receptacle`]: pairs of (object, receptacle),
    /// sorted. Upstream's games sometimes state an object in several receptacles (`inReceptacle`: a pan on two
    /// stoveburners, a mug in the coffeemachine and on the countertop); upstream's domain then lists it in each,
    /// `take` removes only the fact of the receptacle it is taken from (the object stays listed in the others,
    /// even while held), and `put` adds one. A loaded game's [`ObjectEntity::receptacle`] is the first of an
    /// object's receptacles in listing order. The procedural scenes have none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_in: Vec<(usize, usize)>,
    /// Receptacles of an openable class that the game does not make openable (no `openable` fact, as for some
    /// drawers and cabinets in upstream's games): they are surfaces, seen and reached without opening. Sorted; the
    /// procedural scenes have none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_openable: Vec<usize>,
    /// Objects that start cool (`isCool`: what a fridge holds in upstream's games). Sorted; the procedural scenes
    /// have none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub start_cool: Vec<usize>,
    /// Objects that start in no receptacle, sorted: upstream's text never names them and nothing takes them, but
    /// `slice` reaches a sliceable one at its location and `examine` of a container lists one it holds
    /// ([`Scene::contained`]). Their [`ObjectEntity::receptacle`] means nothing; their location, if any, is in
    /// [`Scene::at_locations`]. The procedural scenes have none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub floor: Vec<usize>,
    /// Where objects start when it is not their receptacle's location (upstream's `objectAtLocation`, which
    /// `slice` and `look` read): (object, location number) pairs, sorted. Any other object starts at the location
    /// of its [`ObjectEntity::receptacle`]. The procedural scenes have none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub at_locations: Vec<(usize, u16)>,
    /// Receptacles upstream's text names by another class than the one they behave as: (receptacle, the class in
    /// its name), sorted. One floor plan of upstream's (420) types its bathtub's basin a sink basin: the real engine
    /// names it `bathtubbasin 1` (from its id) and lets it clean like a sink (from its type). Names, numbers and
    /// listing order follow the named class. The procedural scenes have none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub named_as: Vec<(usize, ReceptacleClass)>,
}

/// How many instances of the target class a goal may need.
const MAX_TARGET_INSTANCES: u8 = 4;
/// Upstream `MAX_NUM_OF_OBJ_INSTANCES`: duplicates of other classes.
const MAX_OTHER_INSTANCES: u8 = 3;

impl Scene {
    /// A scene of these receptacles and objects (each object in its one receptacle) and goal, with none of what
    /// upstream's games state beyond that (the procedural scenes' kind).
    pub fn new(
        room: RoomType,
        layout: u16,
        receptacles: Vec<ReceptacleEntity>,
        objects: Vec<ObjectEntity>,
        goal: Goal,
    ) -> Scene {
        Scene {
            room,
            layout,
            receptacles,
            objects,
            goal,
            contained: Vec::new(),
            also_in: Vec::new(),
            not_openable: Vec::new(),
            start_cool: Vec::new(),
            floor: Vec::new(),
            at_locations: Vec::new(),
            named_as: Vec::new(),
        }
    }

    /// Whether receptacle `r` opens and closes: its class's table, unless the game says otherwise
    /// ([`Scene::not_openable`]).
    pub fn openable(&self, r: usize) -> bool {
        self.receptacles[r].class.openable() && self.not_openable.binary_search(&r).is_err()
    }

    /// The class receptacle `r` is named by ([`Scene::named_as`]; its class otherwise).
    pub fn named_class(&self, r: usize) -> ReceptacleClass {
        match self.named_as.binary_search_by_key(&r, |&(receptacle, _)| receptacle) {
            Ok(i) => self.named_as[i].1,
            Err(_) => self.receptacles[r].class,
        }
    }

    /// The receptacles object `o` starts in: [`ObjectEntity::receptacle`], then any of [`Scene::also_in`]; none for
    /// an object of [`Scene::floor`].
    pub fn start_receptacles(&self, o: usize) -> impl Iterator<Item = usize> + '_ {
        let on_floor = self.floor.binary_search(&o).is_ok();
        let first = (!on_floor).then_some(self.objects[o].receptacle);
        let also = self.also_in.iter().filter(move |(object, _)| *object == o).map(|&(_, r)| r);
        first.into_iter().chain(also)
    }

    /// The location numbers object `o` starts at: those of [`Scene::at_locations`] if it has any there, else its
    /// receptacle's (none for an object of [`Scene::floor`]).
    pub fn start_locations(&self, o: usize) -> impl Iterator<Item = u16> + '_ {
        let stated = self.at_locations.iter().filter(move |(object, _)| *object == o).map(|&(_, l)| l);
        let derived = (self.floor.binary_search(&o).is_err()
            && !self.at_locations.iter().any(|(object, _)| *object == o))
        .then(|| self.receptacles[self.objects[o].receptacle].location);
        stated.chain(derived)
    }

    /// Draws a scene of `task_type` in `layout`; `None` when the layout cannot host that task.
    pub fn generate(layout: &Layout, task_type: TaskType, seed: u64) -> Option<Scene> {
        let mut rng = rng_from_seed(seed);
        if !layout.room.hosts(task_type) {
            return None;
        }
        let receptacles = place_receptacles(layout, &mut rng);
        let classes_present: Vec<ReceptacleClass> = layout.receptacles.iter().map(|&(c, _)| c).collect();
        let has_home = |o: ObjectClass, except: Option<ReceptacleClass>| {
            classes_present.iter().any(|&r| Some(r) != except && r.can_contain(o))
        };
        let goal = choose_goal(layout, task_type, &classes_present, &has_home, &mut rng)?;

        // Target instances never start where the goal wants them, so no game is won at the start.
        let target_count = match task_type {
            TaskType::PickTwoObjAndPlace => rng.random_range(2..=MAX_TARGET_INSTANCES),
            _ => rng.random_range(1..=MAX_TARGET_INSTANCES),
        };
        let mut others: Vec<ObjectClass> =
            layout.room.object_pool().iter().copied().filter(|&o| o != goal.object && has_home(o, None)).collect();
        others.shuffle(&mut rng);
        others.truncate(rng.random_range(3..=8));

        let mut objects: Vec<ObjectEntity> = Vec::new();
        let mut add = |class: ObjectClass, count: u8, except: Option<ReceptacleClass>, rng: &mut act_core::ActRng| {
            let homes: Vec<usize> = receptacles
                .iter()
                .enumerate()
                .filter(|(_, r)| Some(r.class) != except && r.class.can_contain(class))
                .map(|(i, _)| i)
                .collect();
            let mut numbers: Vec<u16> = (1..=u16::from(count)).collect();
            numbers.shuffle(rng);
            for number in numbers {
                let receptacle = *homes.choose(rng).expect("classes are only drawn where they have a home");
                objects.push(ObjectEntity { class, number, receptacle });
            }
        };
        add(goal.object, target_count, goal.receptacle, &mut rng);
        for class in others {
            let count = rng.random_range(1..=MAX_OTHER_INSTANCES);
            add(class, count, None, &mut rng);
        }
        let hosts: Vec<usize> =
            receptacles.iter().enumerate().filter(|(_, r)| r.class.hosts_lamps()).map(|(i, _)| i).collect();
        for &lamp in &layout.lamps {
            let receptacle = *hosts.choose(&mut rng)?;
            objects.push(ObjectEntity { class: lamp, number: 1, receptacle });
        }
        objects.sort_by(|a, b| a.class.cmp(&b.class).then(b.number.cmp(&a.number)));
        Some(Scene::new(layout.room, layout.number, receptacles, objects, goal))
    }
}

fn place_receptacles(layout: &Layout, rng: &mut act_core::ActRng) -> Vec<ReceptacleEntity> {
    let total = layout.num_receptacles();
    let mut locations: Vec<u16> = (1..=total as u16).collect();
    locations.shuffle(rng);
    let mut receptacles = Vec::with_capacity(total);
    for &(class, count) in &layout.receptacles {
        for number in (1..=u16::from(count)).rev() {
            let location = locations[receptacles.len()];
            receptacles.push(ReceptacleEntity { class, number, location });
        }
    }
    receptacles
}

fn choose_goal(
    layout: &Layout,
    task_type: TaskType,
    classes_present: &[ReceptacleClass],
    has_home: &dyn Fn(ObjectClass, Option<ReceptacleClass>) -> bool,
    rng: &mut act_core::ActRng,
) -> Option<Goal> {
    let phrasing = rng.random_range(0..2u8);
    let pool = layout.room.object_pool();
    if task_type == TaskType::LookAtObjInLight {
        let lamp = *layout.lamps.choose(rng)?;
        let objects: Vec<ObjectClass> =
            pool.iter().copied().filter(|&o| task_type.accepts_object(o) && has_home(o, None)).collect();
        let object = *objects.choose(rng)?;
        return Some(Goal { task_type, object, receptacle: None, lamp: Some(lamp), phrasing });
    }
    let appliance = task_type.appliance();
    if let Some(appliance) = appliance
        && !layout.has(appliance)
    {
        return None;
    }
    let pairs: Vec<(ObjectClass, ReceptacleClass)> = pool
        .iter()
        .copied()
        .filter(|&o| task_type.accepts_object(o))
        .flat_map(|o| classes_present.iter().map(move |&r| (o, r)))
        .filter(|&(o, r)| r.can_contain(o) && Some(r) != appliance && has_home(o, Some(r)))
        .collect();
    let &(object, receptacle) = pairs.choose(rng)?;
    Some(Goal { task_type, object, receptacle: Some(receptacle), lamp: None, phrasing })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenes_draw_only_from_the_procedural_vocabulary() {
        for room in RoomType::ALL {
            assert!(room.object_pool().iter().all(|c| c.procedural()), "{room:?}");
        }
        assert!(layouts().iter().flat_map(|l| &l.lamps).all(|c| c.procedural()));
    }

    #[test]
    fn catalog_holds_out_new_receptacle_sets() {
        let all = layouts();
        assert_eq!(all.len(), 4 * LAYOUTS_PER_ROOM as usize);
        let (seen, unseen): (Vec<&Layout>, Vec<&Layout>) = all.iter().partition(|l| l.seen());
        assert_eq!(unseen.len(), 4 * HELD_OUT_PER_ROOM as usize);
        for u in &unseen {
            assert!(seen.iter().all(|s| s.receptacles != u.receptacles), "layout {} repeats a seen one", u.number);
        }
        assert_eq!(layouts(), all, "the catalog is fixed");
    }

    #[test]
    fn scenes_are_seeded_and_respect_can_contain() {
        for (i, layout) in layouts().iter().enumerate() {
            for task_type in TaskType::ALL {
                let seed = derive_seed(i as u64, task_type as u64);
                let Some(scene) = Scene::generate(layout, task_type, seed) else {
                    assert!(!layout.room.hosts(task_type) || task_type.appliance().is_some());
                    continue;
                };
                assert_eq!(Scene::generate(layout, task_type, seed).as_ref(), Some(&scene));
                for o in &scene.objects {
                    let r = &scene.receptacles[o.receptacle];
                    assert!(r.class.can_contain(o.class) || (o.class.toggleable() && r.class.hosts_lamps()));
                }
                let targets = scene.objects.iter().filter(|o| o.class == scene.goal.object).count();
                assert!(targets >= if task_type == TaskType::PickTwoObjAndPlace { 2 } else { 1 });
            }
        }
    }
}
