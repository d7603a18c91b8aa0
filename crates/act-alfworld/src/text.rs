//! The upstream feedback strings (`alfworld/data/alfred.twl2`), word for word.

/// The banner that opens every game.
pub const WELCOME: &str = "-= Welcome to TextWorld, ALFRED! =-";
/// The answer to any command that is not admissible.
pub const NOTHING_HAPPENS: &str = "Nothing happens.";
/// The reply to `help` (grammar 0.4 only), exactly as the real engine prints it: upstream's grammar (`alfred.twl2`)
/// starts the text with a newline, which TextWorld strips from the feedback (`tests/bridge_real.rs` compares).
pub const HELP: &str = "Available commands:\n  look:                             look around your current location\n  inventory:                        check your current inventory\n  go to (receptacle):               move to a receptacle\n  open (receptacle):                open a receptacle\n  close (receptacle):               close a receptacle\n  take (object) from (receptacle):  take an object from a receptacle\n  move (object) to (receptacle):  place an object in or on a receptacle\n  examine (something):              examine a receptacle or an object\n  use (object):                     use an object\n  heat (object) with (receptacle):  heat an object using a receptacle\n  clean (object) with (receptacle): clean an object using a receptacle\n  cool (object) with (receptacle):  cool an object using a receptacle\n  slice (object) with (object):     slice an object using a sharp object\n";

/// Appends TextWorld's list: "a x, a y, and a z"; "a x, and a y"; "a x"; "nothing" when empty.
/// The article is always "a", as upstream prints it.
pub fn push_list<'a>(out: &mut String, names: impl IntoIterator<Item = &'a str>) {
    let names: Vec<&str> = names.into_iter().collect();
    match names.len() {
        0 => out.push_str("nothing"),
        n => {
            for (i, name) in names.iter().enumerate() {
                if i > 0 {
                    out.push_str(if i + 1 == n { ", and " } else { ", " });
                }
                out.push_str("a ");
                out.push_str(name);
            }
        }
    }
}

/// How a receptacle looks from in front of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceptacleView {
    /// Openable and open: contents shown.
    Open,
    /// Openable and closed.
    Closed,
    /// Not openable: contents shown.
    Surface,
}

/// Appends the receptacle view: "The R is open. In it, you see L." / "The R is closed." /
/// "On the R, you see L."
pub fn push_receptacle_view<'a>(
    out: &mut String,
    view: ReceptacleView,
    receptacle: &str,
    contents: impl IntoIterator<Item = &'a str>,
) {
    match view {
        ReceptacleView::Open => {
            out.push_str("The ");
            out.push_str(receptacle);
            out.push_str(" is open. In it, you see ");
            push_list(out, contents);
            out.push('.');
        }
        ReceptacleView::Closed => {
            out.push_str("The ");
            out.push_str(receptacle);
            out.push_str(" is closed.");
        }
        ReceptacleView::Surface => {
            out.push_str("On the ");
            out.push_str(receptacle);
            out.push_str(", you see ");
            push_list(out, contents);
            out.push('.');
        }
    }
}

/// The state flags `examine` reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ObjectLook {
    /// A movable container (`isReceptacleObject`).
    pub receptacle_object: bool,
    /// `isClean`.
    pub clean: bool,
    /// `isHot`.
    pub hot: bool,
    /// `isCool`.
    pub cool: bool,
    /// `isSliced`.
    pub sliced: bool,
    /// `toggleable`.
    pub toggleable: bool,
    /// `isToggled`.
    pub toggled: bool,
    /// `sliceable`.
    pub sliceable: bool,
}

