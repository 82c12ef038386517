//! Normalizations followed by a reduction. A mean of a group norm over its spatial dims (or
//! over everything but the batch) never needs the normalized tensor: per channel,
//! `mean_s((x - mu_g) * r_g * w + b) = (m_c - mu_g) * r_g * w + b`, where `m_c` and `v_c`
//! are the channel's spatial mean and (population) variance, the group mean `mu_g` is the
//! mean of its `m_c` and the group variance is `mean_c(v_c + (m_c - mu_g)^2)` (the law of
//! total variance: every channel of a group holds the same number of elements). Exact in
//! real arithmetic; both moments are one pass over `x` (the reduction template computes a
//! mean and a variance of the same operand together), against the two passes, the write
//! and the read again of normalizing first.

use crate::egraph::rule::{Build, Rule};
use drtc_ir::{Attr, Op};

/// `mean(group_norm(x, w?, b?), dims)` -> the channel-moment form (module documentation)
/// when `dims` are the spatial dims or every dim but the batch.
fn mean_of_group_norm(b: &mut Build, affine: bool) -> Option<egg::Id> {
    let m = b.m();
    let xt = m.ty("?x")?.clone();
    let rank = xt.rank();
    let groups = m.attr("?a", "num_groups").and_then(Attr::as_int)?;
    let eps = m.attr("?a", "eps").and_then(Attr::as_float)?;
    let dims = m.dims("?r", rank)?;
    let keep = m.keepdim("?r");
    let spatial: Vec<usize> = (2..rank).collect();
    let all_but_batch: Vec<usize> = (1..rank).collect();
    let over_channels = dims == all_but_batch;
    if rank < 3 || !xt.dtype.is_float() || groups <= 0 || (dims != spatial && !over_channels) {
        return None;
    }
    let (n, c) = (xt.shape[0], xt.shape[1]);
    if c % groups != 0 || xt.numel() == 0 {
        return None;
    }
    let k = c / groups;
    let x = m.id("?x");
    let sp = Attr::Ints(spatial.iter().map(|&d| d as i64).collect());
    let cm = b.op(Op::Mean, &[x], [("dim", sp.clone())])?; // [N, C]
    let cv = b.op(
        Op::Var,
        &[x],
        [("dim", sp), ("correction", Attr::Float(0.0))],
    )?;
    let grouped = Attr::Ints(vec![n, groups, k]);
    let cm3 = b.op(Op::Reshape, &[cm], [("shape", grouped.clone())])?;
    let cv3 = b.op(Op::Reshape, &[cv], [("shape", grouped)])?;
    let over_k = [("dim", Attr::Ints(vec![2])), ("keepdim", Attr::Bool(true))];
    let gm = b.op(Op::Mean, &[cm3], over_k.clone())?; // [N, G, 1]
    let dev = b.op(Op::Sub, &[cm3, gm], [])?;
    let sq = b.op(Op::Mul, &[dev, dev], [])?;
    let total = b.op(Op::Add, &[cv3, sq], [])?;
    let gv = b.op(Op::Mean, &[total], over_k)?;
    let e = b.constant(eps, xt.dtype);
    let shifted = b.op(Op::Add, &[gv, e], [])?;
    let r = b.op(Op::Rsqrt, &[shifted], [])?;
    let z = b.op(Op::Mul, &[dev, r], [])?;
    let mut y = b.op(Op::Reshape, &[z], [("shape", Attr::Ints(vec![n, c]))])?;
    if affine {
        let (w, bias) = (b.m().id("?w"), b.m().id("?b"));
        y = b.op(Op::Mul, &[y, w], [])?;
        y = b.op(Op::Add, &[y, bias], [])?;
    }
    if over_channels {
        y = b.op(Op::Mean, &[y], [("dim", Attr::Ints(vec![1]))])?; // [N]
    }
    if keep {
        let mut shape = vec![n, if over_channels { 1 } else { c }];
        shape.extend(std::iter::repeat_n(1, rank - 2));
        y = b.op(Op::Reshape, &[y], [("shape", Attr::Ints(shape))])?;
    }
    Some(y)
}

pub fn rules() -> Vec<Rule> {
    vec![
        // mean_s(group_norm(x, w, b)) from the channels' spatial moments.
        Rule::build("mean-of-group-norm", "(mean (group_norm ?x ?w ?b ?a) ?r)", |b| mean_of_group_norm(b, true))
            .test("x: f32[2, 4, 16, 16], w: f32[4], b: f32[4] | (mean (group_norm x w b @num_groups=2) @dim=[2,3]) => (add (mul (reshape (mul (sub (reshape (mean x @dim=[2,3]) @shape=[2,2,2]) (mean (reshape (mean x @dim=[2,3]) @shape=[2,2,2]) @dim=[2];keepdim=true)) (rsqrt (add (mean (add (reshape (var x @dim=[2,3];correction=0.0) @shape=[2,2,2]) (mul (sub (reshape (mean x @dim=[2,3]) @shape=[2,2,2]) (mean (reshape (mean x @dim=[2,3]) @shape=[2,2,2]) @dim=[2];keepdim=true)) (sub (reshape (mean x @dim=[2,3]) @shape=[2,2,2]) (mean (reshape (mean x @dim=[2,3]) @shape=[2,2,2]) @dim=[2];keepdim=true)))) @dim=[2];keepdim=true) 1e-05))) @shape=[2,4]) w) b)"),
        // mean over (C, spatial) of group_norm(x) without an affine: the channel form's mean.
        Rule::build("mean-of-group-norm-plain", "(mean (group_norm ?x ?a) ?r)", |b| mean_of_group_norm(b, false))
            .test("x: f32[2, 4, 256] | (mean (group_norm x @num_groups=2) @dim=[1,2];keepdim=true) => (reshape (mean (reshape (mul (sub (reshape (mean x @dim=[2]) @shape=[2,2,2]) (mean (reshape (mean x @dim=[2]) @shape=[2,2,2]) @dim=[2];keepdim=true)) (rsqrt (add (mean (add (reshape (var x @dim=[2];correction=0.0) @shape=[2,2,2]) (mul (sub (reshape (mean x @dim=[2]) @shape=[2,2,2]) (mean (reshape (mean x @dim=[2]) @shape=[2,2,2]) @dim=[2];keepdim=true)) (sub (reshape (mean x @dim=[2]) @shape=[2,2,2]) (mean (reshape (mean x @dim=[2]) @shape=[2,2,2]) @dim=[2];keepdim=true)))) @dim=[2];keepdim=true) 1e-05))) @shape=[2,4]) @dim=[1]) @shape=[2,1,1])"),
    ]
}
