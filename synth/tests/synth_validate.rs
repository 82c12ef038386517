//! Validation of synthesized programs (`synth::validate`): the meta run plus the interval
//! proof accepts what a full run accepts and rejects wrong code, the proof rejects a graph
//! that may overflow without running it, the budget picks the method, one worker serves
//! many batches, and a worker that dies or cannot start is an error that names the program
//! and carries the worker's stderr.

use drtc_cpsat::CpSat;
use drtc_ir::text::parse;
use drtc_synth::*;

fn programs(ops: usize, count: usize, seed: u64) -> Vec<SynthProgram> {
    let cp = CpSat::load().expect("libortools.so.9 must be installed (drtc setup)");
    let mut o = SynthOptions::default().with_flops(1 << 10, 1 << 20);
    o.ops = ops;
    o.op_set = LIST_A.iter().chain(LIST_B).copied().collect();
    let tick = |_: &Outcome| {};
    let idx: Vec<usize> = (0..count).collect();
    synthesize_indices(&cp, &o, seed, count, &idx, 0, false, &tick)
        .into_iter()
        .filter_map(|o| o.result.ok())
        .collect()
}

/// A program made from IR text, emitted as the synthesizer emits.
fn from_ir(text: &str) -> SynthProgram {
    let graph = parse(text).expect("IR parses");
    let python = emit_seed(&graph).expect("emits");
    SynthProgram {
        index: 7,
        seed: 0,
        ops: graph.body().iter().map(|&n| graph.node(n).op).collect(),
        flops: graph.flops(),
        graph,
        python,
        guards: 0,
        hash: 0,
        validation: None,
    }
}

fn names(p: &SynthProgram) -> String {
    p.ops.iter().map(|o| o.name()).collect::<Vec<_>>().join(",")
}

#[test]
fn meta_validation_agrees_with_full_runs() {
    let progs = programs(3, 24, 5);
    assert!(progs.len() >= 22, "{} programs", progs.len());
    let mut v = Validator::new(&default_python(), Device::Cpu, 2);
    let meta: Vec<(&SynthProgram, Method)> = progs.iter().map(|p| (p, Method::Meta)).collect();
    let run: Vec<(&SynthProgram, Method)> = progs
        .iter()
        .map(|p| (p, Method::Run(Device::Cpu)))
        .collect();
    // one worker, two batches
    let by_meta = v.check(&meta).expect("validation runs");
    let by_run = v.check(&run).expect("validation runs");
    for ((p, m), r) in progs.iter().zip(&by_meta).zip(&by_run) {
        assert_eq!(m.index, p.index);
        assert_eq!(m.method, Method::Meta);
        assert_eq!(r.method, Method::Run(Device::Cpu));
        assert_eq!(m.rejection, None, "{}: {:?}", names(p), m.rejection);
        assert_eq!(r.rejection, None, "{}: {:?}", names(p), r.rejection);
    }
}

#[test]
fn meta_validation_rejects_code_that_disagrees_with_the_ir() {
    let p = from_ir("graph @p(%x: f32[4, 8]) {\n  %0 = relu(%x) : f32[4, 8]\n  return %0\n}\n");
    let ret = p.python.rfind("return [").expect("a return");
    let line_end = ret + p.python[ret..].find('\n').unwrap_or(p.python.len() - ret);
    let returned = p.python[ret + "return [".len()..line_end].trim_end_matches(']');
    let variant = |expr: &str| {
        let mut q = p.clone();
        q.python = format!(
            "{}return [{expr}]{}",
            &p.python[..ret],
            &p.python[line_end..]
        );
        q
    };
    let wrong_shape = variant(&format!("{returned}.unsqueeze(0)"));
    let wrong_dtype = variant(&format!("{returned}.double()"));
    let bad_call = variant(&format!("torch.matmul({returned}, {returned})"));
    let mut v = Validator::new(&default_python(), Device::Cpu, 1);
    let jobs = [
        (&p, Method::Meta),
        (&wrong_shape, Method::Meta),
        (&wrong_dtype, Method::Meta),
        (&bad_call, Method::Meta),
    ];
    let out = v.check(&jobs).expect("validation runs");
    assert_eq!(out[0].rejection, None, "{}", p.python);
    let why = |i: usize| out[i].rejection.clone().unwrap_or_default();
    assert!(why(1).starts_with("shape mismatch"), "{}", why(1));
    assert!(why(2).starts_with("dtype mismatch"), "{}", why(2));
    assert!(why(3).starts_with("error: RuntimeError"), "{}", why(3));
}

