//! Upstream's game files as native scenes: the PDDL initial state (`initial_state.pddl`, or the `pddl_problem` of a
//! `game.tw-pddl`) and `traj_data.json`'s task, read into a [`Scene`] the native [`World`](crate::World) plays.
//!
//! Names follow ALFWorld's demangler (`alfworld/agents/utils/misc.py`): an entity's class is its id up to the first
//! `_bar_` (plus `basin` for the sink and bathtub basins), lower-cased; within a class, ids in sorted order get the
//! numbers from the highest down to 1. Locations are numbered the same way (grammar 0.3's `loc N`).
//!
//! Several receptacles may share a location (the native world reaches them all from there, as upstream does), and
//! objects may be inside movable receptacles (`inReceptacleObject`, static upstream: `examine` of the container lists
//! them, and they lie in their receptacle like any other object). An object may be in several receptacles
//! ([`Scene::also_in`](crate::Scene::also_in)), a drawer or cabinet may lack `openable`
//! ([`Scene::not_openable`](crate::Scene::not_openable)), an object may start cool, and an object's stated location
//! (`objectAtLocation`, which `slice` and `look` read) may differ from its receptacle's
//! ([`Scene::at_locations`](crate::Scene::at_locations)), and a receptacle's id may name another class than its type
//! ([`Scene::named_as`](crate::Scene::named_as)). Fixtures (houseplant, television, mirror...) in a
//! receptacle are listed there and cannot be taken. Of the objects in no receptacle (paintings, windows, light
//! switches, the bare class names upstream's games declare), those a command reaches are kept off every list
//! ([`Scene::floor`](crate::Scene::floor): a sliceable one where the agent can stand, one a placed container holds);
//! the others are never named by upstream's text and are left out. What the native world cannot represent is refused
//! with an error that names the file and the fact: a class outside the native vocabulary (upstream's whole `OBJECTS`
//! list is in it), a state flag other than `isCool` set at the start, more than 128 receptacles or locations, and
//! affordance facts (`pickupable`, `canContain`, `isReceptacleObject`, `openable` on a class that does not open, ...)
//! that disagree with upstream's class tables the native world uses.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use act_core::EnvError;
use serde::Deserialize;

use crate::scene::{ObjectEntity, ReceptacleEntity, RoomType, Scene};
use crate::task::{Goal, TaskType};
use crate::vocab::{ObjectClass, ReceptacleClass};
use crate::world::IndexSet;

/// A parsed s-expression.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Sexp {
    Atom(String),
    List(Vec<Sexp>),
}

impl Sexp {
    fn atom(&self) -> Option<&str> {
        match self {
            Sexp::Atom(a) => Some(a),
            Sexp::List(_) => None,
        }
    }

    fn list(&self) -> Option<&[Sexp]> {
        match self {
            Sexp::List(items) => Some(items),
            Sexp::Atom(_) => None,
        }
    }

    /// The list's head atom, lower-cased (PDDL keywords and predicates are case-insensitive).
    fn head(&self) -> Option<String> {
        self.list()?.first()?.atom().map(str::to_lowercase)
    }
}

/// Parses one s-expression (comments from `;` to the end of a line are skipped). Errors give the line.
fn parse_sexp(text: &str) -> Result<Sexp, String> {
    let mut stack: Vec<Vec<Sexp>> = vec![Vec::new()];
    let mut atom = String::new();
    let flush = |atom: &mut String, stack: &mut Vec<Vec<Sexp>>| {
        if !atom.is_empty() {
            stack.last_mut().expect("the stack keeps its root").push(Sexp::Atom(std::mem::take(atom)));
        }
    };
    for (number, line) in text.lines().enumerate() {
        let line = line.split(';').next().unwrap_or("");
        for c in line.chars() {
            match c {
                '(' => {
                    flush(&mut atom, &mut stack);
                    stack.push(Vec::new());
                }
                ')' => {
                    flush(&mut atom, &mut stack);
                    if stack.len() == 1 {
                        return Err(format!("line {}: `)` without a matching `(`", number + 1));
                    }
                    let list = stack.pop().expect("checked above");
                    stack.last_mut().expect("the stack keeps its root").push(Sexp::List(list));
                }
                c if c.is_whitespace() => flush(&mut atom, &mut stack),
                c => atom.push(c),
            }
        }
        flush(&mut atom, &mut stack);
    }
    if stack.len() != 1 {
        return Err(format!("{} unclosed `(` at the end of the file", stack.len() - 1));
    }
    let mut root = stack.pop().expect("one level left");
    match root.len() {
        1 => Ok(root.pop().expect("one item")),
        0 => Err("no PDDL problem in the file".into()),
        n => Err(format!("{n} top-level expressions, expected one `(define ...)`")),
    }
}

/// The class name of an id, as ALFWorld's demangler derives it.
fn demangled_class(id: &str) -> String {
    let lower = id.to_lowercase();
    let mut name = lower.split("_bar_").next().unwrap_or(&lower).to_owned();
    // Upstream appends `basin` whenever the id contains it: `Sink_bar_..._bar_SinkBasin` is a `sinkbasin`.
    if lower.contains("basin") {
        name.push_str("basin");
    }
    name
}

