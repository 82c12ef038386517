//! The adversarial corpus's harness: the manifest, one run's private world (the corpus
//! with its placeholders substituted, secrets, canaries, a loopback listener), `drtc verify`
//! as a child process under a deadline, and the process bookkeeping that finds what a run
//! left behind. Used by `tests/adversarial.rs`.

use drtc::verifier::{DrtcHome, PythonEnv};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The user's secret file the sandbox probes try to read (mode 0600); left in place, since
/// concurrent runs share it.
pub const SECRET_FILE: &str = "/tmp/drtc_adversarial_secret.txt";
/// drtc's own deadline for one verification (`--timeout`).
pub const VERIFY_TIMEOUT_S: u64 = 120;
/// Past this, the harness kills a `drtc verify` that has not exited.
pub const PROCESS_DEADLINE: Duration = Duration::from_secs(400);

/// The corpus: `DRTC_ADVERSARIAL_CORPUS` (a copy on another machine), else this crate's.
pub fn corpus_dir() -> PathBuf {
    std::env::var_os("DRTC_ADVERSARIAL_CORPUS")
        .filter(|s| !s.is_empty())
        .map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/adversarial"),
            PathBuf::from,
        )
}

/// The device `drtc verify` runs the corpus on: `DRTC_ADVERSARIAL_DEVICE` (cpu or cuda),
/// default cpu.
pub fn device() -> String {
    std::env::var("DRTC_ADVERSARIAL_DEVICE")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "cpu".to_string())
}

pub fn drtc_bin() -> PathBuf {
    std::env::var_os("DRTC_ADVERSARIAL_BIN")
        .filter(|s| !s.is_empty())
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_drtc")), PathBuf::from)
}

pub fn jobs() -> usize {
    std::env::var("DRTC_ADVERSARIAL_JOBS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2)
        .max(1)
}

pub fn python_env() -> PythonEnv {
    PythonEnv::locate(&DrtcHome::from_env()).expect("a Python environment (run `drtc setup`)")
}

/// A token unique to this run of this test (file names, process markers).
pub fn token() -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "r{}x{:x}x{}",
        std::process::id(),
        nanos,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    Reject,
    Accept,
    Probe,
}

