//! The synthesizer honours its FLOP floor (ops without FLOPs are never drawn alone) and
//! its ops' domains (denominators never come from a tensor whose range crosses zero;
//! `exp` arguments are bounded; every program passes the range analysis).

use drtc_cpsat::CpSat;
use drtc_ir::range::{value_ranges, violations, MIN_MAGNITUDE};
use drtc_ir::{Attr, Graph, Op};
use drtc_synth::select::op_sequences;
use drtc_synth::soundness::{input_range, GUARD_EPS};
use drtc_synth::*;
use rand::SeedableRng;

fn solver() -> CpSat {
    CpSat::load().expect("libortools.so.9 must be installed (drtc setup)")
}

fn opts(ops: usize) -> SynthOptions {
    let mut o = SynthOptions::default().with_flops(100_000, 20_000_000);
    o.ops = ops;
    o
}

#[test]
fn a_flop_floor_excludes_exactly_the_ops_without_flops() {
    let f = flop_floor(&opts(1)).expect("a positive minimum is a floor");
    assert_eq!(
        f.excluded,
        vec![Op::Transpose, Op::Triu, Op::Tril, Op::Cat, Op::Stack]
    );
    assert_eq!(f.carriers.len() + f.excluded.len(), LIST_A.len());
    let mut zero = opts(1);
    zero.flops.0 = 0;
    assert_eq!(flop_floor(&zero), None);
}

#[test]
fn draws_under_a_floor_always_hold_an_op_with_flops() {
    let f = flop_floor(&opts(1)).unwrap();
    let carriers = Some(f.carriers.as_slice());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    // a set that is mostly layout ops, to make all-layout draws likely without the floor
    let set = [Op::Transpose, Op::Cat, Op::Flip, Op::Stack, Op::Relu];
    let c = Some(&[Op::Relu][..]);
    for (ops, sel) in [
        (1, Selection::Uniform),
        (2, Selection::Uniform),
        (3, Selection::Uniform),
        (1, Selection::Coverage),
        (2, Selection::Coverage),
        (4, Selection::Coverage),
    ] {
        let seqs = op_sequences(&set, ops, 200, sel, c, &mut rng);
        assert_eq!(seqs.len(), 200);
        for s in &seqs {
            assert_eq!(s.len(), ops);
            assert!(s.contains(&Op::Relu), "{sel:?} {ops}: {s:?}");
        }
    }
    // one-op coverage cycles through the carriers of list A only
    let one = op_sequences(LIST_A, 1, 112, Selection::Coverage, carriers, &mut rng);
    let seen: std::collections::HashSet<Op> = one.iter().map(|s| s[0]).collect();
    assert_eq!(seen.len(), f.carriers.len());
    assert!(f.excluded.iter().all(|op| !seen.contains(op)));
}

#[test]
fn one_op_programs_under_a_floor_are_all_made() {
    // the reproduction: 120 one-op programs with FLOPs 1e5..2e7 (before, 11 drew
    // layout ops and failed)
    let cp = solver();
    let o = opts(1);
    let tick = |_: &Outcome| {};
    let idx: Vec<usize> = (0..120).collect();
    let outs = synthesize_indices(&cp, &o, 0, 120, &idx, 0, false, &tick);
    let failed: Vec<String> = outs
        .iter()
        .filter_map(|o| o.result.as_ref().err().map(|e| format!("{:?}: {e}", o.ops)))
        .collect();
    assert!(
        !failed.iter().any(|f| f.contains("no op has FLOPs")),
        "{failed:?}"
    );
    for out in &outs {
        if let Ok(p) = &out.result {
            assert!(p.flops >= 100_000 >> o.flop_halvings, "{}", p.flops);
        }
    }
}

/// The producer of every `div` denominator, and the denominator's range.
fn denominators(g: &Graph) -> Vec<(Option<Op>, drtc_ir::range::Interval)> {
    let r = value_ranges(g, input_range());
    g.body()
        .iter()
        .map(|&n| g.node(n))
        .filter(|n| n.op == Op::Div)
        .map(|n| {
            let d = n.inputs[1];
            (g.producer(d).map(|p| g.node(p).op), r[d.index()])
        })
        .collect()
}

