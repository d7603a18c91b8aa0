//! [`RemoteWebShop`]: an [`Environment`] over an AgentGym-style WebShop server (upstream's Python server or
//! [`ServerHandle`](super::server::ServerHandle)).
//!
//! Goal indices are upstream's session ids: test is 0..500, dev the next 1,000, train the rest. The client counts
//! steps and ends an episode after the budget, since servers do not.

use std::cell::Cell;
use std::time::Duration;

use act_core::{Action, EnvError, Environment, Reset, Split, TaskInfo, TaskRef, Transition};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::env::{AvailableActions, ENV_NAME, SEARCH_ACTION};
use crate::goals::SplitSizes;
use crate::http::server::StepResponse;

/// Client settings. There is no `Default`: the server's URL is required ([`RemoteConfig::new`] fills in the rest;
/// in JSON every field is given, `timeout` as serde writes a `Duration`: `{"secs": 60, "nanos": 0}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteConfig {
    /// The server's base URL, say `http://127.0.0.1:36001`.
    pub base_url: String,
    /// Total goals on the server; `None` asks the server's `/num_goals` (our server has it; upstream's does not).
    pub total_goals: Option<usize>,
    /// Split sizes.
    pub splits: SplitSizes,
    /// Steps per episode.
    pub max_steps: usize,
    /// Timeout of one request.
    pub timeout: Duration,
}

impl RemoteConfig {
    /// Defaults for a server at `base_url`: upstream split sizes, 15 steps, 60 s per request.
    pub fn new(base_url: impl Into<String>) -> Self {
        RemoteConfig {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            total_goals: None,
            splits: SplitSizes::default(),
            max_steps: 15,
            timeout: Duration::from_secs(60),
        }
    }

    /// Sets the number of goals the server holds.
    #[must_use]
    pub fn with_total_goals(mut self, total: usize) -> Self {
        self.total_goals = Some(total);
        self
    }
}

#[derive(Serialize)]
struct ResetBody {
    env_idx: u64,
    session_id: Option<u64>,
}

#[derive(Serialize)]
struct StepBody<'a> {
    env_idx: u64,
    action: &'a str,
}

#[derive(Serialize)]
struct EnvBody {
    env_idx: u64,
}

#[derive(Deserialize)]
struct ErrorBody {
    detail: serde_json::Value,
}

/// A WebShop session on a remote server.
pub struct RemoteWebShop {
    agent: ureq::Agent,
    config: RemoteConfig,
    env_idx: u64,
    /// The server's goal count, fetched once (a `Cell` so `num_tasks(&self)` can fill it).
    total_goals: Cell<Option<usize>>,
    task: Option<TaskInfo>,
    admissible: Option<Vec<Action>>,
    steps: usize,
    done: bool,
}

impl std::fmt::Debug for RemoteWebShop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteWebShop")
            .field("base_url", &self.config.base_url)
            .field("env_idx", &self.env_idx)
            .finish()
    }
}

fn backend(what: &str, e: impl std::fmt::Display) -> EnvError {
    EnvError::Backend(format!("{what}: {e}"))
}

