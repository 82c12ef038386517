//! The reduction template: reductions, softmax-like ops and normalizations over one
//! (rows x columns) space, with their pointwise producers and consumers.
//!
//! The domain's reduced dims index columns, the others rows (group_norm splits the channel
//! dim into a row part and a column part). Each program handles BLOCK_R rows.
//! Strategy (stated heuristic): when the padded row length next_pow2(C) <= 4096 the whole
//! row is loaded once (single pass, BLOCK_C = next_pow2(C)); otherwise every reduction
//! makes a looped pass over BLOCK_C = 2048 columns, recomputing its producers, and a last
//! pass writes the domain-shaped outputs. BLOCK_R fills a tile of 4096 elements (at most
//! 64 rows); 8 warps for tiles of 4096 elements or more, else 4.

use super::epilogue::contiguous_offset;
use super::kernel::{decompose, emit_stmts, ops_comment, signature, LaunchConfig, TritonKernel};
use super::program::{align, Code, IndexSource, Program, RedKind, Sp};
use super::ty::{compute_ty, float_lit, next_pow2, storage_ty};
use drtc_ir::{Attr, DType, Graph, NodeId, Op, ValueId};
use drtc_passes::fuse::{space_of, ReduceSpace, Space};
use std::fmt::Write;

/// Per-channel batch statistics a training-mode batch_norm kernel writes, so the host can
/// update the running statistics like PyTorch does.
#[derive(Clone, Debug)]
pub struct BatchStats {
    pub node: NodeId,
    /// Kernel output index of the batch mean and of the unbiased batch variance.
    pub mean_out: usize,
    pub var_out: usize,
    pub channels: i64,
}

struct Dims {
    /// index expression of each domain dim, in Full space
    full: Vec<String>,
    /// index expression of each domain dim, in Row space ("0" for column dims)
    row: Vec<String>,
    row_comps: Vec<(String, i64)>,
    col_comps: Vec<(String, i64)>,
}

impl IndexSource for Dims {
    fn dim_index(&self, sp: Sp, d: usize) -> String {
        match sp {
            Sp::Full => self.full[d].clone(),
            Sp::Row => self.row[d].clone(),
        }
    }
    fn mask(&self, sp: Sp) -> String {
        match sp {
            Sp::Full => "mask".into(),
            Sp::Row => "rmask".into(),
        }
    }
}

fn dims_of(space: &ReduceSpace) -> Dims {
    let mut d = Dims {
        full: vec![],
        row: vec![],
        row_comps: vec![],
        col_comps: vec![],
    };
    for (i, (&size, &red)) in space.domain.iter().zip(&space.reduced).enumerate() {
        match space.groups {
            Some((gd, g)) if gd == i => {
                let per = size / g;
                let rg = if g == 1 {
                    "0".to_string()
                } else {
                    format!("r{i}")
                };
                let cg = if per == 1 {
                    "0".to_string()
                } else {
                    format!("c{i}")
                };
                d.row_comps.push((format!("r{i}"), g));
                d.col_comps.push((format!("c{i}"), per));
                d.full.push(format!("({rg} * {per} + {cg})"));
                d.row.push("0".into());
            }
            _ if size == 1 => {
                d.full.push("0".into());
                d.row.push("0".into());
            }
            _ if red => {
                d.col_comps.push((format!("c{i}"), size));
                d.full.push(format!("c{i}"));
                d.row.push("0".into());
            }
            _ => {
                d.row_comps.push((format!("r{i}"), size));
                d.full.push(format!("r{i}"));
                d.row.push(format!("r{i}"));
            }
        }
    }
    d
}

fn comps_decompose(out: &mut String, indent: &str, flat: &str, comps: &[(String, i64)]) {
    let shape: Vec<i64> = comps.iter().map(|c| c.1).collect();
    let names: Vec<String> = comps.iter().map(|c| c.0.clone()).collect();
    decompose(out, indent, flat, &shape, &names);
}

