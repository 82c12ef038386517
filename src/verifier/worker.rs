//! One Python worker process: started from the embedded program, spoken to in JSON lines,
//! given a deadline per request, and killed with its whole process group when it hangs,
//! dies or is dropped, so no process outlives it.

use super::env::{DrtcHome, PythonEnv};
use super::error::{RuntimeError, RuntimeResult};
use serde_json::Value;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The worker program, embedded in the binary: its entry point and the `drtc_worker`
/// package beside it, as (path relative to the install directory, contents).
pub const WORKER_FILES: &[(&str, &str)] = &[
    ("worker.py", include_str!("worker/worker.py")),
    (
        "drtc_worker/__init__.py",
        include_str!("worker/drtc_worker/__init__.py"),
    ),
    (
        "drtc_worker/protocol.py",
        include_str!("worker/drtc_worker/protocol.py"),
    ),
    (
        "drtc_worker/common.py",
        include_str!("worker/drtc_worker/common.py"),
    ),
    (
        "drtc_worker/memory.py",
        include_str!("worker/drtc_worker/memory.py"),
    ),
    (
        "drtc_worker/guards.py",
        include_str!("worker/drtc_worker/guards.py"),
    ),
    (
        "drtc_worker/comparison.py",
        include_str!("worker/drtc_worker/comparison.py"),
    ),
    (
        "drtc_worker/truth.py",
        include_str!("worker/drtc_worker/truth.py"),
    ),
    (
        "drtc_worker/pair.py",
        include_str!("worker/drtc_worker/pair.py"),
    ),
    (
        "drtc_worker/strict_source.py",
        include_str!("worker/drtc_worker/strict_source.py"),
    ),
    (
        "drtc_worker/trials.py",
        include_str!("worker/drtc_worker/trials.py"),
    ),
    (
        "drtc_worker/deadline.py",
        include_str!("worker/drtc_worker/deadline.py"),
    ),
    (
        "drtc_worker/precompile.py",
        include_str!("worker/drtc_worker/precompile.py"),
    ),
    (
        "drtc_worker/peaks.py",
        include_str!("worker/drtc_worker/peaks.py"),
    ),
    (
        "drtc_worker/timing.py",
        include_str!("worker/drtc_worker/timing.py"),
    ),
    (
        "drtc_worker/fingerprint.py",
        include_str!("worker/drtc_worker/fingerprint.py"),
    ),
    ("runner.py", include_str!("worker/runner.py")),
    (
        "drtc_worker/wire.py",
        include_str!("worker/drtc_worker/wire.py"),
    ),
    (
        "drtc_worker/sandbox.py",
        include_str!("worker/drtc_worker/sandbox.py"),
    ),
    (
        "drtc_worker/candidate.py",
        include_str!("worker/drtc_worker/candidate.py"),
    ),
    (
        "drtc_worker/isolated.py",
        include_str!("worker/drtc_worker/isolated.py"),
    ),
];

/// How often a cancellable request looks at its flag.
const CANCEL_POLL: Duration = Duration::from_millis(100);

/// Lines of the worker's stderr kept for failure reports.
const STDERR_TAIL_LINES: usize = 40;

/// Writes the worker program into drtc's cache (one directory per content) and returns
/// the path of its entry point.
pub fn install_script(home: &DrtcHome) -> RuntimeResult<PathBuf> {
    Ok(install_files(home, "worker", WORKER_FILES)?.join("worker.py"))
}

