//! The Python worker process: spawn, one request at a time with a time-out, and kill on drop.
//!
//! A worker that times out, crashes or breaks the protocol is killed and forgotten; the caller gets an error naming
//! the request in flight and what the worker last wrote to stderr, and the next request starts a fresh worker.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use act_core::EnvError;
use serde_json::{Map, Value};

/// The worker script, embedded so that the crate works wherever it is built.
pub const WORKER_SCRIPT: &str = include_str!("../../python/alfworld_worker.py");

/// The protocol version this crate speaks (the worker's `PROTOCOL_VERSION`).
pub const PROTOCOL_VERSION: u64 = 1;

/// How many lines of the worker's stderr are kept for error messages.
const STDERR_TAIL_LINES: usize = 30;

/// The Python interpreter act-rs uses for external engines: `$ACT_PYTHON`, else `python3`.
pub fn default_python() -> String {
    std::env::var("ACT_PYTHON").ok().filter(|p| !p.trim().is_empty()).unwrap_or_else(|| "python3".to_owned())
}

/// How to start a worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerCommand {
    /// The Python interpreter.
    pub python: String,
    /// Time allowed for the interpreter to start and import the engine.
    pub startup_timeout: Duration,
}

/// A running worker: the child process, its stdin, and a channel fed by a thread that reads its stdout.
pub struct Worker {
    child: Child,
    stdin: ChildStdin,
    replies: Receiver<String>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    next_id: u64,
    hello: Map<String, Value>,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker").field("pid", &self.child.id()).field("next_id", &self.next_id).finish()
    }
}

/// Whether a failed request left the worker usable.
#[derive(Debug)]
#[non_exhaustive]
pub enum RequestError {
    /// The worker answered with an error; it is still alive and in a known state.
    Reply {
        /// The worker's error kind (`bad_game`, `not_reset`, `missing_package`, `engine`, ...).
        kind: String,
        /// The worker's message.
        message: String,
    },
    /// The worker is gone or unusable (crash, time-out, protocol break) and has been killed.
    Fatal(EnvError),
}

impl Worker {
    /// Starts a worker and checks that it speaks our protocol. The engine itself may still be missing: see
    /// [`Worker::hello`].
    pub fn spawn(command: &WorkerCommand) -> Result<Worker, EnvError> {
        let mut child = Command::new(&command.python)
            .arg("-u")
            .arg("-c")
            .arg(WORKER_SCRIPT)
            .env("PYTHONUNBUFFERED", "1")
            .env("PYTHONIOENCODING", "utf-8")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| EnvError::Io {
                context: format!("cannot start the ALFWorld worker with `{}` (set ACT_PYTHON)", command.python),
                source,
            })?;
        let stdin = child.stdin.take().ok_or_else(|| EnvError::Backend("worker stdin is not piped".into()))?;
        let stdout = child.stdout.take().ok_or_else(|| EnvError::Backend("worker stdout is not piped".into()))?;
        let stderr = child.stderr.take().ok_or_else(|| EnvError::Backend("worker stderr is not piped".into()))?;