/// The heuristic configuration for R rows of C columns.
pub fn reduction_config(rows: u64, cols: u64) -> LaunchConfig {
    let single = next_pow2(cols) <= 4096;
    let block_c = if single { next_pow2(cols) } else { 2048 };
    let block_r = (4096 / block_c).clamp(1, 64).min(next_pow2(rows));
    LaunchConfig {
        blocks: vec![("BLOCK_R", block_r), ("BLOCK_C", block_c)],
        num_warps: if block_r * block_c >= 4096 { 8 } else { 4 },
        num_stages: 1,
    }
}

/// Other reasonable configurations, for search.
pub fn reduction_variants(rows: u64, cols: u64) -> Vec<LaunchConfig> {
    let base = reduction_config(rows, cols);
    let mut out = vec![base.clone()];
    let (br, bc) = (base.block("BLOCK_R"), base.block("BLOCK_C"));
    for (r, w) in [(br / 2, 4), (br * 2, 8)] {
        if (1..=128).contains(&r) && r * bc <= 16384 {
            out.push(LaunchConfig {
                blocks: vec![("BLOCK_R", r), ("BLOCK_C", bc)],
                num_warps: w,
                num_stages: 1,
            });
        }
    }
    out
}

struct Builder<'g> {
    g: &'g Graph,
    prog: Program,
    dims: Dims,
    space: ReduceSpace,
    cols: u64,
    stats: Vec<(NodeId, usize, usize)>,
    /// Moment pairs (sum of x, sum of squared deviations, x): a looped kernel computes
    /// both in one pass with Chan's parallel update instead of two passes.
    welford: Vec<(usize, usize, usize)>,
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

    fn node(&mut self, node: NodeId) -> Option<()> {
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
            Op::Logsumexp | Op::Softmax | Op::LogSoftmax => {
                let m = self.prog.reduce(RedKind::Max, x);
                let e = self.full(
                    dt,
                    format!("tl.exp({} - {})", self.v(x), self.v(m)),
                    vec![x, m],
                );
                let s = self.prog.reduce(RedKind::Sum, e);
                match n.op {
                    Op::Logsumexp => (
                        Sp::Row,
                        self.row(
                            dt,
                            format!("{} + tl.log({})", self.v(m), self.v(s)),
                            vec![m, s],
                        ),
                    ),
                    Op::Softmax => (
                        Sp::Full,
                        self.full(dt, format!("{} / {}", self.v(e), self.v(s)), vec![e, s]),
                    ),
                    _ => (
                        Sp::Full,
                        self.full(
                            dt,
                            format!("({} - {}) - tl.log({})", self.v(x), self.v(m), self.v(s)),
                            vec![x, m, s],
                        ),
                    ),
                }
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
            _ => return None,
        };
        self.prog.vars.insert((out, sp), result);
        Some(())
    }
}