/// Writes embedded files into drtc's cache under `kind/kind-<content hash>/` (written
/// privately, then renamed into place, so concurrent drtc processes never run a
/// half-written copy) and returns that directory.
pub fn install_files(
    home: &DrtcHome,
    kind: &str,
    files: &[(&str, &str)],
) -> RuntimeResult<PathBuf> {
    let root = home.dir(kind)?;
    let hash = files.iter().fold(0u64, |h, (name, text)| {
        h.rotate_left(7) ^ fnv1a(name.as_bytes()) ^ fnv1a(text.as_bytes())
    });
    let dir = root.join(format!("{kind}-{hash:016x}"));
    let up_to_date = |dir: &Path| {
        files
            .iter()
            .all(|(name, text)| std::fs::read_to_string(dir.join(name)).is_ok_and(|s| s == *text))
    };
    if !up_to_date(&dir) {
        let tmp = root.join(format!(".{kind}-{hash:016x}-{}.tmp", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        for (name, text) in files {
            let path = tmp.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| RuntimeError::io(parent, e))?;
            }
            std::fs::write(&path, text).map_err(|e| RuntimeError::io(&path, e))?;
        }
        if up_to_date(&dir) {
            // Another process put the same files there meanwhile.
            let _ = std::fs::remove_dir_all(&tmp);
            return Ok(dir);
        }
        if dir.exists() {
            // A damaged copy: replace it.
            let _ = std::fs::remove_dir_all(&dir);
        }
        if let Err(e) = std::fs::rename(&tmp, &dir) {
            let _ = std::fs::remove_dir_all(&tmp);
            // Another process may have put the same files there first.
            if !up_to_date(&dir) {
                return Err(RuntimeError::io(&dir, e));
            }
        }
    }
    Ok(dir)
}

/// A stable 64-bit hash of `bytes` (FNV-1a): cache file names, seeds drawn from content.
pub fn content_hash(bytes: &[u8]) -> u64 {
    fnv1a(bytes)
}

/// FNV-1a, 64 bits: a stable content hash for cache file names.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Which device a worker is pinned to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerDevice {
    /// CPU tensors, Triton's interpreter.
    Cpu,
    /// One GPU, by CUDA ordinal (the worker sees only it).
    Gpu(u32),
}

/// How to start a worker.
#[derive(Debug, Clone)]
pub struct WorkerSpec {
    pub python: PythonEnv,
    pub script: PathBuf,
    pub device: WorkerDevice,
    /// torch intra-op threads (CPU workers share the cores).
    pub threads: Option<usize>,
    pub startup_timeout: Duration,
    /// Sandboxed candidate processes the worker keeps started ahead of need.
    pub spares: usize,
}

/// What came back from one request.
#[derive(Debug)]
pub enum Exchange {
    /// The worker answered.
    Reply(Value),
    /// No answer before the deadline; the worker has been killed.
    TimedOut,
    /// The caller cancelled the request; the worker has been killed.
    Cancelled,
    /// The worker died; how, and the end of its stderr.
    Died { status: String, stderr: String },
}

/// A running worker process.
pub struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// The worker's `ready` message: versions, device.
    pub info: Value,
    next_id: u64,
    dead: bool,
}

