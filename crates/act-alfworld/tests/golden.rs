//! Golden transcripts of small hand-made scenes, checked line by line against upstream's text
//! formats (`alfworld/data/alfred.twl2`, grammar 0.3 and 0.4).

use act_alfworld::HELP;
use act_alfworld::{
    Expert, Goal, GrammarVersion, ObjectClass as O, ReceptacleClass as R, RoomType, Scene, TaskType, World,
};
use act_alfworld::{ObjectEntity, ReceptacleEntity};

fn receptacle(class: R, number: u16, location: u16) -> ReceptacleEntity {
    ReceptacleEntity { class, number, location }
}

fn object(class: O, number: u16, receptacle: usize) -> ObjectEntity {
    ObjectEntity { class, number, receptacle }
}

/// cabinet 2, cabinet 1, countertop 1 (knife 1, mug 1), fridge 1 (apple 1), microwave 1, sinkbasin 1;
/// mug 2 in cabinet 1. "put a hot apple in countertop".
fn kitchen() -> Scene {
    Scene::new(
        RoomType::Kitchen,
        1,
        vec![
            receptacle(R::Cabinet, 2, 3),
            receptacle(R::Cabinet, 1, 1),
            receptacle(R::CounterTop, 1, 4),
            receptacle(R::Fridge, 1, 2),
            receptacle(R::Microwave, 1, 5),
            receptacle(R::SinkBasin, 1, 6),
        ],
        vec![object(O::Apple, 1, 3), object(O::Knife, 1, 2), object(O::Mug, 2, 1), object(O::Mug, 1, 2)],
        Goal {
            task_type: TaskType::PickHeatThenPlaceInRecep,
            object: O::Apple,
            receptacle: Some(R::CounterTop),
            lamp: None,
            phrasing: 0,
        },
    )
}

/// bed 1 (book 1), desk 1 (desklamp 1), drawer 1 (pen 1). "examine the book with the desklamp".
fn bedroom() -> Scene {
    Scene::new(
        RoomType::Bedroom,
        301,
        vec![receptacle(R::Bed, 1, 2), receptacle(R::Desk, 1, 1), receptacle(R::Drawer, 1, 3)],
        vec![object(O::Book, 1, 0), object(O::DeskLamp, 1, 1), object(O::Pen, 1, 2)],
        Goal {
            task_type: TaskType::LookAtObjInLight,
            object: O::Book,
            receptacle: None,
            lamp: Some(O::DeskLamp),
            phrasing: 1,
        },
    )
}

/// Plays `script` (command, expected feedback) and checks every line; returns the world.
fn play(scene: Scene, grammar: GrammarVersion, intro: &str, script: &[(&str, &str)]) -> World {
    let mut world = World::new(scene, grammar);
    assert_eq!(world.intro(), intro);
    for (i, (command, expected)) in script.iter().enumerate() {
        let before = world.state().clone();
        let feedback = match world.execute(command) {
            Some((_, feedback)) => feedback,
            None => {
                assert_eq!(world.state(), &before, "an inadmissible command changed the state");
                "Nothing happens.".to_owned()
            }
        };
        assert_eq!(&feedback, expected, "line {i}: `{command}`");
    }
    world
}

fn admissible(world: &World) -> Vec<&str> {
    world.admissible().iter().map(|(t, _)| t.as_str()).collect()
}

const KITCHEN_INTRO: &str = "-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly around you, you see a cabinet 2, a cabinet 1, a countertop 1, a fridge 1, a microwave 1, and a sinkbasin 1.\n\nYour task is to: put a hot apple in countertop.";

