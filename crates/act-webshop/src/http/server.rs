//! An HTTP server exposing native WebShop sessions under AgentGym's WebShop API (`agentenv-webshop`):
//!
//! | route | request | answer |
//! |---|---|---|
//! | `GET /` | | `"ok"` |
//! | `POST /create` | | env index (a number); the new session is reset to a goal |
//! | `POST /reset` | `{"env_idx": i, "session_id": goal or null}` | `[observation, null]` |
//! | `POST /step` | `{"env_idx": i, "action": "click[...]"}` | `{"state", "reward", "done", "info": null}` |
//! | `GET /available_actions?env_idx=i` | | `{"has_search_bar", "clickables"}` |
//! | `GET /instruction_text?env_idx=i` | | `"Instruction: ..."` |
//! | `GET /observation?env_idx=i` | | the current observation |
//! | `GET /list_envs` | | env indices |
//! | `POST /close` | `{"env_idx": i}` | `true` |
//! | `GET /num_goals` | | number of goals (our addition, so clients can size the train split) |
//!
//! A reset without `session_id` picks a goal at random (seeded per server). Errors answer 404 (unknown env) or
//! 400 (bad request, stepping a finished episode) with `{"detail": "..."}` as FastAPI does. Sessions have no step
//! limit by default, like upstream's server; clients count steps themselves.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use act_core::Environment;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::env::{AvailableActions, EnvConfig, WebShopEnv};
use crate::error::WebShopError;
use crate::world::WebShopWorld;

/// Server settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerConfig {
    /// Settings of every session (by default no step limit, as upstream's server).
    pub env: EnvConfig,
    /// Seed of the random goals given to resets without a `session_id`.
    pub seed: u64,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig { env: EnvConfig { max_steps: usize::MAX, ..EnvConfig::default() }, seed: 0 }
    }
}

struct Sessions {
    world: Arc<WebShopWorld>,
    config: ServerConfig,
    envs: BTreeMap<u64, WebShopEnv>,
    next_id: u64,
    random_resets: u64,
}

type Shared = Arc<Mutex<Sessions>>;

/// A FastAPI-style error answer.
struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(serde_json::json!({ "detail": self.1 }))).into_response()
    }
}

fn lock(shared: &Shared) -> Result<MutexGuard<'_, Sessions>, ApiError> {
    shared.lock().map_err(|_| ApiError(StatusCode::INTERNAL_SERVER_ERROR, "session table poisoned".into()))
}

impl Sessions {
    fn env(&mut self, id: u64) -> Result<&mut WebShopEnv, ApiError> {
        self.envs.get_mut(&id).ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("no environment {id}")))
    }

    fn reset(&mut self, id: u64, session: Option<i64>) -> Result<String, ApiError> {
        let num_goals = self.world.goals().goals().len();
        let goal = match session {
            Some(n) if n >= 0 && (n as usize) < num_goals => n as usize,
            Some(n) => {
                return Err(ApiError(StatusCode::BAD_REQUEST, format!("session_id {n} outside 0..{num_goals}")));
            }
            None => {
                let mut rng = act_core::rng_from_seed(act_core::derive_seed(self.config.seed, self.random_resets));
                self.random_resets += 1;
                rng.random_range(0..num_goals.max(1))
            }
        };
        let env = self.env(id)?;
        let reset = env.reset_goal(goal).map_err(|e| ApiError(StatusCode::BAD_REQUEST, e.to_string()))?;
        Ok(reset.observation.0)
    }
}

#[derive(Deserialize)]
struct EnvQuery {
    env_idx: u64,
}

#[derive(Deserialize)]
struct ResetQuery {
    env_idx: u64,
    #[serde(default)]
    session_id: Option<i64>,
}

#[derive(Deserialize)]
struct StepQuery {
    env_idx: u64,
    action: String,
}

/// The `/step` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepResponse {
    /// The observation after the step.
    pub state: String,
    /// The reward.
    pub reward: f64,
    /// Whether the episode ended.
    pub done: bool,
    /// Always null, as upstream.
    pub info: Option<serde_json::Value>,
}

async fn root() -> Json<&'static str> {
    Json("ok")
}

async fn create(State(shared): State<Shared>) -> Result<Json<u64>, ApiError> {
    let mut sessions = lock(&shared)?;
    let id = sessions.next_id;
    sessions.next_id += 1;
    let env = WebShopEnv::new(Arc::clone(&sessions.world)).with_config(sessions.config.env);
    sessions.envs.insert(id, env);
    sessions.reset(id, None)?;
    Ok(Json(id))
}

