//! Convolutions: rewrites Inductor does not do. A convolution is linear in its weight and
//! bias, so a scalar (or, for plain convolutions, per-output-channel) multiply or divide
//! after it folds into them: `conv(x, W, b) * s = conv(x, W * s, b * s)`, and the whole
//! activation pass becomes a pass over the weights. A global average of a transposed
//! convolution without padding is a matrix product of the input's spatial sums with the
//! weight's tap sums: every input pixel reaches every kernel tap inside the output (no
//! padding crops it, no output padding adds taps), so
//! `mean_hw(conv_transpose(x, W, b))[n, o] = (sum_hw x)[n, :] @ (sum_k W)[:, o] / (H_o W_o)
//! + b[o]` exactly in real arithmetic: the transposed convolution is never computed.
//!
//! An average pool after a pointwise (1x1, stride 1, unpadded) convolution is the
//! convolution of the pooled input: the convolution is an affine map applied to each pixel
//! alone, and an unpadded, floor-mode average pool takes a convex combination of whole
//! windows (weights summing to one), so `avg_pool(W x + b) = W avg_pool(x) + b`. The
//! pool then runs over the input's channels and the convolution over the pooled pixels
//! (a quarter of them for a 2x2 pool): the cost model takes it when it moves fewer bytes.

use crate::egraph::rule::{Build, Rule};
use drtc_ir::{Attr, Kind, Op};

/// The number of spatial dims of a convolution op (its kind's rank).
fn spatial(op: Op) -> usize {
    match op.kind() {
        Kind::Conv { rank, .. } => rank,
        _ => 3,
    }
}

fn transposed(op: Op) -> bool {
    matches!(
        op.kind(),
        Kind::Conv {
            transposed: true,
            ..
        }
    )
}

/// `?c` as a scale of the weight `?w`: a scalar stays a scalar; a per-output-channel `?c`
/// of a plain convolution (channel dim 1 of the result) becomes `[C, 1, ...]` against the
/// weight's output-channel dim 0, and `[C]` against the bias.
fn scales(b: &mut Build, op: Op, per_channel: bool) -> Option<(egg::Id, egg::Id)> {
    let m = b.m();
    let (ct, out, wt) = (
        m.ty("?c")?.clone(),
        m.root_ty()?.clone(),
        m.ty("?w")?.clone(),
    );
    let c = m.id("?c");
    if !ct.dtype.is_float() || ct.dtype != out.dtype || ct.rank() > out.rank() {
        return None;
    }
    if ct.numel() == 1 {
        if per_channel {
            return None;
        }
        let s = if ct.rank() == 0 {
            c
        } else {
            b.op(Op::Reshape, &[c], [("shape", Attr::Ints(vec![]))])?
        };
        return Some((s, s));
    }
    // per channel: c broadcasts as [C, 1, ...] over the result's channel dim only
    let rank = out.rank();
    let ch = rank - 1 - spatial(op);
    let offset = rank - ct.rank();
    let channels = out.shape[ch];
    let channel_shaped = ct
        .shape
        .iter()
        .enumerate()
        .all(|(j, &d)| d == 1 || (j + offset == ch && d == channels));
    if !per_channel || transposed(op) || !channel_shaped || wt.shape[0] != channels {
        return None;
    }
    let mut wshape = vec![channels];
    wshape.extend(std::iter::repeat_n(1, wt.rank() - 1));
    let cw = b.op(Op::Reshape, &[c], [("shape", Attr::Ints(wshape))])?;
    let cb = b.op(Op::Reshape, &[c], [("shape", Attr::Ints(vec![channels]))])?;
    Some((cw, cb))
}

/// `conv(x, w, b?) op c` -> `conv(x, w op c, b? op c)` for `op` in `*`, `/`: a scalar `c`,
/// or (`per_channel`) one constant per output channel.
fn fold_scale(
    b: &mut Build,
    op: Op,
    combine: Op,
    with_bias: bool,
    per_channel: bool,
) -> Option<egg::Id> {
    let (cw, cb) = scales(b, op, per_channel)?;
    let (x, w) = (b.m().id("?x"), b.m().id("?w"));
    let attrs = b.m().attrs("?a")?.clone();
    let nw = b.op(combine, &[w, cw], [])?;
    if b.ty(nw)? != b.ty(w)? {
        return None;
    }
    let mut inputs = vec![x, nw];
    if with_bias {
        let bias = b.m().id("?b");
        let nb = b.op(combine, &[bias, cb], [])?;
        if b.ty(nb)? != b.ty(bias)? {
            return None;
        }
        inputs.push(nb);
    }
    b.node(op, inputs, attrs)
}