/// Numbers per id: within each class, ids in sorted (lower-cased) order get `count, count - 1, ..., 1`.
fn demangled_numbers<'a>(ids: impl IntoIterator<Item = &'a str>) -> BTreeMap<String, u16> {
    let mut by_class: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for id in ids {
        by_class.entry(demangled_class(id)).or_default().push(id.to_lowercase());
    }
    let mut numbers = BTreeMap::new();
    for (_, mut ids) in by_class {
        ids.sort();
        let count = ids.len() as u16;
        for (i, id) in ids.into_iter().enumerate() {
            numbers.insert(id, count - i as u16);
        }
    }
    numbers
}

/// The class named by a type atom (`AppleType` → `apple`), case-insensitively.
fn type_name(atom: &str) -> String {
    let lower = atom.to_lowercase();
    lower.strip_suffix("type").unwrap_or(&lower).to_owned()
}

/// Upstream names an entity by its id (the demangler), the native world by its type: they must agree.
fn shown_as(id: &str, class: &str) -> Result<(), String> {
    let shown = demangled_class(id);
    if shown == class {
        Ok(())
    } else {
        Err(format!("`{id}` is a {class}, but upstream's demangler would call it `{shown}`"))
    }
}

/// `traj_data.json`'s task part.
#[derive(Debug, Deserialize)]
struct TrajData {
    task_type: String,
    pddl_params: PddlParams,
}

#[derive(Debug, Deserialize)]
struct PddlParams {
    object_target: String,
    #[serde(default)]
    parent_target: String,
    #[serde(default)]
    toggle_target: String,
    #[serde(default)]
    mrecep_target: String,
    #[serde(default)]
    object_sliced: bool,
}

/// The goal `traj_data.json` describes (phrasing 0).
fn goal_of(traj_data: &str) -> Result<Goal, String> {
    let data: TrajData = serde_json::from_str(traj_data).map_err(|e| format!("traj_data.json: {e}"))?;
    let task_type: TaskType = data.task_type.parse().map_err(|e| format!("traj_data.json: {e}"))?;
    let p = &data.pddl_params;
    if !p.mrecep_target.is_empty() || p.object_sliced {
        return Err(
            "traj_data.json: movable-receptacle and sliced tasks are not supported (upstream skips them too)".into()
        );
    }
    let object = ObjectClass::from_name(&p.object_target.to_lowercase()).ok_or_else(|| {
        format!("traj_data.json: object_target `{}` is not in the native vocabulary", p.object_target)
    })?;
    let receptacle = if p.parent_target.is_empty() {
        None
    } else {
        Some(ReceptacleClass::from_name(&p.parent_target.to_lowercase()).ok_or_else(|| {
            format!("traj_data.json: parent_target `{}` is not in the native vocabulary", p.parent_target)
        })?)
    };
    let lamp = if p.toggle_target.is_empty() {
        None
    } else {
        Some(ObjectClass::from_name(&p.toggle_target.to_lowercase()).ok_or_else(|| {
            format!("traj_data.json: toggle_target `{}` is not in the native vocabulary", p.toggle_target)
        })?)
    };
    match (task_type, receptacle, lamp) {
        (TaskType::LookAtObjInLight, _, None) => {
            Err("traj_data.json: a look_at_obj_in_light task needs toggle_target".into())
        }
        (TaskType::LookAtObjInLight, _, Some(_)) => Ok(Goal { task_type, object, receptacle: None, lamp, phrasing: 0 }),
        (_, None, _) => Err(format!("traj_data.json: a {task_type} task needs parent_target")),
        (_, Some(_), _) => Ok(Goal { task_type, object, receptacle, lamp: None, phrasing: 0 }),
    }
}

/// The room a set of receptacles suggests (the native world only uses it to describe the scene).
fn room_of(receptacles: &[ReceptacleEntity]) -> RoomType {
    let has = |class: ReceptacleClass| receptacles.iter().any(|r| r.class == class);
    if has(ReceptacleClass::Fridge) || has(ReceptacleClass::StoveBurner) {
        RoomType::Kitchen
    } else if has(ReceptacleClass::Toilet) || has(ReceptacleClass::BathtubBasin) {
        RoomType::Bathroom
    } else if has(ReceptacleClass::Bed) {
        RoomType::Bedroom
    } else {
        RoomType::LivingRoom
    }
}

