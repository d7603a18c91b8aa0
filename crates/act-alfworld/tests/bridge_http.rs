//! `AgentGymClient` end to end against an AgentGym-style ALFWorld server on 127.0.0.1 (`python/agentgym_server.py`,
//! which serves the real engine from `tests/data/pddl`).
//!
//! Needs the real engine for `$ACT_PYTHON` (see `bridge_real.rs`); skipped with a "skipped: ..." line otherwise,
//! unless `ACT_REQUIRE_EXTERNAL=1`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use act_alfworld::bridge::{AgentGymClient, AgentGymConfig, default_python, probe_engine};
use act_core::{EnvError, Environment, Split, TaskRef};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn engine_python(test: &str) -> Option<String> {
    let python = default_python();
    match probe_engine(&python, Duration::from_secs(180)) {
        Ok(_) => Some(python),
        Err(error) => {
            if std::env::var("ACT_REQUIRE_EXTERNAL").is_ok_and(|v| v == "1") {
                panic!("ACT_REQUIRE_EXTERNAL=1 but the real ALFWorld engine is not usable with `{python}`: {error}");
            }
            eprintln!("skipped: {test}: the real ALFWorld engine is not usable with `{python}` ({error})");
            None
        }
    }
}

/// The server process, killed when the test ends however it ends.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(python: &str) -> Server {
        let mut child = Command::new(python)
            .arg("-u")
            .arg(crate_dir().join("python/agentgym_server.py"))
            .args(["--port", "0", "--grammar", "0.3", "--games"])
            .arg(crate_dir().join("tests/data/pddl"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the AgentGym test server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let Some(url) = line.trim().strip_prefix("listening on ").map(str::to_owned) else {
            // The server exited before listening: its stderr says why.
            let mut stderr = String::new();
            let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr);
            let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
            panic!("the server did not start ({status}); stdout: {line:?}; stderr:\n{stderr}");
        };
        // Nobody reads the server's stderr from here on: drain it so a chatty server never blocks on a full pipe.
        let mut stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        Server { child, url }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn agentgym_client_wins_a_real_game_over_http() {
    let Some(python) = engine_python("agentgym_client_wins_a_real_game_over_http") else { return };
    let server = Server::start(&python);
    // The server lists the five repository games in path order; index 1 is the apple on the countertop.
    let config = AgentGymConfig::new(&server.url)
        .with_split(Split::Train, 0..4)
        .with_split(Split::EvalOutOfDistribution, 4..5)
        .with_timeout(Duration::from_secs(180));
    let mut env = AgentGymClient::new(config).unwrap();
    let reset = env.reset(&TaskRef::index(Split::Train, 1), 0).unwrap();
    assert!(env.env_id().is_some());
    assert!(
        reset.observation.as_str().starts_with("You are in the middle of a room. Looking quickly around you, you see "),
        "AgentGym drops the welcome header: {}",
        reset.observation
    );
    assert_eq!(reset.task.task_type, "pick_and_place_simple");
    assert_eq!(reset.task.id, "1");
    assert!(reset.task.description.ends_with("diningtable"), "{}", reset.task.description);

    let arrive = env.step("go to countertop 1").unwrap();
    assert_eq!(
        arrive.observation.as_str(),
        "On the countertop 1, you see a apple 1.",
        "AgentGym drops `You arrive at loc N.`"
    );
    let nothing = env.step("go to the moon").unwrap();
    assert_eq!(nothing.observation.as_str(), "Nothing happens.");
    assert_eq!(nothing.info["valid_action"], false);
    env.step("take apple 1 from countertop 1").unwrap();
    env.step("go to diningtable 1").unwrap();
    let win = env.step("put apple 1 in/on diningtable 1").unwrap();
    assert_eq!(win.observation.as_str(), "You put the apple 1 in/on the diningtable 1.");
    assert!(win.won && win.done);
    assert_eq!(win.reward, 1.0);
    assert!(matches!(env.step("look"), Err(EnvError::NotReset)));

    // The same server-side environment plays the next game.
    let reset = env.reset(&TaskRef::index(Split::EvalOutOfDistribution, 0), 0).unwrap();
    assert_eq!(reset.task.task_type, "pick_two_obj_and_place");
    assert_eq!(reset.task.split, Split::EvalOutOfDistribution);
}

#[test]
fn agentgym_server_errors_become_backend_errors() {
    let Some(python) = engine_python("agentgym_server_errors_become_backend_errors") else { return };
    let server = Server::start(&python);
    // Claim more games than the server has: the server's refusal must surface, not a panic.
    let config = AgentGymConfig::new(&server.url).with_split(Split::Train, 0..100);
    let mut env = AgentGymClient::new(config).unwrap();
    let error = env.reset(&TaskRef::index(Split::Train, 50), 0).unwrap_err();
    assert!(matches!(error, EnvError::Backend(_)), "{error}");
    assert!(error.to_string().contains("out of range"), "{error}");
    let config = AgentGymConfig::new(&server.url).with_split(Split::Train, 0..1).with_world_type("Embody");
    let mut env = AgentGymClient::new(config).unwrap();
    let error = env.reset(&TaskRef::index(Split::Train, 0), 0).unwrap_err();
    assert!(error.to_string().contains("only the Text world"), "{error}");
}
