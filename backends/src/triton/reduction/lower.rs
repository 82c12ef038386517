//! Lowering a reduction region's nodes to a row program: the index space of rows and
//! columns, the statements of each op, and the accumulator code the strategies share.

use super::space::Dims;
use crate::triton::kernel::{decompose, emit_stmts};
use crate::triton::statements::{align, Code, DimMap, IndexSource, Program, RedKind, ScanKind, Sp};
use crate::triton::ty::{compute_ty, float_lit, storage_ty};
use drtc_ir::{Attr, DType, Graph, NodeId, Op, ValueId};
use drtc_passes::fuse::{space_of, ReduceSpace, Space};
use std::collections::HashMap;
use std::fmt::Write;

impl IndexSource for Dims {
    fn dim_index(&self, sp: Sp, d: usize) -> String {
        match sp {
            Sp::Full => self.full[d].clone(),
            Sp::Row => self.row[d].clone(),
            Sp::Tap => unreachable!("a reduction kernel has no window taps"),
        }
    }
    fn mask(&self, sp: Sp) -> String {
        match sp {
            Sp::Full => "mask".into(),
            Sp::Row => "rmask".into(),
            Sp::Tap => unreachable!("a reduction kernel has no window taps"),
        }
    }
    fn flat_columns(&self, sp: Sp, map: &DimMap) -> Option<Vec<(usize, String)>> {
        match sp {
            Sp::Full => super::flat::flat_terms(self, map),
            Sp::Row | Sp::Tap => None,
        }
    }
}

/// Python lines (at `indent`) merging one block of `x` into a running mean and M2 (Chan et
/// al.): the block's mean and squared deviations around it, then the merge. `nb` (the
/// block's valid columns) must be bound; `tot` becomes the columns seen so far. `guarded`
/// divides by at least one, for blocks past the end of a split chunk (`nb` = 0).
fn welford_merge(out: &mut String, indent: &str, x: &str, (mean, m2): (&str, &str), guarded: bool) {
    let (nb, tot) = if guarded {
        ("tl.maximum(nb, 1.0)", "tl.maximum(cstart + nb, 1.0)")
    } else {
        ("nb", "cstart + nb")
    };
    for line in [
        format!("bmean = tl.sum(tl.where(mask, {x}, 0.0), axis=1) / {nb}"),
        format!("bdev = tl.where(mask, {x} - bmean[:, None], 0.0)"),
        "bm2 = tl.sum(bdev * bdev, axis=1)".to_string(),
        format!("tot = {tot}"),
        format!("delta = bmean - {mean}"),
        format!("{mean} = {mean} + delta * (nb / tot)"),
        format!("{m2} = {m2} + bm2 + delta * delta * (cstart * (nb / tot))"),
    ] {
        writeln!(out, "{indent}{line}").unwrap();
    }
}

/// Smallest tile height (rows per program) whose moments accumulate per lane: a tall tile
/// spreads each row's columns over warps, so a per-block merge costs a shared-memory
/// reduction and a barrier per block; a short wide tile reduces a block within warps, and
/// three per-lane accumulators would cost it registers (occupancy) instead. Measured on the
/// H200 (`bench/results/level2_h200_7ae8965_default_vs_compile.md`, then
/// `level2_sub_h200_7ae8965-c_default_vs_compile.md` with this rule): channels-last instance
/// norm and spatial means (64-row tiles) gained, NCHW group norms (2 x 2048 tiles) lost.
pub(super) const LANE_MOMENTS_MIN_ROWS: u64 = 16;

/// How a looped pass keeps a row's mean and M2: the names of the running values (mean, M2,
/// count), per lane or per row (`lanes`: tiles of at least [`LANE_MOMENTS_MIN_ROWS`] rows),
/// and their compute type.
pub(super) struct Moments<'a> {
    pub(super) names: (&'a str, &'a str, &'a str),
    pub(super) lanes: bool,
    pub(super) ct: &'a str,
}

