//! The answer of a comparison: which of two presented actions.

use serde::{Deserialize, Serialize};

/// One of two presented actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    /// "Action 1".
    First,
    /// "Action 2".
    Second,
}

impl Choice {
    /// 1 or 2, as written in prompts and answers.
    pub fn number(self) -> u8 {
        match self {
            Choice::First => 1,
            Choice::Second => 2,
        }
    }

    /// The other choice.
    pub fn other(self) -> Choice {
        match self {
            Choice::First => Choice::Second,
            Choice::Second => Choice::First,
        }
    }

    /// `Some(First)` for 1, `Some(Second)` for 2.
    pub fn from_number(n: u64) -> Option<Choice> {
        match n {
            1 => Some(Choice::First),
            2 => Some(Choice::Second),
            _ => None,
        }
    }
}
