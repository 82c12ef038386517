//! The verifier against a suite of deliberately broken candidates (each must be rejected
//! for the right reason) and correct ones (which must pass), on CPU under Triton's
//! interpreter, run concurrently through one worker pool.

use drtc::verifier::{
    Check, DeviceKind, DrtcHome, PoolOptions, PythonEnv, VerifyReport, VerifyRequest, WorkerPool,
};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/verifier")).join(name)
}

fn pool(workers: usize, timeout: Duration) -> WorkerPool {
    let home = DrtcHome::from_env();
    let python = PythonEnv::locate(&home).expect("a Python environment (see `drtc setup`)");
    let mut options = PoolOptions::new(DeviceKind::Cpu);
    options.workers = Some(workers);
    options.request_timeout = timeout;
    WorkerPool::new(python, &home, options).expect("pool")
}

struct Case {
    reference: &'static str,
    candidate: &'static str,
    strict: bool,
    /// Run in the checker's own process, as drtc's generated modules are (else isolated).
    trusted: bool,
    /// The exact set of failed checks; empty = must verify.
    expect: &'static [Check],
}

const fn case(reference: &'static str, candidate: &'static str, expect: &'static [Check]) -> Case {
    Case {
        reference,
        candidate,
        strict: false,
        trusted: false,
        expect,
    }
}

/// A case run in the checker's own process (drtc's own modules).
const fn trusted(
    reference: &'static str,
    candidate: &'static str,
    expect: &'static [Check],
) -> Case {
    Case {
        reference,
        candidate,
        strict: false,
        trusted: true,
        expect,
    }
}

const SEED: &str = "seed_relu_add.py";
const KB: &str = "kb_linear_bn.py";

const CASES: &[Case] = &[
    // correct candidates
    case(SEED, "ok_relu_add.py", &[]),
    case(SEED, "ok_reordered.py", &[]),
    case(SEED, "ok_torch_only.py", &[]),
    case(SEED, "ok_imports_dynamo.py", &[]),
    case(KB, "kb_ok.py", &[]),
    // broken candidates
    case(SEED, "bad_values.py", &[Check::Values]),
    case(SEED, "bad_tolerance.py", &[Check::Values]),
    case(SEED, "bad_dtype.py", &[Check::Dtype]),
    case(SEED, "bad_shape.py", &[Check::Shape]),
    case(SEED, "bad_nan.py", &[Check::NanInf]),
    case(SEED, "bad_inf.py", &[Check::NanInf]),
    case(SEED, "bad_half_written.py", &[Check::NanInf]),
    case(SEED, "bad_empty.py", &[Check::NanInf]),
    case("seed_copy.py", "bad_return_input.py", &[Check::Alias]),
    case(SEED, "bad_mutate.py", &[Check::InputsModified]),
    case(SEED, "bad_pointer_cache.py", &[Check::Values]),
    case(SEED, "bad_replay.py", &[Check::Values]),
    case(SEED, "bad_hang.py", &[Check::Timeout]),
    case(SEED, "bad_abort.py", &[Check::WorkerDied]),
    case(SEED, "bad_raise.py", &[Check::Crash]),
    case(SEED, "bad_oom.py", &[Check::OutOfMemory]),
    // isolated, replacing the checker's functions changes nothing: its values are wrong
    case(SEED, "bad_tamper.py", &[Check::Values]),
    trusted(SEED, "bad_tamper.py", &[Check::Tampering]),
    // in the checker's process: torch._dynamo's own one-time wrap of torch.manual_seed is
    // not tampering; a look-alike wrapper is
    trusted(SEED, "ok_imports_dynamo.py", &[]),
    trusted(SEED, "bad_forged_seed.py", &[Check::Tampering]),
    trusted(SEED, "ok_relu_add.py", &[]),
    trusted(KB, "kb_ok.py", &[]),
    trusted(KB, "kb_bad_state.py", &[Check::State]),
    trusted(KB, "kb_graphs_ok.py", &[]),
    trusted(KB, "kb_bad_graphs_never_replay.py", &[Check::CudaGraphs]),
    case(KB, "kb_bad_state.py", &[Check::State]),
    case(KB, "kb_bad_state_dict.py", &[Check::StateDict]),
    // CUDA graphs (CPU stand-ins for a graph cache): keyed right, keyed on the input's
    // pointer only (a replay on moved parameters reads the NaN left in the old storage),
    // and never replayed (its graphs were not verified)
    case(KB, "kb_graphs_ok.py", &[]),
    case(
        KB,
        "kb_bad_graphs_input_key.py",
        &[Check::NanInf, Check::State],
    ),
    case(KB, "kb_bad_graphs_never_replay.py", &[Check::CudaGraphs]),
    Case {
        reference: SEED,
        candidate: "ok_torch_only.py",
        strict: true,
        trusted: false,
        expect: &[Check::Strict],
    },
    Case {
        reference: SEED,
        candidate: "ok_relu_add.py",
        strict: true,
        trusted: false,
        expect: &[],
    },
];

