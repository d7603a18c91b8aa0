//! The JVM's lifecycle: free port, start-up handshake, output draining, kill on drop.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::SciWorldError;
use crate::locate::JarLocation;
use crate::py4j::{Client, Py4jError};

/// The line the jar prints once its py4j gateway listens.
const READY_LINE: &str = "Server started";
/// How many of the JVM's last output lines are kept for error messages.
const TAIL_LINES: usize = 40;
/// Longest output line kept (the jar prints lines of several kilobytes on every step).
const TAIL_LINE_CHARS: usize = 400;
/// Ports tried before start-up gives up (another process may take a port between choice and bind).
const START_ATTEMPTS: usize = 3;

/// How to run the JVM. In JSON the timeouts are serde's `Duration`: `{"secs": 60, "nanos": 0}`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct JvmOptions {
    /// The `java` executable.
    pub java: PathBuf,
    /// Extra JVM arguments placed before `-jar` (for example `-Xmx1g`).
    pub jvm_args: Vec<String>,
    /// Longest wait for the gateway to announce itself.
    pub startup_timeout: Duration,
    /// Longest wait for any one reply; past it the JVM is considered hung and killed.
    pub call_timeout: Duration,
}

impl Default for JvmOptions {
    fn default() -> Self {
        let java = std::env::var_os("JAVA_HOME")
            .map(|home| PathBuf::from(home).join("bin").join("java"))
            .filter(|p| p.is_file())
            .unwrap_or_else(|| PathBuf::from("java"));
        Self {
            java,
            // Serial GC and a modest heap keep several instances side by side cheap.
            jvm_args: vec!["-Xmx2g".into(), "-XX:+UseSerialGC".into()],
            startup_timeout: Duration::from_secs(60),
            call_timeout: Duration::from_secs(300),
        }
    }
}

/// The JVM's recent output, shared with the threads that drain its pipes.
#[derive(Debug, Clone, Default)]
struct OutputTail(Arc<Mutex<VecDeque<String>>>);