/// The scene of a PDDL problem (`pddl`, the text of `initial_state.pddl` or a game's `pddl_problem`) and its task
/// (`traj_data`, the text of `traj_data.json`). Errors say which fact or field the native world cannot represent.
pub fn scene_from_pddl(pddl: &str, traj_data: &str) -> Result<Scene, String> {
    let goal = goal_of(traj_data)?;
    let problem = parse_sexp(pddl)?;
    let sections =
        problem.list().filter(|_| problem.head().as_deref() == Some("define")).ok_or("not a `(define ...)`")?;
    let section = |name: &str| sections.iter().find(|s| s.head().as_deref() == Some(name)).and_then(Sexp::list);
    let declared = section(":objects").ok_or("no `:objects` section")?;
    let init = section(":init").ok_or("no `:init` section")?;

    // `name - type` declarations.
    let mut kinds: BTreeMap<String, String> = BTreeMap::new();
    let mut names = declared[1..].iter().map(|s| s.atom().ok_or("a list inside `:objects`"));
    let mut pending: Vec<String> = Vec::new();
    while let Some(atom) = names.next() {
        let atom = atom?;
        if atom == "-" {
            let kind = names.next().ok_or("`-` without a type at the end of `:objects`")??.to_lowercase();
            for name in pending.drain(..) {
                kinds.insert(name, kind.clone());
            }
        } else {
            pending.push(atom.to_lowercase());
        }
    }
    let of_kind = |kind: &str| -> Vec<String> {
        kinds.iter().filter(|(_, k)| k.as_str() == kind).map(|(n, _)| n.clone()).collect()
    };
    let receptacle_ids = of_kind("receptacle");
    let object_ids = of_kind("object");
    let location_ids = of_kind("location");

    // Facts, lower-cased, by predicate.
    let mut facts: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    for fact in &init[1..] {
        let items = fact.list().ok_or("an atom inside `:init`")?;
        // Numeric fluents (`(= (total-cost) 0)`, `(= (distance a b) 3)`: the domain's action costs) and negations
        // say nothing the text world shows.
        if matches!(fact.head().as_deref(), Some("=" | "not")) {
            continue;
        }
        let words: Vec<String> = items
            .iter()
            .map(|s| s.atom().map(str::to_lowercase).ok_or("a nested list inside an `:init` fact"))
            .collect::<Result<_, _>>()?;
        let (predicate, arguments) = words.split_first().ok_or("an empty `:init` fact")?;
        facts.entry(predicate.clone()).or_default().push(arguments.to_vec());
    }
    let pairs = |predicate: &str| -> BTreeMap<String, String> {
        facts
            .get(predicate)
            .into_iter()
            .flatten()
            .filter(|a| a.len() == 2)
            .map(|a| (a[0].clone(), a[1].clone()))
            .collect()
    };
    for unsupported in ["ishot", "isclean", "issliced", "istoggled", "ison", "opened", "isopen", "holds"] {
        if let Some(example) = facts.get(unsupported).and_then(|f| f.first()) {
            return Err(format!(
                "`({unsupported} {})`: the native world does not represent this at the start of a game yet",
                example.join(" ")
            ));
        }
    }

    // Upstream numbers the locations the game's facts use: a declared location no fact names is not counted.
    let referenced: BTreeSet<&str> = facts.values().flatten().flatten().map(String::as_str).collect();
    let location_ids: Vec<String> = location_ids.into_iter().filter(|l| referenced.contains(l.as_str())).collect();
    let numbers = demangled_numbers(receptacle_ids.iter().chain(&object_ids).chain(&location_ids).map(String::as_str));
    let receptacle_type = pairs("receptacletype");
    let at_location = pairs("receptacleatlocation");
    let mut receptacles = Vec::new();
    let mut receptacle_index: BTreeMap<String, usize> = BTreeMap::new();
    let mut listed: Vec<(ReceptacleClass, u16, u16, String, ReceptacleClass)> = Vec::new();
    for id in &receptacle_ids {
        let class_name = receptacle_type.get(id).map(|t| type_name(t)).unwrap_or_else(|| demangled_class(id));
        let class = ReceptacleClass::from_name(&class_name)
            .ok_or_else(|| format!("receptacle `{id}`: class `{class_name}` is not in the native vocabulary"))?;
        // The text names a receptacle from its id, which may say another class than its type (floor plan 420's
        // bathtub basin, typed a sink basin).
        let named = match ReceptacleClass::from_name(&demangled_class(id)) {
            Some(named) => named,
            None => {
                shown_as(id, class.name())?;
                class
            }
        };
        let location = at_location.get(id).ok_or_else(|| format!("receptacle `{id}` has no `receptacleAtLocation`"))?;
        let location_number = *numbers
            .get(location)
            .ok_or_else(|| format!("receptacle `{id}` is at `{location}`, which is not a declared location"))?;
        listed.push((named, numbers[id], location_number, id.clone(), class));
    }
    // Upstream's listing order: named class ascending, number descending.
    listed.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut named_as = Vec::new();
    for (i, (named, number, location, id, class)) in listed.into_iter().enumerate() {
        receptacle_index.insert(id, i);
        if named != class {
            named_as.push((i, named));
        }
        receptacles.push(ReceptacleEntity { class, number, location });
    }

    if receptacles.len() > IndexSet::CAPACITY {
        return Err(format!(
            "{} receptacles; the native world holds at most {}",
            receptacles.len(),
            IndexSet::CAPACITY
        ));
    }

    let object_type = pairs("objecttype");
    // Every receptacle that holds each object: upstream lists an object in each of them.
    let mut holders: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for pair in facts.get("inreceptacle").into_iter().flatten().filter(|a| a.len() == 2) {
        let receptacle = *receptacle_index
            .get(&pair[1])
            .ok_or_else(|| format!("object `{}` is in `{}`, which is not a declared receptacle", pair[0], pair[1]))?;
        holders.entry(pair[0].clone()).or_default().push(receptacle);
    }
    for places in holders.values_mut() {
        places.sort_unstable();
        places.dedup();
    }
    let stated = |predicate: &str, id: &str| {
        facts.get(predicate).is_some_and(|f| f.iter().any(|a| a.first().map(String::as_str) == Some(id)))
    };
    // Upstream's text names an object only through the receptacle it is in (`inReceptacle`: "On the dresser 1, you
    // see a houseplant 1"), and almost every command on an object needs that fact or the object in hand. Of the
    // objects in no receptacle (the paintings, windows and light switches of upstream's games, only at a location;
    // the bare class names they declare as objects, `HousePlant - object`, with no facts at all), the scene keeps
    // those a command still reaches, as [`Scene::floor`]: a sliceable one where the agent can stand (`slice` needs
    // only `objectAtLocation`), and one a placed container holds (its `examine` lists it). The others are left out;
    // their ids still count in their class's numbering, as upstream's demangler counts them.
    let mut located: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for pair in facts.get("objectatlocation").into_iter().flatten().filter(|a| a.len() == 2) {
        located.entry(pair[0].as_str()).or_default().push(pair[1].as_str());
    }
    let agent_at = pairs("atlocation");
    let standing: BTreeSet<&String> = at_location.values().chain(agent_at.values()).collect();
    let within_reach =
        |id: &String| located.get(id.as_str()).is_some_and(|ls| ls.iter().any(|l| standing.contains(&l.to_string())));
    let held_by_placed = |id: &String| {
        facts
            .get("inreceptacleobject")
            .into_iter()
            .flatten()
            .any(|a| a.len() == 2 && a[0] == *id && holders.contains_key(&a[1]))
    };
    let kept_ids: Vec<String> = object_ids
        .iter()
        .filter(|id| holders.contains_key(*id) || (stated("sliceable", id) && within_reach(id)) || held_by_placed(id))
        .cloned()
        .collect();
    let mut objects = Vec::new();
    for id in &kept_ids {
        let class_name = object_type.get(id).map(|t| type_name(t)).unwrap_or_else(|| demangled_class(id));
        let class = ObjectClass::from_name(&class_name)
            .ok_or_else(|| format!("object `{id}`: class `{class_name}` is not in the native vocabulary"))?;
        shown_as(id, class.name())?;
        let receptacle = holders.get(id).map_or(0, |places| places[0]);
        objects.push(ObjectEntity { class, number: numbers[id], receptacle });
    }
    // Listing order; the contained pairs are found again by class and number.
    let mut order: Vec<usize> = (0..objects.len()).collect();
    order.sort_by(|&a, &b| objects[a].class.cmp(&objects[b].class).then(objects[b].number.cmp(&objects[a].number)));
    let position: BTreeMap<usize, usize> = order.iter().enumerate().map(|(new, &old)| (old, new)).collect();
    let objects: Vec<ObjectEntity> = order.iter().map(|&i| objects[i].clone()).collect();
    let object_index: BTreeMap<&str, usize> =
        kept_ids.iter().enumerate().map(|(i, id)| (id.as_str(), position[&i])).collect();
    let mut floor: Vec<usize> =
        kept_ids.iter().filter(|id| !holders.contains_key(*id)).map(|id| object_index[id.as_str()]).collect();
    floor.sort_unstable();
    let mut contained = Vec::new();
    for pair in facts.get("inreceptacleobject").into_iter().flatten() {
        let [inner, outer] = pair.as_slice() else {
            return Err(format!("`(inReceptacleObject {})` needs an object and its container", pair.join(" ")));
        };
        if [inner, outer].iter().any(|id| kinds.get(id.as_str()).map(String::as_str) != Some("object")) {
            return Err(format!("`(inReceptacleObject {inner} {outer})` names an undeclared object"));
        }
        // A container in no receptacle is never examined: what it holds is never listed.
        if !holders.contains_key(outer) {
            continue;
        }
        let (c, o) = (object_index[outer.as_str()], object_index[inner.as_str()]);
        if !objects[c].class.receptacle_object() {
            return Err(format!("`(inReceptacleObject {inner} {outer})`: a {} holds nothing", objects[c].class));
        }
        contained.push((o, c));
    }
    contained.sort_unstable();
    let mut also_in: Vec<(usize, usize)> = kept_ids
        .iter()
        .filter_map(|id| holders.get(id).map(|places| (id, places)))
        .flat_map(|(id, places)| places[1..].iter().map(|&r| (object_index[id.as_str()], r)))
        .collect();
    also_in.sort_unstable();
    // Where objects are (`objectAtLocation`), stated where it is not the receptacle's location.
    let mut at_locations = Vec::new();
    for id in &kept_ids {
        let o = object_index[id.as_str()];
        let mut stated: Vec<u16> = Vec::new();
        for location in located.get(id.as_str()).into_iter().flatten() {
            stated.push(*numbers.get(*location).ok_or_else(|| {
                format!("`(objectAtLocation {id} {location})`: `{location}` is not a declared location")
            })?);
        }
        stated.sort_unstable();
        stated.dedup();
        let derived = holders.get(id).map(|places| receptacles[places[0]].location);
        if stated.as_slice() != derived.as_slice() {
            at_locations.extend(stated.into_iter().map(|l| (o, l)));
        }
    }
    at_locations.sort_unstable();
    let highest = receptacles.iter().map(|r| r.location).chain(at_locations.iter().map(|&(_, l)| l)).max();
    if highest.is_some_and(|l| usize::from(l) >= IndexSet::CAPACITY) {
        return Err(format!(
            "location numbers up to {}; the native world holds at most {}",
            highest.unwrap_or(0),
            IndexSet::CAPACITY - 1
        ));
    }

    // Objects that start cool; a cool object the scene leaves out does not matter.
    let mut start_cool: Vec<usize> = facts
        .get("iscool")
        .into_iter()
        .flatten()
        .filter_map(|a| a.first().and_then(|id| object_index.get(id.as_str()).copied()))
        .collect();
    start_cool.sort_unstable();
    start_cool.dedup();
    let not_openable = check_affordances(
        &facts,
        &receptacles,
        &objects,
        &receptacle_index,
        &kept_ids,
        &receptacle_type,
        &object_type,
    )?;
    Ok(Scene {
        room: room_of(&receptacles),
        layout: 0,
        receptacles,
        objects,
        goal,
        contained,
        also_in,
        not_openable,
        start_cool,
        floor,
        at_locations,
        named_as,
    })
}

