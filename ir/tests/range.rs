//! Range analysis: interval bounds of values, op domains, and the finiteness check that
//! synthesized programs must pass.

use drtc_ir::op::domain::Domain;
use drtc_ir::range::{range_of, value_ranges, violations, Interval, RangeViolation, RANDN_BOUND};
use drtc_ir::text::parse;
use drtc_ir::{Op, ValueId};

fn randn() -> Interval {
    Interval::symmetric(RANDN_BOUND)
}

fn check(src: &str) -> Vec<RangeViolation> {
    violations(&parse(src).expect("parses"), randn())
}

#[test]
fn a_denominator_that_may_be_zero_is_a_domain_violation() {
    // relu and clamp(min=0) are exactly zero for half their inputs; a raw randn input
    // crosses zero too
    for den in [
        "%0 = relu(%y) : f32[4, 8]",
        "%0 = clamp(%y) {min = 0.0, max = none} : f32[4, 8]",
        "%0 = selu(%y) : f32[4, 8]",
        "%0 = neg(%y) : f32[4, 8]",
    ] {
        let src = format!(
            "graph @g(%x: f32[4, 8], %y: f32[4, 8]) {{\n  {den}\n  %1 = div(%x, %0) : f32[4, 8]\n  return %1\n}}\n"
        );
        let v = check(&src);
        assert!(
            v.iter().any(|e| matches!(
                e,
                RangeViolation::Domain {
                    op: Op::Div,
                    slot: 1,
                    domain: Domain::NonZero,
                    ..
                }
            )),
            "{den}: {v:?}"
        );
    }
}

#[test]
fn a_guarded_denominator_is_safe() {
    let src = "graph @g(%x: f32[4, 8], %y: f32[4, 8]) {
  %0 = abs(%y) : f32[4, 8]
  %1 = clamp(%0) {min = 0.001, max = none} : f32[4, 8]
  %2 = div(%x, %1) : f32[4, 8]
  return %2
}
";
    assert_eq!(check(src), vec![]);
    let g = parse(src).unwrap();
    let q = range_of(&g, ValueId(4), randn());
    assert_eq!(q, Interval::new(-10_000.0, 10_000.0));
}

#[test]
fn exp_of_a_large_sum_is_unbounded_but_exp_of_a_bounded_value_is_not() {
    // K = 4096: the matmul may reach 4096 * 100, and exp of that overflows f32
    let big = "graph @g(%a: f32[4, 4096], %b: f32[4096, 4]) {
  %0 = matmul(%a, %b) : f32[4, 4]
  %1 = exp(%0) : f32[4, 4]
  return %1
}
";
    let v = check(big);
    assert!(
        v.iter()
            .any(|e| matches!(e, RangeViolation::Domain { op: Op::Exp, .. })),
        "{v:?}"
    );
    assert!(
        v.iter()
            .any(|e| matches!(e, RangeViolation::Unbounded { op: Op::Exp, .. })),
        "{v:?}"
    );
    let small = "graph @g(%a: f32[4, 4096], %b: f32[4096, 4]) {
  %0 = matmul(%a, %b) : f32[4, 4]
  %1 = tanh(%0) : f32[4, 4]
  %2 = exp(%1) : f32[4, 4]
  %3 = exp2(%a) : f32[4, 4096]
  return %2, %3
}
";
    assert_eq!(check(small), vec![]);
}

#[test]
fn sums_count_their_terms_from_the_shapes() {
    let src = "graph @g(%a: f32[3, 5], %b: f32[5, 7], %c: f32[2, 6, 4]) {
  %0 = matmul(%a, %b) : f32[3, 7]
  %1 = sum(%c) {dim = [1], keepdim = false} : f32[2, 4]
  %2 = mean(%c) {dim = [1], keepdim = false} : f32[2, 4]
  %3 = softmax(%c) {dim = -1} : f32[2, 6, 4]
  %4 = cumsum(%c) {dim = 1} : f32[2, 6, 4]
  return %0, %1, %2, %3, %4
}
";
    let g = parse(src).unwrap();
    let r = value_ranges(&g, randn());
    let out = |i: usize| r[g.outputs()[i].index()];
    assert_eq!(out(0), Interval::symmetric(5.0 * 100.0));
    assert_eq!(out(1), Interval::symmetric(6.0 * 10.0));
    assert_eq!(out(2), randn());
    assert_eq!(out(3), Interval::new(0.0, 1.0));
    assert_eq!(out(4), Interval::symmetric(60.0));
}

#[test]
fn normalizations_are_bounded_by_the_square_root_of_their_group() {
    let src = "graph @g(%x: f32[2, 16, 9]) {
  %0 = layer_norm(%x) {normalized_shape = [16, 9], eps = 1e-05} : f32[2, 16, 9]
  return %0
}
";
    let g = parse(src).unwrap();
    let r = range_of(&g, g.outputs()[0], randn());
    assert_eq!(r, Interval::symmetric(12.0));
}

#[test]
fn repeated_exponentials_overflow() {
    let src = "graph @g(%x: f32[8]) {
  %0 = exp2(%x) : f32[8]
  %1 = exp2(%0) : f32[8]
  return %1
}
";
    let v = check(src);
    assert!(
        v.iter().any(|e| matches!(
            e,
            RangeViolation::Domain {
                op: Op::Exp2,
                slot: 0,
                ..
            }
        )),
        "{v:?}"
    );
}

#[test]
fn every_op_has_a_domain_and_a_range_rule() {
    // exhaustive matches in the IR; this checks the facts say what ops.md says for the ops
    // with restricted domains
    assert_eq!(Op::Div.domain(0), Domain::Any);
    assert_eq!(Op::Div.domain(1), Domain::NonZero);
    assert_eq!(Op::Log.domain(0), Domain::Positive);
    assert_eq!(Op::Sqrt.domain(0), Domain::NonNegative);
    assert_eq!(Op::Pow.domain(0), Domain::PowBase);
    assert!(matches!(Op::Exp.domain(0), Domain::AtMost(m) if m.exp() <= 1e30));
    assert!(matches!(Op::Exp2.domain(0), Domain::AtMost(m) if m.exp2() <= 1e30));
    for &op in Op::ALL {
        let _ = op.domain(0);
    }
}
