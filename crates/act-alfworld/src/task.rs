//! The six ALFWorld task types, their goals and the two goal phrasings of each.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::vocab::{ObjectClass, ReceptacleClass};

/// An ALFWorld task type (upstream names).
///
/// Phrasings follow upstream `alfworld/gen/goal_library.py`; the goal conditions follow its PDDL
/// goals (checked in [`crate::world::World::goal_satisfied`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskType {
    /// Put an object in a receptacle.
    PickAndPlaceSimple,
    /// Hold an object where a lamp is turned on.
    LookAtObjInLight,
    /// Clean an object in a sink basin, then put it in a receptacle.
    PickCleanThenPlaceInRecep,
    /// Heat an object in a microwave, then put it in a receptacle.
    PickHeatThenPlaceInRecep,
    /// Cool an object in a fridge, then put it in a receptacle.
    PickCoolThenPlaceInRecep,
    /// Put two objects of one class in one receptacle.
    PickTwoObjAndPlace,
}

impl TaskType {
    /// All six, in upstream's usual order.
    pub const ALL: [TaskType; 6] = [
        TaskType::PickAndPlaceSimple,
        TaskType::LookAtObjInLight,
        TaskType::PickCleanThenPlaceInRecep,
        TaskType::PickHeatThenPlaceInRecep,
        TaskType::PickCoolThenPlaceInRecep,
        TaskType::PickTwoObjAndPlace,
    ];

    /// The upstream name ("pick_heat_then_place_in_recep").
    pub const fn as_str(self) -> &'static str {
        match self {
            TaskType::PickAndPlaceSimple => "pick_and_place_simple",
            TaskType::LookAtObjInLight => "look_at_obj_in_light",
            TaskType::PickCleanThenPlaceInRecep => "pick_clean_then_place_in_recep",
            TaskType::PickHeatThenPlaceInRecep => "pick_heat_then_place_in_recep",
            TaskType::PickCoolThenPlaceInRecep => "pick_cool_then_place_in_recep",
            TaskType::PickTwoObjAndPlace => "pick_two_obj_and_place",
        }
    }

    /// The appliance a state-change task needs (microwave, fridge, sink basin).
    pub const fn appliance(self) -> Option<ReceptacleClass> {
        match self {
            TaskType::PickCleanThenPlaceInRecep => Some(ReceptacleClass::SinkBasin),
            TaskType::PickHeatThenPlaceInRecep => Some(ReceptacleClass::Microwave),
            TaskType::PickCoolThenPlaceInRecep => Some(ReceptacleClass::Fridge),
            _ => None,
        }
    }

    /// Whether objects of `class` can be the target of this task type.
    pub const fn accepts_object(self, class: ObjectClass) -> bool {
        if !class.pickupable() {
            return false;
        }
        match self {
            TaskType::PickCleanThenPlaceInRecep => class.cleanable(),
            TaskType::PickHeatThenPlaceInRecep => class.heatable(),
            TaskType::PickCoolThenPlaceInRecep => class.coolable(),
            _ => true,
        }
    }
}

impl fmt::Display for TaskType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of [`TaskType::from_str`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown ALFWorld task type `{0}`")]
pub struct UnknownTaskType(pub String);

impl FromStr for TaskType {
    type Err = UnknownTaskType;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TaskType::ALL.into_iter().find(|t| t.as_str() == s).ok_or_else(|| UnknownTaskType(s.to_owned()))
    }
}

/// What a game asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Goal {
    /// The task type.
    pub task_type: TaskType,
    /// The object class to handle (`object_target`).
    pub object: ObjectClass,
    /// Where to put it (`parent_target`); `None` for [`TaskType::LookAtObjInLight`].
    pub receptacle: Option<ReceptacleClass>,
    /// The lamp class (`toggle_target`) for [`TaskType::LookAtObjInLight`].
    pub lamp: Option<ObjectClass>,
    /// Which of the two upstream phrasings the task line uses (0 or 1).
    pub phrasing: u8,
}

impl Goal {
    /// The task description without the final period ("put a hot apple in countertop").
    pub fn description(&self) -> String {
        let o = self.object.name();
        let r = self.receptacle.map_or("", ReceptacleClass::name);
        let first = self.phrasing == 0;
        match self.task_type {
            TaskType::PickAndPlaceSimple if first => format!("put a {o} in {r}"),
            TaskType::PickAndPlaceSimple => format!("put some {o} on {r}"),
            TaskType::LookAtObjInLight => {
                let lamp = self.lamp.map_or("", ObjectClass::name);
                if first { format!("look at {o} under the {lamp}") } else { format!("examine the {o} with the {lamp}") }
            }
            TaskType::PickCleanThenPlaceInRecep if first => format!("put a clean {o} in {r}"),
            TaskType::PickCleanThenPlaceInRecep => format!("clean some {o} and put it in {r}"),
            TaskType::PickHeatThenPlaceInRecep if first => format!("put a hot {o} in {r}"),
            TaskType::PickHeatThenPlaceInRecep => format!("heat some {o} and put it in {r}"),
            TaskType::PickCoolThenPlaceInRecep if first => format!("put a cool {o} in {r}"),
            TaskType::PickCoolThenPlaceInRecep => format!("cool some {o} and put it in {r}"),
            TaskType::PickTwoObjAndPlace if first => format!("put two {o} in {r}"),
            TaskType::PickTwoObjAndPlace => format!("find two {o} and put them in {r}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn goal(task_type: TaskType, phrasing: u8) -> Goal {
        let look = task_type == TaskType::LookAtObjInLight;
        Goal {
            task_type,
            object: ObjectClass::Apple,
            receptacle: (!look).then_some(ReceptacleClass::CounterTop),
            lamp: look.then_some(ObjectClass::DeskLamp),
            phrasing,
        }
    }

    #[test]
    fn both_phrasings_of_every_type() {
        let expected = [
            ("put a apple in countertop", "put some apple on countertop"),
            ("look at apple under the desklamp", "examine the apple with the desklamp"),
            ("put a clean apple in countertop", "clean some apple and put it in countertop"),
            ("put a hot apple in countertop", "heat some apple and put it in countertop"),
            ("put a cool apple in countertop", "cool some apple and put it in countertop"),
            ("put two apple in countertop", "find two apple and put them in countertop"),
        ];
        for (task_type, (first, second)) in TaskType::ALL.into_iter().zip(expected) {
            assert_eq!(goal(task_type, 0).description(), first);
            assert_eq!(goal(task_type, 1).description(), second);
            assert_eq!(task_type.as_str().parse::<TaskType>(), Ok(task_type));
        }
        assert!("pick_and_place_with_movable_recep".parse::<TaskType>().is_err());
    }
}