impl Moments<'_> {
    /// Python lines (before the column loop) starting the running values.
    pub(super) fn init(&self, out: &mut String) {
        if self.lanes {
            welford_init(out, "    ", self.names, self.ct);
        } else {
            for v in [self.names.0, self.names.1] {
                writeln!(out, "    {v} = tl.zeros([BLOCK_R], {})", self.ct).unwrap();
            }
        }
    }

    /// Python lines folding one block of `x` in (inside the loop; per lane, also the merge
    /// after it). `valid` is the block's valid columns (a per-row merge needs it); `guarded`
    /// as for [`welford_merge`].
    pub(super) fn update(&self, out: &mut String, x: &str, valid: &str, guarded: bool) {
        if self.lanes {
            welford_lanes(out, "        ", x, self.names, self.ct);
            welford_finish(out, "    ", self.names);
        } else {
            writeln!(out, "        nb = {valid}.to({})", self.ct).unwrap();
            welford_merge(out, "        ", x, (self.names.0, self.names.1), guarded);
        }
    }
}

/// Python lines (at `indent`, before the column loop) starting per-lane moments of a
/// `[BLOCK_R, BLOCK_C]` tile: each lane keeps its own running mean, M2 and count.
fn welford_init(out: &mut String, indent: &str, (mean, m2, n): (&str, &str, &str), ct: &str) {
    for v in [mean, m2, n] {
        writeln!(out, "{indent}{v} = tl.zeros([BLOCK_R, BLOCK_C], {ct})").unwrap();
    }
}

/// Python lines (at `indent`, inside the column loop) folding one block of `x` into the
/// per-lane moments (Welford's update, no cross-lane work in the loop). A lane is valid in
/// a block only if it was valid in every earlier block (masks cut only the tail of the
/// columns), so every valid lane has seen `cstart // BLOCK_C + 1` elements: one scalar
/// reciprocal per block instead of a division per element.
fn welford_lanes(
    out: &mut String,
    indent: &str,
    x: &str,
    (mean, m2, n): (&str, &str, &str),
    ct: &str,
) {
    for line in [
        "rn = 1.0 / (cstart // BLOCK_C + 1)".to_string(),
        format!("{n} = {n} + mask.to({ct})"),
        format!("delta = tl.where(mask, {x} - {mean}, 0.0)"),
        format!("{mean} = {mean} + delta * rn"),
        format!("{m2} = {m2} + delta * tl.where(mask, {x} - {mean}, 0.0)"),
    ] {
        writeln!(out, "{indent}{line}").unwrap();
    }
}

/// Python lines (at `indent`, after the column loop) merging the lanes of each row: the
/// row's mean, M2 and count replace the per-lane tensors of the same names. The merge of
/// many parts at once (exact in real arithmetic): `n = sum n_l`, `mean = sum n_l mean_l /
/// n`, `M2 = sum M2_l + sum n_l (mean_l - mean)^2`, with built-in sums only (a custom
/// `tl.reduce` combine costs Triton's CPU interpreter a Python call per element).
fn welford_finish(out: &mut String, indent: &str, (mean, m2, n): (&str, &str, &str)) {
    for line in [
        format!("rcount = tl.sum({n}, axis=1)"),
        format!("rmean = tl.sum({n} * {mean}, axis=1) / tl.maximum(rcount, 1.0)"),
        format!("rdev = {mean} - rmean[:, None]"),
        format!("{m2} = tl.sum({m2}, axis=1) + tl.sum({n} * rdev * rdev, axis=1)"),
        format!("{mean} = rmean"),
        format!("{n} = rcount"),
    ] {
        writeln!(out, "{indent}{line}").unwrap();
    }
}

pub(super) fn comps_decompose(out: &mut String, indent: &str, flat: &str, comps: &[(String, i64)]) {
    let shape: Vec<i64> = comps.iter().map(|c| c.1).collect();
    let names: Vec<String> = comps.iter().map(|c| c.0.clone()).collect();
    decompose(out, indent, flat, &shape, &names);
}

