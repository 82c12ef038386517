//! Algebra and constants: identities, scalar folding, double negation, chained clamps and
//! scalar min/max. Commutativity of `add`/`mul`/`maximum`/`minimum` is here too (bounded:
//! one swapped node per class); associativity is not, except for moving a scalar constant
//! inward, which terminates.

use crate::egraph::rule::{Build, Match, Rule};
use drtc_ir::{Attr, Op};

/// `x op value`, the constant taking the dtype of the scalar `?a` it replaces.
fn scalar_op(b: &mut Build, x: &str, op: Op, value: f64) -> Option<egg::Id> {
    // a fold through a division by zero (or an overflow) stays as written
    value.is_finite().then_some(())?;
    let xid = b.m().id(x);
    let dtype = b.m().ty("?a")?.dtype;
    let c = b.constant(value, dtype);
    b.op(op, &[xid, c], [])
}

/// The bounds of a clamp's attributes (`None` = unbounded).
fn bounds(m: &Match, a: &str) -> Option<(Option<f64>, Option<f64>)> {
    let lo = m.attr(a, "min")?.as_float();
    let hi = m.attr(a, "max")?.as_float();
    Some((lo, hi))
}

fn clamp_attrs(lo: Option<f64>, hi: Option<f64>) -> [(&'static str, Attr); 2] {
    let f = |v: Option<f64>| v.map_or(Attr::None, Attr::Float);
    [("min", f(lo)), ("max", f(hi))]
}

pub fn rules() -> Vec<Rule> {
    vec![
        // Commutativity, bounded by the e-graph: `a + b` and `b + a` share a class.
        Rule::rewrite("commute-add", "(add ?a ?b)", "(add ?b ?a)")
            .test("x: f32[4], y: f32[4] | (add (add x y) (add y x)) => (add (add x y) (add x y))"),
        // Commutativity of `mul`.
        Rule::rewrite("commute-mul", "(mul ?a ?b)", "(mul ?b ?a)")
            .test("x: f32[4], y: f32[4] | (sub (mul x y) (mul y x)) => (sub (mul x y) (mul x y))"),
        // Commutativity of `maximum`.
        Rule::rewrite("commute-maximum", "(maximum ?a ?b)", "(maximum ?b ?a)")
            .test("x: f32[4], y: f32[4] | (sub (maximum x y) (maximum y x)) => (sub (maximum x y) (maximum x y))"),
        // Commutativity of `minimum`.
        Rule::rewrite("commute-minimum", "(minimum ?a ?b)", "(minimum ?b ?a)")
            .test("x: f32[4], y: f32[4] | (sub (minimum x y) (minimum y x)) => (sub (minimum x y) (minimum x y))"),
        // x * 1 = x (only when the product has x's type: no broadcast, no promotion).
        Rule::rewrite("mul-one", "(mul ?x ?c)", "?x")
            .when(|m| m.is_scalar("?c", 1.0) && m.same_type_as_root("?x"))
            .test("x: f32[4] | (mul x 1.0) => x"),
        // x / 1 = x.
        Rule::rewrite("div-one", "(div ?x ?c)", "?x")
            .when(|m| m.is_scalar("?c", 1.0) && m.same_type_as_root("?x"))
            .test("x: f32[4] | (div x 1.0) => x"),
        // x + 0 = x.
        Rule::rewrite("add-zero", "(add ?x ?c)", "?x")
            .when(|m| m.is_scalar("?c", 0.0) && m.same_type_as_root("?x"))
            .test("x: f32[4] | (add x 0.0) => x"),
        // x - 0 = x.
        Rule::rewrite("sub-zero", "(sub ?x ?c)", "?x")
            .when(|m| m.is_scalar("?c", 0.0) && m.same_type_as_root("?x"))
            .test("x: f32[4] | (sub x 0.0) => x"),
        // x * -1 = -x.
        Rule::rewrite("mul-minus-one", "(mul ?x ?c)", "(neg ?x)")
            .when(|m| m.is_scalar("?c", -1.0))
            .test("x: f32[4] | (mul x -1.0) => (neg x)"),
        // 0 - x = -x.
        Rule::rewrite("zero-sub", "(sub ?c ?x)", "(neg ?x)")
            .when(|m| m.is_scalar("?c", 0.0))
            .test("x: f32[4] | (sub 0.0 x) => (neg x)"),
        // --x = x.
        Rule::rewrite("neg-neg", "(neg (neg ?x))", "?x")
            .test("x: f32[4] | (neg (neg x)) => x"),
        // x - (-y) = x + y.
        Rule::rewrite("sub-neg", "(sub ?x (neg ?y))", "(add ?x ?y)")
            .test("x: f32[4], y: f32[4] | (sub x (neg y)) => (add x y)"),
        // x * a / b = x * (a / b) for scalar constants a, b.
        Rule::build("fold-mul-div", "(div (mul ?x ?a) ?b)", |b| {
            let v = b.m().scalar("?a")? / b.m().scalar("?b")?;
            scalar_op(b, "?x", Op::Mul, v)
        })
        .test("x: f32[4] | (div (mul x 3.0) 2.0) => (mul x 1.5)"),
        // x * a * b = x * (a * b) for scalar constants a, b.
        Rule::build("fold-mul-mul", "(mul (mul ?x ?a) ?b)", |b| {
            let v = b.m().scalar("?a")? * b.m().scalar("?b")?;
            scalar_op(b, "?x", Op::Mul, v)
        })
        .test("x: f32[4] | (mul (mul x 3.0) 2.0) => (mul x 6.0)"),
        // x / a / b = x / (a * b) for scalar constants a, b.
        Rule::build("fold-div-div", "(div (div ?x ?a) ?b)", |b| {
            let v = b.m().scalar("?a")? * b.m().scalar("?b")?;
            scalar_op(b, "?x", Op::Div, v)
        })
        .test("x: f32[4] | (div (div x 4.0) 2.0) => (div x 8.0)"),
        // x / a * b = x * (b / a) for scalar constants a, b.
        Rule::build("fold-div-mul", "(mul (div ?x ?a) ?b)", |b| {
            let v = b.m().scalar("?b")? / b.m().scalar("?a")?;
            scalar_op(b, "?x", Op::Mul, v)
        })
        .test("x: f32[4] | (mul (div x 4.0) 2.0) => (mul x 0.5)"),
        // x + a + b = x + (a + b) for scalar constants a, b.
        Rule::build("fold-add-add", "(add (add ?x ?a) ?b)", |b| {
            let v = b.m().scalar("?a")? + b.m().scalar("?b")?;
            scalar_op(b, "?x", Op::Add, v)
        })
        .test("x: f32[4] | (add (add x 3.0) 2.0) => (add x 5.0)"),
        // x + a - b = x + (a - b) for scalar constants a, b.
        Rule::build("fold-add-sub", "(sub (add ?x ?a) ?b)", |b| {
            let v = b.m().scalar("?a")? - b.m().scalar("?b")?;
            scalar_op(b, "?x", Op::Add, v)
        })
        .test("x: f32[4] | (sub (add x 3.0) 2.0) => (add x 1.0)"),
        // x - a - b = x - (a + b) for scalar constants a, b.
        Rule::build("fold-sub-sub", "(sub (sub ?x ?a) ?b)", |b| {
            let v = b.m().scalar("?a")? + b.m().scalar("?b")?;
            scalar_op(b, "?x", Op::Sub, v)
        })
        .test("x: f32[4] | (sub (sub x 3.0) 2.0) => (sub x 5.0)"),
        // (x * y) * c = (x * c) * y for a scalar constant c: scalars move inward, so that
        // `x * y * 0.5` and `0.5 * x * y` meet.
        Rule::rewrite("scalar-inward", "(mul (mul ?x ?y) ?c)", "(mul (mul ?x ?c) ?y)")
            .when(|m| m.scalar("?c").is_some() && m.scalar("?y").is_none())
            .test("x: f32[4], y: f32[4] | (mul (mul (mul x 3.0) y) 2.0) => (mul (mul x 6.0) y)"),
        // maximum(x, c) = clamp(x, min=c) for a scalar constant c.
        Rule::build("maximum-as-clamp", "(maximum ?x ?c)", |b| {
            let c = b.m().scalar("?c")?;
            let x = b.m().id("?x");
            b.op(Op::Clamp, &[x], clamp_attrs(Some(c), None))
        })
        .test("x: f32[4] | (minimum (maximum x 0.5) 2.0) => (clamp x @min=0.5;max=2.0)"),
        // minimum(x, c) = clamp(x, max=c) for a scalar constant c.
        Rule::build("minimum-as-clamp", "(minimum ?x ?c)", |b| {
            let c = b.m().scalar("?c")?;
            let x = b.m().id("?x");
            b.op(Op::Clamp, &[x], clamp_attrs(None, Some(c)))
        })
        .test("x: f32[4] | (clamp (minimum x 2.0) @min=-1.0) => (clamp x @min=-1.0;max=2.0)"),
        // relu(x) = clamp(x, min=0), so that relu meets other clamps.
        Rule::build("relu-as-clamp", "(relu ?x)", |b| {
            let x = b.m().id("?x");
            b.op(Op::Clamp, &[x], clamp_attrs(Some(0.0), None))
        })
        .test("x: f32[4] | (relu (clamp x @min=-1.0;max=1.0)) => (clamp x @min=0.0;max=1.0)"),
        // clamp(x, min=0) = relu(x) (the cheaper spelling).
        Rule::rewrite("clamp-as-relu", "(clamp ?x ?a)", "(relu ?x)")
            .when(|m| bounds(m, "?a") == Some((Some(0.0), None)))
            .test("x: f32[4] | (maximum x 0.0) => (relu x)"),
        // hardtanh(x, lo, hi) = clamp(x, lo, hi).
        Rule::build("hardtanh-as-clamp", "(hardtanh ?x ?a)", |b| {
            let m = b.m();
            let lo = m.attr("?a", "min_val")?.as_float()?;
            let hi = m.attr("?a", "max_val")?.as_float()?;
            let x = m.id("?x");
            (lo <= hi).then_some(())?;
            b.op(Op::Clamp, &[x], clamp_attrs(Some(lo), Some(hi)))
        })
        .test("x: f32[4] | (clamp (hardtanh x) @min=0.0) => (clamp x @min=0.0;max=1.0)"),
        // clamp(clamp(x, a, b), c, d) = clamp(x, max(a, c), min(b, d)) when the merged
        // interval is not empty (and neither input interval is).
        Rule::build("clamp-clamp", "(clamp (clamp ?x ?a) ?b)", |b| {
            let m = b.m();
            let (l1, h1) = bounds(&m, "?a")?;
            let (l2, h2) = bounds(&m, "?b")?;
            let both = |p: Option<f64>, q: Option<f64>, f: fn(f64, f64) -> f64| match (p, q) {
                (Some(p), Some(q)) => Some(f(p, q)),
                (p, q) => p.or(q),
            };
            let lo = both(l1, l2, f64::max);
            let hi = both(h1, h2, f64::min);
            for (l, h) in [(l1, h1), (l2, h2), (lo, hi)] {
                if let (Some(l), Some(h)) = (l, h) {
                    (l <= h).then_some(())?;
                }
            }
            let x = m.id("?x");
            b.op(Op::Clamp, &[x], clamp_attrs(lo, hi))
        })
        .test("x: f32[4] | (clamp (clamp x @min=-2.0;max=1.0) @min=-1.0;max=3.0) => (clamp x @min=-1.0;max=1.0)"),
        // cast(x, d) = x when x already has dtype d.
        Rule::rewrite("cast-same", "(cast ?x ?a)", "?x")
            .when(|m| m.same_type_as_root("?x"))
            .test("x: f32[4] | (cast x @dtype=f32) => x"),
    ]
}