/// `mean(conv_transpose(x, w, b?), spatial dims)` (or a global adaptive average pool,
/// `pool`) -> the spatial sums of `x` times the tap sums of `w`, over the output's spatial
/// size, plus `b` (see the module documentation for when this is exact: no padding, no
/// output padding, one group).
fn mean_of_transposed(b: &mut Build, op: Op, with_bias: bool, pool: bool) -> Option<egg::Id> {
    let (x, w) = (b.m().id("?x"), b.m().id("?w"));
    let conv_attrs = b.m().attrs("?a")?.clone();
    let mut conv_in = vec![x, w];
    if with_bias {
        conv_in.push(b.m().id("?b"));
    }
    // the convolution's own class (already in the e-graph): its result type
    let conv = b.node(op, conv_in, conv_attrs)?;
    let out = b.ty(conv)?;
    let m = b.m();
    let (xt, wt) = (m.ty("?x")?.clone(), m.ty("?w")?.clone());
    let ns = spatial(op);
    let groups = m.attr("?a", "groups").and_then(Attr::as_int);
    let rank = out.rank();
    if rank != ns + 2
        || !out.dtype.is_float()
        || !all_ints(b, "?a", "padding", 0)
        || !all_ints(b, "?a", "output_padding", 0)
    {
        return None;
    }
    let global = if pool {
        m.attr("?r", "output_size")
            .and_then(Attr::as_ints)
            .is_some_and(|o| o.len() == ns && o.iter().all(|&d| d == 1))
    } else {
        m.dims("?r", rank)? == (2..rank).collect::<Vec<_>>()
    };
    if groups != Some(1) || !global {
        return None;
    }
    let keep = pool || m.keepdim("?r");
    let sp: Vec<i64> = (2..rank as i64).collect();
    let area: i64 = out.shape[2..].iter().product();
    if xt.rank() != rank || wt.rank() != rank || area == 0 {
        return None;
    }
    let xs = b.op(Op::Sum, &[x], [("dim", Attr::Ints(sp.clone()))])?; // [N, Cin]
    let ws = b.op(Op::Sum, &[w], [("dim", Attr::Ints(sp))])?; // [Cin, Cout]
    let prod = b.op(Op::Matmul, &[xs, ws], [])?; // [N, Cout]
    let n = b.constant(area as f64, out.dtype);
    let mut y = b.op(Op::Div, &[prod, n], [])?;
    if with_bias {
        let bias = b.m().id("?b");
        y = b.op(Op::Add, &[y, bias], [])?;
    }
    if keep {
        let mut shape = vec![out.shape[0], out.shape[1]];
        shape.extend(std::iter::repeat_n(1, ns));
        y = b.op(Op::Reshape, &[y], [("shape", Attr::Ints(shape))])?;
    }
    Some(y)
}

/// Whether every value of the ints attribute `key` of `v` is `x`.
fn all_ints(b: &Build, v: &str, key: &str, x: i64) -> bool {
    b.m()
        .attr(v, key)
        .and_then(Attr::as_ints)
        .is_some_and(|d| d.iter().all(|&p| p == x))
}

/// `avg_pool(conv(x, w, b?))` -> `conv(avg_pool(x), w, b?)` for a pointwise convolution
/// (every kernel dim 1, stride 1, no padding) and an average pool with no padding, floor
/// mode and no divisor override (see the module documentation).
fn pool_before_pointwise_conv(
    b: &mut Build,
    conv: Op,
    pool: Op,
    with_bias: bool,
) -> Option<egg::Id> {
    let m = b.m();
    let (out, wt) = (m.root_ty()?.clone(), m.ty("?w")?.clone());
    let pointwise = wt.shape[2..].iter().all(|&k| k == 1)
        && all_ints(b, "?a", "stride", 1)
        && all_ints(b, "?a", "padding", 0);
    let whole_windows = all_ints(b, "?p", "padding", 0)
        && matches!(m.attr("?p", "ceil_mode"), Some(Attr::Bool(false)))
        && matches!(m.attr("?p", "divisor_override"), None | Some(Attr::None));
    if !out.dtype.is_float() || !pointwise || !whole_windows {
        return None;
    }
    let (x, w) = (m.id("?x"), m.id("?w"));
    let (conv_attrs, pool_attrs) = (m.attrs("?a")?.clone(), m.attrs("?p")?.clone());
    let pooled = b.node(pool, vec![x], pool_attrs)?;
    let mut inputs = vec![pooled, w];
    if with_bias {
        inputs.push(b.m().id("?b"));
    }
    let y = b.node(conv, inputs, conv_attrs)?;
    (b.ty(y)? == out).then_some(y)
}