pub(super) struct Builder<'g> {
    pub(super) g: &'g Graph,
    pub(super) prog: Program,
    pub(super) dims: Dims,
    pub(super) space: ReduceSpace,
    pub(super) cols: u64,
    pub(super) stats: Vec<(NodeId, usize, usize)>,
    /// Each other norm's row mean and rstd statements, which a statistics-only kernel
    /// stores (a window kernel then applies the norm: `plan/norm_apply.rs`).
    pub(super) row_stats: Vec<(NodeId, usize, usize)>,
    /// Moment pairs (sum of x, sum of squared deviations, x): a looped kernel computes
    /// both in one pass with Chan's parallel update instead of two passes.
    pub(super) welford: Vec<(usize, usize, usize)>,
    /// The (mean, deviation, variance) statements of each operand whose moments are taken.
    pub(super) moments: HashMap<usize, (usize, usize, usize)>,
    /// Softmax-like pairs (row max m of x, row sum s of exp(x - m), x): a looped kernel
    /// computes both in one pass (the online rescaling of the running sum) instead of two.
    pub(super) online: Vec<(usize, usize, usize)>,
    /// The (max, exponentials, sum) statements of each operand a softmax-like reduces, so
    /// that two of them over the same operand share one pass.
    pub(super) exp_sums: HashMap<(usize, DType), (usize, usize, usize)>,
}

