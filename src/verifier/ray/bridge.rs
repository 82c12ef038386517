//! The bridge process: drtc's one connection to a Ray cluster. Started from the embedded
//! `bridge.py` in drtc's Python, in its own process group; requests go out as JSON lines
//! tagged with an id and answers come back in whatever order the actors finish, routed to
//! the waiting caller by a reader thread. When the bridge dies every waiting caller gets a
//! death (no run hangs on it); when it is dropped it is asked to stop its actors and
//! disconnect, then killed.

use super::summary::RaySummary;
use super::{RayConfig, RAY_FILES};
use crate::verifier::env::{DrtcHome, PythonEnv};
use crate::verifier::error::{RuntimeError, RuntimeResult};
use crate::verifier::options::DeviceKind;
use crate::verifier::worker::{self, Exchange};
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Lines of the bridge's stderr kept for error messages.
const STDERR_TAIL_LINES: usize = 60;
/// Beyond the bridge's own limit for a request (its deadline, the worker's start and a
/// grace), how long drtc waits before it counts the request as lost. The bridge answers
/// every request or replaces its actor, and a bridge that dies fails every waiting request
/// at once, so this only bounds a bridge that lives but stopped working.
const LOST_AFTER: Duration = Duration::from_secs(90);
/// The same for shared actors, where a request may wait its turn behind other clients'
/// (the bridge then extends its own limit as long as the actor answers a ping).
const LOST_AFTER_SHARED: Duration = Duration::from_secs(3600);
/// How long connecting to (or starting) a cluster and placing the actors may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(600);

/// What the bridge needs to start its actors.
#[derive(Debug, Clone)]
pub struct BridgeStart<'a> {
    pub config: &'a RayConfig,
    pub device: DeviceKind,
    /// Actors to start (CPU) or GPUs to take at most (CUDA); default: every CPU or GPU of
    /// the cluster.
    pub actors: Option<usize>,
    /// CPUs of a local cluster.
    pub local_cpus: usize,
    /// torch threads per CPU actor's worker.
    pub threads: Option<usize>,
    /// The worker program's installed directory (its files are shipped to the actors).
    pub worker_dir: &'a Path,
    pub startup_timeout: Duration,
}

/// What a command run on an actor's node left.
#[derive(Debug, Clone)]
pub struct CommandOutput {
    /// Its exit status (`None`: killed by a signal).
    pub status: Option<i64>,
    pub stdout: String,
    /// The end of its stderr.
    pub stderr: String,
}

type Waiters = Arc<Mutex<HashMap<u64, Sender<Value>>>>;

/// A running bridge.
pub struct Bridge {
    child: Mutex<Child>,
    stdin: Mutex<Option<ChildStdin>>,
    waiters: Waiters,
    stderr: Arc<Mutex<VecDeque<String>>>,
    next_id: AtomicU64,
    startup_timeout: Duration,
    shared: bool,
    /// The bridge's `ready` message: the cluster, its resources, the actors.
    pub info: Value,
}