fn report_for<'a>(reports: &'a [VerifyReport], candidate: &str, strict: bool) -> &'a VerifyReport {
    let i = CASES
        .iter()
        .position(|c| c.candidate == candidate && c.strict == strict && !c.trusted)
        .expect("case exists");
    &reports[i]
}

#[test]
fn broken_candidates_fail_for_the_right_reason_and_correct_ones_pass() {
    let pool = pool(2, Duration::from_secs(25));
    let reqs: Vec<VerifyRequest> = CASES
        .iter()
        .map(|c| {
            let mut r = VerifyRequest::new(data(c.reference), data(c.candidate));
            r.strict = c.strict;
            r.trusted = c.trusted;
            r
        })
        .collect();
    let reports: Vec<VerifyReport> = pool
        .verify_all(&reqs)
        .into_iter()
        .map(|r| r.expect("the runtime itself works"))
        .collect();

    let mut wrong = Vec::new();
    for (c, r) in CASES.iter().zip(&reports) {
        let got: BTreeSet<&str> = r.failed_checks().iter().map(|k| k.name()).collect();
        let want: BTreeSet<&str> = c.expect.iter().map(|k| k.name()).collect();
        let verdict_ok = r.verified == c.expect.is_empty();
        if got != want || !verdict_ok {
            wrong.push(format!(
                "{} (strict={}, trusted={}): expected {:?}, got {:?}: {:?}",
                c.candidate,
                c.strict,
                c.trusted,
                want,
                got,
                r.reasons()
            ));
        }
        if c.expect.is_empty() && r.trials.len() < 5 {
            wrong.push(format!("{}: only {} trials", c.candidate, r.trials.len()));
        }
    }
    assert!(
        wrong.is_empty(),
        "misjudged candidates:\n{}",
        wrong.join("\n")
    );

    // Trials alternate fresh inputs and in-place refills of the same buffers.
    let ok = report_for(&reports, "ok_relu_add.py", false);
    let kinds: Vec<&str> = ok.trials.iter().map(|t| t.inputs.as_str()).collect();
    assert_eq!(kinds, ["fresh", "refill", "fresh", "refill", "fresh"]);
    let seeds: BTreeSet<u64> = ok.trials.iter().map(|t| t.seed).collect();
    assert_eq!(seeds.len(), 5, "every trial has its own seed");

    // Just above tolerance: fails the rel-norm rule while KernelBench's 1e-2 allclose passes.
    let tol = report_for(&reports, "bad_tolerance.py", false);
    for t in &tol.trials {
        let o = &t.outputs[0];
        let e = o.rel_err.expect("rel err");
        assert!((1e-3..3e-3).contains(&e), "rel err {e}");
        assert_eq!(o.allclose_1e2, Some(true));
        assert_eq!(o.allclose_1e4, Some(false));
    }
    // Reordered math differs in the last bits only.
    let (worst, a2, a4) = report_for(&reports, "ok_reordered.py", false).worst();
    assert!(worst.expect("measured") < 1e-6 && a2 && a4);

    // Pointer caching is caught by the in-place refills; replay by the second trial.
    let cache = report_for(&reports, "bad_pointer_cache.py", false);
    assert!(cache
        .failures
        .iter()
        .all(|f| f.inputs.as_deref() == Some("refill")));
    let replay = report_for(&reports, "bad_replay.py", false);
    assert!(replay.trials[0].passed && !replay.trials[1].passed);

    // Unwritten output memory reads as poison; the report says how poisoning was done.
    let half = report_for(&reports, "bad_half_written.py", false);
    assert!(
        half.failures[0].message.contains("93 NaN of 185"),
        "{:?}",
        half.failures[0]
    );
    assert!(half.poison.as_deref().unwrap_or("").contains("NaN"));

    // Crashes carry their cause.
    let abort = report_for(&reports, "bad_abort.py", false);
    assert!(
        abort.failures[0].message.contains("SIGABRT"),
        "{:?}",
        abort.failures
    );
    let raise = report_for(&reports, "bad_raise.py", false);
    assert!(raise.failures[0].message.contains("failed on purpose"));

    // BatchNorm running statistics are compared after each call.
    let state = report_for(&reports, "kb_bad_state.py", false);
    assert!(
        state.reasons()[0].contains("bn.running_mean"),
        "{:?}",
        state.reasons()
    );
    let kb = report_for(&reports, "kb_ok.py", false);
    assert!(kb
        .trials
        .iter()
        .all(|t| t.state.iter().any(|s| s.name == "bn.running_var" && s.ok)));
    // an untrusted KernelBench answer's re-drawn-parameters trial: its setup is timed apart
    let phases = kb.phases.as_ref().expect("the worker's phases");
    assert!(
        phases.redrawn_s > 0.0 && phases.total_s > phases.trials_s + phases.redrawn_s,
        "{phases:?}"
    );

    // Modules with CUDA graphs: the trials replay on refilled buffers, capture on new
    // ones, and run once more with the module's state moved to new storage.
    let graphs = report_for(&reports, "kb_graphs_ok.py", false);
    let kinds: Vec<(&str, Option<&str>)> = graphs
        .trials
        .iter()
        .map(|t| (t.inputs.as_str(), t.graph.as_deref()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("fresh", Some("capture")),
            ("refill", Some("replay")),
            ("fresh", Some("capture")),
            ("refill", Some("replay")),
            ("fresh", Some("capture")),
            ("moved", Some("capture")),
            // an untrusted KernelBench answer: one more trial with re-drawn parameters
            ("redrawn", Some("capture")),
        ]
    );
    let summary = graphs.cuda_graphs.as_ref().expect("a cuda_graphs report");
    assert_eq!(summary["used"], true, "{summary}");
    assert_eq!(summary["replays"], 2, "{summary}");
    let moved = report_for(&reports, "kb_bad_graphs_input_key.py", false);
    assert!(
        moved
            .failures
            .iter()
            .all(|f| f.inputs.as_deref() == Some("moved")),
        "{:?}",
        moved.failures
    );
    let never = report_for(&reports, "kb_bad_graphs_never_replay.py", false);
    assert!(
        never.reasons()[0].contains("no trial replayed a graph"),
        "{:?}",
        never.reasons()
    );
    assert!(
        kb.cuda_graphs.is_none(),
        "a module without graphs reports none"
    );

    // Strict mode names the forbidden calls.
    let strict = report_for(&reports, "ok_torch_only.py", true);
    assert!(
        strict.reasons()[0].contains("torch.relu"),
        "{:?}",
        strict.reasons()
    );

    // Out of memory is the candidate's failure, with the reason.
    let oom = report_for(&reports, "bad_oom.py", false);
    assert!(
        oom.failures[0]
            .message
            .starts_with("candidate ran out of memory: "),
        "{:?}",
        oom.failures
    );

    // Isolated hangs, aborts and out-of-memory errors end the candidate's own process,
    // not the checker; tampering in the checker's process (trusted) replaced its worker.
    // The pool still works.
    // A hung answer is the checker's own timeout (its deadline counts from the request,
    // spare's start included, inside this side's): the checker answers, nothing kills it.
    let hang = report_for(&reports, "bad_hang.py", false);
    assert!(
        hang.reasons()[0].contains("before the deadline"),
        "{:?}",
        hang.reasons()
    );
    let replaced: Vec<String> = CASES
        .iter()
        .zip(&reports)
        .filter(|(_, r)| r.reasons().iter().any(|m| m.contains("replaced")))
        .map(|(c, r)| format!("{} (trusted={}): {:?}", c.candidate, c.trusted, r.reasons()))
        .collect();
    assert!(
        (1..=2).contains(&pool.restarts()),
        "restarts {}; reports that replaced their worker: {replaced:#?}",
        pool.restarts()
    );
    let again = pool
        .verify(&VerifyRequest::new(data(SEED), data("ok_relu_add.py")))
        .unwrap();
    assert!(again.verified, "{:?}", again.reasons());
}