impl RemoteWebShop {
    /// Creates a session on the server (`POST /create`).
    pub fn connect(config: RemoteConfig) -> Result<RemoteWebShop, EnvError> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        let mut client = RemoteWebShop {
            agent,
            config,
            env_idx: 0,
            total_goals: Cell::new(None),
            task: None,
            admissible: None,
            steps: 0,
            done: false,
        };
        client.env_idx = client.post("create", &serde_json::json!({}))?;
        client.total_goals.set(client.config.total_goals);
        Ok(client)
    }

    /// The server-side env index.
    pub fn env_idx(&self) -> u64 {
        self.env_idx
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.config.base_url)
    }

    fn read<T: DeserializeOwned>(&self, path: &str, response: ureq::http::Response<ureq::Body>) -> Result<T, EnvError> {
        let status = response.status();
        let mut body = response.into_body();
        if !status.is_success() {
            let text = body.read_to_string().unwrap_or_default();
            let detail = serde_json::from_str::<ErrorBody>(&text).map(|e| e.detail.to_string()).unwrap_or(text);
            return Err(EnvError::Backend(format!("{path}: HTTP {status}: {detail}")));
        }
        body.read_json::<T>().map_err(|e| backend(&format!("{path}: unexpected answer"), e))
    }

    fn post<T: DeserializeOwned>(&self, path: &str, body: &impl Serialize) -> Result<T, EnvError> {
        let response = self.agent.post(&self.url(path)).send_json(body).map_err(|e| self.transport(path, e))?;
        self.read(path, response)
    }

    fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, EnvError> {
        let call = || self.agent.get(&self.url(path)).query("env_idx", self.env_idx.to_string()).call();
        let response = match call() {
            Ok(response) => response,
            Err(e @ ureq::Error::Timeout(_)) => return Err(self.transport(path, e)),
            // A kept-alive connection that the server closed after its last answer fails the next request on it.
            // A GET changes nothing on the server, so it is asked once more, on another connection.
            Err(_) => call().map_err(|e| self.transport(path, e))?,
        };
        self.read(path, response)
    }

    fn transport(&self, path: &str, e: ureq::Error) -> EnvError {
        match e {
            ureq::Error::Timeout(_) => EnvError::Timeout {
                seconds: self.config.timeout.as_secs_f64(),
                during: format!("calling {}", self.url(path)),
            },
            other => backend(&self.url(path), other),
        }
    }

    fn total_goals(&self) -> Result<usize, EnvError> {
        if let Some(total) = self.total_goals.get() {
            return Ok(total);
        }
        let total: usize = self.get("num_goals").map_err(|e| {
            EnvError::Config(format!("the server does not report its goal count ({e}); set RemoteConfig::total_goals"))
        })?;
        self.total_goals.set(Some(total));
        Ok(total)
    }

    fn split_range(&self, split: Split) -> Result<std::ops::Range<usize>, EnvError> {
        let n = self.total_goals()?;
        let test_end = self.config.splits.test.min(n);
        let dev_end = (test_end + self.config.splits.dev).min(n);
        match split {
            Split::Test => Ok(0..test_end),
            Split::Dev => Ok(test_end..dev_end),
            Split::Train => Ok(dev_end..n),
            other => Err(EnvError::UnsupportedSplit(other)),
        }
    }

    /// `/available_actions` as admissible actions.
    fn fetch_admissible(&self) -> Result<Vec<Action>, EnvError> {
        let available: AvailableActions = self.get("available_actions")?;
        let mut actions = Vec::new();
        if available.has_search_bar {
            actions.push(Action::from(SEARCH_ACTION));
        }
        actions.extend(
            available.clickables.iter().filter(|c| *c != "search").map(|c| Action::from(format!("click[{c}]"))),
        );
        Ok(actions)
    }

    /// Removes the session from the server (`POST /close`, which upstream's server lacks).
    pub fn close(self) -> Result<(), EnvError> {
        let _: serde_json::Value = self.post("close", &EnvBody { env_idx: self.env_idx })?;
        Ok(())
    }
}

impl Environment for RemoteWebShop {
    fn name(&self) -> &str {
        ENV_NAME
    }

    fn num_tasks(&self, split: Split) -> Result<usize, EnvError> {
        self.split_range(split).map(|r| r.len())
    }

