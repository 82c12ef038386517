//! The worker pool survives many consecutive candidates, some of which abort their own
//! (sandboxed) process or raise, without leaking processes or restarting a checker: the test counts its descendant processes before,
//! during and after. The default run takes 40 candidates; the full 200-candidate soak
//! (about a minute on an idle 2-core machine, more under load) runs with
//! `cargo test --test verifier_soak -- --ignored`.

use drtc::verifier::{
    Check, DeviceKind, DrtcHome, PoolOptions, PythonEnv, VerifyRequest, WorkerPool,
};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/verifier")).join(name)
}

/// Processes whose parent chain leads to this test process.
fn descendants() -> usize {
    let me = std::process::id();
    let mut parent = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc").expect("/proc") {
        let Ok(entry) = entry else { continue };
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...; comm may hold spaces, so split after the last ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let ppid: u32 = rest
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        parent.insert(pid, ppid);
    }
    parent
        .keys()
        .filter(|&&pid| {
            let mut p = pid;
            for _ in 0..64 {
                match parent.get(&p) {
                    Some(&pp) if pp == me => return true,
                    Some(&pp) if pp > 1 => p = pp,
                    _ => return false,
                }
            }
            false
        })
        .count()
}

#[test]
fn forty_candidates_with_crashes_leak_no_process() {
    soak(40);
}

#[test]
#[ignore = "slow: the full 200-candidate soak"]
fn two_hundred_candidates_with_crashes_leak_no_process() {
    soak(200);
}

fn soak(n: usize) {
    let before = descendants();
    let home = DrtcHome::from_env();
    let python = PythonEnv::locate(&home).expect("a Python environment (see `drtc setup`)");
    let mut options = PoolOptions::new(DeviceKind::Cpu);
    options.workers = Some(2);
    options.request_timeout = Duration::from_secs(60);
    let pool = WorkerPool::new(python, &home, options).expect("pool");

    // Every 10th candidate aborts its worker, every 10th raises, 2 in 10 are wrong.
    let kinds: Vec<&str> = (0..n)
        .map(|i| match i % 10 {
            9 => "bad_abort.py",
            4 => "bad_raise.py",
            2 | 7 => "bad_values.py",
            _ => "ok_relu_add.py",
        })
        .collect();
    let reqs: Vec<VerifyRequest> = kinds
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut r = VerifyRequest::new(data("seed_relu_add.py"), data(c));
            r.seed = i as u64;
            r
        })
        .collect();

    let stop = AtomicBool::new(false);
    let peak = AtomicUsize::new(0);
    let start = Instant::now();
    let reports = std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                peak.fetch_max(descendants(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let r = pool.verify_all(&reqs);
        stop.store(true, Ordering::Relaxed);
        r
    });
    let elapsed = start.elapsed();
    let during = descendants();

    let mut wrong = Vec::new();
    for (i, (kind, r)) in kinds.iter().zip(&reports).enumerate() {
        let r = r.as_ref().expect("runtime works");
        let want = match *kind {
            "bad_abort.py" => Some(Check::WorkerDied),
            "bad_raise.py" => Some(Check::Crash),
            "bad_values.py" => Some(Check::Values),
            _ => None,
        };
        let ok = match want {
            None => r.verified,
            Some(c) => !r.verified && r.failed_checks() == [c],
        };
        if !ok {
            wrong.push(format!("#{i} {kind}: {:?}", r.reasons()));
        }
    }
    assert!(wrong.is_empty(), "misjudged:\n{}", wrong.join("\n"));
    assert_eq!(pool.requests(), n);
    // an untrusted answer aborts only its own sandboxed process: the checker keeps serving
    assert_eq!(pool.restarts(), 0, "an abort restarted a checker");
    // Each worker keeps one spare candidate process ready: its keeper, the namespace's
    // init and the runner (two without a PID namespace). A request adds the answer's own
    // three, and a worker may briefly run a helper (Triton asks `ldconfig` for libcuda).
    const PER_CANDIDATE: usize = 3;
    let workers = pool.worker_pids().len();
    assert!(
        during >= before + workers && during <= before + workers * (1 + PER_CANDIDATE),
        "only the live workers and their spares: {during} processes, {before} before, \
         {workers} workers"
    );
    let peak = peak.load(Ordering::Relaxed);
    assert!(
        peak <= before + pool.size() * (2 + 2 * PER_CANDIDATE),
        "peak {peak} processes"
    );
    drop(pool);
    let after = descendants();
    eprintln!(
        "soak: {n} candidates in {:.1} s; descendants before {before}, peak {peak}, \
         after the run {during}, after drop {after}",
        elapsed.as_secs_f64()
    );
    assert_eq!(after, before, "no process outlives the pool");
}