/// The game's affordance facts must be what upstream's class tables (which the native world uses) say, for the
/// receptacles and the objects the scene places (`object_ids`), but for receptacles of an openable class that the
/// game leaves without `openable` (upstream's games have such drawers and cabinets): their indices (into
/// `receptacles`, sorted) are returned.
fn check_affordances(
    facts: &BTreeMap<String, Vec<Vec<String>>>,
    receptacles: &[ReceptacleEntity],
    objects: &[ObjectEntity],
    receptacle_index: &BTreeMap<String, usize>,
    object_ids: &[String],
    receptacle_type: &BTreeMap<String, String>,
    object_type: &BTreeMap<String, String>,
) -> Result<Vec<usize>, String> {
    let holds = |predicate: &str, id: &str| {
        facts.get(predicate).is_some_and(|f| f.iter().any(|a| a.first().map(String::as_str) == Some(id)))
    };
    let mut not_openable = Vec::new();
    for (id, &index) in receptacle_index {
        let class = ReceptacleClass::from_name(
            &receptacle_type.get(id).map(|t| type_name(t)).unwrap_or_else(|| demangled_class(id)),
        )
        .expect("checked when the receptacles were read");
        if class.openable() && !holds("openable", id) {
            not_openable.push(index);
        } else if holds("openable", id) != class.openable() {
            return Err(format!(
                "`(openable {id})` is {} but upstream's table says {class} is{} openable",
                holds("openable", id),
                if class.openable() { "" } else { " not" }
            ));
        }
    }
    for id in object_ids {
        let class =
            ObjectClass::from_name(&object_type.get(id).map(|t| type_name(t)).unwrap_or_else(|| demangled_class(id)))
                .expect("checked when the objects were read");
        let table = [
            ("pickupable", class.pickupable()),
            ("heatable", class.heatable()),
            ("coolable", class.coolable()),
            ("cleanable", class.cleanable()),
            ("toggleable", class.toggleable()),
            ("sliceable", class.sliceable()),
        ];
        // A movable container behaves as one (`examine` lists its contents) only where the game says so: checked
        // even when the game states it for no object.
        if holds("isreceptacleobject", id) != class.receptacle_object() {
            return Err(format!(
                "`(isReceptacleObject {id})` is {} but upstream's table says {class} is{} a movable receptacle",
                holds("isreceptacleobject", id),
                if class.receptacle_object() { "" } else { " not" }
            ));
        }
        for (predicate, expected) in table {
            if facts.contains_key(predicate) && holds(predicate, id) != expected {
                return Err(format!(
                    "`({predicate} {id})` is {} but upstream's table says {class} is{} {predicate}",
                    !expected,
                    if expected { "" } else { " not" }
                ));
            }
        }
    }
    // `canContain` between the classes present must be the table's, both ways.
    let listed: BTreeSet<(String, String)> = facts
        .get("cancontain")
        .into_iter()
        .flatten()
        .filter(|a| a.len() == 2)
        .map(|a| (type_name(&a[0]), type_name(&a[1])))
        .collect();
    let receptacle_classes: BTreeSet<ReceptacleClass> = receptacles.iter().map(|r| r.class).collect();
    let object_classes: BTreeSet<ObjectClass> = objects.iter().map(|o| o.class).filter(|c| c.pickupable()).collect();
    for &r in &receptacle_classes {
        for &o in &object_classes {
            let fact = listed.contains(&(r.name().to_owned(), o.name().to_owned()));
            if fact != r.can_contain(o) {
                return Err(format!(
                    "`(canContain {r} {o})` is {fact} in the game but {} in upstream's table",
                    r.can_contain(o)
                ));
            }
        }
    }
    not_openable.sort_unstable();
    Ok(not_openable)
}