impl OutputTail {
    fn push(&self, line: &str) {
        let line: String = line.trim_end().chars().take(TAIL_LINE_CHARS).collect();
        if let Ok(mut lines) = self.0.lock() {
            if lines.len() == TAIL_LINES {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    fn text(&self) -> String {
        self.0.lock().map(|lines| lines.iter().cloned().collect::<Vec<_>>().join("\n")).unwrap_or_default()
    }
}

/// A running `scienceworld.jar` with a connected py4j client. Dropping it kills the JVM.
#[derive(Debug)]
pub struct Gateway {
    child: Child,
    client: Client,
    output: OutputTail,
    drainers: Vec<JoinHandle<()>>,
    call_timeout: Duration,
}

impl Gateway {
    /// Starts the jar on a free local port and connects once it announces its gateway.
    pub fn start(location: &JarLocation, options: &JvmOptions) -> Result<Self, SciWorldError> {
        let mut last_error = None;
        for _ in 0..START_ATTEMPTS {
            match Self::start_once(location, options) {
                Ok(gateway) => return Ok(gateway),
                // A port taken between choice and bind: try another.
                Err(StartFailure::PortTaken(err)) => last_error = Some(err),
                Err(StartFailure::Fatal(err)) => return Err(err),
            }
        }
        Err(last_error
            .unwrap_or_else(|| SciWorldError::Startup { reason: "no attempt was made".into(), output: String::new() }))
    }

    fn start_once(location: &JarLocation, options: &JvmOptions) -> Result<Self, StartFailure> {
        let port = free_port().map_err(|e| {
            StartFailure::Fatal(SciWorldError::Startup {
                reason: format!("no free local port: {e}"),
                output: String::new(),
            })
        })?;
        let mut child = Command::new(&options.java)
            .args(&options.jvm_args)
            .arg("-jar")
            .arg(&location.jar)
            .arg(port.to_string())
            .current_dir(&location.working_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| {
                StartFailure::Fatal(SciWorldError::JavaNotStarted { java: options.java.display().to_string(), source })
            })?;
        let output = OutputTail::default();
        let (ready_tx, ready_rx) = mpsc::channel();
        let mut drainers = Vec::with_capacity(2);
        if let Some(stdout) = child.stdout.take() {
            drainers.push(drain(stdout, output.clone(), Some(ready_tx)));
        }
        if let Some(stderr) = child.stderr.take() {
            drainers.push(drain(stderr, output.clone(), None));
        }
        let fail = |child: &mut Child, reason: String| {
            let _ = child.kill();
            let _ = child.wait();
            let text = output.text();
            let err = SciWorldError::Startup { reason, output: text.clone() };
            if text.contains("Address already in use") || text.contains("BindException") {
                StartFailure::PortTaken(err)
            } else {
                StartFailure::Fatal(err)
            }
        };
        match ready_rx.recv_timeout(options.startup_timeout) {
            Ok(()) => {}
            Err(RecvTimeoutError::Timeout) => {
                let reason = format!("no gateway announcement within {:?}", options.startup_timeout);
                return Err(fail(&mut child, reason));
            }
            Err(RecvTimeoutError::Disconnected) => {
                // stdout closed before the announcement: the JVM exited. Give stderr a moment.
                let status = wait_briefly(&mut child);
                std::thread::sleep(Duration::from_millis(50));
                return Err(fail(&mut child, format!("the JVM exited ({status}) before its gateway started")));
            }
        }
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let deadline = Instant::now() + options.startup_timeout;
        let stream = loop {
            match TcpStream::connect_timeout(&address, Duration::from_secs(5)) {
                Ok(stream) => break stream,
                Err(e) if Instant::now() >= deadline => {
                    return Err(fail(&mut child, format!("cannot connect to port {port}: {e}")));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        let client = Client::new(stream, Some(options.call_timeout))
            .map_err(|e| fail(&mut child, format!("cannot set up the connection: {e}")))?;
        tracing::debug!(port, pid = child.id(), "ScienceWorld gateway started");
        Ok(Self { child, client, output, drainers, call_timeout: options.call_timeout })
    }

    /// The JVM's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the JVM is still running.
    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The JVM's last output lines.
    pub fn output_tail(&self) -> String {
        self.output.text()
    }

    /// Runs `calls` on the client; a failure of the connection becomes [`SciWorldError::JvmDied`]
    /// (killing a JVM that stopped answering), while Java exceptions and bad replies stay
    /// [`SciWorldError::Py4j`].
    pub fn with_client<T>(
        &mut self,
        method: &str,
        calls: impl FnOnce(&mut Client) -> Result<T, Py4jError>,
    ) -> Result<T, SciWorldError> {
        match calls(&mut self.client) {
            Ok(value) => Ok(value),
            Err(err @ (Py4jError::Io(_) | Py4jError::Closed | Py4jError::TooLong)) => {
                let timed_out = matches!(&err, Py4jError::Io(e)
                    if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut));
                let status = if timed_out {
                    self.kill();
                    format!("no reply within {:?}; JVM killed", self.call_timeout)
                } else {
                    let status = wait_briefly(&mut self.child);
                    if self.is_alive() {
                        // The stream is out of step with the JVM: it cannot be trusted any more.
                        self.kill();
                        format!("{err}; JVM killed")
                    } else {
                        status
                    }
                };
                Err(SciWorldError::JvmDied { method: method.to_string(), status, output: self.output_tail() })
            }
            Err(err) => Err(SciWorldError::Py4j(err)),
        }
    }

    /// Kills the JVM (idempotent).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.kill();
        for handle in self.drainers.drain(..) {
            let _ = handle.join();
        }
    }
}

enum StartFailure {
    PortTaken(SciWorldError),
    Fatal(SciWorldError),
}

fn free_port() -> std::io::Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(listener.local_addr()?.port())
}

/// Waits up to half a second for the child to exit; describes its status.
fn wait_briefly(child: &mut Child) -> String {
    let deadline = Instant::now() + Duration::from_millis(500);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return format!("exit status: {status}"),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => return "connection lost, process still running".into(),
            Err(e) => return format!("status unknown: {e}"),
        }
    }
}

fn drain(pipe: impl Read + Send + 'static, output: OutputTail, ready: Option<mpsc::Sender<()>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(pipe);
        let mut line = Vec::new();
        let mut ready = ready;
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let text = String::from_utf8_lossy(&line);
                    output.push(&text);
                    if text.starts_with(READY_LINE)
                        && let Some(tx) = ready.take()
                    {
                        let _ = tx.send(());
                    }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A fake `java` that runs `body` (a shell script) whatever its arguments.
    fn fake_java(dir: &std::path::Path, body: &str) -> JvmOptions {
        let path = dir.join("java");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        JvmOptions {
            java: path,
            jvm_args: vec![],
            startup_timeout: Duration::from_secs(2),
            call_timeout: Duration::from_secs(2),
        }
    }

    fn location(dir: &std::path::Path) -> JarLocation {
        JarLocation { jar: dir.join("scienceworld.jar"), working_dir: dir.to_path_buf() }
    }

    #[test]
    fn a_jvm_that_exits_early_is_a_startup_error_with_its_output() {
        let dir = tempfile::tempdir().unwrap();
        let options = fake_java(dir.path(), "echo 'Error: Unable to access jarfile' >&2; exit 1");
        let err = Gateway::start(&location(dir.path()), &options).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("exited"), "{text}");
        assert!(text.contains("Unable to access jarfile"), "{text}");
    }

    #[test]
    fn a_silent_jvm_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let options = fake_java(dir.path(), "exec sleep 30");
        let started = Instant::now();
        let err = Gateway::start(&location(dir.path()), &options).unwrap_err();
        assert!(err.to_string().contains("no gateway announcement"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn a_missing_java_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let options = JvmOptions { java: dir.path().join("no-java-here"), ..JvmOptions::default() };
        let err = Gateway::start(&location(dir.path()), &options).unwrap_err();
        assert!(matches!(err, SciWorldError::JavaNotStarted { .. }), "{err}");
        assert!(err.to_string().contains("no-java-here"));
    }

    #[test]
    fn output_tail_keeps_the_last_lines_truncated() {
        let tail = OutputTail::default();
        for i in 0..(TAIL_LINES + 5) {
            tail.push(&format!("line {i}\n"));
        }
        tail.push(&"x".repeat(TAIL_LINE_CHARS * 2));
        let text = tail.text();
        assert_eq!(text.lines().count(), TAIL_LINES);
        assert!(!text.contains("line 5\n") && text.contains(&format!("line {}", TAIL_LINES + 4)));
        assert_eq!(text.lines().last().unwrap().len(), TAIL_LINE_CHARS);
    }
}