#[test]
fn a_hang_after_slow_set_up_is_the_checkers_timeout_and_keeps_its_worker() {
    // 12 s for the request: the checker's share is 9.6 s from its reading of it, and the
    // reference's import alone takes 4 s of that; a deadline counted from the candidate's
    // own step (9.6 s more) would outlive this side's and cost the worker.
    let pool = pool(1, Duration::from_secs(12));
    let hang = pool
        .verify(&VerifyRequest::new(
            data("seed_slow_import.py"),
            data("bad_hang.py"),
        ))
        .expect("the runtime itself works");
    assert_eq!(
        hang.failed_checks(),
        [Check::Timeout],
        "{:?}",
        hang.reasons()
    );
    assert!(
        hang.reasons()[0].contains("before the deadline"),
        "{:?}",
        hang.reasons()
    );
    assert_eq!(pool.restarts(), 0, "{:?}", hang.reasons());
    let next = pool
        .verify(&VerifyRequest::new(data(SEED), data("ok_relu_add.py")))
        .expect("the runtime itself works");
    assert!(next.verified, "{:?}", next.reasons());
    assert_eq!(pool.restarts(), 0);
}

#[test]
fn out_of_memory_fails_its_candidate_and_the_next_one_runs_in_a_fresh_worker() {
    let pool = pool(1, Duration::from_secs(60));
    // isolated: the candidate's own process ran out; the checker stays
    let isolated = pool
        .verify(&VerifyRequest::new(data(SEED), data("bad_oom.py")))
        .expect("the runtime itself works");
    assert_eq!(
        isolated.failed_checks(),
        [Check::OutOfMemory],
        "{:?}",
        isolated.reasons()
    );
    assert_eq!(pool.restarts(), 0);
    assert_eq!(pool.worker_pids().len(), 1);
    // in the checker's process (drtc's own modules): the worker is replaced
    let oom = pool
        .verify(&VerifyRequest::generated(data(SEED), data("bad_oom.py")))
        .expect("the runtime itself works");
    assert!(!oom.verified);
    assert_eq!(
        oom.failed_checks(),
        [Check::OutOfMemory],
        "{:?}",
        oom.reasons()
    );
    assert!(
        oom.reasons()[0].contains("ran out of memory") && oom.reasons()[0].contains("allocate"),
        "{:?}",
        oom.reasons()
    );
    let first = pool.worker_pids();
    assert!(
        first.is_empty(),
        "the worker that ran out of memory is gone"
    );
    assert_eq!(pool.restarts(), 1);
    let next = pool
        .verify(&VerifyRequest::new(data(SEED), data("ok_relu_add.py")))
        .expect("the runtime itself works");
    assert!(next.verified, "{:?}", next.reasons());
    assert_eq!(pool.worker_pids().len(), 1);
    // Peak memory is a CUDA figure: on CPU the report says so instead of a number.
    let mem = next.memory.expect("a memory report");
    assert_eq!(mem.reference_peak_bytes, None);
    assert!(mem.note.unwrap_or_default().contains("CUDA only"));
}

/// Runs one of the worker's Python self-checks (`tests/check_*.py`) with drtc's Python;
/// returns its output after asserting that it exited 0.
fn worker_self_check(script: &str) -> String {
    let home = DrtcHome::from_env();
    let python = PythonEnv::locate(&home).expect("a Python environment (see `drtc setup`)");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(&python.python)
        .arg(root.join("tests").join(script))
        .arg(root.join("src/verifier/worker"))
        .output()
        .expect("python runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    text
}

#[test]
fn the_candidate_channel_moves_tensors_through_shared_memory_and_refuses_bad_frames() {
    let text = worker_self_check("check_wire.py");
    assert!(
        text.contains("22 tensors round-trip, 4 bad frames refused"),
        "{text}"
    );
}

#[test]
fn comparisons_in_bounded_pieces_equal_whole_tensor_comparisons() {
    let text = worker_self_check("check_comparison.py");
    assert!(text.contains("12 comparisons agree"), "{text}");
}
