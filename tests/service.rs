//! The verification service through the CLI: the commands that verify start it on first
//! use and find it on the next call (same process, same workers); `drtc service status`
//! and `stop` manage it; it exits when idle for its limit or when its home is deleted; a
//! client killed while its candidate hangs gets that candidate's processes killed, not
//! left to run to the deadline; `DRTC_SERVICE=off` uses workers of the command's own.

use drtc::verifier::{DrtcHome, PythonEnv};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/verifier")).join(name)
}

/// `drtc` with a private home and drtc's interpreter (one service per home).
fn drtc(home: &Path, idle_s: &str) -> Command {
    let python = PythonEnv::locate(&DrtcHome::from_env()).expect("drtc setup");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_drtc"));
    cmd.env("DRTC_HOME", home)
        .env("DRTC_PYTHON", &python.python)
        .env("DRTC_SERVICE_IDLE_S", idle_s)
        .env_remove("DRTC_SERVICE")
        .stdin(Stdio::null());
    cmd
}

fn ok(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{}\n{err}", o.status);
    String::from_utf8_lossy(&o.stdout).into_owned() + &err
}

fn verify(home: &Path, idle_s: &str, candidate: &str) -> Output {
    drtc(home, idle_s)
        .arg("verify")
        .arg(data("seed_relu_add.py"))
        .arg(data(candidate))
        .args(["--device", "cpu"])
        .output()
        .expect("run drtc verify")
}

/// The running services, as `drtc service status --json` lists them.
fn services(home: &Path) -> Vec<Value> {
    let o = drtc(home, "60")
        .args(["service", "status", "--json"])
        .output()
        .expect("drtc service status");
    ok(&o);
    serde_json::from_slice::<Vec<Value>>(&o.stdout).expect("JSON list")
}

/// Whether `pid` is a live process (a zombie counts as gone).
fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    done()
}