#[test]
fn kitchen_in_grammar_0_3() {
    let world = World::new(kitchen(), GrammarVersion::V03);
    assert_eq!(
        admissible(&world),
        [
            "go to cabinet 1",
            "go to cabinet 2",
            "go to countertop 1",
            "go to fridge 1",
            "go to microwave 1",
            "go to sinkbasin 1",
            "inventory",
            "look"
        ]
    );
    let script = [
        ("look", "You are in the middle of a room. Looking quickly around you, you see nothing."),
        ("inventory", "You are not carrying anything."),
        ("go to fridge 1", "You arrive at loc 2. The fridge 1 is closed."),
        ("take apple 1 from fridge 1", "Nothing happens."),
        ("go to fridge 1", "Nothing happens."),
        ("Open fridge 1", "Nothing happens."),
        ("  open fridge 1 ", "You open the fridge 1. The fridge 1 is open. In it, you see a apple 1."),
        ("take apple 1 from fridge 1", "You pick up the apple 1 from the fridge 1."),
        ("examine apple 1", "There's nothing special about apple 1."),
        ("close fridge 1", "You close the fridge 1."),
        ("go to microwave 1", "You arrive at loc 5. The microwave 1 is closed."),
        ("help", "Nothing happens."),
        ("heat apple 1 with microwave 1", "You heat the apple 1 using the microwave 1."),
        ("examine apple 1", "This is a hot apple 1."),
        ("inventory", "You are carrying: a apple 1."),
        ("go to cabinet 1", "You arrive at loc 1. The cabinet 1 is closed."),
        ("examine cabinet 1", "The cabinet 1 is closed."),
        ("open cabinet 1", "You open the cabinet 1. The cabinet 1 is open. In it, you see a mug 2."),
        ("put apple 1 in/on cabinet 1", "Nothing happens."),
        ("go to countertop 1", "You arrive at loc 4. On the countertop 1, you see a knife 1, and a mug 1."),
        ("look", "You are facing the countertop 1. Next to it, you see nothing."),
    ];
    let mut world = play(kitchen(), GrammarVersion::V03, KITCHEN_INTRO, &script);
    assert_eq!(
        admissible(&world),
        [
            "examine apple 1",
            "examine countertop 1",
            "go to cabinet 1",
            "go to cabinet 2",
            "go to fridge 1",
            "go to microwave 1",
            "go to sinkbasin 1",
            "inventory",
            "look",
            "put apple 1 in/on countertop 1",
        ]
    );
    assert!(!world.goal_satisfied());
    let (_, feedback) = world.execute("put apple 1 in/on countertop 1").unwrap();
    assert_eq!(feedback, "You put the apple 1 in/on the countertop 1.");
    assert!(world.goal_satisfied());
}

#[test]
fn kitchen_in_grammar_0_4() {
    let script = [
        ("help", HELP),
        ("go to countertop 1", "You arrive at countertop 1. On the countertop 1, you see a knife 1, and a mug 1."),
        ("examine countertop 1", "On the countertop 1, you see a knife 1, and a mug 1."),
        ("take knife 1 from countertop 1", "You pick up the knife 1 from the countertop 1."),
        ("go to fridge 1", "You arrive at fridge 1. The fridge 1 is closed."),
        ("slice apple 1 with knife 1", "You sliced the apple 1 with the knife 1."),
        ("open fridge 1", "You open the fridge 1. The fridge 1 is open. In it, you see a apple 1."),
        ("move knife 1 to fridge 1", "Nothing happens."),
        ("put knife 1 in/on fridge 1", "Nothing happens."),
        ("go to countertop 1", "You arrive at countertop 1. On the countertop 1, you see a mug 1."),
        ("move knife 1 to countertop 1", "You move the knife 1 to the countertop 1."),
        ("take mug 1 from countertop 1", "You pick up the mug 1 from the countertop 1."),
        ("examine mug 1", "This is a normal mug 1. In it, you see nothing."),
        ("move mug 1 to countertop 1", "You move the mug 1 to the countertop 1."),
        ("go to fridge 1", "You arrive at fridge 1. The fridge 1 is open. In it, you see a apple 1."),
        ("take apple 1 from fridge 1", "You pick up the apple 1 from the fridge 1."),
        ("cool apple 1 with fridge 1", "You cool the apple 1 using the fridge 1."),
        ("examine apple 1", "This is a cool sliced apple 1."),
        ("go to microwave 1", "You arrive at microwave 1. The microwave 1 is closed."),
        ("heat apple 1 with microwave 1", "You heat the apple 1 using the microwave 1."),
        ("examine apple 1", "This is a hot sliced apple 1."),
        ("go to sinkbasin 1", "You arrive at sinkbasin 1. On the sinkbasin 1, you see nothing."),
        ("clean apple 1 with sinkbasin 1", "You clean the apple 1 using the sinkbasin 1."),
        ("examine apple 1", "This is a hot and clean sliced apple 1."),
        ("go to countertop 1", "You arrive at countertop 1. On the countertop 1, you see a knife 1, and a mug 1."),
    ];
    let mut world = play(kitchen(), GrammarVersion::V04, KITCHEN_INTRO, &script);
    let list = admissible(&world);
    assert_eq!(list.first(), Some(&"examine apple 1"));
    assert!(list.contains(&"help") && list.contains(&"move apple 1 to countertop 1"));
    assert!(!list.iter().any(|c| c.starts_with("put ")));
    assert_eq!(world.execute("move apple 1 to countertop 1").unwrap().1, "You move the apple 1 to the countertop 1.");
    assert!(world.goal_satisfied());
}