async fn reset(
    State(shared): State<Shared>,
    Json(query): Json<ResetQuery>,
) -> Result<Json<(String, Option<()>)>, ApiError> {
    let observation = lock(&shared)?.reset(query.env_idx, query.session_id)?;
    Ok(Json((observation, None)))
}

async fn step(State(shared): State<Shared>, Json(query): Json<StepQuery>) -> Result<Json<StepResponse>, ApiError> {
    let mut sessions = lock(&shared)?;
    let env = sessions.env(query.env_idx)?;
    let transition = env.step(&query.action).map_err(|e| ApiError(StatusCode::BAD_REQUEST, e.to_string()))?;
    Ok(Json(StepResponse {
        state: transition.observation.0,
        reward: transition.reward,
        done: transition.done,
        info: None,
    }))
}

fn not_reset() -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, "environment has no episode".into())
}

async fn available_actions(
    State(shared): State<Shared>,
    Query(query): Query<EnvQuery>,
) -> Result<Json<AvailableActions>, ApiError> {
    let mut sessions = lock(&shared)?;
    let env = sessions.env(query.env_idx)?;
    env.available_actions().map(Json).ok_or_else(not_reset)
}

async fn instruction_text(
    State(shared): State<Shared>,
    Query(query): Query<EnvQuery>,
) -> Result<Json<String>, ApiError> {
    let mut sessions = lock(&shared)?;
    sessions.env(query.env_idx)?.instruction_text().map(Json).ok_or_else(not_reset)
}

async fn observation(State(shared): State<Shared>, Query(query): Query<EnvQuery>) -> Result<Json<String>, ApiError> {
    let mut sessions = lock(&shared)?;
    sessions.env(query.env_idx)?.observation().map(Json).ok_or_else(not_reset)
}

async fn list_envs(State(shared): State<Shared>) -> Result<Json<Vec<u64>>, ApiError> {
    Ok(Json(lock(&shared)?.envs.keys().copied().collect()))
}

async fn close(State(shared): State<Shared>, Json(query): Json<EnvQuery>) -> Result<Json<bool>, ApiError> {
    let mut sessions = lock(&shared)?;
    sessions
        .envs
        .remove(&query.env_idx)
        .map(|_| Json(true))
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("no environment {}", query.env_idx)))
}

async fn num_goals(State(shared): State<Shared>) -> Result<Json<usize>, ApiError> {
    Ok(Json(lock(&shared)?.world.goals().goals().len()))
}

/// The router serving `world` under the AgentGym WebShop API.
pub fn router(world: Arc<WebShopWorld>, config: ServerConfig) -> Router {
    let shared: Shared =
        Arc::new(Mutex::new(Sessions { world, config, envs: BTreeMap::new(), next_id: 0, random_resets: 0 }));
    Router::new()
        .route("/", get(root))
        .route("/create", post(create))
        .route("/reset", post(reset))
        .route("/step", post(step))
        .route("/available_actions", get(available_actions))
        .route("/instruction_text", get(instruction_text))
        .route("/observation", get(observation))
        .route("/list_envs", get(list_envs))
        .route("/close", post(close))
        .route("/num_goals", get(num_goals))
        .with_state(shared)
}

/// A server running on a background thread; dropping it stops the server.
pub struct ServerHandle {
    addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle").field("addr", &self.addr).finish()
    }
}

impl ServerHandle {
    /// Serves `world` on `addr` (port 0 picks a free port; see [`addr`](Self::addr)).
    pub fn spawn(
        world: Arc<WebShopWorld>,
        config: ServerConfig,
        addr: SocketAddr,
    ) -> Result<ServerHandle, WebShopError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| WebShopError::Http(format!("cannot start the server runtime: {e}")))?;
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(addr))
            .map_err(|e| WebShopError::Http(format!("cannot bind {addr}: {e}")))?;
        let addr = listener.local_addr().map_err(|e| WebShopError::Http(e.to_string()))?;
        let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
        let app = router(world, config);
        let thread = std::thread::Builder::new()
            .name("webshop-server".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                        let _ = stopped.await;
                    });
                    if let Err(e) = serve.await {
                        eprintln!("webshop server stopped: {e}");
                    }
                });
            })
            .map_err(|e| WebShopError::Http(format!("cannot start the server thread: {e}")))?;
        Ok(ServerHandle { addr, shutdown: Some(shutdown), thread: Some(thread) })
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL (`http://127.0.0.1:port`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
