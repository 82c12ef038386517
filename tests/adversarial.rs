//! The adversarial corpus (`tests/adversarial`: README.md, manifest.json) against the
//! verifier: every hostile candidate (a wrong answer that passes only by cheating) must be
//! rejected by `drtc verify REFERENCE CANDIDATE --device cpu --strict --rule
//! allclose-1e-4`, every honest one accepted, and every sandbox probe (a correct answer
//! that first tries a forbidden action and answers wrong if it worked) accepted with no
//! trace of the action left. Candidates that try to persist are also run in one pool (one
//! worker) followed by honest answers, whose verdicts must be those they get alone. Killing
//! drtc (SIGTERM, SIGKILL) while a candidate hangs must leave no process behind.
//!
//! Each verification is its own `drtc` process with its own `DRTC_HOME` (a temporary
//! directory, so a candidate that edits the installed worker touches only its copy) and
//! `DRTC_PYTHON` pointing at drtc's interpreter; several run at once
//! (`DRTC_ADVERSARIAL_JOBS`, default 2). `DRTC_ADVERSARIAL_BIN` runs another drtc binary
//! (to measure an older build); the same-pool sequences always use this crate's runtime.
//! The summary table and the count of wrongly accepted candidates by class are printed
//! (`cargo test --test adversarial -- --nocapture`).

use drtc::runtime::{DeviceKind, DrtcHome, PoolOptions, PythonEnv, VerifyRequest, WorkerPool};
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
const SECRET_FILE: &str = "/tmp/drtc_adversarial_secret.txt";
/// drtc's own deadline for one verification (`--timeout`).
const VERIFY_TIMEOUT_S: u64 = 120;
/// Past this, the harness kills a `drtc verify` that has not exited.
const PROCESS_DEADLINE: Duration = Duration::from_secs(400);

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/adversarial")
}

fn drtc_bin() -> PathBuf {
    std::env::var_os("DRTC_ADVERSARIAL_BIN")
        .filter(|s| !s.is_empty())
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_drtc")), PathBuf::from)
}

