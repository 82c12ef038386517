//! The adversarial corpus (`tests/adversarial`: README.md, manifest.json) against the
//! verifier: every hostile candidate (a wrong answer that passes only by cheating) must be
//! rejected by `drtc verify REFERENCE CANDIDATE --device cpu --strict --rule
//! allclose-1e-4`, every honest one accepted, and every sandbox probe (a correct answer
//! that first tries a forbidden action and answers wrong if it worked) accepted with no
//! trace of the action left (probes run without `--strict`, whose reading of the source
//! would refuse them before the sandbox is tried). A cheat outside the strict class must
//! also fail a check at run time, not only strict mode's reading of its source. Candidates that try to persist are also run in one pool (one
//! worker) followed by honest answers, whose verdicts must be those they get alone. Killing
//! drtc (SIGTERM, SIGKILL) while a candidate hangs must leave no process behind.
//!
//! Each verification is its own `drtc` process with its own `DRTC_HOME` (a temporary
//! directory, so a candidate that edits the installed worker touches only its copy) and
//! `DRTC_PYTHON` pointing at drtc's interpreter; several run at once
//! (`DRTC_ADVERSARIAL_JOBS`, default 2). `DRTC_ADVERSARIAL_BIN` runs another drtc binary
//! (to measure an older build); the same-pool sequences always use this crate's runtime.
//! On a GPU machine, `DRTC_ADVERSARIAL_DEVICE=cuda` verifies the corpus there and
//! `DRTC_ADVERSARIAL_CORPUS` names a copy of `tests/adversarial`.
//! The summary table and the count of wrongly accepted candidates by class are printed
//! (`cargo test --test adversarial -- --nocapture`).

#[path = "adversarial/harness.rs"]
mod harness;

use drtc::driver::llm::parallel_map;
use drtc::verifier::{DeviceKind, DrtcHome, PoolOptions, PythonEnv, VerifyRequest, WorkerPool};
use harness::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

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
        // a cheat outside the strict class must also be caught at run time, not only by
        // strict mode's reading of its source
        Expect::Reject => {
            o.verified
                || (case.class != "strict"
                    && !case.class.starts_with("honest")
                    && o.checks.iter().all(|c| c == "strict_source"))
        }
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
    let outcomes = parallel_map(jobs(), &cases, |c| {
        verify_cli(
            &fx,
            &fx.home(c.stem()),
            &fx.reference(&m, &c.reference),
            &fx.path(&c.candidate),
            c.expect != Expect::Probe,
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
    let alone_outcomes = parallel_map(jobs(), &alone_jobs, |(r, f)| {
        let pool = one_worker_pool(&python, &fx.home(&format!("alone-{}", f.replace('/', "-"))));
        verify_in_pool(&pool, &fx.reference(&m, r), &fx.path(f))
    });
    let alone: BTreeMap<(String, String), Outcome> =
        alone_jobs.into_iter().zip(alone_outcomes).collect();

    // each persisting candidate, then its reference's follow-ups, in one pool
    let sequences = parallel_map(jobs(), &persist, |c| {
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
/// `pid_namespace: false` sets `DRTC_SANDBOX_PID_NAMESPACE=0`: the sandbox of a machine
/// whose device cannot start in a PID namespace (gVisor), held by the subreaper keeper.
fn kill_drtc_while_verifying(signal: i32, pid_namespace: bool) {
    let m = manifest();
    let fx = Fixture::new();
    let home = fx.home("kill");
    let marker = format!("{}_hang", fx.marker());
    let mut cmd = fx.drtc(&home);
    if !pid_namespace {
        cmd.env("DRTC_SANDBOX_PID_NAMESPACE", "0");
    }
    let mut child = cmd
        .arg("verify")
        .arg(fx.reference(&m, "seed_bias_relu"))
        .arg(fx.path("hang/hang_with_child.py"))
        .args(["--device", &device(), "--strict", "--rule", "allclose-1e-4"])
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
    kill_drtc_while_verifying(libc::SIGTERM, true);
}

#[test]
fn killing_drtc_with_sigkill_leaves_no_process_behind() {
    kill_drtc_while_verifying(libc::SIGKILL, true);
}

#[test]
fn without_a_pid_namespace_killing_drtc_leaves_no_process_behind() {
    kill_drtc_while_verifying(libc::SIGKILL, false);
}

/// Without a PID namespace, a detached (setsid, double-forked) child of the candidate dies
/// with the candidate's process: the keeper is its subreaper.
#[test]
fn without_a_pid_namespace_a_detached_child_dies_with_the_candidate() {
    let m = manifest();
    let fx = Fixture::new();
    let home = fx.home("subreaper");
    let out = fx
        .drtc(&home)
        .env("DRTC_SANDBOX_PID_NAMESPACE", "0")
        .arg("verify")
        .arg(fx.reference(&m, "seed_bias_relu"))
        .arg(fx.path("probes/probe_setsid.py"))
        .args(["--device", &device(), "--json"])
        .output()
        .expect("run drtc verify");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    std::thread::sleep(Duration::from_secs(2));
    let alive = processes_with(&fx.marker());
    kill_all(&alive);
    let tree = report["isolation"]["sandbox"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|l| l["mechanism"] == "process tree")
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(report["verified"], true, "{}", report["failures"]);
    assert_eq!(tree["held"], true, "{tree}");
    assert!(
        tree["detail"].as_str().unwrap_or("").contains("subreaper"),
        "{tree}"
    );
    assert!(alive.is_empty(), "outlived the verification: {alive:?}");
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
        println!(
            "{:<28} exit {} speedup {speedup:.2} flags {} {}",
            c.stem(),
            out.status,
            t["flags"],
            report["failures"][0]["message"]
                .as_str()
                .map(first_line)
                .unwrap_or_default()
        );
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