/// An entity id that upstream's demangler names `class` with the `rank`-th highest number among `count` (rank 0:
/// number `count`): ids sort in rank order.
fn entity_id(class: &str, rank: usize) -> String {
    match class {
        "sinkbasin" => format!("sink_bar_{rank:03}_bar_sinkbasin"),
        "bathtubbasin" => format!("bathtub_bar_{rank:03}_bar_bathtubbasin"),
        _ => format!("{class}_bar_{rank:03}"),
    }
}

/// The PDDL goal of `goal` (upstream's goal formulas per task type).
fn goal_pddl(goal: &Goal) -> String {
    let o = format!("{}type", goal.object.name());
    let r = goal.receptacle.map(|r| format!("{}type", r.name())).unwrap_or_default();
    let placed = |extra: &str| {
        format!(
            "(exists (?r - receptacle) (exists (?o - object) (and (inReceptacle ?o ?r) (objectType ?o {o}) \
             (receptacleType ?r {r}){extra})))"
        )
    };
    match goal.task_type {
        TaskType::PickAndPlaceSimple => placed(""),
        TaskType::PickCleanThenPlaceInRecep => placed(" (cleanable ?o) (isClean ?o)"),
        TaskType::PickHeatThenPlaceInRecep => placed(" (heatable ?o) (isHot ?o)"),
        TaskType::PickCoolThenPlaceInRecep => placed(" (coolable ?o) (isCool ?o)"),
        TaskType::PickTwoObjAndPlace => format!(
            "(exists (?r - receptacle) (exists (?o1 - object) (and (objectType ?o1 {o}) (receptacleType ?r {r}) \
             (inReceptacle ?o1 ?r) (exists (?o2 - object) (and (not (= ?o1 ?o2)) (objectType ?o2 {o}) \
             (receptacleType ?r {r}) (inReceptacle ?o2 ?r))))))"
        ),
        TaskType::LookAtObjInLight => {
            let lamp = goal.lamp.map(|l| format!("{}type", l.name())).unwrap_or_default();
            format!(
                "(exists (?ot - object ?r - receptacle ?a - agent ?l - location) (and (objectType ?ot {lamp}) \
                 (toggleable ?ot) (isToggled ?ot) (receptacleAtLocation ?r ?l) (atLocation ?a ?l) \
                 (inReceptacle ?ot ?r))) (exists (?o - object ?a - agent) (and (objectType ?o {o}) (holds ?a ?o)))"
            )
        }
    }
}

