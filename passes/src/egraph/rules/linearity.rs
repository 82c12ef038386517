//! Linearity: a sum (or mean) of a linear map over its output dimension is the linear map
//! of the summed weights, `sum(x @ W, -1) = x @ W.sum(-1)`, which turns a matrix product
//! into a matrix-vector product; the summed weights are computed inside the program, once
//! per call. A mean distributes over `+`/`-` with a broadcast operand, so a subtracted
//! bias does not block it.

use crate::egraph::rule::{Build, Rule};
use drtc_ir::{Attr, Op};

/// Whether the reduction `?a` over the result of rank `rank` is over its last dim only.
fn over_last(b: &Build, rank: usize) -> Option<bool> {
    Some(b.m().dims("?a", rank)? == vec![rank.checked_sub(1)?])
}

/// `op(matmul(x, w), -1)` -> `matmul(x, op(w, -1))`, unsqueezed back with keepdim.
fn matmul_rule(b: &mut Build, op: Op) -> Option<egg::Id> {
    let m = b.m();
    let (xt, wt) = (m.ty("?x")?.clone(), m.ty("?w")?.clone());
    let out_rank = xt.rank().max(wt.rank());
    if xt.rank() < 2 || wt.rank() != 2 || !over_last(b, out_rank)? {
        return None;
    }
    let keep = b.m().keepdim("?a");
    let (x, w) = (b.m().id("?x"), b.m().id("?w"));
    let ws = b.op(op, &[w], [("dim", Attr::Ints(vec![-1]))])?;
    let y = b.op(Op::Matmul, &[x, ws], [])?;
    if keep {
        b.op(Op::Unsqueeze, &[y], [("dim", Attr::Int(-1))])
    } else {
        Some(y)
    }
}

/// `op(linear(x, w, b?), -1)` -> `matmul(x, op(w, 0)) + op(b)`, unsqueezed with keepdim.
fn linear_rule(b: &mut Build, op: Op, with_bias: bool) -> Option<egg::Id> {
    let m = b.m();
    let xt = m.ty("?x")?.clone();
    if xt.rank() < 2 || !over_last(b, xt.rank())? {
        return None;
    }
    let keep = b.m().keepdim("?a");
    let (x, w) = (b.m().id("?x"), b.m().id("?w"));
    let ws = b.op(op, &[w], [("dim", Attr::Ints(vec![0]))])?;
    let mut y = b.op(Op::Matmul, &[x, ws], [])?;
    if with_bias {
        let bias = b.m().id("?b");
        let bs = b.op(op, &[bias], [])?;
        y = b.op(Op::Add, &[y, bs], [])?;
    }
    if keep {
        b.op(Op::Unsqueeze, &[y], [("dim", Attr::Int(-1))])
    } else {
        Some(y)
    }
}

/// `mean(y op s, dims)` -> `mean(y, dims) op mean(s, dims of s)` for `op` in `+`, `-`,
/// `y` of the full shape and `s` broadcasting into it.
fn mean_distributes(b: &mut Build, op: Op) -> Option<egg::Id> {
    let m = b.m();
    let (yt, st) = (m.ty("?y")?.clone(), m.ty("?s")?.clone());
    let rank = yt.rank();
    if st.rank() > rank || m.root_ty()?.dtype != yt.dtype || !yt.dtype.is_float() {
        return None;
    }
    let dims = m.dims("?a", rank)?;
    let keep = m.keepdim("?a");
    let offset = rank - st.rank();
    // the dims of s that are reduced and not broadcast
    let s_dims: Vec<i64> = dims
        .iter()
        .filter(|&&d| d >= offset && st.shape[d - offset] > 1)
        .map(|&d| (d - offset) as i64)
        .collect();
    if !keep && dims.iter().any(|&d| d >= offset) {
        return None;
    }
    let attrs = m.attrs("?a")?.clone();
    let (y, s) = (m.id("?y"), m.id("?s"));
    let ym = b.node(Op::Mean, vec![y], attrs)?;
    let sm = if s_dims.is_empty() {
        s
    } else {
        b.op(
            Op::Mean,
            &[s],
            [("dim", Attr::Ints(s_dims)), ("keepdim", Attr::Bool(true))],
        )?
    };
    b.op(op, &[ym, sm], [])
}

pub fn rules() -> Vec<Rule> {
    vec![
        // sum(x @ W, -1) = x @ W.sum(-1): a matrix-vector product.
        Rule::build("sum-of-matmul", "(sum (matmul ?x ?w) ?a)", |b| matmul_rule(b, Op::Sum))
            .test("x: f32[16, 32], w: f32[32, 64] | (sum (matmul x w) @dim=[-1]) => (matmul x (sum w @dim=[-1]))"),
        // mean(x @ W, -1) = x @ W.mean(-1).
        Rule::build("mean-of-matmul", "(mean (matmul ?x ?w) ?a)", |b| matmul_rule(b, Op::Mean))
            .test("x: f32[16, 32], w: f32[32, 64] | (mean (matmul x w) @dim=[1];keepdim=true) => (reshape (matmul x (mean w @dim=[-1])) @shape=[16,1])"),
        // sum(linear(x, W, b), -1) = x @ W.sum(0) + b.sum().
        Rule::build("sum-of-linear", "(sum (linear ?x ?w ?b) ?a)", |b| linear_rule(b, Op::Sum, true))
            .test("x: f32[16, 32], w: f32[64, 32], b: f32[64] | (sum (linear x w b) @dim=[1]) => (add (matmul x (sum w @dim=[0])) (sum b))"),
        // sum(linear(x, W), -1) = x @ W.sum(0).
        Rule::build("sum-of-linear-nobias", "(sum (linear ?x ?w) ?a)", |b| linear_rule(b, Op::Sum, false))
            .test("x: f32[16, 32], w: f32[64, 32] | (sum (linear x w) @dim=[-1]) => (matmul x (sum w @dim=[0]))"),
        // mean(linear(x, W, b), -1) = x @ W.mean(0) + b.mean().
        Rule::build("mean-of-linear", "(mean (linear ?x ?w ?b) ?a)", |b| linear_rule(b, Op::Mean, true))
            .test("x: f32[16, 32], w: f32[64, 32], b: f32[64] | (mean (linear x w b) @dim=[1];keepdim=true) => (reshape (add (matmul x (mean w @dim=[0])) (mean b)) @shape=[16,1])"),
        // mean(linear(x, W), -1) = x @ W.mean(0).
        Rule::build("mean-of-linear-nobias", "(mean (linear ?x ?w) ?a)", |b| linear_rule(b, Op::Mean, false))
            .test("x: f32[16, 32], w: f32[64, 32] | (mean (linear x w) @dim=[-1]) => (matmul x (mean w @dim=[0]))"),
        // mean(y - s) = mean(y) - mean(s), s broadcast into y.
        Rule::build("mean-of-sub", "(mean (sub ?y ?s) ?a)", |b| mean_distributes(b, Op::Sub))
            .test("y: f32[16, 64], s: f32[64] | (mean (sub (exp y) s) @dim=[1];keepdim=true) => (sub (mean (exp y) @dim=[1];keepdim=true) (mean s @dim=[0];keepdim=true))"),
        // mean(y + s) = mean(y) + mean(s), s broadcast into y.
        Rule::build("mean-of-add", "(mean (add ?y ?s) ?a)", |b| mean_distributes(b, Op::Add))
            .test("y: f32[16, 64], s: f32[64] | (mean (add (exp y) s) @dim=[1];keepdim=true) => (add (mean (exp y) @dim=[1];keepdim=true) (mean s @dim=[0];keepdim=true))"),
    ]
}