impl Bridge {
    /// Starts the bridge, connects to the cluster and places the actors.
    pub fn start(python: &PythonEnv, home: &DrtcHome, s: &BridgeStart) -> RuntimeResult<Bridge> {
        let dir = worker::install_files(home, "ray", RAY_FILES)?;
        let mut child = python
            .command()
            .arg("-u")
            .arg(dir.join("bridge.py"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Ray's own usage report would reach beyond this machine.
            .env("RAY_USAGE_STATS_ENABLED", "0")
            // Its own process group: Ctrl-C reaches drtc, whose exit closes the bridge's
            // stdin, and the bridge then stops the actors before it exits.
            .process_group(0)
            .spawn()
            .map_err(|source| RuntimeError::Spawn {
                python: python.python.display().to_string(),
                source,
            })?;
        let mut stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr_pipe = child.stderr.take().expect("stderr is piped");
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let tail = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines() {
                let Ok(line) = line else { break };
                let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                if t.len() == STDERR_TAIL_LINES {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
        let start = json!({
            "op": "start",
            "target": s.config.target.as_str(),
            "shared": s.config.shared,
            "namespace": s.config.namespace,
            "device": s.device.name(),
            "actors": s.actors,
            "cpus": s.local_cpus,
            "threads": s.threads,
            "worker_dir": s.worker_dir,
            "startup_timeout_s": s.startup_timeout.as_secs_f64(),
        });
        let sent = stdin
            .as_mut()
            .is_some_and(|i| writeln!(i, "{start}").and_then(|_| i.flush()).is_ok());
        let waiters: Waiters = Arc::new(Mutex::new(HashMap::new()));
        let (ready_tx, ready_rx) = mpsc::channel();
        let routes = Arc::clone(&waiters);
        std::thread::spawn(move || {
            let mut ready = Some(ready_tx);
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                match v.get("id").and_then(Value::as_u64) {
                    Some(id) => {
                        let to = routes.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
                        if let Some(to) = to {
                            let _ = to.send(v);
                        }
                    }
                    None => {
                        if let Some(r) = ready.take() {
                            let _ = r.send(v);
                        }
                    }
                }
            }
            // The bridge is gone: every waiting caller hears of it now.
            routes.lock().unwrap_or_else(|p| p.into_inner()).clear();
        });
        let mut bridge = Bridge {
            child: Mutex::new(child),
            stdin: Mutex::new(stdin),
            waiters,
            stderr,
            next_id: AtomicU64::new(0),
            startup_timeout: s.startup_timeout,
            shared: s.config.shared,
            info: Value::Null,
        };
        if !sent {
            return Err(bridge.start_failure("it closed its input"));
        }
        match ready_rx.recv_timeout(CONNECT_TIMEOUT) {
            Ok(v) if v["event"] == "ready" => {
                bridge.info = v;
                Ok(bridge)
            }
            Ok(v) if v["kind"] == "missing_packages" => Err(RuntimeError::MissingPackages {
                python: python.python.display().to_string(),
                missing: "ray".into(),
                fix: python.fix_hint(&["ray".to_string()]),
            }),
            Ok(v) => Err(RuntimeError::Ray(format!(
                "cannot reach the Ray cluster `{}`: {}",
                s.config.target,
                v["message"].as_str().unwrap_or("no reason given")
            ))),
            Err(RecvTimeoutError::Timeout) => {
                Err(bridge
                    .start_failure(&format!("no answer within {} s", CONNECT_TIMEOUT.as_secs())))
            }
            Err(RecvTimeoutError::Disconnected) => Err(bridge.start_failure("it exited")),
        }
    }

    fn start_failure(&self, what: &str) -> RuntimeError {
        // let the stderr reader drain what the dying process wrote
        std::thread::sleep(Duration::from_millis(100));
        RuntimeError::Ray(format!(
            "the Ray bridge did not start: {what}; stderr:\n{}",
            self.stderr_tail()
        ))
    }

    /// Number of actors the bridge placed.
    pub fn actors(&self) -> usize {
        self.info["actors"].as_array().map_or(0, Vec::len)
    }

    /// What kind of cluster it is (`local cluster`, `cluster at ADDRESS`, ...).
    pub fn cluster(&self) -> String {
        self.info["cluster"]
            .as_str()
            .unwrap_or("cluster")
            .to_string()
    }

    /// The last lines the bridge wrote to stderr (Ray's own messages).
    pub fn stderr_tail(&self) -> String {
        let t = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        t.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Sends one message and waits at most `limit` for its answer; `None` when the bridge
    /// died or stayed silent.
    fn ask(&self, mut msg: Value, limit: Duration) -> Option<Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        msg["id"] = Value::from(id);
        let (tx, rx) = mpsc::channel();
        self.waiters
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, tx);
        let sent = {
            let mut stdin = self.stdin.lock().unwrap_or_else(|p| p.into_inner());
            stdin
                .as_mut()
                .is_some_and(|i| writeln!(i, "{msg}").and_then(|_| i.flush()).is_ok())
        };
        let answer = if sent {
            rx.recv_timeout(limit).ok()
        } else {
            None
        };
        self.waiters
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
        answer
    }

    /// One worker request on actor `actor`, answered as a local worker's would be: the
    /// reply, a timeout or a death, with the worker's stderr tail. `Err` when the actor's
    /// worker cannot start.
    pub fn call(
        &self,
        actor: usize,
        payload: Value,
        timeout: Duration,
    ) -> RuntimeResult<(Exchange, String)> {
        let msg = json!({
            "op": "call",
            "actor": actor,
            "payload": payload,
            "timeout_s": timeout.as_secs_f64(),
        });
        let Some(mut v) = self.ask(msg, self.limit(timeout)) else {
            return Ok((
                Exchange::Died {
                    status: "stopped answering: the Ray bridge is gone or silent".into(),
                    stderr: self.stderr_tail(),
                },
                self.stderr_tail(),
            ));
        };
        let stderr = v["stderr"].as_str().unwrap_or("").to_string();
        if let Some(missing) = v.get("missing_packages").and_then(Value::as_array) {
            let missing: Vec<String> = missing
                .iter()
                .filter_map(|m| m.as_str().map(str::to_string))
                .collect();
            return Err(RuntimeError::MissingPackages {
                python: format!(
                    "{} (on the Ray cluster)",
                    v["python"].as_str().unwrap_or("python")
                ),
                missing: missing.join(", "),
                fix: "install drtc's pinned packages (data/runtime/requirements.txt) in the \
                      cluster's Python"
                    .into(),
            });
        }
        if let Some(message) = v.get("start_error").and_then(Value::as_str) {
            return Err(RuntimeError::WorkerStart {
                message: format!("on Ray actor {actor}: {message}"),
            });
        }
        if let Some(reply) = v.get_mut("reply").map(Value::take) {
            return Ok((Exchange::Reply(reply), stderr));
        }
        if v["timed_out"] == true {
            return Ok((Exchange::TimedOut, stderr));
        }
        let status = v["died"].as_str().unwrap_or("died").to_string();
        Ok((
            Exchange::Died {
                status,
                stderr: stderr.clone(),
            },
            stderr,
        ))
    }

    /// Runs a command on actor `actor`'s node (the program must exist there): its exit
    /// status and output. A command past `timeout` is killed; an actor that dies under it
    /// is replaced and the command run again once.
    pub fn run_command(
        &self,
        actor: usize,
        argv: &[String],
        env: &[(String, String)],
        timeout: Duration,
    ) -> RuntimeResult<CommandOutput> {
        let env: serde_json::Map<String, Value> = env
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
            .collect();
        let msg = json!({
            "op": "run",
            "actor": actor,
            "argv": argv,
            "env": env,
            "timeout_s": timeout.as_secs_f64(),
        });
        let v = self.ask(msg, self.limit(timeout)).ok_or_else(|| {
            RuntimeError::Ray(format!(
                "the Ray bridge stopped answering; stderr:\n{}",
                self.stderr_tail()
            ))
        })?;
        let stderr = v["stderr"].as_str().unwrap_or("").to_string();
        if v["timed_out"] == true {
            return Err(RuntimeError::Ray(format!(
                "`{}` on Ray actor {actor}: no end within {:.0} s; stderr:\n{stderr}",
                argv.join(" "),
                timeout.as_secs_f64()
            )));
        }
        if let Some(died) = v["died"].as_str() {
            return Err(RuntimeError::Ray(format!(
                "`{}` on Ray actor {actor}: the command {died}",
                argv.join(" ")
            )));
        }
        Ok(CommandOutput {
            status: v["status"].as_i64(),
            stdout: v["stdout"].as_str().unwrap_or("").to_string(),
            stderr,
        })
    }

    /// How long drtc waits for the answer to a request with deadline `timeout`.
    fn limit(&self, timeout: Duration) -> Duration {
        let lost = if self.shared {
            LOST_AFTER_SHARED + 20 * timeout
        } else {
            LOST_AFTER
        };
        timeout + self.startup_timeout + lost
    }

    /// Starts actor `actor`'s worker (if not running) and returns its `ready` message.
    pub fn ready_info(&self, actor: usize) -> RuntimeResult<Value> {
        match self.ask(
            json!({"op": "info", "actor": actor}),
            self.limit(Duration::ZERO),
        ) {
            Some(mut v) if v.get("info").is_some() => Ok(v["info"].take()),
            Some(v) => Err(RuntimeError::WorkerStart {
                message: format!(
                    "on Ray actor {actor}: {}",
                    v["start_error"]
                        .as_str()
                        .or(v["died"].as_str())
                        .unwrap_or("no reason given")
                ),
            }),
            None => Err(RuntimeError::Ray(format!(
                "the Ray bridge stopped answering; stderr:\n{}",
                self.stderr_tail()
            ))),
        }
    }

    /// The job's figures so far: requests and busy time per actor, replacements, failures.
    pub fn summary(&self) -> RuntimeResult<RaySummary> {
        let v = self
            .ask(json!({"op": "stats"}), Duration::from_secs(30))
            .ok_or_else(|| RuntimeError::Ray("the Ray bridge stopped answering".into()))?;
        serde_json::from_value(v["stats"].clone())
            .map_err(|e| RuntimeError::Protocol(format!("Ray bridge stats: {e}")))
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        {
            let mut stdin = self.stdin.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(mut i) = stdin.take() {
                let _ = writeln!(i, "{{\"op\": \"exit\"}}");
            }
        }
        let child = self.child.get_mut().unwrap_or_else(|p| p.into_inner());
        // stopping the actors and a local cluster takes a few seconds
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: plain syscall; the group is the one the bridge was started in.
        unsafe {
            libc::killpg(child.id() as libc::pid_t, libc::SIGKILL);
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}
