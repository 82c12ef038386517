//! End-to-end tests of the synthesizer with the real CP-SAT library: every op can be
//! placed, programs verify and carry the right FLOPs, runs are reproducible, coverage
//! modes cover, and programs run in PyTorch with finite outputs.

use drtc_cpsat::CpSat;
use drtc_ir::Op;
use drtc_synth::select::op_sequences;
use drtc_synth::*;
use rand::SeedableRng;
use std::collections::HashSet;

fn solver() -> CpSat {
    CpSat::load().expect("libortools.so.9 must be installed (drtc setup)")
}

fn small(ops: usize) -> SynthOptions {
    let mut o = SynthOptions::default().with_flops(1 << 10, 1 << 20);
    o.ops = ops;
    o
}

#[test]
fn every_op_of_lists_a_and_b_is_placed_alone() {
    let cp = solver();
    let mut o = small(1);
    o.flops.0 = 0; // layout ops have no FLOPs
    for &op in LIST_A.iter().chain(LIST_B) {
        let out = synthesize(&cp, &o, &[op], 0, 7);
        let p = out.result.unwrap_or_else(|e| panic!("{op}: {e}"));
        let body: Vec<Op> = p.graph.body().iter().map(|&n| p.graph.node(n).op).collect();
        // guards (abs, clamp) may come first; the op itself is the first node that is not one
        let first = body[p.guards];
        assert_eq!(first, op, "{op}: {body:?}");
        assert!(drtc_ir::verify(&p.graph).iter().all(|e| !e.is_error()));
        assert!(p.flops <= 1 << 20, "{op}: {} FLOPs", p.flops);
        assert!(p.python.contains("def fused_operator("), "{op}");
    }
}

#[test]
fn zero_flop_programs_are_reported_not_forced() {
    let cp = solver();
    let out = synthesize(&cp, &small(2), &[Op::Transpose, Op::Cat], 0, 1);
    assert_eq!(out.result.unwrap_err(), FailReason::NoFlops);
}

#[test]
fn flops_and_sizes_respect_the_bounds() {
    let cp = solver();
    let o = small(5);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let seqs = op_sequences(&o.op_set, 5, 30, Selection::Uniform, None, &mut rng);
    let mut made = 0;
    for (i, ops) in seqs.iter().enumerate() {
        let out = synthesize(&cp, &o, ops, i, i as u64);
        let Ok(p) = out.result else { continue };
        made += 1;
        assert!(p.flops <= o.flops.1);
        let g = &p.graph;
        let mut total = 0u64;
        for v in (0..g.num_values()).map(|i| drtc_ir::ValueId(i as u32)) {
            let t = g.ty(v);
            assert!(t.rank() <= o.max_rank);
            assert!(
                t.shape.iter().all(|&d| (1..=o.max_dim).contains(&d)),
                "{:?}",
                t.shape
            );
            total += t.numel();
        }
        assert!(total <= o.max_total_elements);
    }
    assert!(made >= 29, "only {made} of 30 five-op programs solved");
}

#[test]
fn runs_are_reproducible_and_seeds_differ() {
    let cp = solver();
    let o = small(5);
    let tick = |_: &Outcome| {};
    let a = synthesize_indices(&cp, &o, 11, 8, &(0..8).collect::<Vec<_>>(), 0, false, &tick);
    let b = synthesize_indices(&cp, &o, 11, 8, &(0..8).collect::<Vec<_>>(), 0, false, &tick);
    let c = synthesize_indices(&cp, &o, 12, 8, &(0..8).collect::<Vec<_>>(), 0, false, &tick);
    let text = |v: &[Outcome]| -> Vec<String> {
        v.iter()
            .map(|o| {
                o.result
                    .as_ref()
                    .map(|p| p.python.clone())
                    .unwrap_or_default()
            })
            .collect()
    };
    assert_eq!(text(&a), text(&b));
    assert_ne!(text(&a), text(&c));
    let hashes: HashSet<u64> = a
        .iter()
        .filter_map(|o| o.result.as_ref().ok())
        .map(|p| p.hash)
        .collect();
    assert_eq!(hashes.len(), a.iter().filter(|o| o.result.is_ok()).count());
}

#[test]
fn twenty_op_programs_are_made() {
    let cp = solver();
    let o = small(20);
    let tick = |_: &Outcome| {};
    let outs = synthesize_indices(&cp, &o, 5, 4, &[0, 1, 2, 3], 0, false, &tick);
    for out in &outs {
        let p = out.result.as_ref().expect("20-op program");
        assert_eq!(p.ops.len(), 20);
        let python_ops = p
            .python
            .lines()
            .filter(|l| l.starts_with("    tensor_") && !l.contains("randn"))
            .count();
        // one line per op, plus one per guard (`abs`, `clamp` in front of a denominator)
        assert_eq!(python_ops, 20 + p.guards);
    }
}

#[test]
fn coverage_modes_cover() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let ops = &LIST_A[..7];
    let one = op_sequences(ops, 1, 7, Selection::Coverage, None, &mut rng);
    assert_eq!(one.iter().map(|s| s[0]).collect::<HashSet<_>>().len(), 7);
    let two = op_sequences(ops, 2, 49, Selection::Coverage, None, &mut rng);
    assert_eq!(
        two.iter()
            .map(|s| (s[0], s[1]))
            .collect::<HashSet<_>>()
            .len(),
        49
    );
    let five = op_sequences(ops, 5, 70, Selection::Coverage, None, &mut rng);
    let mut counts = std::collections::HashMap::new();
    for op in five.iter().flatten() {
        *counts.entry(*op).or_insert(0) += 1;
    }
    assert!(counts.values().all(|&c| c == 50), "{counts:?}");
}

#[test]
fn programs_run_in_pytorch_with_finite_outputs() {
    let cp = solver();
    let o = small(3);
    let tick = |_: &Outcome| {};
    let outs = synthesize_indices(
        &cp,
        &o,
        21,
        12,
        &(0..12).collect::<Vec<_>>(),
        0,
        false,
        &tick,
    );
    let progs: Vec<&SynthProgram> = outs.iter().filter_map(|o| o.result.as_ref().ok()).collect();
    assert!(progs.len() >= 11);
    let verdicts = validate(&default_python(), Device::Cpu, 2, &progs).expect("python with torch");
    assert_eq!(verdicts.len(), progs.len());
    let errors: Vec<&Verdict> = verdicts
        .iter()
        .filter(|v| {
            v.rejection
                .as_deref()
                .is_some_and(|r| r.starts_with("error") || r.starts_with("shape"))
        })
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}