    fn reset(&mut self, task: &TaskRef, _seed: u64) -> Result<Reset, EnvError> {
        let (goal, split) = match task {
            TaskRef::Index { split, index } => {
                let range = self.split_range(*split)?;
                if *index >= range.len() {
                    return Err(EnvError::UnknownTask(format!(
                        "index {index} of split `{split}` ({} goals)",
                        range.len()
                    )));
                }
                (range.start + index, *split)
            }
            TaskRef::Id(id) => {
                let n = id
                    .strip_prefix("goal-")
                    .and_then(|n| n.parse::<usize>().ok())
                    .ok_or_else(|| EnvError::UnknownTask(format!("`{id}` (ids look like goal-12)")))?;
                let split = [Split::Test, Split::Dev, Split::Train]
                    .into_iter()
                    .find(|s| self.split_range(*s).map(|r| r.contains(&n)).unwrap_or(false))
                    .ok_or_else(|| EnvError::UnknownTask(id.clone()))?;
                (n, split)
            }
        };
        let (observation, _): (String, Option<serde_json::Value>) =
            self.post("reset", &ResetBody { env_idx: self.env_idx, session_id: Some(goal as u64) })?;
        let instruction: String = self.get("instruction_text")?;
        let description = instruction.strip_prefix("Instruction:").unwrap_or(&instruction).trim().to_owned();
        let info = TaskInfo { id: format!("goal-{goal}"), task_type: ENV_NAME.to_owned(), split, description };
        self.admissible = Some(self.fetch_admissible()?);
        self.task = Some(info.clone());
        self.steps = 0;
        self.done = false;
        Ok(Reset { observation: observation.into(), task: info, admissible_actions: self.admissible.clone() })
    }

    fn step(&mut self, action: &str) -> Result<Transition, EnvError> {
        if self.task.is_none() || self.done {
            return Err(EnvError::NotReset);
        }
        let answer: StepResponse = self.post("step", &StepBody { env_idx: self.env_idx, action })?;
        self.steps += 1;
        let truncated = !answer.done && self.steps >= self.config.max_steps;
        self.done = answer.done || truncated;
        self.admissible = Some(if self.done { Vec::new() } else { self.fetch_admissible()? });
        let won = answer.done && answer.reward >= 1.0;
        let mut info = serde_json::Map::new();
        info.insert("steps".into(), self.steps.into());
        info.insert("truncated".into(), truncated.into());
        info.insert("success".into(), won.into());
        Ok(Transition {
            observation: answer.state.into(),
            reward: answer.reward,
            done: self.done,
            won,
            score: if answer.done { answer.reward } else { 0.0 },
            admissible_actions: self.admissible.clone(),
            info,
        })
    }

    fn admissible_actions(&self) -> Option<Vec<Action>> {
        self.admissible.clone()
    }

    fn task(&self) -> Option<&TaskInfo> {
        self.task.as_ref()
    }

    fn step_budget(&self) -> usize {
        self.config.max_steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;

    /// Reads one HTTP request (headers and a `Content-Length` body) from `reader`.
    fn read_request(reader: &mut BufReader<std::net::TcpStream>) -> String {
        let (mut head, mut length) = (String::new(), 0);
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
            head.push_str(&line);
            if line == "\r\n" || line.is_empty() {
                break;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        head
    }

    fn answer(stream: &mut std::net::TcpStream, body: &str) {
        let response = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(response.as_bytes()).unwrap();
        stream.flush().unwrap();
    }

    #[test]
    fn a_get_that_the_server_drops_unanswered_is_asked_again() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            // First connection: answers `create`, keeping the connection alive, then closes it on the next request
            // without an answer (the "peer disconnected" a client sees when a server drops a kept-alive connection
            // as the request arrives).
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            assert!(read_request(&mut reader).starts_with("POST /create"));
            let mut stream = stream;
            answer(&mut stream, "3");
            let dropped = read_request(&mut reader);
            drop(reader);
            drop(stream);
            // The GET comes again on a new connection.
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let request = read_request(&mut reader);
            let mut stream = stream;
            answer(&mut stream, "600");
            (dropped, request)
        });
        let client = RemoteWebShop::connect(RemoteConfig::new(format!("http://{addr}"))).unwrap();
        assert_eq!(client.env_idx(), 3);
        assert_eq!(client.total_goals().unwrap(), 600);
        let (dropped, asked_again) = server.join().unwrap();
        assert!(dropped.starts_with("GET /num_goals?env_idx=3"), "{dropped}");
        assert!(asked_again.starts_with("GET /num_goals?env_idx=3"), "{asked_again}");
    }
}
