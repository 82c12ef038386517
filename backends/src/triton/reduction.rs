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

/// Generates the kernel of a reduction region; `None` when something has no template.
pub fn reduction_kernel(
    g: &Graph,
    name: &str,
    nodes: &[NodeId],
    outputs: &[ValueId],
    space: &ReduceSpace,
    config: Option<LaunchConfig>,
) -> Option<(TritonKernel, Vec<BatchStats>)> {
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
    let mut cstride = 1i64;
    let mut terms = vec![];
    for d in (0..space.domain.len()).rev() {
        if space.domain[d] != 1 {
            terms.push(format!("{} * {cstride}", dims.full[d]));
        }
        cstride *= space.domain[d];
    }
    let full_off = if terms.is_empty() {
        "0".to_string()
    } else {
        terms.join(" + ")
    };
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
            match (&s.code, s.space) {
                (Code::Expr(code), Sp::Row) => {
                    writeln!(body, "    {} = {code}", s.var).unwrap();
                    emitted[i] = true;
                }
                (Code::Reduce { kind, input }, _) => {
                    let acc = format!("acc{i}");
                    let (init, ct) = ("", compute_ty(prog.stmts[*input].dtype));
                    let _ = init;
                    match kind {
                        RedKind::Sum => {
                            writeln!(body, "    {acc} = tl.zeros([BLOCK_R], {ct})").unwrap()
                        }
                        RedKind::Prod => {
                            writeln!(body, "    {acc} = tl.full([BLOCK_R], 1.0, {ct})").unwrap()
                        }
                        RedKind::Max | RedKind::ArgMax => {
                            writeln!(body, "    {acc} = tl.full([BLOCK_R], float('-inf'), {ct})")
                                .unwrap()
                        }
                        RedKind::Min | RedKind::ArgMin => {
                            writeln!(body, "    {acc} = tl.full([BLOCK_R], float('inf'), {ct})")
                                .unwrap()
                        }
                    }
                    if matches!(kind, RedKind::ArgMax | RedKind::ArgMin) {
                        writeln!(body, "    idx{i} = tl.zeros([BLOCK_R], tl.int64)").unwrap();
                    }
                    writeln!(body, "    for c0 in range(0, {cols}, BLOCK_C):").unwrap();
                    col_header(&mut body, "        ", "c0 + ");
                    let need = prog.closure(&[*input], &|j| emitted[j]);
                    emit_stmts(&mut body, prog, &need, "        ");
                    let x = prog.var(*input);
                    let part = reduce_line(*kind, x, s.dtype);
                    match kind {
                        RedKind::Sum => writeln!(body, "        {acc} += {part}").unwrap(),
                        RedKind::Prod => writeln!(body, "        {acc} = {acc} * {part}").unwrap(),
                        RedKind::Max => {
                            writeln!(body, "        {acc} = tl.maximum({acc}, {part})").unwrap()
                        }
                        RedKind::Min => {
                            writeln!(body, "        {acc} = tl.minimum({acc}, {part})").unwrap()
                        }
                        RedKind::ArgMax | RedKind::ArgMin => {
                            let (red, cmp) = if *kind == RedKind::ArgMax {
                                (reduce_line(RedKind::Max, x, s.dtype), ">")
                            } else {
                                (reduce_line(RedKind::Min, x, s.dtype), "<")
                            };
                            writeln!(body, "        bv = {red}").unwrap();
                            writeln!(body, "        bi = {part}.to(tl.int64) + c0").unwrap();
                            writeln!(body, "        upd = bv {cmp} {acc}").unwrap();
                            writeln!(body, "        {acc} = tl.where(upd, bv, {acc})").unwrap();
                            writeln!(body, "        idx{i} = tl.where(upd, bi, idx{i})").unwrap();
                        }
                    }
                    let fin = if matches!(kind, RedKind::ArgMax | RedKind::ArgMin) {
                        format!("idx{i}")
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
            writeln!(body, "    for c0 in range(0, {cols}, BLOCK_C):").unwrap();
            col_header(&mut body, "        ", "c0 + ");
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
    Some((
        TritonKernel {
            name: name.to_string(),
            source,
            inputs: b.prog.inputs.clone(),
            outputs: outputs.to_vec(),
            grid,
            config,
            extra_args: vec![],
        },
        stats,
    ))
}