impl Worker {
    /// Starts a worker and waits for its `ready` line.
    pub fn start(spec: &WorkerSpec) -> RuntimeResult<Worker> {
        let spawned = std::time::Instant::now();
        let mut cmd = spec.python.command();
        cmd.arg("-u")
            .arg(&spec.script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group: a kill reaches everything it started.
            .process_group(0);
        match spec.device {
            WorkerDevice::Cpu => {
                cmd.env("TRITON_INTERPRET", "1")
                    .env("CUDA_VISIBLE_DEVICES", "")
                    .env("DRTC_DEVICE", "cpu");
            }
            WorkerDevice::Gpu(i) => {
                cmd.env_remove("TRITON_INTERPRET")
                    .env("CUDA_VISIBLE_DEVICES", i.to_string())
                    .env("DRTC_DEVICE", "cuda");
            }
        }
        cmd.env("DRTC_RUNNER_SPARES", spec.spares.to_string());
        if let Some(t) = spec.threads {
            cmd.env("DRTC_WORKER_THREADS", t.to_string())
                .env("OMP_NUM_THREADS", t.to_string());
        }
        let mut child = cmd.spawn().map_err(|source| RuntimeError::Spawn {
            python: spec.python.python.display().to_string(),
            source,
        })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr_pipe = child.stderr.take().expect("stderr is piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
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
        let mut worker = Worker {
            child,
            stdin,
            lines,
            stderr,
            info: Value::Null,
            next_id: 0,
            dead: false,
        };
        match worker.read_line(spec.startup_timeout) {
            Exchange::Reply(mut v) if v["event"] == "ready" => {
                // the whole start, spawn to `ready` (the worker's own phases are within)
                if let Some(start) = v.get_mut("start").and_then(Value::as_object_mut) {
                    start.insert("wall_s".into(), spawned.elapsed().as_secs_f64().into());
                }
                worker.info = v;
                Ok(worker)
            }
            Exchange::Reply(v) if v["kind"] == "missing_packages" => {
                let missing: Vec<String> = v["missing"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|m| m["package"].as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                Err(RuntimeError::MissingPackages {
                    python: spec.python.python.display().to_string(),
                    missing: missing.join(", "),
                    fix: spec.python.fix_hint(&missing),
                })
            }
            Exchange::Reply(v) => Err(RuntimeError::WorkerStart {
                message: v["message"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string()),
            }),
            Exchange::TimedOut => Err(RuntimeError::WorkerStart {
                message: format!(
                    "no answer within {:?}; stderr:\n{}",
                    spec.startup_timeout,
                    worker.stderr_tail()
                ),
            }),
            Exchange::Died { status, stderr } => Err(RuntimeError::WorkerStart {
                message: format!("it {status}; stderr:\n{stderr}"),
            }),
            Exchange::Cancelled => Err(RuntimeError::WorkerStart {
                message: "cancelled while starting".into(),
            }),
        }
    }

    /// The operating system's id of the worker process.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the worker can take another request.
    pub fn is_alive(&self) -> bool {
        !self.dead
    }

    /// Sends one request and waits for its answer at most `timeout`. On a timeout or a
    /// death the worker is killed (with its process group) and reaped. With `give_way`,
    /// the worker stops between its trials (`{"event": "gpu_yield"}`, its GPU work
    /// finished) and goes on when told (`{"resume": true}`) after `give_way` returned how
    /// long it held it back (a timing pass that waited ran meanwhile); that wait extends
    /// the deadline.
    pub fn request(
        &mut self,
        mut req: Value,
        timeout: Duration,
        cancel: Option<&AtomicBool>,
        mut give_way: Option<&mut dyn FnMut() -> Duration>,
    ) -> Exchange {
        self.next_id += 1;
        let id = self.next_id;
        req["id"] = Value::from(id);
        if give_way.is_some() {
            req["yield_gpu"] = Value::Bool(true);
        }
        let line = format!("{req}\n");
        let sent = match self.stdin.as_mut() {
            Some(stdin) => stdin
                .write_all(line.as_bytes())
                .and_then(|_| stdin.flush())
                .is_ok(),
            None => false,
        };
        if !sent {
            return self.died();
        }
        let mut deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match cancel {
                Some(c) if c.load(Ordering::SeqCst) => {
                    self.kill();
                    return Exchange::Cancelled;
                }
                // wait in short steps, looking at the flag between them
                Some(_) if left > CANCEL_POLL => match self.lines.recv_timeout(CANCEL_POLL) {
                    Ok(line) => match serde_json::from_str::<Value>(&line) {
                        Ok(v) => v,
                        Err(_) => continue,
                    },
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => return self.died(),
                },
                _ => match self.read_line(left) {
                    Exchange::Reply(v) => v,
                    other => return other,
                },
            };
            if line["id"] != id {
                continue; // a stale or unsolicited line
            }
            if line["event"] == "gpu_yield" {
                if let Some(give_way) = give_way.as_mut() {
                    deadline += give_way();
                }
                if !self.resume() {
                    return self.died();
                }
                continue;
            }
            return self.answered(line);
        }
    }

    /// Tells a worker stopped between its trials to go on.
    fn resume(&mut self) -> bool {
        match self.stdin.as_mut() {
            Some(stdin) => stdin
                .write_all(b"{\"resume\": true}\n")
                .and_then(|_| stdin.flush())
                .is_ok(),
            None => false,
        }
    }

    fn answered(&mut self, v: Value) -> Exchange {
        if v["fatal"] == Value::Bool(true) {
            // The worker exits by itself after a fatal answer (broken CUDA context,
            // tampered state); make sure of it.
            self.kill();
        }
        Exchange::Reply(v)
    }

    fn read_line(&mut self, timeout: Duration) -> Exchange {
        loop {
            match self.lines.recv_timeout(timeout) {
                Ok(line) => match serde_json::from_str::<Value>(&line) {
                    Ok(v) => return Exchange::Reply(v),
                    Err(_) => continue, // not ours: the protocol fd only carries JSON
                },
                Err(RecvTimeoutError::Timeout) => {
                    self.kill();
                    return Exchange::TimedOut;
                }
                Err(RecvTimeoutError::Disconnected) => return self.died(),
            }
        }
    }

    fn died(&mut self) -> Exchange {
        // stdout closed: give the process a moment to finish dying, then reap it.
        let deadline = Instant::now() + Duration::from_secs(2);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => break None,
            }
        };
        self.kill();
        // Let the stderr reader drain what the dying process wrote.
        std::thread::sleep(Duration::from_millis(50));
        Exchange::Died {
            status: status.map_or_else(|| "stopped answering".to_string(), describe_status),
            stderr: self.stderr_tail(),
        }
    }