impl Expect {
    pub fn parse(s: &str) -> Expect {
        match s {
            "reject" => Expect::Reject,
            "accept" => Expect::Accept,
            "probe" => Expect::Probe,
            other => panic!("manifest: unknown expectation {other:?}"),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Expect::Reject => "reject",
            Expect::Accept => "accept",
            Expect::Probe => "probe",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Case {
    pub candidate: String,
    pub reference: String,
    pub class: String,
    pub expect: Expect,
    pub gpu_only: bool,
}

impl Case {
    pub fn stem(&self) -> &str {
        let name = self.candidate.rsplit('/').next().unwrap_or(&self.candidate);
        name.strip_suffix(".py").unwrap_or(name)
    }
}

pub struct Manifest {
    pub references: BTreeMap<String, String>,
    pub followups: BTreeMap<String, Vec<(String, Expect)>>,
    pub cases: Vec<Case>,
}

pub fn manifest() -> Manifest {
    let path = corpus_dir().join("manifest.json");
    let text = std::fs::read_to_string(&path).expect("tests/adversarial/manifest.json");
    let v: Value = serde_json::from_str(&text).expect("manifest.json parses");
    let str_of = |v: &Value, k: &str| -> String {
        v[k].as_str()
            .unwrap_or_else(|| panic!("manifest: {k} missing in {v}"))
            .to_string()
    };
    let references = v["references"]
        .as_object()
        .expect("manifest: references")
        .iter()
        .map(|(k, p)| (k.clone(), p.as_str().expect("reference path").to_string()))
        .collect();
    let followups = v["followups"]
        .as_object()
        .expect("manifest: followups")
        .iter()
        .map(|(k, list)| {
            let seq = list
                .as_array()
                .expect("followup list")
                .iter()
                .map(|f| (str_of(f, "candidate"), Expect::parse(&str_of(f, "expect"))))
                .collect();
            (k.clone(), seq)
        })
        .collect();
    let cases = v["cases"]
        .as_array()
        .expect("manifest: cases")
        .iter()
        .map(|c| Case {
            candidate: str_of(c, "candidate"),
            reference: str_of(c, "reference"),
            class: str_of(c, "class"),
            expect: Expect::parse(&str_of(c, "expect")),
            gpu_only: c["device"].as_str() == Some("cuda"),
        })
        .collect();
    Manifest {
        references,
        followups,
        cases,
    }
}

/// A loopback TCP listener the probes try to reach; records every connection.
pub struct Listener {
    pub port: u16,
    pub hits: Arc<Mutex<Vec<String>>>,
    pub stop: Arc<AtomicBool>,
    pub thread: Option<JoinHandle<()>>,
}

impl Listener {
    pub fn start() -> Listener {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind a loopback listener");
        l.set_nonblocking(true).expect("nonblocking listener");
        let port = l.local_addr().expect("listener address").port();
        let hits = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (h, s) = (Arc::clone(&hits), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match l.accept() {
                    Ok((mut conn, addr)) => {
                        let _ = conn.set_nonblocking(false);
                        let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
                        let mut buf = [0u8; 200];
                        let n = conn.read(&mut buf).unwrap_or(0);
                        let said = String::from_utf8_lossy(&buf[..n]).trim().to_string();
                        h.lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(format!("{addr}: {said:?}"));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        Listener {
            port,
            hits,
            stop,
            thread: Some(thread),
        }
    }

    pub fn hits(&self) -> Vec<String> {
        self.hits.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One run's private world: the corpus with its placeholders substituted, the secrets the
/// probes look for, a canary for the real /tmp, a private directory and the listener.
pub struct Fixture {
    pub run: String,
    pub dir: tempfile::TempDir,
    pub corpus: PathBuf,
    pub python: PathBuf,
    pub secret_env: String,
    pub listener: Listener,
}

impl Fixture {
    pub fn new() -> Fixture {
        let run = token();
        let dir = tempfile::Builder::new()
            .prefix("drtc-adversarial-")
            .tempdir()
            .expect("temp dir");
        let listener = Listener::start();
        let corpus = dir.path().join("corpus");
        copy_substituted(&corpus_dir(), &corpus, &run, listener.port);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(SECRET_FILE)
            .expect("write the secret file");
        f.write_all(b"drtc-adversarial-secret: a user's private file\n")
            .expect("secret file");
        std::fs::set_permissions(SECRET_FILE, std::fs::Permissions::from_mode(0o600))
            .expect("chmod 0600 the secret file");
        std::fs::write(canary(&run), "the real /tmp\n").expect("canary");
        // the same for the user's home (a probe's write there escaped only if it sees this)
        let _ = std::fs::write(root_canary(&run), "the real /root\n");
        let private = private_dir(&run);
        std::fs::create_dir_all(&private).expect("private dir");
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700))
            .expect("chmod 0700");
        std::fs::write(private.join(format!("private-file-{run}")), "private\n")
            .expect("private file");
        Fixture {
            secret_env: format!("drtc-adversarial-env-secret-{run}"),
            python: python_env().python,
            run,
            dir,
            corpus,
            listener,
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.corpus.join(rel)
    }

    pub fn reference(&self, m: &Manifest, name: &str) -> PathBuf {
        self.path(
            m.references
                .get(name)
                .unwrap_or_else(|| panic!("manifest: no reference {name}")),
        )
    }

    /// A fresh `DRTC_HOME` under the run's directory.
    pub fn home(&self, name: &str) -> PathBuf {
        let h = self.dir.path().join("homes").join(name);
        std::fs::create_dir_all(&h).expect("home dir");
        h
    }

    /// `drtc` with this run's environment: its own home, drtc's Python, the secret, and
    /// workers of its own process (no verification service: each answer's command must
    /// leave nothing behind; `tests/service.rs` covers the service's own cleanup).
    pub fn drtc(&self, home: &Path) -> Command {
        let mut cmd = Command::new(drtc_bin());
        cmd.env("DRTC_HOME", home)
            .env("DRTC_SERVICE", "off")
            .env("DRTC_PYTHON", &self.python)
            .env("DRTC_TEST_SECRET", &self.secret_env)
            .stdin(Stdio::null());
        cmd
    }

    pub fn marker(&self) -> String {
        format!("drtc_adversarial_marker_{}", self.run)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(canary(&self.run));
        let _ = std::fs::remove_file(root_canary(&self.run));
        let _ = std::fs::remove_dir_all(private_dir(&self.run));
        let _ = std::fs::remove_file(escape_tmp(&self.run));
        kill_all(&processes_with(&self.marker()));
    }
}

pub fn canary(run: &str) -> PathBuf {
    PathBuf::from(format!("/tmp/drtc_adversarial_canary_{run}"))
}

pub fn root_canary(run: &str) -> PathBuf {
    PathBuf::from(format!("/root/drtc_adversarial_canary_{run}"))
}

pub fn private_dir(run: &str) -> PathBuf {
    PathBuf::from(format!("/tmp/drtc_adversarial_private_{run}"))
}

pub fn escape_tmp(run: &str) -> PathBuf {
    PathBuf::from(format!(
        "/tmp/drtc_adversarial_escape_probe_write_tmp_{run}"
    ))
}

pub fn escape_outside_name(run: &str) -> String {
    format!("drtc_adversarial_escape_probe_write_outside_{run}.txt")
}

/// Copies the corpus, replacing `__ADV_RUN__` and `__ADV_PORT__` in the Python files.
pub fn copy_substituted(from: &Path, to: &Path, run: &str, port: u16) {
    std::fs::create_dir_all(to).expect("corpus copy dir");
    for entry in std::fs::read_dir(from).expect("corpus dir") {
        let entry = entry.expect("corpus entry");
        let path = entry.path();
        let dest = to.join(entry.file_name());
        if path.is_dir() {
            if entry.file_name() != "__pycache__" {
                copy_substituted(&path, &dest, run, port);
            }
        } else if path.extension().is_some_and(|e| e == "py") {
            let text = std::fs::read_to_string(&path).expect("corpus file");
            let text = text
                .replace("__ADV_RUN__", run)
                .replace("__ADV_PORT__", &port.to_string());
            std::fs::write(&dest, text).expect("corpus copy");
        } else {
            std::fs::copy(&path, &dest).expect("corpus copy");
        }
    }
}

/// Processes whose command line contains `needle` (never this one).
pub fn processes_with(needle: &str) -> Vec<(i32, String)> {
    let me = std::process::id() as i32;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter_map(|pid| {
            let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&raw).replace('\0', " ");
            cmd.contains(needle).then(|| (pid, cmd.trim().to_string()))
        })
        .collect()
}

/// SIGKILLs processes this test started (found by its unique marker or home path).
pub fn kill_all(procs: &[(i32, String)]) {
    for (pid, _) in procs {
        // SAFETY: a plain kill(2) on a pid found by this run's unique marker.
        unsafe {
            libc::kill(*pid, libc::SIGKILL);
        }
    }
}

pub fn wait_deadline(child: &mut Child, deadline: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Some(s),
            Ok(None) if start.elapsed() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => return None,
        }
    }
}

/// What one verification said.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub verified: bool,
    pub checks: Vec<String>,
    pub note: String,
    pub secs: f64,
}

impl Outcome {
    pub fn checks_line(&self) -> String {
        if self.checks.is_empty() {
            "-".to_string()
        } else {
            self.checks.join(",")
        }
    }
}

pub fn checks_of(report: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in report["failures"].as_array().into_iter().flatten() {
        let c = f["check"].as_str().unwrap_or("?").to_string();
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

pub fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(160)
        .collect()
}

/// `drtc verify REFERENCE CANDIDATE --device DEVICE [--strict] --rule allclose-1e-4 --json`.
pub fn verify_cli(
    fx: &Fixture,
    home: &Path,
    reference: &Path,
    candidate: &Path,
    strict: bool,
) -> Outcome {
    let start = Instant::now();
    let mut child = fx
        .drtc(home)
        .arg("verify")
        .arg(reference)
        .arg(candidate)
        .args(["--device", &device(), "--rule", "allclose-1e-4", "--json"])
        .args(strict.then_some("--strict"))
        .args(["--timeout", &VERIFY_TIMEOUT_S.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start drtc");
    let mut out_pipe = child.stdout.take().expect("stdout");
    let mut err_pipe = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out_pipe.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        s
    });
    let status = wait_deadline(&mut child, PROCESS_DEADLINE);
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let secs = start.elapsed().as_secs_f64();
    let Some(status) = status else {
        return Outcome {
            verified: false,
            checks: vec!["harness-deadline".into()],
            note: "drtc did not exit in time (killed)".into(),
            secs,
        };
    };
    match serde_json::from_str::<Value>(&stdout) {
        Ok(report) => {
            let said = report["verified"].as_bool() == Some(true);
            let mut checks = checks_of(&report);
            if said != status.success() {
                checks.push(format!("exit-{status}"));
            }
            let note = report["failures"][0]["message"]
                .as_str()
                .map(first_line)
                .unwrap_or_default();
            Outcome {
                verified: said && status.success(),
                checks,
                note,
                secs,
            }
        }
        Err(_) => Outcome {
            verified: false,
            checks: vec!["no-report".into()],
            note: format!(
                "{status}: {}",
                first_line(if stdout.trim().is_empty() {
                    &stderr
                } else {
                    &stdout
                })
            ),
            secs,
        },
    }
}

pub fn site_packages(python: &Path) -> Option<PathBuf> {
    let out = Command::new(python)
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .ok()?;
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!s.is_empty()).then(|| PathBuf::from(s))
}

pub fn find_named(dir: &Path, name: &str, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if e.file_name() == name {
            found.push(p);
        } else if e.file_type().is_ok_and(|t| t.is_dir()) {
            find_named(&p, name, found);
        }
    }
}
