//! The verifier on a Ray cluster (`--ray local`: a cluster of two CPUs made for the run):
//! `drtc eval` over the replay server on CPU actors gives the local run's verdicts and
//! pass@k table, `--resume` skips what either wrote, an actor killed or hung mid-run is
//! replaced, its request retried, and the run completes with the same answers; Ctrl-C ends
//! the cluster job; `suite` and `synth` give the local rows and programs.

mod support {
    pub mod replay;
}

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use support::replay::{answer, ReplayServer, Reply, Rule};

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("ray_cluster")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn python() -> PathBuf {
    drtc::verifier::PythonEnv::locate(&drtc::verifier::DrtcHome::from_env())
        .expect("drtc's Python environment (run `drtc setup`)")
        .python
}

/// drtc with its own home (an empty response cache) and the usual Python.
fn drtc(home: &Path, args: &[String]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_drtc"));
    c.args(args)
        .env("DRTC_HOME", home)
        .env("DRTC_PYTHON", python())
        .env_remove("RAY_ADDRESS")
        .env_remove("DRTC_LLM_API_KEY")
        .env_remove("OPENAI_API_KEY");
    c
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Two seed tasks: mul+sigmoid (four answers: two correct, one PyTorch-only, one with a
/// syntax error) and abs (the server fails).
fn bench(dir: &Path) -> (PathBuf, ReplayServer) {
    let bench = dir.join("bench.jsonl");
    let a = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/llm/mul_sigmoid.py"
    ))
    .unwrap();
    let b = "import torch\n\n\ndef get_inputs():\n    return [\n        torch.randn([4, 8], dtype=torch.float32),\n    ]\n\n\ndef fused_operator(x):\n    tensor_0 = torch.abs(x)\n    return [tensor_0]\n";
    let lines: Vec<String> = [a.as_str(), b]
        .iter()
        .map(|p| serde_json::json!({"pytorch": p, "difficulty": 1}).to_string())
        .collect();
    std::fs::write(&bench, lines.join("\n") + "\n").unwrap();
    let server = ReplayServer::start(
        None,
        vec![
            Rule::new(
                "torch.sigmoid(tensor_0)",
                vec![Reply::Answers(vec![
                    answer("seed_ok.md"),
                    answer("seed_pytorch_only.md"),
                    answer("seed_ok.md"),
                    answer("seed_syntax.md"),
                ])],
            ),
            Rule::new("torch.abs(x)", vec![Reply::Status(500, None)]),
        ],
    );
    (bench, server)
}

