//! End to end over loopback: the native server under the AgentGym API, driven by the HTTP client, must behave
//! exactly like the native environment.

use std::net::SocketAddr;
use std::sync::Arc;

use act_core::{EnvError, Environment, Split, TaskRef, collect_expert_trajectory};
use act_webshop::http::{RemoteConfig, RemoteWebShop, ServerConfig, ServerHandle};
use act_webshop::{WebShopEnv, WebShopWorld};

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

#[test]
fn client_matches_native_environment() {
    let world = WebShopWorld::generate(300, 3).unwrap();
    let server = ServerHandle::spawn(Arc::clone(&world), ServerConfig::default(), loopback()).unwrap();
    let mut remote = RemoteWebShop::connect(RemoteConfig::new(server.base_url())).unwrap();
    let mut native = WebShopEnv::new(Arc::clone(&world));
    assert_eq!(remote.num_tasks(Split::Test).unwrap(), 500);
    assert_eq!(remote.num_tasks(Split::Dev).unwrap(), 100);
    assert!(remote.num_tasks(Split::EvalOutOfDistribution).is_err());

    for goal in [0usize, 17, 499] {
        let task = TaskRef::index(Split::Test, goal);
        // The native expert's trajectory, replayed through the server.
        let trajectory = collect_expert_trajectory(&mut native, &task, 0).unwrap();
        let reset = remote.reset(&task, 0).unwrap();
        let native_reset = native.reset(&task, 0).unwrap();
        assert_eq!(reset.observation, native_reset.observation);
        assert_eq!(reset.task.description, native_reset.task.description);
        assert_eq!(reset.task.id, native_reset.task.id);
        assert_eq!(reset.admissible_actions, native_reset.admissible_actions);
        for step in &trajectory.steps {
            let r = remote.step(step.action.as_str()).unwrap();
            let n = native.step(step.action.as_str()).unwrap();
            assert_eq!(r.observation, n.observation, "{}", step.action);
            assert_eq!(r.reward, n.reward);
            assert_eq!(r.done, n.done);
            assert_eq!(r.won, n.won);
            assert_eq!(r.admissible_actions, n.admissible_actions);
        }
        assert!(remote.step("click[buy now]").is_err(), "episode is over");
    }
    // A noisy action is a no-op remotely too.
    remote.reset(&TaskRef::Id("goal-5".into()), 0).unwrap();
    let before = remote.reset(&TaskRef::Id("goal-5".into()), 0).unwrap().observation;
    let t = remote.step("dance[wildly]").unwrap();
    assert_eq!(t.observation, before);
    assert_eq!(t.reward, 0.0);
}

#[test]
fn raw_api_shapes() {
    let world = WebShopWorld::generate(120, 4).unwrap();
    let server = ServerHandle::spawn(world, ServerConfig::default(), loopback()).unwrap();
    let base = server.base_url();
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let ok: String = agent.get(&format!("{base}/")).call().unwrap().body_mut().read_json().unwrap();
    assert_eq!(ok, "ok");
    let id: u64 = agent.post(&format!("{base}/create")).send_empty().unwrap().body_mut().read_json().unwrap();
    let reset: serde_json::Value = agent
        .post(&format!("{base}/reset"))
        .send_json(serde_json::json!({"env_idx": id, "session_id": 2}))
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    assert!(reset[0].as_str().unwrap().starts_with("WebShop [SEP] Instruction: [SEP] "));
    assert!(reset[1].is_null());
    let actions: serde_json::Value = agent
        .get(&format!("{base}/available_actions"))
        .query("env_idx", id.to_string())
        .call()
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    assert_eq!(actions, serde_json::json!({"has_search_bar": true, "clickables": ["search"]}));
    let step: serde_json::Value = agent
        .post(&format!("{base}/step"))
        .send_json(serde_json::json!({"env_idx": id, "action": "search[socks]"}))
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    assert_eq!(step["reward"], 0.0);
    assert_eq!(step["done"], false);
    assert!(step["info"].is_null());
    assert!(step["state"].as_str().unwrap().contains("Page 1 (Total results: "));
    let instruction: String = agent
        .get(&format!("{base}/instruction_text"))
        .query("env_idx", id.to_string())
        .call()
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    assert!(instruction.starts_with("Instruction:"));
    // Unknown env: 404 with a FastAPI-style detail.
    let mut missing = agent.get(&format!("{base}/observation")).query("env_idx", "999").call().unwrap();
    assert_eq!(missing.status(), 404);
    let body: serde_json::Value = missing.body_mut().read_json().unwrap();
    assert!(body["detail"].as_str().unwrap().contains("999"));
    let envs: Vec<u64> = agent.get(&format!("{base}/list_envs")).call().unwrap().body_mut().read_json().unwrap();
    assert_eq!(envs, vec![id]);
}

#[test]
fn client_errors_are_clear() {
    let world = WebShopWorld::generate(120, 4).unwrap();
    let server = ServerHandle::spawn(world, ServerConfig::default(), loopback()).unwrap();
    let mut remote = RemoteWebShop::connect(RemoteConfig::new(server.base_url())).unwrap();
    assert!(matches!(remote.step("search[x]"), Err(EnvError::NotReset)));
    assert!(matches!(remote.reset(&TaskRef::index(Split::Test, 10_000), 0), Err(EnvError::UnknownTask(_))));
    let url = server.base_url();
    drop(server);
    // No server: a backend error naming the URL, not a panic.
    let err = RemoteWebShop::connect(RemoteConfig::new(url.clone())).unwrap_err();
    assert!(matches!(err, EnvError::Backend(_)), "{err}");
    assert!(err.to_string().contains(&url), "{err}");
}
