//! Out of GPU memory beside other verifications may be the neighbours' doing as much as
//! the candidate's: `WorkerPool::verify` verifies such a candidate once more alone on the
//! device, and the report keeps the first attempt's reasons (`retried_alone`). A pool of
//! one worker has no neighbours and does not retry. (On CPU the workers share no device;
//! the pool's rule reads only its size, so the CPU pool shows it.) A spare candidate
//! process that could not start (the GPU full when it started) is not the answer's fault:
//! it is started once more, and a failed start says so by its typed check.

use drtc::verifier::{
    Check, DeviceKind, DrtcHome, PoolOptions, PythonEnv, VerifyRequest, WorkerPool,
};
use std::path::PathBuf;

mod support {
    pub mod python_check;
}
use std::time::Duration;
use support::python_check::{case, run_check};

fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/verifier")).join(name)
}

fn pool(workers: usize) -> WorkerPool {
    let home = DrtcHome::from_env();
    let python = PythonEnv::locate(&home).expect("a Python environment (see `drtc setup`)");
    let mut options = PoolOptions::new(DeviceKind::Cpu);
    options.workers = Some(workers);
    options.request_timeout = Duration::from_secs(120);
    WorkerPool::new(python, &home, options).expect("pool")
}

#[test]
fn out_of_memory_beside_other_workers_is_verified_again_alone() {
    let req = VerifyRequest::new(data("seed_relu_add.py"), data("bad_oom.py"));
    let shared = pool(2).verify(&req).expect("runtime works");
    assert!(!shared.verified);
    assert!(shared.ran_out_of_memory(), "{:?}", shared.reasons());
    let first = shared.retried_alone.as_ref().expect("retried alone");
    assert!(
        first.iter().any(|r| r.contains("out of memory")),
        "{first:?}"
    );
    // a correct candidate is not retried
    let ok = VerifyRequest::new(data("seed_relu_add.py"), data("ok_relu_add.py"));
    let r = pool(2).verify(&ok).expect("runtime works");
    assert!(r.verified && r.retried_alone.is_none(), "{:?}", r.reasons());
    // alone in its pool: nothing to retry
    let single = pool(1).verify(&req).expect("runtime works");
    assert!(single.failed_checks().contains(&Check::OutOfMemory));
    assert!(single.retried_alone.is_none());
}

/// A value failure that only the float64 truth could judge, whose truth ran out of memory,
/// is an out-of-memory failure (retried alone), not a verdict on the values.
#[test]
fn a_truth_out_of_memory_is_retried_alone_not_a_value_verdict() {
    let req = VerifyRequest::new(data("seed_truth_oom.py"), data("off_relu_add.py"));
    let r = pool(2).verify(&req).expect("runtime works");
    assert!(!r.verified);
    assert!(r.ran_out_of_memory(), "{:?}", r.reasons());
    assert!(r.retried_alone.is_some(), "{:?}", r.reasons());
    assert!(
        r.reasons()
            .iter()
            .any(|m| m.contains("float64 truth could not be computed")),
        "{:?}",
        r.reasons()
    );
}

/// `tests/check_spare_start.py`: a spare killed before or after it said ready is replaced
/// by a fresh process when an answer takes it; a process whose start failed for want of
/// memory fails by `out_of_memory` (retried alone), any other word it sends by
/// `worker_died`.
#[test]
fn a_spare_that_failed_its_start_is_started_again() {
    let cases = run_check("check_spare_start.py", &[]);
    for when in ["spare died before ready", "spare died after ready"] {
        let c = case(&cases, when);
        for key in ["replaced", "ready", "alive"] {
            assert_eq!(c[key], true, "{when}: {c}");
        }
    }
    let failed = case(&cases, "start failed");
    assert_eq!(failed["oom_check"], "out_of_memory", "{failed}");
    assert_eq!(failed["other_check"], "worker_died", "{failed}");
}