impl Builder<'_> {
    fn identity(&self) -> Vec<usize> {
        (0..self.space.domain.len()).collect()
    }
    fn full(&mut self, dtype: DType, code: String, deps: Vec<usize>) -> usize {
        self.prog.expr(Sp::Full, dtype, code, deps)
    }
    fn row(&mut self, dtype: DType, code: String, deps: Vec<usize>) -> usize {
        self.prog.expr(Sp::Row, dtype, code, deps)
    }
    fn v(&self, i: usize) -> String {
        self.prog.var(i).to_string()
    }
    /// The reduced operand, read over the whole domain.
    fn operand(&mut self, v: ValueId) -> usize {
        let map = align(&self.g.ty(v).shape, &self.space.domain, &self.identity());
        self.prog.value(self.g, v, Sp::Full, map, &self.dims)
    }
    /// mean and biased variance of `x` over the columns.
    fn moments(&mut self, x: usize, dt: DType) -> (usize, usize, usize) {
        if let Some(&m) = self.moments.get(&x) {
            return m;
        }
        let c = float_lit(self.cols as f64);
        let s = self.prog.reduce(RedKind::Sum, x);
        let mean = self.row(dt, format!("{} / {c}", self.v(s)), vec![s]);
        let d = self.full(
            dt,
            format!("{} - {}", self.v(x), self.v(mean)),
            vec![x, mean],
        );
        let dd = self.full(dt, format!("{} * {}", self.v(d), self.v(d)), vec![d]);
        let q = self.prog.reduce(RedKind::Sum, dd);
        let var = self.row(dt, format!("{} / {c}", self.v(q)), vec![q]);
        self.welford.push((s, q, x));
        self.moments.insert(x, (mean, d, var));
        (mean, d, var)
    }
    fn affine(&mut self, node: NodeId, mut y: usize, channel: bool) -> usize {
        let n = self.g.node(node);
        let out_dt = self.g.ty(n.outputs[0]).dtype;
        for (k, sym) in [(1usize, "*"), (2, "+")] {
            if let Some(&p) = n.inputs.get(k) {
                let map = if channel {
                    vec![if self.g.ty(p).shape[0] == 1 {
                        None
                    } else {
                        Some(1)
                    }]
                } else {
                    align(&self.g.ty(p).shape, &self.space.domain, &self.identity())
                };
                let w = self.prog.value(self.g, p, Sp::Full, map, &self.dims);
                y = self.full(
                    out_dt,
                    format!("{} {sym} {}", self.v(y), self.v(w)),
                    vec![y, w],
                );
            }
        }
        y
    }

    /// The row max `m`, `e = exp(x - m)` and the row sum `s` of `e`: softmax-likes.
    fn exp_sum(&mut self, x: usize, dt: DType) -> (usize, usize, usize) {
        if let Some(&known) = self.exp_sums.get(&(x, dt)) {
            return known;
        }
        let m = self.prog.reduce(RedKind::Max, x);
        let e = self.full(
            dt,
            format!("tl.exp({} - {})", self.v(x), self.v(m)),
            vec![x, m],
        );
        let s = self.prog.reduce(RedKind::Sum, e);
        self.online.push((m, s, x));
        self.exp_sums.insert((x, dt), (m, e, s));
        (m, e, s)
    }

    pub(super) fn node(&mut self, node: NodeId) -> Option<()> {
        let g = self.g;
        let n = g.node(node);
        let out = n.outputs[0];
        let out_ty = g.ty(out);
        let dt = if out_ty.dtype == DType::F64 {
            DType::F64
        } else {
            DType::F32
        };
        let f = |k: &str| n.attrs.get(k).and_then(Attr::as_float);
        let c = float_lit(self.cols as f64);
        if drtc_passes::fuse::reduce_space(g, node).is_none() {
            // pointwise, in the space of its result
            let sp = space_of(&self.space, &out_ty.shape)?;
            let (psp, use_dims) = match sp {
                Space::Full | Space::RowKeep => (
                    if sp == Space::Full { Sp::Full } else { Sp::Row },
                    self.identity(),
                ),
                Space::RowDrop => (
                    Sp::Row,
                    (0..self.space.domain.len())
                        .filter(|&d| !self.space.reduced[d])
                        .collect(),
                ),
            };
            let args: Vec<usize> = n
                .inputs
                .iter()
                .map(|&v| {
                    let map = align(&g.ty(v).shape, &out_ty.shape, &use_dims);
                    self.prog.value(g, v, psp, map, &self.dims)
                })
                .collect();
            self.prog.pointwise(g, node, psp, args)?;
            return Some(());
        }
        if !g.ty(n.inputs[0]).dtype.is_float() {
            return None;
        }
        let x = self.operand(n.inputs[0]);
        let (sp, result) = match n.op {
            Op::Sum => (Sp::Row, self.prog.reduce(RedKind::Sum, x)),
            Op::Max => (Sp::Row, self.prog.reduce(RedKind::Max, x)),
            Op::Min => (Sp::Row, self.prog.reduce(RedKind::Min, x)),
            Op::Prod => (Sp::Row, self.prog.reduce(RedKind::Prod, x)),
            Op::Argmax => (Sp::Row, self.prog.reduce(RedKind::ArgMax, x)),
            Op::Argmin => (Sp::Row, self.prog.reduce(RedKind::ArgMin, x)),
            Op::Mean | Op::AdaptiveAvgPool1d | Op::AdaptiveAvgPool2d | Op::AdaptiveAvgPool3d => {
                let s = self.prog.reduce(RedKind::Sum, x);
                (
                    Sp::Row,
                    self.row(dt, format!("{} / {c}", self.v(s)), vec![s]),
                )
            }
            Op::Var | Op::Std => {
                let (_, _, var) = self.moments(x, dt);
                let corr = f("correction")?;
                let denom = float_lit((self.cols as f64 - corr).max(0.0));
                let unb = self.row(dt, format!("{} * {c} / {denom}", self.v(var)), vec![var]);
                if n.op == Op::Std {
                    (
                        Sp::Row,
                        self.row(dt, format!("tl.sqrt({})", self.v(unb)), vec![unb]),
                    )
                } else {
                    (Sp::Row, unb)
                }
            }
            Op::Norm => {
                let p = f("p")?;
                let ax = self.full(dt, format!("tl.abs({})", self.v(x)), vec![x]);
                if p == 2.0 {
                    let sq = self.full(dt, format!("{} * {}", self.v(x), self.v(x)), vec![x]);
                    let s = self.prog.reduce(RedKind::Sum, sq);
                    (
                        Sp::Row,
                        self.row(dt, format!("tl.sqrt({})", self.v(s)), vec![s]),
                    )
                } else if p == 1.0 {
                    (Sp::Row, self.prog.reduce(RedKind::Sum, ax))
                } else if p == f64::INFINITY {
                    (Sp::Row, self.prog.reduce(RedKind::Max, ax))
                } else if p == f64::NEG_INFINITY {
                    (Sp::Row, self.prog.reduce(RedKind::Min, ax))
                } else if p > 0.0 {
                    let pl = float_lit(p);
                    let pw = self.full(
                        dt,
                        format!("tl.exp2({pl} * tl.log2({}))", self.v(ax)),
                        vec![ax],
                    );
                    let s = self.prog.reduce(RedKind::Sum, pw);
                    (
                        Sp::Row,
                        self.row(
                            dt,
                            format!("tl.exp2(tl.log2({}) / {pl})", self.v(s)),
                            vec![s],
                        ),
                    )
                } else {
                    return None;
                }
            }
            Op::Logsumexp => {
                let (m, _, s) = self.exp_sum(x, dt);
                (
                    Sp::Row,
                    self.row(
                        dt,
                        format!("{} + tl.log({})", self.v(m), self.v(s)),
                        vec![m, s],
                    ),
                )
            }
            Op::Softmax => {
                let (_, e, s) = self.exp_sum(x, dt);
                (
                    Sp::Full,
                    self.full(dt, format!("{} / {}", self.v(e), self.v(s)), vec![e, s]),
                )
            }
            Op::LogSoftmax => {
                let (m, _, s) = self.exp_sum(x, dt);
                (
                    Sp::Full,
                    self.full(
                        dt,
                        format!("({} - {}) - tl.log({})", self.v(x), self.v(m), self.v(s)),
                        vec![x, m, s],
                    ),
                )
            }
            Op::BatchNorm | Op::InstanceNorm | Op::GroupNorm | Op::LayerNorm => {
                if n.op == Op::BatchNorm
                    && n.attrs.get("training").and_then(Attr::as_bool) != Some(true)
                {
                    return None;
                }
                let eps = float_lit(f("eps")?);
                let (mean, d, var) = self.moments(x, dt);
                let rstd = self.row(dt, format!("tl.rsqrt({} + {eps})", self.v(var)), vec![var]);
                let y = self.full(
                    dt,
                    format!("{} * {}", self.v(d), self.v(rstd)),
                    vec![d, rstd],
                );
                if n.op == Op::BatchNorm {
                    let denom = float_lit((self.cols as f64 - 1.0).max(1.0));
                    let unb = self.row(dt, format!("{} * {c} / {denom}", self.v(var)), vec![var]);
                    self.stats.push((node, mean, unb));
                } else {
                    self.row_stats.push((node, mean, rstd));
                }
                let channel = n.op != Op::LayerNorm;
                (Sp::Full, self.affine(node, y, channel))
            }
            Op::RmsNorm => {
                let eps = match f("eps") {
                    Some(e) => float_lit(e),
                    None if dt == DType::F64 => float_lit(f64::EPSILON),
                    None => float_lit(f32::EPSILON as f64),
                };
                let sq = self.full(dt, format!("{} * {}", self.v(x), self.v(x)), vec![x]);
                let s = self.prog.reduce(RedKind::Sum, sq);
                let r = self.row(
                    dt,
                    format!("tl.rsqrt({} / {c} + {eps})", self.v(s)),
                    vec![s],
                );
                let y = self.full(dt, format!("{} * {}", self.v(x), self.v(r)), vec![x, r]);
                (Sp::Full, self.affine(node, y, false))
            }
            // a scan along the columns (the row strategy carries it across column blocks)
            Op::Cumsum | Op::Cumprod => {
                let kind = if n.op == Op::Cumsum {
                    ScanKind::Sum
                } else {
                    ScanKind::Prod
                };
                let reverse = n.attrs.get("reverse").and_then(Attr::as_bool) == Some(true);
                (Sp::Full, self.prog.scan(kind, x, reverse))
            }
            // no reduction template: a region holding one of these falls back to PyTorch
            // (an op without a reduction space took the pointwise path above; the planner
            // keeps losses and running extremes out of reduction regions)
            _ => return None,
        };
        self.prog.vars.insert((out, sp), result);
        Some(())
    }
}

