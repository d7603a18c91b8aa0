use act_alfworld::bridge::{BridgeGrammar, GameSet, RealAlfworld, RealAlfworldConfig, default_python};
use act_core::{Environment, Split, TaskRef};

#[test]
#[ignore]
fn probe() {
    let src = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/pddl/pick_and_place_simple-apple-diningtable");
    let mut pddl = std::fs::read_to_string(src.join("initial_state.pddl")).unwrap();
    let traj = std::fs::read_to_string(src.join("traj_data.json")).unwrap();
    for (from, to) in [
        (
            "(receptacleAtLocation Microwave_bar__minus_01_dot_60_bar__plus_01_dot_30_bar__plus_00_dot_90 loc_bar__minus_6_bar_3_bar_3_bar_0)",
            "(receptacleAtLocation Microwave_bar__minus_01_dot_60_bar__plus_01_dot_30_bar__plus_00_dot_90 loc_bar__minus_4_bar_1_bar_3_bar_30)",
        ),
        (
            "(receptacleAtLocation Cabinet_bar__minus_01_dot_50_bar__plus_00_dot_40_bar__plus_00_dot_90 loc_bar__minus_5_bar_3_bar_3_bar_30)",
            "(receptacleAtLocation Cabinet_bar__minus_01_dot_50_bar__plus_00_dot_40_bar__plus_00_dot_90 loc_bar__minus_4_bar_1_bar_3_bar_30)",
        ),
    ] {
        assert!(pddl.contains(from), "{from}");
        pddl = pddl.replace(from, to);
    }
    let dir = tempfile::tempdir().unwrap();
    let game = dir.path().join("g");
    std::fs::create_dir(&game).unwrap();
    std::fs::write(game.join("initial_state.pddl"), pddl).unwrap();
    std::fs::write(game.join("traj_data.json"), traj).unwrap();
    for grammar in [BridgeGrammar::V03, BridgeGrammar::V04] {
        let set = GameSet::from_dir(dir.path(), Split::Train).unwrap();
        let mut env =
            RealAlfworld::new(RealAlfworldConfig::default().with_python(default_python()).with_grammar(grammar), set)
                .unwrap();
        let r = env.reset(&TaskRef::index(Split::Train, 0), 0).unwrap();
        println!("== {grammar:?}\n{}", r.observation);
        let script: Vec<String> = std::env::var("SCRIPT").unwrap_or_default().split('|').map(str::to_owned).collect();
        for a in script {
            let t = env.step(&a).unwrap();
            println!(
                "> {a}\n{}\n  [{}]",
                t.observation,
                t.admissible_actions
                    .map(|v| v.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", "))
                    .unwrap_or_default()
            );
        }
    }
}