fn eval_args(bench: &Path, url: &str, out: &Path, table: &Path, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "eval",
        bench.to_str().unwrap(),
        "--llm-url",
        url,
        "--llm-model",
        "m",
        "--samples",
        "4",
        "--mode",
        "whole",
        "--device",
        "cpu",
        "--retries",
        "0",
        "-o",
        out.to_str().unwrap(),
        "--markdown",
        table.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

/// Each task's samples as (verified, reason), by task name.
type Verdicts = Vec<(String, Vec<(bool, String)>)>;

fn verdicts(results: &Path) -> Verdicts {
    let mut rows: Verdicts = std::fs::read_to_string(results)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|r| {
            let samples = r["samples"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    (
                        s["verified"] == true,
                        s["reason"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect();
            (r["task"].as_str().unwrap().to_string(), samples)
        })
        .collect();
    rows.sort();
    rows
}

/// The markdown table without its timing lines (request and wall time differ by run).
fn table_without_times(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.contains(" time |"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The local run's verdicts and table, and the expected verdicts of the bench.
fn local_run(dir: &Path, bench: &Path, url: &str) -> (Verdicts, String) {
    let (out, table) = (dir.join("local.jsonl"), dir.join("local.md"));
    let o = drtc(
        &dir.join("home-local"),
        &eval_args(bench, url, &out, &table, &[]),
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let v = verdicts(&out);
    let mut verified: Vec<Vec<bool>> = v
        .iter()
        .map(|(_, s)| s.iter().map(|x| x.0).collect())
        .collect();
    verified.sort();
    assert_eq!(
        verified,
        vec![vec![false; 4], vec![true, false, true, false]],
        "{v:?}"
    );
    (v, table_without_times(&table))
}

#[test]
fn eval_on_ray_actors_matches_the_local_run_and_resumes() {
    let dir = scratch("eval");
    let (bench, server) = bench(&dir);
    let (local, local_table) = local_run(&dir, &bench, &server.url);
    let (out, table) = (dir.join("ray.jsonl"), dir.join("ray.md"));
    let args = eval_args(&bench, &server.url, &out, &table, &["--ray", "local"]);
    let home = dir.join("home-ray");
    let o = drtc(&home, &args).output().unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert_eq!(verdicts(&out), local, "{t}");
    assert_eq!(table_without_times(&table), local_table);
    assert!(local_table.contains("| pass@4 | 50.0% |"), "{local_table}");
    assert!(
        t.contains("ray: 2 cpu actors on a local cluster (ready in "),
        "{t}"
    );
    assert!(t.contains("actor failures: none"), "{t}");
    // resume through Ray: both tasks are done, nothing is asked or verified again
    let asked = server.requests().len();
    let more: Vec<String> = ["--resume", "--ray-actors", "1"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let o = drtc(&home, &[args.clone(), more].concat())
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert_eq!(server.requests().len(), asked);
    assert!(t.contains("resumed: 2 task(s)"), "{t}");
    assert!(t.contains("ray: 1 cpu actor on a local cluster"), "{t}");
    assert!(t.contains("); 0 requests in"), "{t}");
    assert_eq!(verdicts(&out), local);
}

/// Every process below `root`, with its command line.
fn descendants(root: u32) -> Vec<(u32, String)> {
    let mut parent_of = vec![];
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // the command name in parentheses may hold spaces: the fields start after it
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let ppid: u32 = rest.split_whitespace().nth(1).unwrap().parse().unwrap();
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        parent_of.push((pid, ppid, cmd));
    }
    let mut found = vec![];
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (pid, ppid, cmd) in &parent_of {
            if *ppid == p {
                found.push((*pid, cmd.clone()));
                frontier.push(*pid);
            }
        }
    }
    found
}

/// Runs the bench through Ray, sends `signal` to an actor while it runs a request, and
/// checks that the run completes with the local answers and the actor replaced for `why`.
fn actor_lost_mid_run(name: &str, signal: i32, why: &str) {
    let dir = scratch(name);
    let (bench, server) = bench(&dir);
    let (local, local_table) = local_run(&dir, &bench, &server.url);
    let (out, table) = (dir.join("ray.jsonl"), dir.join("ray.md"));
    let args = eval_args(&bench, &server.url, &out, &table, &["--ray", "local"]);
    let child = drtc(&dir.join("home-ray"), &args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // hit an actor while it runs a request: once its worker process is up
    let started = Instant::now();
    let hit = loop {
        assert!(
            started.elapsed() < Duration::from_secs(240),
            "no actor ran a request"
        );
        let procs = descendants(child.id());
        let busy = procs.iter().find(|(pid, cmd)| {
            cmd.starts_with("ray::VerifierActor")
                && descendants(*pid)
                    .iter()
                    .any(|(_, c)| c.contains("worker.py"))
        });
        if let Some((pid, _)) = busy {
            // SAFETY: plain syscall on a process this test's drtc started.
            unsafe { libc::kill(*pid as i32, signal) };
            break *pid;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let o = child.wait_with_output().unwrap();
    let t = text(&o);
    assert!(o.status.success(), "actor {hit}: {t}");
    assert_eq!(verdicts(&out), local, "{t}");
    assert_eq!(table_without_times(&table), local_table);
    assert!(t.contains("replaced 1 time"), "{t}");
    assert!(
        t.contains(&format!("actor failures: {why}: 1 (1 request retried")),
        "{t}"
    );
}

#[test]
fn an_actor_killed_mid_run_is_replaced_and_the_run_completes() {
    actor_lost_mid_run("kill", libc::SIGKILL, "actor died");
}

#[test]
fn a_hung_actor_is_replaced_and_the_run_completes() {
    // a stopped process answers nothing, as a wedged one or one on a lost node
    actor_lost_mid_run("hang", libc::SIGSTOP, "actor hung");
}

#[test]
fn ctrl_c_stops_the_whole_cluster_job() {
    let dir = scratch("interrupt");
    let (bench, _) = bench(&dir);
    // a server that keeps the run waiting, so it is interrupted mid-run
    let server = ReplayServer::start(
        None,
        vec![Rule::new(
            "torch",
            vec![Reply::Hang(Duration::from_secs(120))],
        )],
    );
    let (out, table) = (dir.join("ray.jsonl"), dir.join("ray.md"));
    let args = eval_args(&bench, &server.url, &out, &table, &["--ray", "local"]);
    let mut child = drtc(&dir.join("home-ray"), &args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let job = loop {
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "no actor started"
        );
        let procs = descendants(child.id());
        if procs
            .iter()
            .filter(|(_, c)| c.starts_with("ray::VerifierActor"))
            .count()
            == 2
        {
            break procs;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(job.iter().any(|(_, c)| c.contains("raylet")), "{job:?}");
    // SAFETY: plain syscall on the drtc this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert!(!status.success());
    // the bridge, the actors and the local cluster's processes all end
    let alive = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            !s.rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
        })
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left: Vec<&(u32, String)> = job.iter().filter(|(p, _)| alive(*p)).collect();
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "still running: {left:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A suite row without what differs by run (times).
fn suite_row(v: &Value) -> Value {
    let mut v = v.clone();
    // wall times differ from run to run (the verification's phases too)
    for k in ["compile_ms", "task_ms", "verification_phases"] {
        v.as_object_mut().unwrap().remove(k);
    }
    v
}

#[test]
fn suite_on_ray_actors_gives_the_local_rows() {
    let dir = scratch("suite");
    let tasks = dir.join("tasks");
    std::fs::create_dir_all(&tasks).unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/verifier");
    std::fs::copy(data.join("kb_linear_bn.py"), tasks.join("1_linear_bn.py")).unwrap();
    std::fs::copy(
        data.join("../llm/kb_scale_bias.py"),
        tasks.join("2_scale_bias.py"),
    )
    .unwrap();
    let run = |json: &Path, extra: &[&str]| {
        let mut args: Vec<String> = [
            "suite",
            tasks.to_str().unwrap(),
            "--device",
            "cpu",
            "--jobs",
            "2",
            "--json",
            json.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        let o = drtc(&dir.join("home"), &args).output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let mut rows: Vec<Value> = std::fs::read_to_string(json)
            .unwrap()
            .lines()
            .map(|l| suite_row(&serde_json::from_str(l).unwrap()))
            .collect();
        rows.sort_by_key(|r| r["task"].as_str().unwrap().to_string());
        (rows, text(&o))
    };
    let (local, _) = run(&dir.join("local.jsonl"), &[]);
    let (ray, t) = run(&dir.join("ray.jsonl"), &["--ray", "local"]);
    assert_eq!(ray, local);
    assert!(local.iter().all(|r| r["status"] == "verified"), "{local:?}");
    assert!(
        t.contains("ray: 2 cpu actors on a local cluster (ready in ")
            && t.contains("); 2 requests"),
        "{t}"
    );
}

#[test]
fn synth_on_ray_actors_writes_the_local_programs() {
    let dir = scratch("synth");
    let run = |out: &Path, extra: &[&str]| {
        let mut args: Vec<String> = [
            "synth",
            "--ops",
            "2",
            "--count",
            "12",
            "--chunk",
            "4",
            "--flops",
            "2^10..2^20",
            "-o",
            out.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        let o = drtc(&dir.join("home"), &args).output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
        (std::fs::read_to_string(out).unwrap(), text(&o))
    };
    let (local, _) = run(&dir.join("local.jsonl"), &[]);
    let (ray, t) = run(&dir.join("ray.jsonl"), &["--ray", "local", "--jobs", "2"]);
    assert_eq!(local.lines().count(), 12);
    assert_eq!(ray, local, "{t}");
    assert!(t.contains("3 chunks of 4 over 2 CPU actors"), "{t}");
    assert!(
        t.contains("ray: 2 cpu actors on a local cluster (ready in ")
            && t.contains("); 3 requests"),
        "{t}"
    );
}

#[test]
fn an_address_nobody_answers_at_is_an_error_at_once() {
    let dir = scratch("unreachable");
    let tasks = dir.join("tasks");
    std::fs::create_dir_all(&tasks).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/verifier/kb_linear_bn.py"),
        tasks.join("1_linear_bn.py"),
    )
    .unwrap();
    let started = Instant::now();
    let args: Vec<String> = [
        "suite",
        tasks.to_str().unwrap(),
        "--device",
        "cpu",
        "--ray",
        "127.0.0.1:1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = drtc(&dir.join("home"), &args).output().unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(3), "{t}");
    assert!(
        t.contains("cannot reach the Ray cluster `127.0.0.1:1`") && t.contains("nothing answers"),
        "{t}"
    );
    assert!(started.elapsed() < Duration::from_secs(60), "{t}");
}