#[test]
fn denominators_never_come_from_a_tensor_whose_range_crosses_zero() {
    let cp = solver();
    let o = opts(3);
    let mut guarded = 0;
    let mut wired = 0;
    let seqs: Vec<Vec<Op>> = vec![
        vec![Op::Relu, Op::Div],
        vec![Op::Selu, Op::Div],
        vec![Op::Clamp, Op::Div],
        vec![Op::Triu, Op::Div],
        vec![Op::Hardsigmoid, Op::Div],
        vec![Op::Matmul, Op::Div],
        vec![Op::Div, Op::Div, Op::Div],
        vec![Op::Exp2, Op::Exp2, Op::Div],
        vec![Op::Sigmoid, Op::Sigmoid, Op::Div],
    ];
    for (i, ops) in seqs.iter().cycle().take(45).enumerate() {
        let out = synthesize(&cp, &o, ops, i, 1000 + i as u64);
        let p = out.result.unwrap_or_else(|e| panic!("{ops:?}: {e}"));
        for (producer, range) in denominators(&p.graph) {
            assert!(
                range.min_mag() >= MIN_MAGNITUDE,
                "{ops:?}: a denominator from {producer:?} lies in {range}"
            );
            if producer == Some(Op::Clamp) {
                guarded += 1;
            } else {
                wired += 1;
            }
        }
        assert_eq!(violations(&p.graph, input_range()), vec![], "{ops:?}");
    }
    // both ways are used: guards for raw inputs and zero-crossing producers, direct
    // wiring for producers already away from zero (exp2 of a randn input)
    assert!(guarded > 0 && wired > 0, "guarded {guarded}, wired {wired}");
}

#[test]
fn a_guard_is_what_a_kernel_author_writes() {
    let cp = solver();
    let out = synthesize(&cp, &opts(1), &[Op::Div], 0, 3);
    let p = out.result.unwrap();
    assert_eq!(p.guards, 2);
    let g = &p.graph;
    let ops: Vec<Op> = g.body().iter().map(|&n| g.node(n).op).collect();
    assert_eq!(ops, vec![Op::Abs, Op::Clamp, Op::Div]);
    let clamp = g.node(g.body()[1]);
    assert_eq!(clamp.attrs["min"], Attr::Float(GUARD_EPS));
    assert!(
        p.python.contains("torch.clamp(") && p.python.contains("torch.abs("),
        "{}",
        p.python
    );
}

#[test]
fn exponentials_are_never_wired_to_unbounded_tensors() {
    let cp = solver();
    let o = opts(3);
    for (i, ops) in [
        vec![Op::Exp2, Op::Exp2, Op::Exp2],
        vec![Op::Matmul, Op::Exp2],
        vec![Op::Sum, Op::Exp2],
        vec![Op::Tanh, Op::Exp2],
    ]
    .iter()
    .cycle()
    .take(16)
    .enumerate()
    {
        let out = synthesize(&cp, &o, ops, i, 77 + i as u64);
        let p = out.result.unwrap_or_else(|e| panic!("{ops:?}: {e}"));
        let g = &p.graph;
        for &n in g.body() {
            let node = g.node(n);
            if node.op != Op::Exp2 {
                continue;
            }
            let from = g.producer(node.inputs[0]).map(|p| g.node(p).op);
            assert!(
                matches!(from, None | Some(Op::Tanh)),
                "{ops:?}: exp2 of {from:?}"
            );
        }
        assert_eq!(violations(g, input_range()), vec![], "{ops:?}");
    }
}

#[test]
fn every_synthesized_program_passes_the_range_analysis() {
    let cp = solver();
    let o = opts(5);
    let tick = |_: &Outcome| {};
    let idx: Vec<usize> = (0..40).collect();
    let outs = synthesize_indices(&cp, &o, 11, 40, &idx, 0, false, &tick);
    let mut made = 0;
    for out in &outs {
        let Ok(p) = &out.result else { continue };
        made += 1;
        assert_eq!(violations(&p.graph, input_range()), vec![], "{:?}", p.ops);
    }
    assert!(made >= 38, "{made} of 40");
}
