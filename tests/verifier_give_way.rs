//! A request retried alone (after running out of memory beside other workers) waits for
//! the verifications in flight to end, not for their next trial: a verification paused
//! between trials keeps its inputs, models and cached blocks, so a retry that ran then
//! could run out of memory again. On CPU the pool's gate works as on a GPU, so a slow
//! candidate's verification (0.4 s a call, a few seconds in all) and a quick one verified
//! alone show it: the slow one ends first. (Timings still run between another worker's
//! trials: the gate's unit tests.)

use drtc::verifier::{DeviceKind, DrtcHome, PoolOptions, PythonEnv, VerifyRequest, WorkerPool};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/verifier")).join(name)
}

#[test]
fn a_request_alone_waits_for_the_verification_in_flight() {
    let home = DrtcHome::from_env();
    let python = PythonEnv::locate(&home).expect("a Python environment (see `drtc setup`)");
    let mut options = PoolOptions::new(DeviceKind::Cpu);
    options.workers = Some(2);
    options.request_timeout = Duration::from_secs(120);
    let pool = WorkerPool::new(python, &home, options).expect("pool");
    let quick = VerifyRequest::new(data("seed_relu_add.py"), data("ok_relu_add.py"));
    let slow = VerifyRequest::new(data("seed_relu_add.py"), data("slow_relu_add.py"));
    // both workers started (and the quick candidate's kernel compiled) before the clock
    for r in pool.verify_all(&[quick.clone(), quick.clone()]) {
        assert!(r.expect("runtime works").verified);
    }
    let started = Instant::now();
    let (slow_end, quick_end) = std::thread::scope(|s| {
        let slow_run = s.spawn(|| {
            let r = pool.verify(&slow).expect("runtime works");
            assert!(r.verified, "{:?}", r.reasons());
            assert!(r.trials.len() >= 3, "{} trials", r.trials.len());
            started.elapsed()
        });
        // the slow verification is in its trials by now (each call sleeps 0.4 s)
        std::thread::sleep(Duration::from_millis(1500));
        let lone = pool
            .verify_alone(&quick, Duration::from_secs(120))
            .expect("runtime works");
        assert!(lone.verified, "{:?}", lone.reasons());
        let quick_end = started.elapsed();
        (slow_run.join().expect("slow thread"), quick_end)
    });
    assert!(
        quick_end >= slow_end,
        "the request alone ran beside a verification in flight: it ended at {quick_end:?}, \
         the slow one at {slow_end:?}"
    );
}