/// `scene` as upstream's game files: the PDDL problem (`initial_state.pddl`) and `traj_data.json`, written so
/// that the real engine names, numbers and lists every entity as the native world does ([`scene_from_pddl`] reads
/// them back to the same scene, up to its room and layout). Affordances come from upstream's class tables; the agent
/// starts at a location of its own.
pub fn scene_to_pddl(scene: &Scene, task_id: &str) -> (String, String) {
    let mut objects = vec!["agent1 - agent".to_owned()];
    let mut init = Vec::new();
    let object_classes: BTreeSet<ObjectClass> = scene.objects.iter().map(|o| o.class).collect();
    let receptacle_classes: BTreeSet<ReceptacleClass> = scene.receptacles.iter().map(|r| r.class).collect();
    let mut otypes: BTreeSet<String> = object_classes.iter().map(|c| c.name().to_owned()).collect();
    otypes.extend(["knife".to_owned(), "butterknife".to_owned()]);
    otypes.insert(scene.goal.object.name().to_owned());
    otypes.extend(scene.goal.lamp.map(|l| l.name().to_owned()));
    objects.extend(otypes.iter().map(|t| format!("{t}type - otype")));
    let mut rtypes: BTreeSet<&str> = receptacle_classes.iter().map(|c| c.name()).collect();
    rtypes.extend(scene.goal.receptacle.map(ReceptacleClass::name));
    objects.extend(rtypes.iter().map(|t| format!("{t}type - rtype")));

    // Locations: one per receptacle (its native number) and the agent's start, numbered above them all.
    let locations = scene.receptacles.len() + 1;
    let location_id = |number: usize| format!("loc_bar_{:03}", locations - number);
    for number in 1..=locations {
        objects.push(format!("{} - location", location_id(number)));
    }
    init.push(format!("(atLocation agent1 {})", location_id(locations)));

    // How many of each class (scene numbers run from 1 to that count).
    let mut receptacle_count: BTreeMap<ReceptacleClass, usize> = BTreeMap::new();
    for (index, r) in scene.receptacles.iter().enumerate() {
        let count = receptacle_count.entry(scene.named_class(index)).or_default();
        *count = (*count).max(r.number as usize);
    }
    let mut object_count: BTreeMap<ObjectClass, usize> = BTreeMap::new();
    for o in &scene.objects {
        let count = object_count.entry(o.class).or_default();
        *count = (*count).max(o.number as usize);
    }
    let mut receptacle_ids = Vec::new();
    for (index, r) in scene.receptacles.iter().enumerate() {
        let named = scene.named_class(index);
        let id = entity_id(named.name(), receptacle_count[&named] - r.number as usize);
        objects.push(format!("{id} - receptacle"));
        init.push(format!("(receptacleType {id} {}type)", r.class.name()));
        init.push(format!("(receptacleAtLocation {id} {})", location_id(r.location as usize)));
        if scene.openable(index) {
            init.push(format!("(openable {id})"));
        }
        receptacle_ids.push(id);
    }
    let mut object_ids = Vec::new();
    for o in &scene.objects {
        let id = entity_id(o.class.name(), object_count[&o.class] - o.number as usize);
        object_ids.push(id.clone());
        objects.push(format!("{id} - object"));
        init.push(format!("(objectType {id} {}type)", o.class.name()));
        let c = o.class;
        for (predicate, holds) in [
            ("isReceptacleObject", c.receptacle_object()),
            ("pickupable", c.pickupable()),
            ("heatable", c.heatable()),
            ("coolable", c.coolable()),
            ("cleanable", c.cleanable()),
            ("toggleable", c.toggleable()),
            ("sliceable", c.sliceable()),
        ] {
            if holds {
                init.push(format!("({predicate} {id})"));
            }
        }
    }
    for (o, id) in object_ids.iter().enumerate() {
        if scene.floor.binary_search(&o).is_err() {
            init.push(format!("(inReceptacle {id} {})", receptacle_ids[scene.objects[o].receptacle]));
        }
        for location in scene.start_locations(o) {
            init.push(format!("(objectAtLocation {id} {})", location_id(location as usize)));
        }
    }
    for &o in &scene.start_cool {
        init.push(format!("(isCool {})", object_ids[o]));
    }
    for &(o, r) in &scene.also_in {
        init.push(format!("(inReceptacle {} {})", object_ids[o], receptacle_ids[r]));
    }
    for &(inner, outer) in &scene.contained {
        init.push(format!("(inReceptacleObject {} {})", object_ids[inner], object_ids[outer]));
    }
    for &r in &receptacle_classes {
        for &o in object_classes.iter().filter(|o| o.pickupable()) {
            if r.can_contain(o) {
                init.push(format!("(canContain {}type {}type)", r.name(), o.name()));
            }
        }
    }
    let problem = format!(
        ";; Written by act-rs (act_alfworld::scene_to_pddl).\n(define (problem {task})\n    (:domain alfred)\n    \
         (:objects\n        {objects}\n    )\n    (:init\n        {init}\n    )\n    (:goal\n        (and {goal})\n    \
         )\n)\n",
        task = task_id.replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
        objects = objects.join("\n        "),
        init = init.join("\n        "),
        goal = goal_pddl(&scene.goal),
    );
    let name = |class: Option<&str>| class.unwrap_or("").to_owned();
    let traj = serde_json::json!({
        "task_id": task_id,
        "task_type": scene.goal.task_type.as_str(),
        "pddl_params": {
            "object_target": scene.goal.object.name(),
            "parent_target": name(scene.goal.receptacle.map(ReceptacleClass::name)),
            "toggle_target": name(scene.goal.lamp.map(ObjectClass::name)),
            "mrecep_target": "",
            "object_sliced": false,
        },
    });
    (problem, serde_json::to_string_pretty(&traj).expect("a JSON value serialises"))
}