/// Appends the reply to `examine O`, testing upstream's conditions in upstream's order (so a hot
/// mug is still "a normal mug", and a cool object alone is "cold" but "cool and clean" with clean).
pub fn push_object_examination<'a>(
    out: &mut String,
    object: &str,
    look: ObjectLook,
    contents: impl IntoIterator<Item = &'a str>,
) {
    let ObjectLook { receptacle_object, clean, hot, cool, sliced, toggleable, toggled, sliceable } = look;
    let state = if receptacle_object {
        out.push_str("This is a normal ");
        out.push_str(object);
        // What the game put inside at the start (`inReceptacleObject`, which no action changes upstream).
        out.push_str(". In it, you see ");
        push_list(out, contents);
        out.push('.');
        return;
    } else if clean && hot && sliced {
        "hot and clean sliced"
    } else if clean && cool && sliced {
        "cool and clean sliced"
    } else if clean && sliced {
        "clean sliced"
    } else if hot && sliced {
        "hot sliced"
    } else if cool && sliced {
        "cool sliced"
    } else if clean && hot {
        "hot and clean"
    } else if clean && cool {
        "cool and clean"
    } else if hot {
        "hot"
    } else if clean {
        "clean"
    } else if cool {
        "cold"
    } else if toggleable {
        out.push_str("This ");
        out.push_str(object);
        out.push_str(if toggled { " is on." } else { " is off." });
        return;
    } else if sliceable && sliced {
        "sliced"
    } else {
        out.push_str("There's nothing special about ");
        out.push_str(object);
        out.push('.');
        return;
    };
    out.push_str("This is a ");
    out.push_str(state);
    out.push(' ');
    out.push_str(object);
    out.push('.');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(names: &[&str]) -> String {
        let mut s = String::new();
        push_list(&mut s, names.iter().copied());
        s
    }

    #[test]
    fn lists_like_textworld() {
        assert_eq!(list(&[]), "nothing");
        assert_eq!(list(&["apple 1"]), "a apple 1");
        assert_eq!(list(&["apple 1", "egg 2"]), "a apple 1, and a egg 2");
        assert_eq!(list(&["cabinet 2", "cabinet 1", "fridge 1"]), "a cabinet 2, a cabinet 1, and a fridge 1");
    }

    #[test]
    fn receptacle_views() {
        let mut s = String::new();
        push_receptacle_view(&mut s, ReceptacleView::Open, "fridge 1", ["egg 1"]);
        assert_eq!(s, "The fridge 1 is open. In it, you see a egg 1.");
        s.clear();
        push_receptacle_view(&mut s, ReceptacleView::Closed, "fridge 1", ["egg 1"]);
        assert_eq!(s, "The fridge 1 is closed.");
        s.clear();
        push_receptacle_view(&mut s, ReceptacleView::Surface, "desk 1", []);
        assert_eq!(s, "On the desk 1, you see nothing.");
    }

    #[test]
    fn examinations_follow_upstream_order() {
        let cases = [
            (ObjectLook::default(), "There's nothing special about apple 1."),
            (ObjectLook { hot: true, ..Default::default() }, "This is a hot apple 1."),
            (ObjectLook { cool: true, ..Default::default() }, "This is a cold apple 1."),
            (ObjectLook { clean: true, cool: true, ..Default::default() }, "This is a cool and clean apple 1."),
            (ObjectLook { clean: true, hot: true, ..Default::default() }, "This is a hot and clean apple 1."),
            (
                ObjectLook { hot: true, sliced: true, sliceable: true, ..Default::default() },
                "This is a hot sliced apple 1.",
            ),
            (ObjectLook { sliced: true, sliceable: true, ..Default::default() }, "This is a sliced apple 1."),
            (
                ObjectLook { receptacle_object: true, hot: true, ..Default::default() },
                "This is a normal apple 1. In it, you see nothing.",
            ),
            (ObjectLook { toggleable: true, toggled: true, ..Default::default() }, "This apple 1 is on."),
        ];
        for (look, expected) in cases {
            let mut s = String::new();
            push_object_examination(&mut s, "apple 1", look, []);
            assert_eq!(s, expected);
        }
        let mut s = String::new();
        let container = ObjectLook { receptacle_object: true, ..Default::default() };
        push_object_examination(&mut s, "bowl 1", container, ["apple 2", "egg 1"]);
        assert_eq!(s, "This is a normal bowl 1. In it, you see a apple 2, and a egg 1.");
    }
}
