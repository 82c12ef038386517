//! A norm applied at each tap of a window kernel (`plan/norm_apply.rs` decides it): the
//! norm's region writes only its per-row statistics (`reduction::BatchStats`), and the
//! window kernel's prologue normalizes the pooled input's element at the tap from them,
//! as the norm's own kernel would: `(x - mean) * rstd`, then the affine weight and bias.
//! A training-mode batch norm's statistics are its batch mean and unbiased variance (the
//! running statistics' update reads them too), the biased variance recovered from the
//! unbiased one; a group, instance or layer norm's are its row mean and rstd. The row of
//! an element is the row-major index of its row dims (a group norm's channel divided by
//! the channels per group), the order the reduction template numbers its rows in.

use super::statements::{align, IndexSource, Program, Sp};
use super::ty::{compute_ty, float_lit};
use drtc_ir::{Attr, DType, Graph, NodeId, Op};

/// A norm that a window kernel applies in its prologue: the nodes of its region (`norm`
/// among them) computed at each tap, the norm from the statistics its region's kernel
/// writes (`reduction::batch_stats_names`) instead of its written result.
#[derive(Clone, Copy, Debug)]
pub struct TapNorm<'a> {
    pub nodes: &'a [NodeId],
    pub norm: NodeId,
}

/// The kernel's parameters for a [`TapNorm`]'s two statistics.
pub(super) const STATS_PARAMS: [&str; 2] = ["norm_mean", "norm_stat"];

/// Norm `n` at a tap from its region's statistics, indexed by `ix` (whose dims from `lead`
/// on are the window's). Returns the result and the statements that are the same at every
/// tap (the statistics, when their row follows leading dims only).
pub(super) fn apply_norm(
    g: &Graph,
    prog: &mut Program,
    n: NodeId,
    (ix, lead): (&dyn IndexSource, usize),
) -> Option<(usize, Vec<usize>)> {
    let node = g.node(n);
    let training = node.attrs.get("training").and_then(Attr::as_bool) == Some(true);
    // a batch norm's statistics are its mean and unbiased variance, the others' mean, rstd
    let batch = match node.op {
        Op::BatchNorm if training => true,
        Op::GroupNorm | Op::InstanceNorm | Op::LayerNorm => false,
        _ => return None,
    };
    let space = drtc_passes::fuse::reduce_space(g, n)?;
    let x = node.inputs[0];
    let xs = &g.ty(x).shape;
    let out_dt = g.ty(node.outputs[0]).dtype;
    let dt = if out_dt == DType::F64 {
        DType::F64
    } else {
        DType::F32
    };
    let ct = compute_ty(dt);
    let identity: Vec<usize> = (0..xs.len()).collect();
    let xv = prog.value(g, x, Sp::Tap, align(xs, xs, &identity), ix);
    // the row: row-major over the row dims, a group norm's channel by its group
    let (mut terms, mut used, mut stride) = (vec![], vec![], 1i64);
    for d in (0..space.domain.len()).rev() {
        let size = space.domain[d];
        let (comp, rows) = match space.groups {
            Some((gd, groups)) if gd == d => {
                let per = size / groups.max(1);
                (format!("({} // {per})", ix.dim_index(Sp::Tap, d)), groups)
            }
            _ if size == 1 || space.reduced[d] => continue,
            _ => (ix.dim_index(Sp::Tap, d), size),
        };
        if rows > 1 {
            terms.push(format!("{comp} * {stride}"));
            used.push(d);
        }
        stride *= rows;
    }
    let row = if terms.is_empty() {
        "0".to_string()
    } else {
        terms.join(" + ")
    };
    let m = ix.mask_of(Sp::Tap, &used);
    let load = |prog: &mut Program, p: &str, other: &str| {
        let code = format!("tl.load({p} + {row}, mask={m}, other={other}).to({ct})");
        prog.expr(Sp::Tap, dt, code, vec![])
    };
    let [mp, sp] = STATS_PARAMS;
    let mean = load(prog, mp, "0");
    let stat = load(prog, sp, "1");
    let v = |prog: &Program, i: usize| prog.var(i).to_string();
    let rstd = if batch {
        // the biased variance from the unbiased one the kernel writes
        let cols: i64 = space
            .domain
            .iter()
            .zip(&space.reduced)
            .filter(|(_, &r)| r)
            .map(|(&s, _)| s)
            .product();
        let (cf, denom) = (
            float_lit(cols as f64),
            float_lit((cols as f64 - 1.0).max(1.0)),
        );
        let eps = float_lit(node.attrs.get("eps").and_then(Attr::as_float)?);
        let code = format!("tl.rsqrt({} * {denom} / {cf} + {eps})", v(prog, stat));
        prog.expr(Sp::Tap, dt, code, vec![stat])
    } else {
        stat
    };
    let invariant = used.iter().all(|&d| d < lead);
    let seeds = if invariant {
        vec![mean, stat, rstd]
    } else {
        vec![]
    };
    let dcode = format!("{} - {}", v(prog, xv), v(prog, mean));
    let d = prog.expr(Sp::Tap, dt, dcode, vec![xv, mean]);
    let ycode = format!("{} * {}", v(prog, d), v(prog, rstd));
    let mut y = prog.expr(Sp::Tap, dt, ycode, vec![d, rstd]);
    // the affine weight and bias: per channel, or over a layer norm's trailing dims
    for (k, sym) in [(1usize, "*"), (2, "+")] {
        if let Some(&p) = node.inputs.get(k) {
            let ps = &g.ty(p).shape;
            let map = if node.op == Op::LayerNorm {
                align(ps, xs, &identity)
            } else {
                vec![(ps[0] != 1).then_some(1)]
            };
            let w = prog.value(g, p, Sp::Tap, map, ix);
            let code = format!("{} {sym} {}", v(prog, y), v(prog, w));
            y = prog.expr(Sp::Tap, out_dt, code, vec![y, w]);
        }
    }
    Some((y, seeds))
}