        let (sender, replies) = mpsc::channel();
        thread::Builder::new()
            .name("alfworld-worker-stdout".into())
            .spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if sender.send(line).is_err() {
                        break;
                    }
                }
            })
            .map_err(|source| EnvError::Io { context: "cannot start the worker reader thread".into(), source })?;

        let stderr_tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL_LINES)));
        let tail = Arc::clone(&stderr_tail);
        thread::Builder::new()
            .name("alfworld-worker-stderr".into())
            .spawn(move || {
                for line in BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    let Ok(mut tail) = tail.lock() else { break };
                    if tail.len() == STDERR_TAIL_LINES {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            })
            .map_err(|source| EnvError::Io { context: "cannot start the worker stderr thread".into(), source })?;

        let mut worker = Worker { child, stdin, replies, stderr_tail, next_id: 0, hello: Map::new() };
        let hello = match worker.request("hello", Map::new(), command.startup_timeout) {
            Ok(hello) => hello,
            Err(RequestError::Reply { kind, message }) => {
                return Err(EnvError::Backend(format!("the ALFWorld worker refused `hello` ({kind}): {message}")));
            }
            Err(RequestError::Fatal(error)) => return Err(error),
        };
        let protocol = hello.get("protocol").and_then(Value::as_u64);
        if protocol != Some(PROTOCOL_VERSION) {
            return Err(EnvError::Backend(format!(
                "the ALFWorld worker speaks protocol {protocol:?}; this crate needs {PROTOCOL_VERSION}"
            )));
        }
        worker.hello = hello;
        Ok(worker)
    }

    /// The worker's `hello` reply: protocol, Python, alfworld and textworld versions, and whether the engine
    /// imports (`engine`, with `engine_error` when not).
    pub fn hello(&self) -> &Map<String, Value> {
        &self.hello
    }

    /// The operating-system process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends one request and waits up to `timeout` for its reply. On [`RequestError::Fatal`] the worker has been
    /// killed and must be dropped.
    pub fn request(
        &mut self,
        cmd: &str,
        mut fields: Map<String, Value>,
        timeout: Duration,
    ) -> Result<Map<String, Value>, RequestError> {
        self.next_id += 1;
        let id = self.next_id;
        fields.insert("id".into(), Value::from(id));
        fields.insert("cmd".into(), Value::from(cmd));
        let mut line = Value::Object(fields).to_string();
        line.push('\n');
        if let Err(error) = self.stdin.write_all(line.as_bytes()).and_then(|()| self.stdin.flush()) {
            return Err(RequestError::Fatal(self.die(cmd, &format!("could not be sent ({error})"))));
        }

        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let reply = match self.replies.recv_timeout(left) {
                Ok(reply) => reply,
                Err(RecvTimeoutError::Timeout) => {
                    self.kill();
                    return Err(RequestError::Fatal(EnvError::Timeout {
                        seconds: timeout.as_secs_f64(),
                        during: format!("waiting for the ALFWorld worker to answer `{cmd}` (worker killed)"),
                    }));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(RequestError::Fatal(self.die(cmd, "got no answer")));
                }
            };
            let parsed: Map<String, Value> = match serde_json::from_str(&reply) {
                Ok(parsed) => parsed,
                Err(error) => {
                    self.kill();
                    return Err(RequestError::Fatal(EnvError::Backend(format!(
                        "the ALFWorld worker broke the protocol while answering `{cmd}` ({error}): {}",
                        truncate(&reply, 200)
                    ))));
                }
            };
            // Replies to earlier requests cannot be pending (a request that times out kills the worker), but
            // an `id: null` error reply for an unparsable line could be: skip anything not ours.
            if parsed.get("id").and_then(Value::as_u64) != Some(id) {
                continue;
            }
            if parsed.get("ok").and_then(Value::as_bool) == Some(true) {
                return Ok(parsed);
            }
            let error = parsed.get("error");
            let field =
                |name: &str| error.and_then(|e| e.get(name)).and_then(Value::as_str).unwrap_or("unknown").to_owned();
            return Err(RequestError::Reply { kind: field("kind"), message: field("message") });
        }
    }

    /// Asks the worker to exit, then kills it if it has not within a short grace period.
    pub fn shutdown(mut self) {
        let _ = self.request("shutdown", Map::new(), Duration::from_secs(2));
        // Drop kills and reaps.
    }

    /// Kills the worker after a failure and describes the failure with its exit status and stderr.
    fn die(&mut self, cmd: &str, what: &str) -> EnvError {
        // Give a crashing interpreter a moment to finish writing its traceback and exit.
        let deadline = Instant::now() + Duration::from_millis(500);
        let mut status = None;
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(exit)) => {
                    status = Some(exit);
                    break;
                }
                Ok(None) => thread::sleep(Duration::from_millis(10)),
                Err(_) => break,
            }
        }
        self.kill();
        let status = status.map_or_else(|| "still running; killed".to_owned(), |s| s.to_string());
        let stderr = self.stderr_tail();
        let stderr = if stderr.is_empty() { "(nothing on stderr)".to_owned() } else { stderr };
        EnvError::Backend(format!(
            "the ALFWorld worker (pid {}) exited while handling `{cmd}`: the request {what}; exit: {status}; \
             last stderr: {stderr}; the episode is lost and the next reset starts a new worker",
            self.child.id()
        ))
    }

    /// The last lines the worker wrote to stderr, joined with " | ".
    pub fn stderr_tail(&self) -> String {
        self.stderr_tail.lock().map(|tail| tail.iter().cloned().collect::<Vec<_>>().join(" | ")).unwrap_or_default()
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

fn truncate(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        text.to_owned()
    } else {
        format!("{}...", text.chars().take(max_chars).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_interpreter_is_a_clear_io_error() {
        let command =
            WorkerCommand { python: "/nonexistent/act-rs-python".into(), startup_timeout: Duration::from_secs(5) };
        let error = Worker::spawn(&command).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("/nonexistent/act-rs-python"), "{text}");
        assert!(text.contains("ACT_PYTHON"), "{text}");
    }

    #[test]
    fn an_interpreter_that_exits_at_once_is_reported_with_its_status() {
        // `false` ignores its arguments and exits 1 without answering `hello`.
        let command = WorkerCommand { python: "false".into(), startup_timeout: Duration::from_secs(10) };
        let error = Worker::spawn(&command).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("`hello`"), "{text}");
        assert!(text.contains("exit status: 1"), "{text}");
    }

    #[test]
    fn truncate_keeps_short_text_and_marks_cuts() {
        assert_eq!(truncate("abc", 5), "abc");
        assert_eq!(truncate("abcdef", 3), "abc...");
    }
}