/// The store of row-shaped output `k` (statement `i`) at `indent`: a region output in its
/// own dtype, a batch statistic after the outputs in its statement's. `first`: the index
/// (`s`, `chunk`) whose program alone stores it, where several programs share a row.
#[allow(clippy::too_many_arguments)]
pub(super) fn row_store(
    out: &mut String,
    g: &Graph,
    prog: &Program,
    outputs: &[ValueId],
    (k, i): (usize, usize),
    indent: &str,
    first: Option<&str>,
) {
    let st = storage_ty(if k >= outputs.len() {
        prog.stmts[i].dtype
    } else {
        g.ty(outputs[k]).dtype
    });
    let only = first.map_or(String::new(), |f| format!(" & ((rows * 0 + {f}) == 0)"));
    writeln!(
        out,
        "{indent}tl.store(out{k} + rows, ({} + tl.zeros([BLOCK_R, 1], {})).to({st}), mask=rmask{only})",
        prog.var(i),
        compute_ty(prog.stmts[i].dtype)
    )
    .unwrap();
}

pub(super) fn reduce_line(kind: RedKind, x: &str, dt: DType) -> String {
    let ninf = "float('-inf')";
    let pinf = "float('inf')";
    let _ = dt;
    match kind {
        RedKind::Sum => format!("tl.sum(tl.where(mask, {x}, 0.0), axis=1)"),
        RedKind::Max => format!("tl.max(tl.where(mask, {x}, {ninf}), axis=1)"),
        RedKind::Min => format!("tl.min(tl.where(mask, {x}, {pinf}), axis=1)"),
        RedKind::Prod => format!("tl.reduce(tl.where(mask, {x}, 1.0), 1, _drtc_mul)"),
        RedKind::ArgMax => format!("tl.argmax(tl.where(mask, {x}, {ninf}), axis=1)"),
        RedKind::ArgMin => format!("tl.argmin(tl.where(mask, {x}, {pinf}), axis=1)"),
    }
}

