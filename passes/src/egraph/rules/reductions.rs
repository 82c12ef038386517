//! Reductions and shape facts: reductions, softmax and logsumexp over dimensions of size 1
//! simplify; `sum / n` is `mean`; softmax is invariant to subtracting a max over its own
//! dim; written-out softmax and logsumexp become the named ops; a sum of a softmax over its
//! dim is one.

use crate::egraph::rule::{Build, Match, Rule};
use drtc_ir::{Attr, Op};

/// The reduced dims of `?a` for the input `?x`.
fn reduced(m: &Match) -> Option<Vec<usize>> {
    let rank = m.ty("?x")?.rank();
    m.dims("?a", rank)
}

/// Whether every dim that `?a` reduces in `?x` has size 1.
fn over_size_one(m: &Match) -> bool {
    let (Some(t), Some(dims)) = (m.ty("?x"), reduced(m)) else {
        return false;
    };
    t.rank() > 0 && dims.iter().all(|&d| t.shape[d] == 1)
}

/// `?x` reshaped to the matched class's shape (or `?x` itself when it already has it).
fn reshaped(b: &mut Build) -> Option<egg::Id> {
    let m = b.m();
    let x = m.id("?x");
    let (xt, rt) = (m.ty("?x")?.clone(), m.root_ty()?.clone());
    if xt == rt {
        return Some(x);
    }
    b.op(Op::Reshape, &[x], [("shape", Attr::Ints(rt.shape))])
}

/// A constant tensor of the matched class's type.
fn filled(b: &mut Build, value: f64) -> Option<egg::Id> {
    let rt = b.m().root_ty()?.clone();
    b.op(
        Op::Full,
        &[],
        [
            ("shape", Attr::Ints(rt.shape)),
            ("value", Attr::Float(value)),
            ("dtype", Attr::DType(rt.dtype)),
        ],
    )
}

/// The single dim of a softmax-like op's `?d` attributes, normalized for `?x`.
fn along(m: &Match, a: &str, x: &str) -> Option<usize> {
    let rank = m.ty(x)?.rank();
    crate::egraph::rule::norm_dim(m.attr(a, "dim")?.as_int()?, rank)
}