#[test]
fn the_interval_proof_rejects_what_may_overflow_without_running_it() {
    // exp of exp of randn: up to exp(e^10), far beyond f32
    let p = from_ir(
        "graph @p(%x: f32[4]) {\n  %0 = exp(%x) : f32[4]\n  %1 = exp(%0) : f32[4]\n  return %1\n}\n",
    );
    let why = interval_proof(&p).expect("not provable");
    assert!(
        why.contains("not proved finite") && why.contains("exp"),
        "{why}"
    );
    // no Python is started for it: a validator whose Python does not exist still answers
    let mut v = Validator::new("/nonexistent/python", Device::Cpu, 1);
    let out = v.check(&[(&p, Method::Meta)]).expect("answered in Rust");
    assert_eq!(out[0].rejection.as_deref(), Some(why.as_str()));
    // a full run does start it, and says so
    let err = v.check(&[(&p, Method::Run(Device::Cpu))]).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/python"), "{err}");
}

#[test]
fn the_budget_picks_the_method() {
    let p = from_ir("graph @p(%x: f32[64, 64]) {\n  %0 = relu(%x) : f32[64, 64]\n  return %0\n}\n");
    assert_eq!(total_elements(&p), 2 * 64 * 64);
    assert_eq!(
        choose(&p, Device::Cpu, 8192, 1 << 20),
        Method::Run(Device::Cpu)
    );
    assert_eq!(choose(&p, Device::Cpu, 8191, 1 << 20), Method::Meta);
    assert_eq!(choose(&p, Device::Cpu, 8192, p.flops - 1), Method::Meta);
}

#[test]
fn a_worker_that_dies_is_an_error_naming_the_program() {
    let ok = from_ir("graph @p(%x: f32[4]) {\n  %0 = relu(%x) : f32[4]\n  return %0\n}\n");
    let mut dying = ok.clone();
    dying.index = 3;
    dying.python = dying.python.replace(
        "def fused_operator(",
        "import os, sys\nprint('about to die', file=sys.stderr, flush=True)\n\n\ndef fused_operator(",
    );
    dying.python = dying.python.replacen(
        "    tensor_1 = ",
        "    os.kill(os.getpid(), 9)\n    tensor_1 = ",
        1,
    );
    assert!(dying.python.contains("os.kill"), "{}", dying.python);
    let mut v = Validator::new(&default_python(), Device::Cpu, 1);
    let err = v
        .check(&[
            (&ok, Method::Run(Device::Cpu)),
            (&dying, Method::Run(Device::Cpu)),
        ])
        .unwrap_err()
        .to_string();
    assert!(err.contains("program 3 (relu;"), "{err}");
    assert!(err.contains("SIGKILL"), "{err}");
    assert!(err.contains("method run-cpu"), "{err}");
    assert!(err.contains("about to die"), "{err}");
    // the next batch gets a new worker
    let again = v
        .check(&[(&ok, Method::Run(Device::Cpu))])
        .expect("restarted");
    assert_eq!(again[0].rejection, None);
}

#[test]
fn a_python_without_torch_is_an_error_with_its_stderr() {
    let dir = tempfile::tempdir().expect("tempdir");
    let venv = dir.path().join("bare");
    let made = std::process::Command::new(default_python())
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .expect("python -m venv");
    assert!(made.success());
    let python = venv.join("bin/python").display().to_string();
    let p = from_ir("graph @p(%x: f32[4]) {\n  %0 = relu(%x) : f32[4]\n  return %0\n}\n");
    let err = Validator::new(&python, Device::Cpu, 1)
        .check(&[(&p, Method::Meta)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("did not start"), "{err}");
    assert!(err.contains("No module named 'torch'"), "{err}");
}