pub fn rules() -> Vec<Rule> {
    macro_rules! scale {
        ($name:literal, $lhs:literal, $op:expr, $comb:expr, $bias:expr, $test:literal) => {
            Rule::build($name, $lhs, |b| fold_scale(b, $op, $comb, $bias, false)).test($test)
        };
        ($name:literal, $lhs:literal, $op:expr, $comb:expr, $bias:expr, channel, $test:literal) => {
            Rule::build($name, $lhs, |b| fold_scale(b, $op, $comb, $bias, true)).test($test)
        };
    }
    macro_rules! gap {
        ($name:literal, $lhs:literal, $op:expr, $bias:expr, $pool:expr, $test:literal) => {
            Rule::build($name, $lhs, |b| mean_of_transposed(b, $op, $bias, $pool)).test($test)
        };
    }
    macro_rules! pool_first {
        ($name:literal, $lhs:literal, $conv:expr, $pool:expr, $bias:expr, $test:literal) => {
            Rule::build($name, $lhs, |b| {
                pool_before_pointwise_conv(b, $conv, $pool, $bias)
            })
            .test($test)
        };
    }
    vec![
        // avg_pool2d(conv2d_1x1(x, W, b)) = conv2d_1x1(avg_pool2d(x), W, b).
        pool_first!("avg-pool2d-before-pointwise-conv2d", "(avg_pool2d (conv2d ?x ?w ?b ?a) ?p)", Op::Conv2d, Op::AvgPool2d, true,
            "x: f32[2, 8, 8, 8], w: f32[4, 8, 1, 1], b: f32[4] | (avg_pool2d (conv2d x w b) @kernel_size=[2,2]) => (conv2d (avg_pool2d x @kernel_size=[2,2]) w b)"),
        // the same without a bias
        pool_first!("avg-pool2d-before-pointwise-conv2d-nobias", "(avg_pool2d (conv2d ?x ?w ?a) ?p)", Op::Conv2d, Op::AvgPool2d, false,
            "x: f32[2, 8, 8, 8], w: f32[16, 8, 1, 1] | (avg_pool2d (conv2d x w) @kernel_size=[2,2];stride=[2,2]) => (conv2d (avg_pool2d x @kernel_size=[2,2];stride=[2,2]) w)"),
        // avg_pool1d(conv1d_1(x, W, b)) = conv1d_1(avg_pool1d(x), W, b).
        pool_first!("avg-pool1d-before-pointwise-conv1d", "(avg_pool1d (conv1d ?x ?w ?b ?a) ?p)", Op::Conv1d, Op::AvgPool1d, true,
            "x: f32[2, 8, 16], w: f32[4, 8, 1], b: f32[4] | (avg_pool1d (conv1d x w b) @kernel_size=[4]) => (conv1d (avg_pool1d x @kernel_size=[4]) w b)"),
        // avg_pool3d(conv3d_1x1x1(x, W)) = conv3d_1x1x1(avg_pool3d(x), W).
        pool_first!("avg-pool3d-before-pointwise-conv3d-nobias", "(avg_pool3d (conv3d ?x ?w ?a) ?p)", Op::Conv3d, Op::AvgPool3d, false,
            "x: f32[2, 8, 4, 4, 4], w: f32[4, 8, 1, 1, 1] | (avg_pool3d (conv3d x w) @kernel_size=[2,2,2]) => (conv3d (avg_pool3d x @kernel_size=[2,2,2]) w)"),
        // conv2d(x, W, b) * s = conv2d(x, W * s, b * s) for a scalar s.
        scale!("conv2d-scale", "(mul (conv2d ?x ?w ?b ?a) ?c)", Op::Conv2d, Op::Mul, true,
            "x: f32[2, 3, 8, 8], w: f32[8, 3, 3, 3], b: f32[8] | (mul (conv2d x w b) 2.0) => (conv2d x (mul w 2.0) (mul b 2.0))"),
        // conv2d(x, W, b) * c = conv2d(x, W * c[:, None, None, None], b * c) per channel.
        scale!("conv2d-scale-channel", "(mul (conv2d ?x ?w ?b ?a) ?c)", Op::Conv2d, Op::Mul, true, channel,
            "x: f32[2, 3, 8, 8], w: f32[8, 3, 3, 3], b: f32[8], c: f32[8, 1, 1] | (mul (conv2d x w b) c) => (conv2d x (mul w (reshape c @shape=[8,1,1,1])) (mul b (reshape c @shape=[8])))"),
        // conv2d(x, W) * s = conv2d(x, W * s) without a bias.
        scale!("conv2d-nobias-scale", "(mul (conv2d ?x ?w ?a) ?c)", Op::Conv2d, Op::Mul, false,
            "x: f32[2, 3, 8, 8], w: f32[8, 3, 3, 3] | (mul (conv2d x w) 0.5) => (conv2d x (mul w 0.5))"),
        // conv2d(x, W, b) / s = conv2d(x, W / s, b / s).
        scale!("conv2d-div", "(div (conv2d ?x ?w ?b ?a) ?c)", Op::Conv2d, Op::Div, true,
            "x: f32[2, 3, 8, 8], w: f32[8, 3, 3, 3], b: f32[8] | (div (conv2d x w b) 2.0) => (conv2d x (div w 2.0) (div b 2.0))"),
        // conv3d(x, W, b) * s = conv3d(x, W * s, b * s).
        scale!("conv3d-scale", "(mul (conv3d ?x ?w ?b ?a) ?c)", Op::Conv3d, Op::Mul, true,
            "x: f32[2, 3, 8, 8, 8], w: f32[8, 3, 3, 3, 3], b: f32[8] | (mul (conv3d x w b) 2.0) => (conv3d x (mul w 2.0) (mul b 2.0))"),
        // conv3d(x, W, b) / s = conv3d(x, W / s, b / s).
        scale!("conv3d-div", "(div (conv3d ?x ?w ?b ?a) ?c)", Op::Conv3d, Op::Div, true,
            "x: f32[2, 3, 8, 8, 8], w: f32[8, 3, 3, 3, 3], b: f32[8] | (div (conv3d x w b) 4.0) => (conv3d x (div w 4.0) (div b 4.0))"),
        // conv_transpose2d(x, W, b) * s = conv_transpose2d(x, W * s, b * s) for a scalar s.
        scale!("conv-transpose2d-scale", "(mul (conv_transpose2d ?x ?w ?b ?a) ?c)", Op::ConvTranspose2d, Op::Mul, true,
            "x: f32[2, 3, 8, 8], w: f32[3, 8, 3, 3], b: f32[8] | (mul (conv_transpose2d x w b) 0.5) => (conv_transpose2d x (mul w 0.5) (mul b 0.5))"),
        // conv_transpose3d(x, W, b) * s = conv_transpose3d(x, W * s, b * s) for a scalar s.
        scale!("conv-transpose3d-scale", "(mul (conv_transpose3d ?x ?w ?b ?a) ?c)", Op::ConvTranspose3d, Op::Mul, true,
            "x: f32[2, 3, 4, 4, 4], w: f32[3, 8, 3, 3, 3], b: f32[8] | (mul (conv_transpose3d x w b) 2.0) => (conv_transpose3d x (mul w 2.0) (mul b 2.0))"),
        // mean_hw(conv_transpose2d(x, W, b)) = (sum_hw x) @ (sum_k W) / (Ho Wo) + b.
        gap!("mean-of-conv-transpose2d", "(mean (conv_transpose2d ?x ?w ?b ?a) ?r)", Op::ConvTranspose2d, true, false,
            "x: f32[2, 3, 5, 5], w: f32[3, 8, 3, 3], b: f32[8] | (mean (conv_transpose2d x w b @stride=[2,2]) @dim=[2,3];keepdim=true) => (reshape (add (div (matmul (sum x @dim=[2,3]) (sum w @dim=[2,3])) 121.0) b) @shape=[2,8,1,1])"),
        // mean_dhw(conv_transpose3d(x, W, b)) = (sum_dhw x) @ (sum_k W) / (Do Ho Wo) + b.
        gap!("mean-of-conv-transpose3d", "(mean (conv_transpose3d ?x ?w ?b ?a) ?r)", Op::ConvTranspose3d, true, false,
            "x: f32[2, 3, 2, 2, 2], w: f32[3, 4, 3, 3, 3], b: f32[4] | (mean (conv_transpose3d x w b) @dim=[2,3,4]) => (add (div (matmul (sum x @dim=[2,3,4]) (sum w @dim=[2,3,4])) 64.0) b)"),
        // adaptive_avg_pool2d(conv_transpose2d(x, W, b), 1) is the same mean, keepdim.
        gap!("pool-of-conv-transpose2d", "(adaptive_avg_pool2d (conv_transpose2d ?x ?w ?b ?a) ?r)", Op::ConvTranspose2d, true, true,
            "x: f32[2, 3, 4, 4], w: f32[3, 8, 2, 2], b: f32[8] | (adaptive_avg_pool2d (conv_transpose2d x w b) @output_size=[1,1]) => (reshape (add (div (matmul (sum x @dim=[2,3]) (sum w @dim=[2,3])) 25.0) b) @shape=[2,8,1,1])"),
    ]
}