pub fn rules() -> Vec<Rule> {
    // A reduction over dims of size 1 is a reshape (or nothing, with keepdim).
    macro_rules! size_one {
        ($op:literal) => {
            Rule::build(
                concat!($op, "-size-one"),
                concat!("(", $op, " ?x ?a)"),
                reshaped,
            )
            .when(over_size_one)
            .test(concat!(
                "x: f32[4, 1, 8] | (",
                $op,
                " x @dim=[1]) => (reshape x @shape=[4,8])"
            ))
        };
    }
    let mut rules = vec![
        size_one!("sum"),
        size_one!("mean"),
        size_one!("max"),
        size_one!("min"),
        size_one!("prod"),
        size_one!("logsumexp"),
    ];
    rules.extend([
        // softmax over a dim of size 1 is 1.
        Rule::build("softmax-size-one", "(softmax ?x ?a)", |b| filled(b, 1.0))
            .when(|m| along(m, "?a", "?x").is_some_and(|d| m.ty("?x").is_some_and(|t| t.shape[d] == 1)))
            .test("x: f32[4, 1] | (softmax x @dim=1) => (full @shape=[4,1];value=1.0)"),
        // log_softmax over a dim of size 1 is 0.
        Rule::build("log-softmax-size-one", "(log_softmax ?x ?a)", |b| filled(b, 0.0))
            .when(|m| along(m, "?a", "?x").is_some_and(|d| m.ty("?x").is_some_and(|t| t.shape[d] == 1)))
            .test("x: f32[4, 1] | (log_softmax x @dim=-1) => (full @shape=[4,1];value=0.0)"),
        // sum(x, dims) / n = mean(x, dims), n the number of elements reduced.
        Rule::build("mean-from-sum", "(div (sum ?x ?a) ?n)", |b| {
            let m = b.m();
            let t = m.ty("?x")?.clone();
            // torch.mean takes floats only
            t.dtype.is_float().then_some(())?;
            let dims = reduced(&m)?;
            let count: f64 = dims.iter().map(|&d| t.shape[d] as f64).product();
            m.is_scalar("?n", count).then_some(())?;
            let x = m.id("?x");
            let attrs = m.attrs("?a")?.clone();
            b.node(Op::Mean, vec![x], attrs)
        })
        .test("x: f32[4, 8] | (div (sum x @dim=[1]) 8.0) => (mean x @dim=[1])"),
        // softmax(x - max(x, d, keepdim), d) = softmax(x, d): softmax is shift-invariant.
        Rule::rewrite("softmax-shift", "(softmax (sub ?x (max ?x ?m)) ?a)", "(softmax ?x ?a)")
            .when(|m| {
                let rank = m.ty("?x").map_or(0, |t| t.rank());
                m.keepdim("?m")
                    && along(m, "?a", "?x").is_some_and(|d| m.dims("?m", rank) == Some(vec![d]))
            })
            .test("x: f32[4, 8] | (softmax (sub x (max x @dim=[1];keepdim=true)) @dim=1) => (softmax x @dim=1)"),
        // log_softmax(x - max(x, d, keepdim), d) = log_softmax(x, d).
        Rule::rewrite("log-softmax-shift", "(log_softmax (sub ?x (max ?x ?m)) ?a)", "(log_softmax ?x ?a)")
            .when(|m| {
                let rank = m.ty("?x").map_or(0, |t| t.rank());
                m.keepdim("?m")
                    && along(m, "?a", "?x").is_some_and(|d| m.dims("?m", rank) == Some(vec![d]))
            })
            .test("x: f32[4, 8] | (log_softmax (sub x (max x @dim=[-1];keepdim=true)) @dim=-1) => (log_softmax x @dim=-1)"),
        // exp(x) / sum(exp(x), d, keepdim) = softmax(x, d).
        Rule::build("softmax-written-out", "(div (exp ?x) (sum (exp ?x) ?a))", |b| {
            let m = b.m();
            let rank = m.ty("?x")?.rank();
            let dims = m.dims("?a", rank)?;
            (m.keepdim("?a") && dims.len() == 1 && m.ty("?x")?.dtype.is_float()).then_some(())?;
            let x = m.id("?x");
            b.op(Op::Softmax, &[x], [("dim", Attr::Int(dims[0] as i64))])
        })
        .test("x: f32[4, 8] | (div (exp x) (sum (exp x) @dim=[1];keepdim=true)) => (softmax x @dim=1)"),
        // log(sum(exp(x), dims)) = logsumexp(x, dims).
        Rule::build("logsumexp-written-out", "(log (sum (exp ?x) ?a))", |b| {
            let m = b.m();
            let rank = m.ty("?x")?.rank();
            let dims = m.dims("?a", rank)?;
            let keep = m.keepdim("?a");
            m.ty("?x")?.dtype.is_float().then_some(())?;
            let x = m.id("?x");
            let dims = dims.into_iter().map(|d| d as i64).collect();
            b.op(Op::Logsumexp, &[x], [("dim", Attr::Ints(dims)), ("keepdim", Attr::Bool(keep))])
        })
        .test("x: f32[4, 8] | (log (sum (exp x) @dim=[1])) => (logsumexp x @dim=[1])"),
        // sum(softmax(x, d), d) = 1.
        Rule::build("sum-of-softmax", "(sum (softmax ?x ?s) ?a)", |b| {
            let m = b.m();
            let rank = m.ty("?x")?.rank();
            let d = along(&m, "?s", "?x")?;
            (m.dims("?a", rank)? == vec![d]).then_some(())?;
            filled(b, 1.0)
        })
        .test("x: f32[4, 8] | (sum (softmax x @dim=1) @dim=[1];keepdim=true) => (full @shape=[4,1];value=1.0)"),
    ]);
    rules
}