#[test]
fn bedroom_look_in_light_in_grammar_0_3() {
    let intro = "-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly around you, you see a bed 1, a desk 1, and a drawer 1.\n\nYour task is to: examine the book with the desklamp.";
    let script = [
        ("go to drawer 1", "You arrive at loc 3. The drawer 1 is closed."),
        ("open drawer 1", "You open the drawer 1. The drawer 1 is open. In it, you see a pen 1."),
        ("close drawer 1", "You close the drawer 1."),
        ("go to desk 1", "You arrive at loc 1. On the desk 1, you see a desklamp 1."),
        ("take desklamp 1 from desk 1", "Nothing happens."),
        ("use desklamp 1", "You turn on the desklamp 1."),
        ("use desklamp 1", "You turn on the desklamp 1."),
        ("go to bed 1", "You arrive at loc 2. On the bed 1, you see a book 1."),
        ("take book 1 from bed 1", "You pick up the book 1 from the bed 1."),
        ("examine book 1", "There's nothing special about book 1."),
    ];
    let mut world = play(bedroom(), GrammarVersion::V03, intro, &script);
    assert!(!world.goal_satisfied(), "the lamp is lit but not here");
    assert_eq!(world.execute("go to desk 1").unwrap().1, "You arrive at loc 1. On the desk 1, you see a desklamp 1.");
    assert!(world.goal_satisfied());
}

/// The expert's transcript on the kitchen: priors (sink basin, microwave, fridge, countertop, last
/// listed first), open then close what it searched, take, heat at the first microwave, put.
#[test]
fn expert_transcript_on_the_kitchen() {
    let expected = [
        ("go to sinkbasin 1", "You arrive at loc 6. On the sinkbasin 1, you see nothing."),
        ("go to microwave 1", "You arrive at loc 5. The microwave 1 is closed."),
        ("open microwave 1", "You open the microwave 1. The microwave 1 is open. In it, you see nothing."),
        ("close microwave 1", "You close the microwave 1."),
        ("go to fridge 1", "You arrive at loc 2. The fridge 1 is closed."),
        ("open fridge 1", "You open the fridge 1. The fridge 1 is open. In it, you see a apple 1."),
        ("take apple 1 from fridge 1", "You pick up the apple 1 from the fridge 1."),
        ("go to microwave 1", "You arrive at loc 5. The microwave 1 is closed."),
        ("heat apple 1 with microwave 1", "You heat the apple 1 using the microwave 1."),
        ("go to countertop 1", "You arrive at loc 4. On the countertop 1, you see a knife 1, and a mug 1."),
        ("put apple 1 in/on countertop 1", "You put the apple 1 in/on the countertop 1."),
    ];
    let mut world = World::new(kitchen(), GrammarVersion::V03);
    let mut expert = Expert::new(&world);
    for (i, (command, feedback)) in expected.iter().enumerate() {
        let next = expert.next_command(&world).expect("goal not yet reached");
        assert_eq!(world.command_text(next), *command, "step {i}");
        assert_eq!(world.apply(next), *feedback, "step {i}");
        expert.observe(&world, next);
    }
    assert!(world.goal_satisfied());
    assert_eq!(expert.next_command(&world), None);
}

/// The expert returns a wrongly held object where it came from, then carries on.
#[test]
fn expert_returns_a_wrong_object_first() {
    let mut world = World::new(kitchen(), GrammarVersion::V04);
    let mut expert = Expert::new(&world);
    for command in ["go to countertop 1", "take mug 1 from countertop 1", "go to sinkbasin 1"] {
        let (c, _) = world.execute(command).unwrap();
        expert.observe(&world, c);
    }
    let next = expert.next_command(&world).unwrap();
    assert_eq!(world.command_text(next), "go to countertop 1");
    world.apply(next);
    expert.observe(&world, next);
    let next = expert.next_command(&world).unwrap();
    assert_eq!(world.command_text(next), "move mug 1 to countertop 1");
}