fn reduce_line(kind: RedKind, x: &str, dt: DType) -> String {
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

/// Initializes a running accumulator of `width` rows for `kind` (and the index that an
/// arg-reduction carries along).
fn acc_init(out: &mut String, kind: RedKind, acc: &str, idx: &str, width: &str, ct: &str) {
    let init = match kind {
        RedKind::Sum => format!("tl.zeros([{width}], {ct})"),
        RedKind::Prod => format!("tl.full([{width}], 1.0, {ct})"),
        RedKind::Max | RedKind::ArgMax => format!("tl.full([{width}], float('-inf'), {ct})"),
        RedKind::Min | RedKind::ArgMin => format!("tl.full([{width}], float('inf'), {ct})"),
    };
    writeln!(out, "    {acc} = {init}").unwrap();
    if matches!(kind, RedKind::ArgMax | RedKind::ArgMin) {
        writeln!(out, "    {idx} = tl.zeros([{width}], tl.int64)").unwrap();
    }
}

/// Folds one block of columns of `x` into the accumulator (inside the column loop);
/// `first_col` is the column of the block's first element, for arg-reductions.
fn acc_update(
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
        RedKind::Sum => writeln!(out, "        {acc} += {part}").unwrap(),
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

/// Generates the kernel of a reduction region; `None` when something has no template.
pub fn reduction_kernel(
    g: &Graph,
    name: &str,
    nodes: &[NodeId],
    outputs: &[ValueId],
    space: &ReduceSpace,
    config: Option<LaunchConfig>,
) -> Option<RegionCode> {
    let dims = dims_of(space);
    let rows: u64 = dims.row_comps.iter().map(|c| c.1 as u64).product();
    let cols: u64 = dims.col_comps.iter().map(|c| c.1 as u64).product();
    let mut b = Builder {
        g,
        prog: Program::new(),
        dims,
        space: space.clone(),
        cols,
        stats: vec![],
        welford: vec![],
    };
    for &n in nodes {
        let node = g.node(n);
        if node.op == Op::Full && g.ty(node.outputs[0]).rank() == 0 {
            continue;
        }
        b.node(n)?;
    }
    // what is stored: region outputs (full or row), then batch statistics (row)
    let mut stores: Vec<(usize, Sp)> = vec![];
    for &v in outputs {
        let sp = match space_of(space, &g.ty(v).shape)? {
            Space::Full => Sp::Full,
            _ => Sp::Row,
        };
        let i = b.prog.value(g, v, sp, vec![], &b.dims);
        stores.push((i, sp));
    }
    let mut stats = vec![];
    let stat_list = b.stats.clone();
    for (node, mean, var) in stat_list {
        let k = stores.len();
        stores.push((mean, Sp::Row));
        stores.push((var, Sp::Row));
        stats.push(BatchStats {
            node,
            mean_out: k,
            var_out: k + 1,
            channels: rows as i64,
        });
    }
    if config.is_none() && use_split(rows, cols) {
        let kernels = split_kernels(g, name, nodes, outputs, &b, &stores, rows, cols);
        return Some(RegionCode {
            kernels,
            scratch: split_scratch(name, &b.prog, rows, cols),
            stats,
        });
    }
    let config = config.unwrap_or_else(|| reduction_config(rows, cols));
    let (block_r, block_c) = (config.block("BLOCK_R"), config.block("BLOCK_C"));
    let single = block_c >= cols;
    let prog = &b.prog;
    let dims = &b.dims;
    let wide = super::pointwise::needs_int64(
        g,
        outputs
            .iter()
            .copied()
            .chain(prog.inputs.iter().map(|a| a.value)),
    );
    let mut body = String::new();
    let pid = if wide {
        "tl.program_id(0).to(tl.int64)"
    } else {
        "tl.program_id(0)"
    };
    writeln!(
        body,
        "    rows = {pid} * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]"
    )
    .unwrap();
    writeln!(body, "    rmask = rows < {rows}").unwrap();
    comps_decompose(&mut body, "    ", "rows", &dims.row_comps);
    // contiguous offset of a domain-shaped output
    let full_off = contiguous_offset(&space.domain, &|d| dims.full[d].clone());
    let col_header = |out: &mut String, indent: &str, start: &str| {
        writeln!(out, "{indent}cols = {start}tl.arange(0, BLOCK_C)[None, :]").unwrap();
        writeln!(out, "{indent}mask = rmask & (cols < {cols})").unwrap();
        comps_decompose(out, indent, "cols", &dims.col_comps);
    };
    let store_full = |out: &mut String, indent: &str, emitted: &dyn Fn(usize) -> bool| {
        for (k, &(i, sp)) in stores.iter().enumerate() {
            if sp == Sp::Full {
                let st = storage_ty(prog.stmts[i].dtype);
                let _ = emitted;
                writeln!(
                    out,
                    "{indent}tl.store(out{k} + {full_off}, ({} + tl.zeros([BLOCK_R, BLOCK_C], {})).to({st}), mask=mask)",
                    prog.var(i),
                    compute_ty(prog.stmts[i].dtype)
                )
                .unwrap();
            }
        }
    };
    let full_roots: Vec<usize> = stores
        .iter()
        .filter(|s| s.1 == Sp::Full)
        .map(|s| s.0)
        .collect();
    if single {
        col_header(&mut body, "    ", "");
        for (i, s) in prog.stmts.iter().enumerate() {
            match &s.code {
                Code::Expr(code) => writeln!(body, "    {} = {code}", s.var).unwrap(),
                Code::Reduce { kind, input } => {
                    let line = reduce_line(*kind, prog.var(*input), s.dtype);
                    writeln!(body, "    {} = {line}[:, None]", s.var).unwrap();
                }
            }
            let _ = i;
        }
        store_full(&mut body, "    ", &|_| true);
    } else {
        let mut emitted = vec![false; prog.stmts.len()];
        for (i, s) in prog.stmts.iter().enumerate() {
            if emitted[i] {
                continue;
            }
            if let Some(&(_, q, x)) = b.welford.iter().find(|w| w.0 == i) {
                // one pass for both moments: per block, its sum and its squared deviations
                // around its own mean, merged into the running mean and M2 (Chan et al.)
                let ct = compute_ty(prog.stmts[x].dtype);
                writeln!(body, "    wmean{i} = tl.zeros([BLOCK_R], {ct})").unwrap();
                writeln!(body, "    wm2{i} = tl.zeros([BLOCK_R], {ct})").unwrap();
                writeln!(body, "    for cstart in range(0, {cols}, BLOCK_C):").unwrap();
                col_header(&mut body, "        ", "cstart + ");
                let need = prog.closure(&[x], &|j| emitted[j]);
                emit_stmts(&mut body, prog, &need, "        ");
                let xv = prog.var(x);
                writeln!(
                    body,
                    "        nb = tl.minimum({cols} - cstart, BLOCK_C).to({ct})"
                )
                .unwrap();
                writeln!(
                    body,
                    "        bmean = tl.sum(tl.where(mask, {xv}, 0.0), axis=1) / nb"
                )
                .unwrap();
                writeln!(
                    body,
                    "        bdev = tl.where(mask, {xv} - bmean[:, None], 0.0)"
                )
                .unwrap();
                writeln!(body, "        bm2 = tl.sum(bdev * bdev, axis=1)").unwrap();
                writeln!(body, "        tot = cstart + nb").unwrap();
                writeln!(body, "        delta = bmean - wmean{i}").unwrap();
                writeln!(body, "        wmean{i} = wmean{i} + delta * (nb / tot)").unwrap();
                writeln!(
                    body,
                    "        wm2{i} = wm2{i} + bm2 + delta * delta * (cstart * (nb / tot))"
                )
                .unwrap();
                writeln!(
                    body,
                    "    {} = (wmean{i} * {})[:, None]",
                    s.var,
                    float_lit(cols as f64)
                )
                .unwrap();
                writeln!(body, "    {} = wm2{i}[:, None]", prog.var(q)).unwrap();
                emitted[i] = true;
                emitted[q] = true;
                continue;
            }
            match (&s.code, s.space) {
                (Code::Expr(code), Sp::Row) => {
                    writeln!(body, "    {} = {code}", s.var).unwrap();
                    emitted[i] = true;
                }
                (Code::Reduce { kind, input }, _) => {
                    let (acc, idx) = (format!("acc{i}"), format!("idx{i}"));
                    let ct = compute_ty(prog.stmts[*input].dtype);
                    acc_init(&mut body, *kind, &acc, &idx, "BLOCK_R", ct);
                    writeln!(body, "    for cstart in range(0, {cols}, BLOCK_C):").unwrap();
                    col_header(&mut body, "        ", "cstart + ");
                    let need = prog.closure(&[*input], &|j| emitted[j]);
                    emit_stmts(&mut body, prog, &need, "        ");
                    acc_update(
                        &mut body,
                        *kind,
                        prog.var(*input),
                        s.dtype,
                        &acc,
                        &idx,
                        "cstart",
                    );
                    let fin = if matches!(kind, RedKind::ArgMax | RedKind::ArgMin) {
                        idx
                    } else {
                        acc
                    };
                    writeln!(body, "    {} = {fin}[:, None]", s.var).unwrap();
                    emitted[i] = true;
                }
                _ => {}
            }
        }
        if !full_roots.is_empty() {
            writeln!(body, "    for cstart in range(0, {cols}, BLOCK_C):").unwrap();
            col_header(&mut body, "        ", "cstart + ");
            let need = prog.closure(&full_roots, &|j| emitted[j]);
            emit_stmts(&mut body, prog, &need, "        ");
            store_full(&mut body, "        ", &|j| emitted[j]);
        }
    }
    for (k, &(i, sp)) in stores.iter().enumerate() {
        if sp == Sp::Row {
            let st = storage_ty(if k >= outputs.len() {
                prog.stmts[i].dtype
            } else {
                g.ty(outputs[k]).dtype
            });
            writeln!(
                body,
                "    tl.store(out{k} + rows, ({} + tl.zeros([BLOCK_R, 1], {})).to({st}), mask=rmask)",
                prog.var(i),
                compute_ty(prog.stmts[i].dtype)
            )
            .unwrap();
        }
    }
    let mut source = String::new();
    writeln!(source, "@triton.jit").unwrap();
    writeln!(
        source,
        "def {name}({}):",
        signature(prog, stores.len(), &[], &["BLOCK_R", "BLOCK_C"])
    )
    .unwrap();
    source.push_str(&ops_comment(g, nodes));
    writeln!(
        source,
        "    # {rows} rows x {cols} columns, {}",
        if single {
            "single pass"
        } else {
            "looped passes"
        }
    )
    .unwrap();
    source.push_str(&body);
    let grid = vec![rows.div_ceil(block_r).max(1)];
    let _ = block_c;
    Some(RegionCode {
        kernels: vec![TritonKernel {
            name: name.to_string(),
            source,
            inputs: b.prog.inputs.clone(),
            outputs: outputs.to_vec(),
            grid,
            grid_expr: None,
            config,
            extra_args: vec![],
            scratch_args: vec![],
            operand_prep: vec![],
        }],
        scratch: vec![],
        stats,
    })
}

/// The code of one region: its kernels in launch order (the last one writes the region's
/// outputs and batch statistics), and scratch buffers they share.
#[derive(Clone, Debug)]
pub struct RegionCode {
    pub kernels: Vec<TritonKernel>,
    pub scratch: Vec<Scratch>,
    pub stats: Vec<BatchStats>,
}

/// A scratch buffer the host allocates for a region's kernels.
#[derive(Clone, Debug)]
pub struct Scratch {
    pub name: String,
    pub numel: u64,
    pub dtype: DType,
}

/// Split strategy (stated heuristic): when there are fewer rows than two per SM of a
/// large GPU (264) and rows are long (>= 32768 columns), one program per row would leave
/// the GPU idle. Then each reduction is computed by its own kernel over (row, chunk)
/// programs writing partial results to scratch; later kernels combine the partials of
/// earlier reductions themselves; a last kernel writes the outputs.
fn use_split(rows: u64, cols: u64) -> bool {
    rows < 264 && cols >= 32768
}

const SPLIT_BLOCK_C: u64 = 2048;

/// Number of column chunks per row in the split strategy: about 1056 programs in all.
fn split_chunks(rows: u64, cols: u64) -> u64 {
    let max_chunks = cols.div_ceil(4 * SPLIT_BLOCK_C).max(1);
    (1056u64.div_ceil(rows))
        .clamp(2, 256)
        .min(max_chunks)
        .max(1)
}

fn reduce_ids(prog: &Program) -> Vec<usize> {
    (0..prog.stmts.len())
        .filter(|&i| matches!(prog.stmts[i].code, Code::Reduce { .. }))
        .collect()
}

fn split_scratch(name: &str, prog: &Program, rows: u64, cols: u64) -> Vec<Scratch> {
    let s = split_chunks(rows, cols);
    let mut out = vec![];
    for i in reduce_ids(prog) {
        let Code::Reduce { kind, input } = &prog.stmts[i].code else {
            continue;
        };
        let dt = prog.stmts[*input].dtype;
        out.push(Scratch {
            name: format!("{name}_ws{i}"),
            numel: rows * s,
            dtype: dt,
        });
        if matches!(kind, RedKind::ArgMax | RedKind::ArgMin) {
            out.push(Scratch {
                name: format!("{name}_wsidx{i}"),
                numel: rows * s,
                dtype: DType::I64,
            });
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn split_kernels(
    g: &Graph,
    name: &str,
    nodes: &[NodeId],
    outputs: &[ValueId],
    b: &Builder,
    stores: &[(usize, Sp)],
    rows: u64,
    cols: u64,
) -> Vec<TritonKernel> {
    let prog = &b.prog;
    let dims = &b.dims;
    let chunks = split_chunks(rows, cols);
    let chunk = cols.div_ceil(chunks).div_ceil(SPLIT_BLOCK_C) * SPLIT_BLOCK_C;
    let chunks = cols.div_ceil(chunk);
    let reduces = reduce_ids(prog);
    let scratch = split_scratch(name, prog, rows, cols);
    let scratch_params: Vec<String> = scratch.iter().map(|s| s.name.clone()).collect();
    let wide = super::pointwise::needs_int64(
        g,
        outputs
            .iter()
            .copied()
            .chain(prog.inputs.iter().map(|a| a.value)),
    ) || rows * chunks * SPLIT_BLOCK_C >= (1 << 31) - 1;
    let pid = if wide { ".to(tl.int64)" } else { "" };
    let full_off = contiguous_offset(&b.space.domain, &|d| dims.full[d].clone());
    // stage k computes the partials of reduction k; stage reduces.len() stores
    let mut kernels = vec![];
    for stage in 0..=reduces.len() {
        let last = stage == reduces.len();
        let kname = if last {
            format!("{name}_out")
        } else {
            format!("{name}_part{}", reduces[stage])
        };
        let mut body = String::new();
        writeln!(
            body,
            "    rows = tl.program_id(0){pid} + tl.arange(0, 1)[:, None]"
        )
        .unwrap();
        writeln!(body, "    s = tl.program_id(1){pid}").unwrap();
        writeln!(body, "    rmask = rows < {rows}").unwrap();
        comps_decompose(&mut body, "    ", "rows", &dims.row_comps);
        // combine the partials of earlier reductions, then the row math that follows them
        let mut available = vec![false; prog.stmts.len()];
        writeln!(body, "    sidx = tl.arange(0, BLOCK_S)[None, :]").unwrap();
        writeln!(body, "    smask = rmask & (sidx < {chunks})").unwrap();
        let upto = if last {
            prog.stmts.len()
        } else {
            reduces[stage]
        };
        #[allow(clippy::needless_range_loop)] // statements refer to each other by index
        for i in 0..upto {
            let st = &prog.stmts[i];
            match (&st.code, st.space) {
                (Code::Reduce { kind, input }, _) => {
                    let ct = compute_ty(prog.stmts[*input].dtype);
                    let part = format!("{name}_ws{i}");
                    let (other, red) = match kind {
                        RedKind::Sum => ("0.0", "tl.sum(p, axis=1)".to_string()),
                        RedKind::Prod => ("1.0", "tl.reduce(p, 1, _drtc_mul)".to_string()),
                        RedKind::Max | RedKind::ArgMax => {
                            ("float('-inf')", "tl.max(p, axis=1)".to_string())
                        }
                        RedKind::Min | RedKind::ArgMin => {
                            ("float('inf')", "tl.min(p, axis=1)".to_string())
                        }
                    };
                    writeln!(body, "    p = tl.load({part} + rows * {chunks} + sidx, mask=smask, other={other}).to({ct})").unwrap();
                    match kind {
                        RedKind::ArgMax | RedKind::ArgMin => {
                            let f = if *kind == RedKind::ArgMax {
                                "tl.argmax"
                            } else {
                                "tl.argmin"
                            };
                            writeln!(body, "    best = {f}(p, axis=1)[:, None]").unwrap();
                            writeln!(body, "    pi = tl.load({name}_wsidx{i} + rows * {chunks} + sidx, mask=smask, other=0)").unwrap();
                            writeln!(
                                body,
                                "    {} = tl.sum(tl.where(sidx == best, pi, 0), axis=1)[:, None]",
                                st.var
                            )
                            .unwrap();
                        }
                        _ => writeln!(body, "    {} = {red}[:, None]", st.var).unwrap(),
                    }
                    available[i] = true;
                }
                (Code::Expr(code), Sp::Row) => {
                    writeln!(body, "    {} = {code}", st.var).unwrap();
                    available[i] = true;
                }
                _ => {}
            }
        }
        let start = format!("s * {chunk}");
        let header = |out: &mut String| {
            writeln!(out, "    for cstart in range(0, {chunk}, BLOCK_C):").unwrap();
            writeln!(
                out,
                "        cols = {start} + cstart + tl.arange(0, BLOCK_C)[None, :]"
            )
            .unwrap();
            writeln!(out, "        mask = rmask & (cols < {cols})").unwrap();
            comps_decompose(out, "        ", "cols", &dims.col_comps);
        };
        if !last {
            let i = reduces[stage];
            let Code::Reduce { kind, input } = &prog.stmts[i].code else {
                unreachable!()
            };
            let ct = compute_ty(prog.stmts[*input].dtype);
            let (acc, idx) = ("acc", "idx");
            acc_init(&mut body, *kind, acc, idx, "1", ct);
            let is_arg = matches!(kind, RedKind::ArgMax | RedKind::ArgMin);
            header(&mut body);
            let need = prog.closure(&[*input], &|j| available[j]);
            emit_stmts(&mut body, prog, &need, "        ");
            let first_col = format!("{start} + cstart");
            acc_update(
                &mut body,
                *kind,
                prog.var(*input),
                prog.stmts[i].dtype,
                acc,
                idx,
                &first_col,
            );
            writeln!(
                body,
                "    tl.store({name}_ws{i} + rows * {chunks} + s, {acc}[:, None], mask=rmask)"
            )
            .unwrap();
            if is_arg {
                writeln!(
                    body,
                    "    tl.store({name}_wsidx{i} + rows * {chunks} + s, idx[:, None], mask=rmask)"
                )
                .unwrap();
            }
        } else {
            let full_roots: Vec<usize> = stores
                .iter()
                .filter(|s| s.1 == Sp::Full)
                .map(|s| s.0)
                .collect();
            if !full_roots.is_empty() {
                header(&mut body);
                let need = prog.closure(&full_roots, &|j| available[j]);
                emit_stmts(&mut body, prog, &need, "        ");
                for (k, &(i, sp)) in stores.iter().enumerate() {
                    if sp == Sp::Full {
                        let st = storage_ty(prog.stmts[i].dtype);
                        writeln!(
                            body,
                            "        tl.store(out{k} + {full_off}, ({} + tl.zeros([1, BLOCK_C], {})).to({st}), mask=mask)",
                            prog.var(i),
                            compute_ty(prog.stmts[i].dtype)
                        )
                        .unwrap();
                    }
                }
            }
            for (k, &(i, sp)) in stores.iter().enumerate() {
                if sp == Sp::Row {
                    let st = storage_ty(if k >= outputs.len() {
                        prog.stmts[i].dtype
                    } else {
                        g.ty(outputs[k]).dtype
                    });
                    writeln!(
                        body,
                        "    tl.store(out{k} + rows, ({} + tl.zeros([1, 1], {})).to({st}), mask=rmask & ((rows * 0 + s) == 0))",
                        prog.var(i),
                        compute_ty(prog.stmts[i].dtype)
                    )
                    .unwrap();
                }
            }
        }
        let mut source = String::new();
        writeln!(source, "@triton.jit").unwrap();
        let n_out = if last { stores.len() } else { 0 };
        writeln!(
            source,
            "def {kname}({}):",
            signature(prog, n_out, &scratch_params, &["BLOCK_C", "BLOCK_S"])
        )
        .unwrap();
        source.push_str(&ops_comment(g, nodes));
        writeln!(
            source,
            "    # split reduction, stage {} of {}: {rows} rows x {cols} columns in {chunks} chunks of {chunk}",
            stage + 1,
            reduces.len() + 1
        )
        .unwrap();
        source.push_str(&body);
        kernels.push(TritonKernel {
            name: kname,
            source,
            inputs: prog.inputs.clone(),
            outputs: if last { outputs.to_vec() } else { vec![] },
            grid: vec![rows, chunks],
            grid_expr: None,
            config: LaunchConfig {
                blocks: vec![("BLOCK_C", SPLIT_BLOCK_C), ("BLOCK_S", next_pow2(chunks))],
                num_warps: 8,
                num_stages: 1,
            },
            extra_args: vec![],
            scratch_args: scratch_params.clone(),
            operand_prep: vec![],
        });
    }
    kernels
}

/// Rows and columns of a reduction space, and whether the split strategy applies.
pub fn reduction_shape(space: &ReduceSpace) -> (u64, u64, bool) {
    let dims = dims_of(space);
    let rows: u64 = dims.row_comps.iter().map(|c| c.1 as u64).product();
    let cols: u64 = dims.col_comps.iter().map(|c| c.1 as u64).product();
    (rows, cols, use_split(rows, cols))
}