/// Reduction statement `i`'s kind and input.
pub(super) fn reduce_of(prog: &Program, i: usize) -> (RedKind, usize) {
    match prog.stmts[i].code {
        Code::Reduce { kind, input } => (kind, input),
        Code::Expr(_) | Code::Scan { .. } => unreachable!("statement {i} is not a reduction"),
    }
}

/// Whether reduction input `input` needs, besides the `available` statements, only
/// statements on the loaded block: then its reduction can share a loop (or a split stage)
/// with another one.
pub(super) fn needs_only_block(
    prog: &Program,
    input: usize,
    available: &dyn Fn(usize) -> bool,
) -> bool {
    prog.closure(&[input], available)
        .iter()
        .all(|&k| matches!(prog.stmts[k].code, Code::Expr(_)) && prog.stmts[k].space == Sp::Full)
}

/// A group of reductions that share one loop over column blocks (siblings that need only
/// the loaded block): each one's accumulator `acc<i>` (and index `idx<i>`) before the loop.
pub(super) fn group_init(out: &mut String, prog: &Program, group: &[usize]) {
    for &i in group {
        let (kind, input) = reduce_of(prog, i);
        let ct = compute_ty(prog.stmts[input].dtype);
        acc_init(
            out,
            kind,
            &format!("acc{i}"),
            &format!("idx{i}"),
            "BLOCK_R",
            ct,
        );
    }
}

