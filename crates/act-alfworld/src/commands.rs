//! The commands of the text world and how each grammar version spells them.

use crate::config::GrammarVersion;

/// A command, with entities as indices into the scene's receptacles and objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// `look`
    Look,
    /// `inventory`
    Inventory,
    /// `help` (grammar 0.4)
    Help,
    /// `go to R`
    GoTo {
        /// The receptacle.
        receptacle: usize,
    },
    /// `open R`
    Open {
        /// The receptacle.
        receptacle: usize,
    },
    /// `close R`
    Close {
        /// The receptacle.
        receptacle: usize,
    },
    /// `take O from R`
    Take {
        /// The object.
        object: usize,
        /// Where it is.
        receptacle: usize,
    },
    /// `put O in/on R` (0.3) or `move O to R` (0.4)
    Put {
        /// The held object.
        object: usize,
        /// Where it goes.
        receptacle: usize,
    },
    /// `use L`
    Use {
        /// The lamp.
        object: usize,
    },
    /// `heat O with R`
    Heat {
        /// The held object.
        object: usize,
        /// The microwave.
        receptacle: usize,
    },
    /// `cool O with R`
    Cool {
        /// The held object.
        object: usize,
        /// The fridge.
        receptacle: usize,
    },
    /// `clean O with R`
    Clean {
        /// The held object.
        object: usize,
        /// The sink basin.
        receptacle: usize,
    },
    /// `slice O with K`
    Slice {
        /// What is sliced.
        object: usize,
        /// The held knife.
        knife: usize,
    },
    /// `examine R`
    ExamineReceptacle {
        /// The receptacle.
        receptacle: usize,
    },
    /// `examine O`
    ExamineObject {
        /// The object.
        object: usize,
    },
}

/// The display names of a scene's entities ("cabinet 3", "apple 1").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntityNames {
    /// Receptacle names, by receptacle index.
    pub receptacles: Vec<String>,
    /// Object names, by object index.
    pub objects: Vec<String>,
}

impl Command {
    /// Appends the command's text in `grammar` to `out`.
    pub fn write_text(self, names: &EntityNames, grammar: GrammarVersion, out: &mut String) {
        let r = |i: usize| names.receptacles[i].as_str();
        let o = |i: usize| names.objects[i].as_str();
        let parts: [&str; 4] = match self {
            Command::Look => ["look", "", "", ""],
            Command::Inventory => ["inventory", "", "", ""],
            Command::Help => ["help", "", "", ""],
            Command::GoTo { receptacle } => ["go to ", r(receptacle), "", ""],
            Command::Open { receptacle } => ["open ", r(receptacle), "", ""],
            Command::Close { receptacle } => ["close ", r(receptacle), "", ""],
            Command::Take { object, receptacle } => ["take ", o(object), " from ", r(receptacle)],
            Command::Put { object, receptacle } => match grammar {
                GrammarVersion::V03 => ["put ", o(object), " in/on ", r(receptacle)],
                GrammarVersion::V04 => ["move ", o(object), " to ", r(receptacle)],
            },
            Command::Use { object } => ["use ", o(object), "", ""],
            Command::Heat { object, receptacle } => ["heat ", o(object), " with ", r(receptacle)],
            Command::Cool { object, receptacle } => ["cool ", o(object), " with ", r(receptacle)],
            Command::Clean { object, receptacle } => ["clean ", o(object), " with ", r(receptacle)],
            Command::Slice { object, knife } => ["slice ", o(object), " with ", o(knife)],
            Command::ExamineReceptacle { receptacle } => ["examine ", r(receptacle), "", ""],
            Command::ExamineObject { object } => ["examine ", o(object), "", ""],
        };
        for part in parts {
            out.push_str(part);
        }
    }

    /// The command's text in `grammar`.
    pub fn text(self, names: &EntityNames, grammar: GrammarVersion) -> String {
        let mut out = String::new();
        self.write_text(names, grammar, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_grammars_spell_put() {
        let names = EntityNames { receptacles: vec!["countertop 1".into()], objects: vec!["apple 1".into()] };
        let put = Command::Put { object: 0, receptacle: 0 };
        assert_eq!(put.text(&names, GrammarVersion::V03), "put apple 1 in/on countertop 1");
        assert_eq!(put.text(&names, GrammarVersion::V04), "move apple 1 to countertop 1");
        assert_eq!(Command::GoTo { receptacle: 0 }.text(&names, GrammarVersion::V03), "go to countertop 1");
        assert_eq!(
            Command::Slice { object: 0, knife: 0 }.text(&names, GrammarVersion::V04),
            "slice apple 1 with apple 1"
        );
    }
}