/// Processes whose command line names `needle` (drtc's home: services, workers, runners).
fn processes_with(needle: &str) -> Vec<u64> {
    let me = std::process::id() as u64;
    std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u64>().ok())
                .filter(|&p| p != me && alive(p))
                .filter(|p| {
                    std::fs::read(format!("/proc/{p}/cmdline"))
                        .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_second_command_finds_the_service_and_stop_ends_it_with_its_workers() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    assert!(verify(&home, "120", "ok_relu_add.py").status.success());
    let first = services(&home);
    assert_eq!(first.len(), 1, "{first:?}");
    let pid = first[0]["status"]["pid"].as_u64().unwrap();
    let workers: Vec<u64> = first[0]["status"]["worker_pids"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    assert_eq!(workers.len(), 1, "{first:?}");
    // a failing candidate is reported as such through the service (exit status 1)
    let bad = verify(&home, "120", "bad_values.py");
    assert_eq!(
        bad.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    let second = services(&home);
    assert_eq!(second.len(), 1, "{second:?}");
    assert_eq!(second[0]["status"]["pid"].as_u64(), Some(pid));
    assert_eq!(
        second[0]["status"]["worker_pids"].as_array().unwrap().len(),
        1
    );
    assert!(
        second[0]["status"]["requests"].as_u64().unwrap() >= 2,
        "{second:?}"
    );
    let said = ok(&drtc(&home, "60")
        .args(["service", "stop"])
        .output()
        .unwrap());
    assert!(said.contains(&format!("stopped service {pid}")), "{said}");
    assert!(
        wait_until(Duration::from_secs(20), || !alive(pid)
            && workers.iter().all(|&w| !alive(w))),
        "the service or its worker outlived `drtc service stop`"
    );
    assert!(services(&home).is_empty());
}

#[test]
fn an_idle_service_exits_and_so_does_one_whose_home_is_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    assert!(verify(&home, "2", "ok_relu_add.py").status.success());
    let pid = services(&home)
        .first()
        .and_then(|s| s["status"]["pid"].as_u64());
    if let Some(pid) = pid {
        assert!(
            wait_until(Duration::from_secs(20), || !alive(pid)),
            "an idle service outlived its 2 s limit"
        );
    }
    let home2 = dir.path().join("h2");
    assert!(verify(&home2, "600", "ok_relu_add.py").status.success());
    let pid2 = services(&home2)[0]["status"]["pid"].as_u64().unwrap();
    std::fs::remove_dir_all(&home2).unwrap();
    assert!(
        wait_until(Duration::from_secs(20), || !alive(pid2)),
        "a service outlived its deleted home"
    );
}

#[test]
fn a_killed_client_s_hanging_candidate_is_killed_and_the_service_stays() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    assert!(verify(&home, "120", "ok_relu_add.py").status.success());
    let service = services(&home)[0]["status"]["pid"].as_u64().unwrap();
    let mut client = drtc(&home, "120")
        .arg("verify")
        .arg(data("seed_relu_add.py"))
        .arg(data("bad_hang.py"))
        .args(["--device", "cpu", "--timeout", "300"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start drtc verify");
    let home_text = home.display().to_string();
    // the hanging candidate runs once a runner beside the worker exists
    let running = wait_until(Duration::from_secs(60), || {
        processes_with(&home_text).len() >= 3
    });
    std::thread::sleep(Duration::from_secs(2));
    client.kill().unwrap();
    client.wait().unwrap();
    assert!(running, "the hanging candidate never started");
    assert!(
        wait_until(Duration::from_secs(20), || processes_with(&home_text)
            == vec![service]),
        "left running after the client was killed: {:?} (service {service})",
        processes_with(&home_text)
    );
    let status = &services(&home)[0]["status"];
    assert!(status["restarts"].as_u64().unwrap() >= 1, "{status}");
    ok(&drtc(&home, "60")
        .args(["service", "stop"])
        .output()
        .unwrap());
}

#[test]
fn with_the_service_off_nothing_is_left_running() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let o = drtc(&home, "120")
        .env("DRTC_SERVICE", "off")
        .arg("verify")
        .arg(data("seed_relu_add.py"))
        .arg(data("ok_relu_add.py"))
        .args(["--device", "cpu"])
        .output()
        .unwrap();
    ok(&o);
    assert!(services(&home).is_empty());
    assert!(processes_with(&home.display().to_string()).is_empty());
}

/// The export frontend's server: the first program the native parser does not read starts
/// it, the next is exported by the same process (a forked child each), `drtc service status`
/// lists it, `stop` ends it; with `DRTC_SERVICE=off` no server starts.
#[test]
fn exports_share_one_warm_server_that_stop_ends() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let program = |name: &str| {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/export")).join(name)
    };
    let parse = |name: &str, service: Option<&str>| {
        let mut cmd = drtc(&home, "120");
        if let Some(s) = service {
            cmd.env("DRTC_SERVICE", s);
        }
        let o = cmd.arg("parse").arg(program(name)).output().unwrap();
        ok(&o);
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let exporters = || -> Vec<Value> {
        services(&home)
            .into_iter()
            .filter_map(|s| s.get("export_server").cloned())
            .collect()
    };
    // off: the helper runs in a process of its own, no server is left
    let alone = parse("branch_norm.py", Some("off"));
    assert!(exporters().is_empty());
    let graph = parse("branch_mlp.py", None);
    assert!(graph.contains("graph @"), "{graph}");
    let first = exporters();
    assert_eq!(first.len(), 1, "{first:?}");
    let pid = first[0]["pid"].as_u64().unwrap();
    // the second program through the same server gives the graph the helper gives alone
    // (the first was cached on disk by the run without a server: clear the cache)
    for e in std::fs::read_dir(home.join("export")).unwrap().flatten() {
        if e.file_name().to_string_lossy().starts_with("graph-") {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    assert_eq!(parse("branch_norm.py", None), alone);
    let second = exporters();
    assert_eq!(second[0]["pid"].as_u64(), Some(pid), "{second:?}");
    assert_eq!(second[0]["exports"].as_u64(), Some(2), "{second:?}");
    let o = drtc(&home, "60")
        .args(["service", "stop"])
        .output()
        .unwrap();
    assert!(ok(&o).contains(&format!("stopped export server {pid}")));
    assert!(wait_until(Duration::from_secs(10), || !alive(pid)));
    assert!(exporters().is_empty());
}

/// An export server whose forked processes could not use CUDA (a fork left unable to
/// initialize it) refuses every export, and the command exports in a process of its own:
/// the same graph. Here every process forked in the server's Python exits at once (a
/// `sitecustomize` on `PYTHONPATH`), as a GPU machine's would fail to initialize CUDA.
#[test]
fn a_server_whose_forks_cannot_use_cuda_refuses_and_the_command_exports_alone() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let site = dir.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(
        site.join("sitecustomize.py"),
        "import os\nos.register_at_fork(after_in_child=lambda: os._exit(1))\n",
    )
    .unwrap();
    let program = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/export/branch_mlp.py"
    ));
    let parse = |service: Option<&str>| {
        let mut cmd = drtc(&home, "120");
        cmd.env("PYTHONPATH", &site);
        if let Some(s) = service {
            cmd.env("DRTC_SERVICE", s);
        }
        let o = cmd.arg("parse").arg(&program).output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        ok(&o);
        // no cached graph: each parse exports again
        let _ = std::fs::remove_dir_all(home.join("export"));
        out
    };
    let alone = parse(Some("off"));
    assert!(alone.contains("graph @"), "{alone}");
    assert_eq!(parse(None), alone);
    let servers: Vec<Value> = services(&home)
        .into_iter()
        .filter_map(|s| s.get("export_server").cloned())
        .collect();
    assert_eq!(servers.len(), 1, "{servers:?}");
    assert!(
        servers[0]["refusing"]
            .as_str()
            .is_some_and(|r| r.contains("cannot use CUDA")),
        "{servers:?}"
    );
    assert_eq!(servers[0]["exports"].as_u64(), Some(0), "{servers:?}");
    let o = drtc(&home, "60")
        .args(["service", "stop"])
        .output()
        .unwrap();
    ok(&o);
}
