//! Linearity: a sum (or mean) of a linear map over its output dimension is the linear map
//! of the summed weights, `sum(x @ W, -1) = x @ W.sum(-1)`, which turns a matrix product
//! into a matrix-vector product; the summed weights are computed inside the program, once
//! per call. A mean distributes over `+`/`-` with a broadcast operand, so a subtracted
//! bias does not block it. Affine absorption: a per-channel (or scalar) constant added to
//! a linear layer or convolution joins its bias, and one that scales or shifts an affine
//! normalization (batch, group, instance norm) joins its weight and bias: work on a whole
//! activation becomes work on a vector of C values.

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
    let float = xt.dtype.is_float() && wt.dtype.is_float();
    if !float || xt.rank() < 2 || wt.rank() != 2 || !over_last(b, out_rank)? {
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
    if !xt.dtype.is_float() || xt.rank() < 2 || !over_last(b, xt.rank())? {
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

/// `?c` as a vector of the `C` channels of the matched class (channel dim `ch`, negative
/// from the end), when it is constant across every other dim; a scalar stays a scalar.
fn per_channel(b: &mut Build, ch: i64) -> Option<egg::Id> {
    let m = b.m();
    let (ct, out) = (m.ty("?c")?.clone(), m.root_ty()?.clone());
    let c = m.id("?c");
    let rank = out.rank();
    if ct.rank() > rank || rank == 0 {
        return None;
    }
    let ch = crate::egraph::rule::norm_dim(ch, rank)?;
    let channels = out.shape[ch];
    let offset = rank - ct.rank();
    for (j, &d) in ct.shape.iter().enumerate() {
        if d != 1 && !(j + offset == ch && d == channels) {
            return None;
        }
    }
    if ct.rank() == 0 || ct.shape == [channels] {
        return Some(c);
    }
    let shape = if ct.numel() == 1 {
        vec![]
    } else {
        vec![channels]
    };
    b.op(Op::Reshape, &[c], [("shape", Attr::Ints(shape))])
}

/// `op(x, w, b) ± c` -> `op(x, w, b ± c)` for a per-channel `c` (linear, convolutions).
fn into_bias(b: &mut Build, op: Op, combine: Op) -> Option<egg::Id> {
    let ch = if op == Op::Linear { -1 } else { 1 };
    let c = per_channel(b, ch)?;
    let (x, w, bias) = (b.m().id("?x"), b.m().id("?w"), b.m().id("?b"));
    let nb = b.op(combine, &[bias, c], [])?;
    if b.ty(nb)? != b.ty(bias)? {
        return None;
    }
    let attrs = if crate::egraph::lang::TNode::has_attrs(op) {
        b.m().attrs("?a")?.clone()
    } else {
        Default::default()
    };
    b.node(op, vec![x, w, nb], attrs)
}

/// `norm(x, w, b) * c` -> `norm(x, w * c, b * c)` (and `/`); `norm(x, w, b) ± c` ->
/// `norm(x, w, b ± c)`, for a per-channel `c` (channel dim 1).
fn into_affine(b: &mut Build, op: Op, combine: Op) -> Option<egg::Id> {
    let c = per_channel(b, 1)?;
    let (x, w, bias) = (b.m().id("?x"), b.m().id("?w"), b.m().id("?b"));
    let attrs = b.m().attrs("?a")?.clone();
    let scales = matches!(combine, Op::Mul | Op::Div);
    let nw = if scales {
        b.op(combine, &[w, c], [])?
    } else {
        w
    };
    let nb = b.op(combine, &[bias, c], [])?;
    if b.ty(nb)? != b.ty(bias)? || b.ty(nw)? != b.ty(w)? {
        return None;
    }
    b.node(op, vec![x, nw, nb], attrs)
}

pub fn rules() -> Vec<Rule> {
    macro_rules! bias {
        ($name:literal, $lhs:literal, $op:expr, $comb:expr, $test:literal) => {
            Rule::build($name, $lhs, |b| into_bias(b, $op, $comb)).test($test)
        };
    }
    macro_rules! affine {
        ($name:literal, $lhs:literal, $op:expr, $comb:expr, $test:literal) => {
            Rule::build($name, $lhs, |b| into_affine(b, $op, $comb)).test($test)
        };
    }
    let mut rules = vec![
        // linear(x, W, b) + c = linear(x, W, b + c) for c constant over the rows.
        bias!("linear-bias-add", "(add (linear ?x ?w ?b) ?c)", Op::Linear, Op::Add,
            "x: f32[16, 32], w: f32[64, 32], b: f32[64], c: f32[64] | (add (linear x w b) c) => (linear x w (add b c))"),
        // linear(x, W, b) - c = linear(x, W, b - c).
        bias!("linear-bias-sub", "(sub (linear ?x ?w ?b) ?c)", Op::Linear, Op::Sub,
            "x: f32[16, 32], w: f32[64, 32], b: f32[64] | (sub (linear x w b) 2.0) => (linear x w (sub b 2.0))"),
        // conv1d(x, W, b) + c = conv1d(x, W, b + c) for a per-channel c.
        bias!("conv1d-bias-add", "(add (conv1d ?x ?w ?b ?a) ?c)", Op::Conv1d, Op::Add,
            "x: f32[2, 3, 16], w: f32[8, 3, 3], b: f32[8], c: f32[8, 1] | (add (conv1d x w b) c) => (conv1d x w (add b (reshape c @shape=[8])))"),
        // conv2d(x, W, b) + c = conv2d(x, W, b + c) for a per-channel c.
        bias!("conv2d-bias-add", "(add (conv2d ?x ?w ?b ?a) ?c)", Op::Conv2d, Op::Add,
            "x: f32[2, 3, 8, 8], w: f32[8, 3, 3, 3], b: f32[8], c: f32[8, 1, 1] | (add (conv2d x w b) c) => (conv2d x w (add b (reshape c @shape=[8])))"),
        // conv2d(x, W, b) - c = conv2d(x, W, b - c) for a per-channel c.
        bias!("conv2d-bias-sub", "(sub (conv2d ?x ?w ?b ?a) ?c)", Op::Conv2d, Op::Sub,
            "x: f32[2, 3, 8, 8], w: f32[8, 3, 3, 3], b: f32[8] | (sub (conv2d x w b) 0.5) => (conv2d x w (sub b 0.5))"),
        // conv3d(x, W, b) + c = conv3d(x, W, b + c) for a per-channel c.
        bias!("conv3d-bias-add", "(add (conv3d ?x ?w ?b ?a) ?c)", Op::Conv3d, Op::Add,
            "x: f32[2, 3, 4, 4, 4], w: f32[8, 3, 3, 3, 3], b: f32[8], c: f32[1, 8, 1, 1, 1] | (add (conv3d x w b) c) => (conv3d x w (add b (reshape c @shape=[8])))"),
        // conv3d(x, W, b) - c = conv3d(x, W, b - c) for a per-channel c.
        bias!("conv3d-bias-sub", "(sub (conv3d ?x ?w ?b ?a) ?c)", Op::Conv3d, Op::Sub,
            "x: f32[2, 3, 4, 4, 4], w: f32[8, 3, 3, 3, 3], b: f32[8] | (sub (conv3d x w b) 0.5) => (conv3d x w (sub b 0.5))"),
        // conv_transpose2d(x, W, b) + c = conv_transpose2d(x, W, b + c) for a per-channel c.
        bias!("conv-transpose2d-bias-add", "(add (conv_transpose2d ?x ?w ?b ?a) ?c)", Op::ConvTranspose2d, Op::Add,
            "x: f32[2, 3, 8, 8], w: f32[3, 8, 3, 3], b: f32[8], c: f32[8, 1, 1] | (add (conv_transpose2d x w b) c) => (conv_transpose2d x w (add b (reshape c @shape=[8])))"),
        // conv_transpose2d(x, W, b) - c = conv_transpose2d(x, W, b - c) for a per-channel c.
        bias!("conv-transpose2d-bias-sub", "(sub (conv_transpose2d ?x ?w ?b ?a) ?c)", Op::ConvTranspose2d, Op::Sub,
            "x: f32[2, 3, 8, 8], w: f32[3, 8, 3, 3], b: f32[8], c: f32[8, 1, 1] | (sub (conv_transpose2d x w b) c) => (conv_transpose2d x w (sub b (reshape c @shape=[8])))"),
        // conv_transpose3d(x, W, b) + c = conv_transpose3d(x, W, b + c) for a per-channel c.
        bias!("conv-transpose3d-bias-add", "(add (conv_transpose3d ?x ?w ?b ?a) ?c)", Op::ConvTranspose3d, Op::Add,
            "x: f32[2, 3, 4, 4, 4], w: f32[3, 8, 3, 3, 3], b: f32[8] | (add (conv_transpose3d x w b) 1.5) => (conv_transpose3d x w (add b 1.5))"),
        // conv_transpose3d(x, W, b) - c = conv_transpose3d(x, W, b - c) for a per-channel c.
        bias!("conv-transpose3d-bias-sub", "(sub (conv_transpose3d ?x ?w ?b ?a) ?c)", Op::ConvTranspose3d, Op::Sub,
            "x: f32[2, 3, 4, 4, 4], w: f32[3, 8, 3, 3, 3], b: f32[8], c: f32[8, 1, 1, 1] | (sub (conv_transpose3d x w b) c) => (conv_transpose3d x w (sub b (reshape c @shape=[8])))"),
        // batch_norm(x, w, b) * c = batch_norm(x, w * c, b * c) for a per-channel c.
        affine!("batch-norm-mul", "(mul (batch_norm ?x ?w ?b ?a) ?c)", Op::BatchNorm, Op::Mul,
            "x: f32[4, 8, 5, 5], w: f32[8], b: f32[8] | (mul (batch_norm x w b) 2.0) => (batch_norm x (mul w 2.0) (mul b 2.0))"),
        // batch_norm(x, w, b) + c = batch_norm(x, w, b + c) for a per-channel c.
        affine!("batch-norm-add", "(add (batch_norm ?x ?w ?b ?a) ?c)", Op::BatchNorm, Op::Add,
            "x: f32[4, 8], w: f32[8], b: f32[8], c: f32[8] | (add (batch_norm x w b) c) => (batch_norm x w (add b c))"),
        // group_norm(x, w, b) * c = group_norm(x, w * c, b * c) for a per-channel c.
        affine!("group-norm-mul", "(mul (group_norm ?x ?w ?b ?a) ?c)", Op::GroupNorm, Op::Mul,
            "x: f32[2, 8, 4, 4], w: f32[8], b: f32[8], c: f32[8, 1, 1] | (mul (group_norm x w b @num_groups=2) c) => (group_norm x (mul w (reshape c @shape=[8])) (mul b (reshape c @shape=[8])) @num_groups=2)"),
        // group_norm(x, w, b) + c = group_norm(x, w, b + c) for a per-channel c.
        affine!("group-norm-add", "(add (group_norm ?x ?w ?b ?a) ?c)", Op::GroupNorm, Op::Add,
            "x: f32[2, 8, 4, 4], w: f32[8], b: f32[8], c: f32[8, 1, 1] | (add (group_norm x w b @num_groups=2) c) => (group_norm x w (add b (reshape c @shape=[8])) @num_groups=2)"),
        // instance_norm(x, w, b) * c = instance_norm(x, w * c, b * c) for a per-channel c.
        affine!("instance-norm-mul", "(mul (instance_norm ?x ?w ?b ?a) ?c)", Op::InstanceNorm, Op::Mul,
            "x: f32[2, 8, 4, 4], w: f32[8], b: f32[8] | (mul (instance_norm x w b) 3.0) => (instance_norm x (mul w 3.0) (mul b 3.0))"),
        // norm(x, w, b) / c = norm(x, w / c, b / c) for a scalar or per-channel c.
        affine!("batch-norm-div", "(div (batch_norm ?x ?w ?b ?a) ?c)", Op::BatchNorm, Op::Div,
            "x: f32[4, 8], w: f32[8], b: f32[8] | (div (batch_norm x w b) 2.0) => (batch_norm x (div w 2.0) (div b 2.0))"),
    ];
    rules.extend(vec![
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
    ]);
    rules
}