fn jobs() -> usize {
    std::env::var("DRTC_ADVERSARIAL_JOBS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2)
        .max(1)
}

fn python_env() -> PythonEnv {
    PythonEnv::locate(&DrtcHome::from_env()).expect("a Python environment (run `drtc setup`)")
}

/// A token unique to this run of this test (file names, process markers).
fn token() -> String {
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
enum Expect {
    Reject,
    Accept,
    Probe,
}

impl Expect {
    fn parse(s: &str) -> Expect {
        match s {
            "reject" => Expect::Reject,
            "accept" => Expect::Accept,
            "probe" => Expect::Probe,
            other => panic!("manifest: unknown expectation {other:?}"),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Expect::Reject => "reject",
            Expect::Accept => "accept",
            Expect::Probe => "probe",
        }
    }
}

#[derive(Clone, Debug)]
struct Case {
    candidate: String,
    reference: String,
    class: String,
    expect: Expect,
    gpu_only: bool,
}

impl Case {
    fn stem(&self) -> &str {
        let name = self.candidate.rsplit('/').next().unwrap_or(&self.candidate);
        name.strip_suffix(".py").unwrap_or(name)
    }
}

struct Manifest {
    references: BTreeMap<String, String>,
    followups: BTreeMap<String, Vec<(String, Expect)>>,
    cases: Vec<Case>,
}

fn manifest() -> Manifest {
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
struct Listener {
    port: u16,
    hits: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Listener {
    fn start() -> Listener {
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

    fn hits(&self) -> Vec<String> {
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
struct Fixture {
    run: String,
    dir: tempfile::TempDir,
    corpus: PathBuf,
    python: PathBuf,
    secret_env: String,
    listener: Listener,
}

impl Fixture {
    fn new() -> Fixture {
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

    fn path(&self, rel: &str) -> PathBuf {
        self.corpus.join(rel)
    }

    fn reference(&self, m: &Manifest, name: &str) -> PathBuf {
        self.path(
            m.references
                .get(name)
                .unwrap_or_else(|| panic!("manifest: no reference {name}")),
        )
    }

    /// A fresh `DRTC_HOME` under the run's directory.
    fn home(&self, name: &str) -> PathBuf {
        let h = self.dir.path().join("homes").join(name);
        std::fs::create_dir_all(&h).expect("home dir");
        h
    }

    /// `drtc` with this run's environment: its own home, drtc's Python, the secret.
    fn drtc(&self, home: &Path) -> Command {
        let mut cmd = Command::new(drtc_bin());
        cmd.env("DRTC_HOME", home)
            .env("DRTC_PYTHON", &self.python)
            .env("DRTC_TEST_SECRET", &self.secret_env)
            .stdin(Stdio::null());
        cmd
    }

    fn marker(&self) -> String {
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

fn canary(run: &str) -> PathBuf {
    PathBuf::from(format!("/tmp/drtc_adversarial_canary_{run}"))
}

fn root_canary(run: &str) -> PathBuf {
    PathBuf::from(format!("/root/drtc_adversarial_canary_{run}"))
}

fn private_dir(run: &str) -> PathBuf {
    PathBuf::from(format!("/tmp/drtc_adversarial_private_{run}"))
}

fn escape_tmp(run: &str) -> PathBuf {
    PathBuf::from(format!(
        "/tmp/drtc_adversarial_escape_probe_write_tmp_{run}"
    ))
}

fn escape_outside_name(run: &str) -> String {
    format!("drtc_adversarial_escape_probe_write_outside_{run}.txt")
}

/// Copies the corpus, replacing `__ADV_RUN__` and `__ADV_PORT__` in the Python files.
fn copy_substituted(from: &Path, to: &Path, run: &str, port: u16) {
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
fn processes_with(needle: &str) -> Vec<(i32, String)> {
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
fn kill_all(procs: &[(i32, String)]) {
    for (pid, _) in procs {
        // SAFETY: a plain kill(2) on a pid found by this run's unique marker.
        unsafe {
            libc::kill(*pid, libc::SIGKILL);
        }
    }
}

fn wait_deadline(child: &mut Child, deadline: Duration) -> Option<ExitStatus> {
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
struct Outcome {
    verified: bool,
    checks: Vec<String>,
    note: String,
    secs: f64,
}

impl Outcome {
    fn checks_line(&self) -> String {
        if self.checks.is_empty() {
            "-".to_string()
        } else {
            self.checks.join(",")
        }
    }
}

fn checks_of(report: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in report["failures"].as_array().into_iter().flatten() {
        let c = f["check"].as_str().unwrap_or("?").to_string();
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(160)
        .collect()
}

/// `drtc verify REFERENCE CANDIDATE --device cpu --strict --rule allclose-1e-4 --json`.
fn verify_cli(fx: &Fixture, home: &Path, reference: &Path, candidate: &Path) -> Outcome {
    let start = Instant::now();
    let mut child = fx
        .drtc(home)
        .arg("verify")
        .arg(reference)
        .arg(candidate)
        .args([
            "--device",
            "cpu",
            "--strict",
            "--rule",
            "allclose-1e-4",
            "--json",
        ])
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

/// Runs `f` over `items` on `jobs` threads; results in order.
fn run_parallel<T: Sync, R: Send>(items: &[T], jobs: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(items.len()).max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
            });
        }
    });
    slots
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .expect("every item ran")
        })
        .collect()
}

fn site_packages(python: &Path) -> Option<PathBuf> {
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

fn find_named(dir: &Path, name: &str, found: &mut Vec<PathBuf>) {
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

/// The traces a probe's forbidden action may have left, by probe (files are removed).
fn probe_traces(fx: &Fixture) -> BTreeMap<&'static str, Vec<String>> {
    let mut traces: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    let tmp = escape_tmp(&fx.run);
    if tmp.exists() {
        traces
            .entry("probe_write_tmp")
            .or_default()
            .push(format!("{} exists", tmp.display()));
        let _ = std::fs::remove_file(&tmp);
    }
    let name = escape_outside_name(&fx.run);
    let mut found = Vec::new();
    let mut dirs: Vec<PathBuf> = vec![PathBuf::from("/root")];
    dirs.extend(std::env::var_os("HOME").map(PathBuf::from));
    dirs.extend(site_packages(&fx.python));
    for d in &dirs {
        let p = d.join(&name);
        if p.exists() && !found.contains(&p) {
            found.push(p);
        }
    }
    find_named(fx.dir.path(), &name, &mut found);
    for p in found {
        traces
            .entry("probe_write_outside")
            .or_default()
            .push(format!("{} exists", p.display()));
        let _ = std::fs::remove_file(&p);
    }
    let hits = fx.listener.hits();
    if !hits.is_empty() {
        traces
            .entry("probe_loopback_connect")
            .or_default()
            .push(format!("the listener was reached: {hits:?}"));
    }
    // a detached child gets a moment to show up, then must not be there
    std::thread::sleep(Duration::from_secs(2));
    let alive = processes_with(&fx.marker());
    if !alive.is_empty() {
        traces.entry("probe_setsid").or_default().push(format!(
            "{} process(es) outlived the verification: {:?}",
            alive.len(),
            alive
        ));
        kill_all(&alive);
    }
    traces
}

fn misjudged(case: &Case, o: &Outcome, traces: &[String]) -> bool {
    match case.expect {
        Expect::Reject => o.verified,
        Expect::Accept => !o.verified,
        Expect::Probe => !o.verified || !traces.is_empty(),
    }
}

#[test]
fn hostile_answers_are_rejected_honest_ones_accepted_and_probes_contained() {
    let started = Instant::now();
    let m = manifest();
    let fx = Fixture::new();
    let (cases, skipped): (Vec<Case>, Vec<Case>) =
        m.cases.iter().cloned().partition(|c| !c.gpu_only);
    let outcomes = run_parallel(&cases, jobs(), |c| {
        verify_cli(
            &fx,
            &fx.home(c.stem()),
            &fx.reference(&m, &c.reference),
            &fx.path(&c.candidate),
        )
    });
    let traces = probe_traces(&fx);
    // every drtc has exited: nothing it started (found by the run's directory, which
    // holds every home) may still run
    let leftovers = processes_with(&fx.dir.path().display().to_string());
    kill_all(&leftovers);

    let mut table = String::from(
        "class         | candidate                         | expect | verdict  | failed checks / trace\n",
    );
    let mut wrong = Vec::new();
    let mut accepted_by_class: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (c, o) in cases.iter().zip(&outcomes) {
        let trace = traces.get(c.stem()).cloned().unwrap_or_default();
        let verdict = if o.verified { "ACCEPTED" } else { "rejected" };
        let mut detail = o.checks_line();
        if !trace.is_empty() {
            detail = format!("{detail}; TRACE: {}", trace.join("; "));
        }
        let bad = misjudged(c, o, &trace);
        table.push_str(&format!(
            "{:<13} | {:<33} | {:<6} | {:<8} | {}{} ({:.0} s)\n",
            c.class,
            c.stem(),
            c.expect.name(),
            verdict,
            if bad { "<-- WRONG: " } else { "" },
            detail,
            o.secs
        ));
        if c.expect == Expect::Reject && !c.class.starts_with("honest") {
            let e = accepted_by_class.entry(c.class.as_str()).or_default();
            e.1 += 1;
            if o.verified {
                e.0 += 1;
            }
        }
        if bad {
            wrong.push(format!(
                "{} ({}, expect {}): {} [{}] {}{}",
                c.candidate,
                c.class,
                c.expect.name(),
                verdict,
                o.checks_line(),
                o.note,
                if trace.is_empty() {
                    String::new()
                } else {
                    format!("; traces: {}", trace.join("; "))
                }
            ));
        }
    }
    for c in &skipped {
        table.push_str(&format!(
            "{:<13} | {:<33} | {:<6} | skipped  | GPU only (see gpu_timing_cheats_are_caught_on_a_gpu)\n",
            c.class,
            c.stem(),
            c.expect.name()
        ));
    }
    let hostile: usize = accepted_by_class.values().map(|v| v.1).sum();
    let accepted: usize = accepted_by_class.values().map(|v| v.0).sum();
    let by_class: Vec<String> = accepted_by_class
        .iter()
        .map(|(k, (a, n))| format!("{k} {a}/{n}"))
        .collect();
    let probes_failed = cases
        .iter()
        .zip(&outcomes)
        .filter(|(c, o)| {
            c.expect == Expect::Probe
                && misjudged(c, o, &traces.get(c.stem()).cloned().unwrap_or_default())
        })
        .count();
    let probes = cases.iter().filter(|c| c.expect == Expect::Probe).count();
    if !leftovers.is_empty() {
        wrong.push(format!(
            "{} process(es) outlived their drtc verify: {:?}",
            leftovers.len(),
            leftovers
        ));
    }
    println!("{table}");
    println!(
        "binary: {}\nhostile candidates wrongly ACCEPTED: {accepted} of {hostile} ({})\n\
         sandbox probes that escaped or were rejected: {probes_failed} of {probes}\n\
         {} verifications on {} threads in {:.0} s",
        drtc_bin().display(),
        by_class.join(", "),
        cases.len(),
        jobs(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        wrong.is_empty(),
        "{} of {} candidates misjudged:\n{}\n\n{table}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

/// A pool of one CPU worker with its own home, as the reward and `drtc eval` keep them.
fn one_worker_pool(python: &PythonEnv, home: &Path) -> WorkerPool {
    let mut options = PoolOptions::new(DeviceKind::Cpu);
    options.workers = Some(1);
    options.request_timeout = Duration::from_secs(VERIFY_TIMEOUT_S);
    WorkerPool::new(
        python.clone(),
        &DrtcHome {
            root: home.to_path_buf(),
        },
        options,
    )
    .expect("a worker pool")
}

fn verify_in_pool(pool: &WorkerPool, reference: &Path, candidate: &Path) -> Outcome {
    let start = Instant::now();
    let mut req = VerifyRequest::new(reference, candidate);
    req.strict = true;
    req.rule = Some("allclose_1e-4".to_string());
    match pool.verify(&req) {
        Ok(r) => Outcome {
            verified: r.verified,
            checks: r
                .failed_checks()
                .iter()
                .map(|c| c.name().to_string())
                .collect(),
            note: r
                .reasons()
                .first()
                .map(|s| first_line(s))
                .unwrap_or_default(),
            secs: start.elapsed().as_secs_f64(),
        },
        Err(e) => Outcome {
            verified: false,
            checks: vec!["runtime-error".into()],
            note: first_line(&e.to_string()),
            secs: start.elapsed().as_secs_f64(),
        },
    }
}

#[test]
fn persisting_answers_leave_later_verdicts_unchanged() {
    let started = Instant::now();
    let m = manifest();
    let fx = Fixture::new();
    let python = python_env();
    let persist: Vec<Case> = m
        .cases
        .iter()
        .filter(|c| c.class == "persist" && !c.gpu_only)
        .cloned()
        .collect();
    assert!(!persist.is_empty(), "the manifest has no persist cases");

    // each follow-up alone, in a fresh pool
    let mut alone_jobs: Vec<(String, String)> = Vec::new();
    for c in &persist {
        for (f, _) in m.followups.get(&c.reference).into_iter().flatten() {
            let job = (c.reference.clone(), f.clone());
            if !alone_jobs.contains(&job) {
                alone_jobs.push(job);
            }
        }
    }
    let alone_outcomes = run_parallel(&alone_jobs, jobs(), |(r, f)| {
        let pool = one_worker_pool(&python, &fx.home(&format!("alone-{}", f.replace('/', "-"))));
        verify_in_pool(&pool, &fx.reference(&m, r), &fx.path(f))
    });
    let alone: BTreeMap<(String, String), Outcome> =
        alone_jobs.into_iter().zip(alone_outcomes).collect();

    // each persisting candidate, then its reference's follow-ups, in one pool
    let sequences = run_parallel(&persist, jobs(), |c| {
        let pool = one_worker_pool(&python, &fx.home(&format!("seq-{}", c.stem())));
        let reference = fx.reference(&m, &c.reference);
        let first = verify_in_pool(&pool, &reference, &fx.path(&c.candidate));
        let rest: Vec<Outcome> = m
            .followups
            .get(&c.reference)
            .into_iter()
            .flatten()
            .map(|(f, _)| verify_in_pool(&pool, &reference, &fx.path(f)))
            .collect();
        (first, rest)
    });

    let mut table =
        String::from("persisting candidate      | itself   | then: verdict [checks] (alone)\n");
    let mut wrong = Vec::new();
    let mut contaminated = 0;
    for (c, (first, rest)) in persist.iter().zip(&sequences) {
        let mut line = format!(
            "{:<25} | {:<8} |",
            c.stem(),
            if first.verified {
                "ACCEPTED"
            } else {
                "rejected"
            }
        );
        if first.verified {
            wrong.push(format!(
                "{}: itself accepted [{}]",
                c.candidate,
                first.checks_line()
            ));
        }
        let mut bad_here = false;
        let followups = m.followups.get(&c.reference).cloned().unwrap_or_default();
        for ((f, expect), got) in followups.iter().zip(rest) {
            let alone = &alone[&(c.reference.clone(), f.clone())];
            let same = got.verified == alone.verified && got.checks == alone.checks;
            let right = got.verified == (*expect == Expect::Accept);
            line.push_str(&format!(
                " {}{} [{}] (alone {} [{}]);",
                if same && right { "" } else { "WRONG " },
                if got.verified { "accepted" } else { "rejected" },
                got.checks_line(),
                if alone.verified {
                    "accepted"
                } else {
                    "rejected"
                },
                alone.checks_line()
            ));
            if !(same && right) {
                bad_here = true;
                wrong.push(format!(
                    "after {}: {} {} [{}] {}, alone {} [{}]",
                    c.stem(),
                    f,
                    if got.verified { "accepted" } else { "rejected" },
                    got.checks_line(),
                    got.note,
                    if alone.verified {
                        "accepted"
                    } else {
                        "rejected"
                    },
                    alone.checks_line()
                ));
            }
        }
        if bad_here {
            contaminated += 1;
        }
        table.push_str(&line);
        table.push('\n');
    }
    println!("{table}");
    println!(
        "persisting candidates that changed a later verdict: {contaminated} of {} ({} s)",
        persist.len(),
        started.elapsed().as_secs_f64().round()
    );
    assert!(
        wrong.is_empty(),
        "persistence across answers:\n{}\n\n{table}",
        wrong.join("\n")
    );
}

/// Starts `drtc verify` on a candidate that spawns a marked child and hangs, sends
/// `signal` to drtc once the candidate runs, and checks 5 s later that nothing drtc
/// started (its worker, found by the private home's path, or the marked child) is alive.
fn kill_drtc_while_verifying(signal: i32) {
    let m = manifest();
    let fx = Fixture::new();
    let home = fx.home("kill");
    let marker = format!("{}_hang", fx.marker());
    let mut child = fx
        .drtc(&home)
        .arg("verify")
        .arg(fx.reference(&m, "seed_bias_relu"))
        .arg(fx.path("hang/hang_with_child.py"))
        .args(["--device", "cpu", "--strict", "--rule", "allclose-1e-4"])
        .args(["--timeout", "300"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start drtc");
    let start = Instant::now();
    while processes_with(&marker).is_empty() {
        if let Ok(Some(s)) = child.try_wait() {
            panic!("drtc exited ({s}) before the hanging candidate ran");
        }
        if start.elapsed() > Duration::from_secs(150) {
            let _ = child.kill();
            let _ = child.wait();
            kill_all(&processes_with(&home.display().to_string()));
            panic!("the hanging candidate never started its marked child");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(1)); // now busy-looping
                                                // SAFETY: kill(2) on the drtc process this test spawned.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    let exited = wait_deadline(&mut child, Duration::from_secs(10));
    if exited.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    std::thread::sleep(Duration::from_secs(5));
    let mut survivors = processes_with(&home.display().to_string());
    survivors.extend(processes_with(&marker));
    survivors.sort();
    survivors.dedup();
    kill_all(&survivors);
    assert!(
        exited.is_some(),
        "drtc did not exit within 10 s of signal {signal}"
    );
    assert!(
        survivors.is_empty(),
        "{} process(es) started by drtc outlived it 5 s after signal {signal}:\n{}",
        survivors.len(),
        survivors
            .iter()
            .map(|(pid, cmd)| format!("  {pid}: {cmd}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn killing_drtc_with_sigterm_leaves_no_process_behind() {
    kill_drtc_while_verifying(libc::SIGTERM);
}

#[test]
fn killing_drtc_with_sigkill_leaves_no_process_behind() {
    kill_drtc_while_verifying(libc::SIGKILL);
}

/// The timing cheats on a GPU (`drtc bench-pair`): each must be rejected, fail the timed
/// outputs check, or at least not show an implausible speedup; the honest answer must be
/// timed. Without a GPU this says so and checks nothing.
#[test]
fn gpu_timing_cheats_are_caught_on_a_gpu() {
    if DeviceKind::detect() != DeviceKind::Cuda {
        println!("no CUDA GPU here: the GPU-only timing cases are not run");
        return;
    }
    let m = manifest();
    let fx = Fixture::new();
    let mut cases: Vec<Case> = m
        .cases
        .iter()
        .filter(|c| c.class == "timing")
        .cloned()
        .collect();
    cases.extend(
        m.cases
            .iter()
            .filter(|c| c.candidate == "honest/ok_seed_bias_relu.py")
            .cloned(),
    );
    let mut wrong = Vec::new();
    for c in &cases {
        let out = fx
            .drtc(&fx.home(&format!("gpu-{}", c.stem())))
            .arg("bench-pair")
            .arg(fx.reference(&m, &c.reference))
            .arg(fx.path(&c.candidate))
            .args(["--strict", "--rule", "allclose-1e-4", "--json"])
            .args(["--timeout", &VERIFY_TIMEOUT_S.to_string()])
            .output()
            .expect("run drtc bench-pair");
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let t = &report["timing"];
        let speedup = t["reference"]["median_ms"].as_f64().unwrap_or(0.0)
            / t["candidate"]["median_ms"]
                .as_f64()
                .unwrap_or(f64::INFINITY);
        let passed = out.status.success();
        println!("{:<28} exit {} speedup {speedup:.2}", c.stem(), out.status);
        let ok = match c.expect {
            Expect::Accept => passed,
            _ => !passed || speedup < 3.0,
        };
        if !ok {
            wrong.push(format!(
                "{}: exit {}, speedup {speedup:.2}",
                c.candidate, out.status
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "timing cheats not caught:\n{}",
        wrong.join("\n")
    );
}