/// Inside the loop: the statements the group's inputs need (those not `available`), then
/// each accumulator's update (`first_col`: the block's first column).
pub(super) fn group_update(
    out: &mut String,
    prog: &Program,
    group: &[usize],
    available: &dyn Fn(usize) -> bool,
    first_col: &str,
) {
    let inputs: Vec<usize> = group.iter().map(|&i| reduce_of(prog, i).1).collect();
    let need = prog.closure(&inputs, available);
    emit_stmts(out, prog, &need, "        ");
    for &i in group {
        let (kind, input) = reduce_of(prog, i);
        let (acc, idx) = (format!("acc{i}"), format!("idx{i}"));
        let dtype = prog.stmts[i].dtype;
        acc_update(out, kind, prog.var(input), dtype, &acc, &idx, first_col);
    }
}

/// Initializes a running accumulator of `width` rows for `kind` (and the index that an
/// arg-reduction carries along); a sum's has a lane per column of the block.
pub(super) fn acc_init(
    out: &mut String,
    kind: RedKind,
    acc: &str,
    idx: &str,
    width: &str,
    ct: &str,
) {
    let init = match kind {
        // a sum accumulates per lane and is reduced across lanes once, after the loop
        RedKind::Sum => format!("tl.zeros([{width}, BLOCK_C], {ct})"),
        RedKind::Prod => format!("tl.full([{width}], 1.0, {ct})"),
        RedKind::Max | RedKind::ArgMax => format!("tl.full([{width}], float('-inf'), {ct})"),
        RedKind::Min | RedKind::ArgMin => format!("tl.full([{width}], float('inf'), {ct})"),
    };
    writeln!(out, "    {acc} = {init}").unwrap();
    if matches!(kind, RedKind::ArgMax | RedKind::ArgMin) {
        writeln!(out, "    {idx} = tl.zeros([{width}], tl.int64)").unwrap();
    }
}

/// Python line (after the column loop) that turns a per-lane accumulator into one value
/// per row (sums; the other kinds reduce each block inside the loop).
pub(super) fn acc_finish(out: &mut String, kind: RedKind, acc: &str) {
    match kind {
        RedKind::Sum => writeln!(out, "    {acc} = tl.sum({acc}, axis=1)").unwrap(),
        RedKind::Prod | RedKind::Max | RedKind::Min | RedKind::ArgMax | RedKind::ArgMin => {}
    }
}

/// Folds one block of columns of `x` into the accumulator (inside the column loop);
/// `first_col` is the column of the block's first element, for arg-reductions.
pub(super) fn acc_update(
    out: &mut String,
    kind: RedKind,
    x: &str,
    dt: DType,
    acc: &str,
    idx: &str,
    first_col: &str,
) {
    let part = reduce_line(kind, x, dt);
    match kind {
        RedKind::Sum => writeln!(out, "        {acc} += tl.where(mask, {x}, 0.0)").unwrap(),
        RedKind::Prod => writeln!(out, "        {acc} = {acc} * {part}").unwrap(),
        RedKind::Max => writeln!(out, "        {acc} = tl.maximum({acc}, {part})").unwrap(),
        RedKind::Min => writeln!(out, "        {acc} = tl.minimum({acc}, {part})").unwrap(),
        RedKind::ArgMax | RedKind::ArgMin => {
            let (red, cmp) = if kind == RedKind::ArgMax {
                (reduce_line(RedKind::Max, x, dt), ">")
            } else {
                (reduce_line(RedKind::Min, x, dt), "<")
            };
            writeln!(out, "        bv = {red}").unwrap();
            writeln!(out, "        bi = {part}.to(tl.int64) + {first_col}").unwrap();
            writeln!(out, "        upd = bv {cmp} {acc}").unwrap();
            writeln!(out, "        {acc} = tl.where(upd, bv, {acc})").unwrap();
            writeln!(out, "        {idx} = tl.where(upd, bi, {idx})").unwrap();
        }
    }
}