    /// The last lines the worker wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        let t = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        t.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Kills the worker's process group and reaps the worker.
    pub fn kill(&mut self) {
        if self.dead {
            return;
        }
        self.dead = true;
        self.stdin = None;
        let pgid = self.child.id() as libc::pid_t;
        // SAFETY: plain syscall; the group is the one this worker was started in.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Asks the worker to exit, and kills it if it does not within `grace`.
    pub fn shutdown(mut self, grace: Duration) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(b"{\"op\": \"exit\"}\n");
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.kill();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// "killed by signal 6 (SIGABRT)" or "exited with status 3".
pub fn describe_status(status: ExitStatus) -> String {
    if let Some(sig) = status.signal() {
        let name = match sig {
            libc::SIGABRT => "SIGABRT",
            libc::SIGSEGV => "SIGSEGV",
            libc::SIGKILL => "SIGKILL",
            libc::SIGBUS => "SIGBUS",
            libc::SIGFPE => "SIGFPE",
            libc::SIGILL => "SIGILL",
            libc::SIGTERM => "SIGTERM",
            _ => "signal",
        };
        format!("was killed by signal {sig} ({name})")
    } else {
        format!("exited with status {}", status.code().unwrap_or(-1))
    }
}

/// Makes a path absolute (the worker does not share our idea of the current directory
/// when drtc is used as a library).
pub(crate) fn absolute(path: &Path) -> RuntimeResult<PathBuf> {
    std::path::absolute(path).map_err(|e| RuntimeError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::WORKER_FILES;

    /// Every Python file of the worker's package is embedded (a module left out makes
    /// every worker fail its start once installed).
    #[test]
    fn every_worker_module_is_embedded() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/verifier/worker");
        for sub in ["", "drtc_worker"] {
            let entries = std::fs::read_dir(std::path::Path::new(dir).join(sub)).unwrap();
            for e in entries {
                let path = e.unwrap().path();
                if path.extension().is_some_and(|x| x == "py") {
                    let name = path.file_name().unwrap().to_string_lossy().to_string();
                    let rel = if sub.is_empty() {
                        name
                    } else {
                        format!("{sub}/{name}")
                    };
                    assert!(
                        WORKER_FILES.iter().any(|(n, _)| *n == rel),
                        "{rel} is not in WORKER_FILES"
                    );
                }
            }
        }
    }
}