/// Writes `scene` as a game directory (`initial_state.pddl`, `traj_data.json`) under `dir` ([`scene_to_pddl`]).
pub fn write_game(scene: &Scene, task_id: &str, dir: impl AsRef<Path>) -> Result<(), EnvError> {
    let dir = dir.as_ref();
    let io = |e: std::io::Error| EnvError::Config(format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(io)?;
    let (problem, traj) = scene_to_pddl(scene, task_id);
    act_core::atomic_write(dir.join("initial_state.pddl"), problem.as_bytes())
        .map_err(|e| EnvError::Config(e.to_string()))?;
    act_core::atomic_write(dir.join("traj_data.json"), traj.as_bytes()).map_err(|e| EnvError::Config(e.to_string()))?;
    Ok(())
}

/// The scene of an upstream game on disk: a directory with `initial_state.pddl` (or `game.tw-pddl`) and
/// `traj_data.json`, or a `.tw-pddl` file with `traj_data.json` beside it. Errors name the file.
pub fn load_scene(path: impl AsRef<Path>) -> Result<Scene, EnvError> {
    let path = path.as_ref();
    let dir = if path.is_dir() { path } else { path.parent().unwrap_or(Path::new(".")) };
    let read =
        |file: &Path| std::fs::read_to_string(file).map_err(|e| EnvError::Config(format!("{}: {e}", file.display())));
    let traj_path = dir.join("traj_data.json");
    let traj_data = read(&traj_path)?;
    let (pddl_path, pddl) = if path.is_file() {
        (path.to_path_buf(), game_problem(path, &read(path)?)?)
    } else if dir.join("initial_state.pddl").is_file() {
        let file = dir.join("initial_state.pddl");
        let text = read(&file)?;
        (file, text)
    } else {
        let file = dir.join("game.tw-pddl");
        let text = read(&file)?;
        (file.clone(), game_problem(&file, &text)?)
    };
    scene_from_pddl(&pddl, &traj_data).map_err(|message| {
        let file = if message.starts_with("traj_data.json") { &traj_path } else { &pddl_path };
        EnvError::Config(format!("{}: {message}", file.display()))
    })
}

/// The `pddl_problem` of a `.tw-pddl` game file.
fn game_problem(path: &Path, text: &str) -> Result<String, EnvError> {
    #[derive(Deserialize)]
    struct Game {
        pddl_problem: String,
    }
    serde_json::from_str::<Game>(text)
        .map(|g| g.pddl_problem)
        .map_err(|e| EnvError::Config(format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const APPLE_PDDL: &str =
        include_str!("../tests/data/pddl/pick_and_place_simple-apple-diningtable/initial_state.pddl");
    const APPLE_TRAJ: &str = include_str!("../tests/data/pddl/pick_and_place_simple-apple-diningtable/traj_data.json");
    const FIXTURES_PDDL: &str =
        include_str!("../tests/data/pddl_fixtures/pick_and_place_simple-remotecontrol-sofa/initial_state.pddl");
    const FIXTURES_TRAJ: &str =
        include_str!("../tests/data/pddl_fixtures/pick_and_place_simple-remotecontrol-sofa/traj_data.json");

    proptest! {
        #[test]
        fn reading_never_panics(text in any::<String>(), traj in any::<String>()) {
            let _ = parse_sexp(&text);
            let _ = scene_from_pddl(&text, APPLE_TRAJ);
            let _ = scene_from_pddl(APPLE_PDDL, &traj);
        }

        #[test]
        fn a_game_with_any_span_cut_out_loads_or_is_refused(start in 0usize..6000, len in 1usize..400) {
            cut_game_loads_playable_or_is_refused(APPLE_PDDL, APPLE_TRAJ, start, len)?;
        }

        #[test]
        fn a_game_with_fixtures_and_any_span_cut_out_loads_or_is_refused(start in 0usize..6000, len in 1usize..400) {
            cut_game_loads_playable_or_is_refused(FIXTURES_PDDL, FIXTURES_TRAJ, start, len)?;
        }
    }

    /// `pddl` with `len` bytes cut out at `start` is refused, or loads as a playable world.
    fn cut_game_loads_playable_or_is_refused(
        pddl: &str,
        traj: &str,
        start: usize,
        len: usize,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let start = start.min(pddl.len());
        let end = (start + len).min(pddl.len());
        let cut = format!("{}{}", &pddl[..start], &pddl[end..]);
        if let Ok(scene) = scene_from_pddl(&cut, traj) {
            let world = crate::World::new(scene, crate::GrammarVersion::V03);
            prop_assert!(!world.admissible().is_empty());
        }
        Ok(())
    }

    #[test]
    fn sexps_parse_and_name_their_errors() {
        let parsed = parse_sexp("; comment\n(define (p x) ; trailing\n (:init (a b)))").unwrap();
        assert_eq!(parsed.head().as_deref(), Some("define"));
        assert_eq!(parsed.list().unwrap().len(), 3);
        assert!(parse_sexp("(a))").unwrap_err().contains("line 1"));
        assert!(parse_sexp("(a (b)").unwrap_err().contains("unclosed"));
        assert!(parse_sexp("(a) (b)").unwrap_err().contains("2 top-level"));
        assert!(parse_sexp("  ").is_err());
    }

    #[test]
    fn objects_in_no_receptacle_are_left_out_but_keep_their_numbers() {
        use crate::vocab::ObjectClass as O;
        let scene = scene_from_pddl(FIXTURES_PDDL, FIXTURES_TRAJ).unwrap();
        let classes: Vec<O> = scene.objects.iter().map(|o| o.class).collect();
        assert_eq!(classes, [O::HousePlant, O::RemoteControl, O::RemoteControl, O::TeddyBear, O::Television]);
        // The second painting hung on the sofa: named after both paintings' ids (and the bare class name, which
        // sorts first), as upstream's demangler numbers them.
        let hung = FIXTURES_PDDL.replacen("(:init", "(:init (inReceptacle Painting_bar_2 Sofa_bar_1)", 1);
        let scene = scene_from_pddl(&hung, FIXTURES_TRAJ).unwrap();
        let painting = scene.objects.iter().find(|o| o.class == O::Painting).unwrap();
        assert_eq!((painting.number, scene.receptacles[painting.receptacle].class), (1, ReceptacleClass::Sofa));
        let mut world = crate::World::new(scene, crate::GrammarVersion::V03);
        assert_eq!(
            world.execute("go to sofa 1").unwrap().1,
            "You arrive at loc 6. On the sofa 1, you see a painting 1."
        );
        assert!(world.parse("take painting 1 from sofa 1").is_none(), "a fixture");
    }

    #[test]
    fn demangling_numbers_sorted_ids_downwards_per_class() {
        assert_eq!(demangled_class("Sink_bar__minus_00_dot_50_bar_SinkBasin"), "sinkbasin");
        assert_eq!(demangled_class("Cabinet_bar__minus_01_dot_50"), "cabinet");
        assert_eq!(demangled_class("loc_bar_3_bar_4"), "loc");
        let numbers = demangled_numbers(["Cabinet_bar_2", "Cabinet_bar_1", "Drawer_bar_9", "Cabinet_bar_3"]);
        assert_eq!(numbers["cabinet_bar_1"], 3);
        assert_eq!(numbers["cabinet_bar_2"], 2);
        assert_eq!(numbers["cabinet_bar_3"], 1);
        assert_eq!(numbers["drawer_bar_9"], 1);
    }
}
