//! The window template: max and average pooling (1d/2d/3d, padding, dilation, ceil_mode,
//! count_include_pad, divisor_override) with a fused pointwise prologue and epilogue.
//!
//! A program computes a block of outputs and walks the window with loops over each kernel
//! dim. Two forms ([`window_config`]): tiled, a `[BLOCK_H, BLOCK_W]` tile of the output's
//! last two dims (row-major 2-d and 3-d poolings whose planes such tiles cover with at
//! most 15% waste),
//! and flat, BLOCK = 256 consecutive outputs (or the next power of two of the output size
//! when smaller); 4 warps.
//!
//! The prologue (pointwise ops whose result only the pool reads) is computed at each tap
//! from the pooled input's own index (`Sp::Tap`), so its result is never written: a tap
//! outside the input is the pool's identity (`-inf`, 0), not the prologue of a padding
//! value. Its statements that do not depend on the tap (per-channel loads and math on
//! them) are computed once, before the loops. Where windows overlap the prologue is
//! computed once per window holding the element: arithmetic for bytes.

use super::epilogue::add_epilogue;
use super::kernel::{decompose, emit_stmts, kernel_head, store_line, LaunchConfig, TritonKernel};
use super::statements::{align, DimMap, IndexSource, Program, Sp};
use super::tap_norm::{apply_norm, TapNorm, STATS_PARAMS};
use super::ty::{compute_ty, next_pow2};
use drtc_ir::{Attr, Graph, NodeId, Pool, ValueId};
use std::fmt::Write;

/// The launch configuration of a window region with outputs of `out_shape`, the last `nsp`
/// dims spatial. Row-major outputs of at least two spatial dims whose last two a tile
/// covers with little waste ([`window_tile`]) take the tiled form (`BLOCK_H`, `BLOCK_W`);
/// others the flat form (`BLOCK`).
pub fn window_config(out_shape: &[i64], nsp: usize, row_major: bool) -> LaunchConfig {
    let rank = out_shape.len();
    // 1-d pools stay flat: tiles whose rows were channels ran level-1 44 (average, 64 x 128
    // rows of 65536) at 0.83x torch.compile on an H100
    // (`bench/results/level1_pool_h100_b6e7965_default_vs_compile.md`), the flat form 1.00x
    // on the H200 (`level1_h200_2030ff2_default_vs_compile.md`); 41 (max) about even
    // 3-d windows: tiles of 128 lanes on 1 warp. Level-1 43 (3x3x3 max, stride 2, 62^3
    // outputs) ran 3.53 ms in 8 x 64 tiles, 6.48 in 16 x 64, 2.08 in 4 x 64 on 2 warps on
    // an H100 (`bench/results/level1_pool3d_probe_h100_a6d0f02.txt`); taller tiles were
    // slower whatever the warps (our reading, not profiled: a program's taps read several
    // depth slices, and fewer planes in flight keep theirs in L2); then 2 x 64 on 1 warp
    // 1.75 ms, on 2 warps 2.24 (`level1_coop_rows_probe_h100_5459fef.txt`)
    let deep = nsp >= 3;
    let lanes = if deep { 128 } else { 512 };
    let tile = (row_major && nsp >= 2)
        .then(|| window_tile(out_shape[rank - 2], out_shape[rank - 1], lanes))
        .flatten();
    let (blocks, num_warps) = match tile {
        Some((bh, bw)) => (
            vec![("BLOCK_H", bh), ("BLOCK_W", bw)],
            if deep { 1 } else { 4 },
        ),
        None => {
            let n: u64 = out_shape.iter().map(|&d| d as u64).product();
            (vec![("BLOCK", next_pow2(n).clamp(16, 256))], 4)
        }
    };
    LaunchConfig {
        blocks,
        num_warps,
        num_stages: 1,
    }
}

/// At most this share of a tiled window kernel's lanes may fall outside the output.
const TILE_WASTE: f64 = 0.15;

/// The `[BLOCK_H, BLOCK_W]` tile over an output plane of `ho` x `wo`: rows of 16 to 128
/// lanes (a tap's loads are runs of consecutive input columns), 256 (or `lanes`, when
/// fewer) to 1024 lanes a tile;
/// the tile whose grid covers the fewest padded lanes, then the one nearest `lanes` lanes,
/// then 64 wide. `None` when even that wastes more than [`TILE_WASTE`]: small planes stay
/// flat, where lanes run on into the next plane.
///
/// Why tiles: the flat form recovers every output index from its flat offset (a division
/// and a remainder per dim and lane) and tests each tap per lane; in a tile the row and
/// column indices, and each tap's bounds, are vectors of one dim, broadcast once.
fn window_tile(ho: i64, wo: i64, lanes: u64) -> Option<(u64, u64)> {
    let (ho, wo) = (ho.max(1) as u64, wo.max(1) as u64);
    let padded = |bh: u64, bw: u64| ho.div_ceil(bh) * bh * wo.div_ceil(bw) * bw;
    let key = |&(bh, bw): &(u64, u64)| (padded(bh, bw), (bh * bw).abs_diff(lanes), bw.abs_diff(64));
    let tiles = [16u64, 32, 64, 128].into_iter().flat_map(|bw| {
        (0..7)
            .map(move |k| (1u64 << k, bw))
            .filter(move |&(bh, bw)| (lanes.min(256)..=1024).contains(&(bh * bw)))
    });
    let (bh, bw) = tiles.min_by_key(key)?;
    let waste = 1.0 - (ho * wo) as f64 / padded(bh, bw) as f64;
    (waste <= TILE_WASTE).then_some((bh, bw))
}

/// Output indices `o{d}`; at a tap, the pooled input's: `o{d}` for a leading dim, the
/// tap's `h{j}` for spatial dim `j`.
struct FlatIndex {
    lead: usize,
    /// In the flat form of a row-major pooling, the rank and spatial size of the pooled
    /// input: a tap of a row-major contiguous input reads at `ol * spatial` plus its
    /// spatial offset (`ol` the flat offset over the output's spatial size, the leading
    /// dims merged) instead of a division, a remainder and a stride per leading dim.
    /// Level-1 41 and 44 (1-d poolings over 64 x 192 and 64 x 128 rows): 3.29 -> 2.92 and
    /// 2.07 -> 1.84 ms on an H100
    /// (`bench/results/level1_unaligned_stores_probe_h100_eae7aed.txt`).
    merged: Option<(usize, i64)>,
}

impl IndexSource for FlatIndex {
    fn dim_index(&self, sp: Sp, d: usize) -> String {
        match sp {
            Sp::Tap if d >= self.lead => format!("h{}", d - self.lead),
            Sp::Full | Sp::Row | Sp::Tap => format!("o{d}"),
        }
    }
    fn mask(&self, sp: Sp) -> String {
        match sp {
            Sp::Tap => "tap_mask".into(),
            Sp::Full | Sp::Row => "mask".into(),
        }
    }
    fn flat_columns(&self, sp: Sp, map: &DimMap) -> Option<Vec<(usize, String)>> {
        let (rank, spatial) = self.merged?;
        let identity = map.len() == rank && map.iter().enumerate().all(|(d, &m)| m == Some(d));
        if sp != Sp::Tap || self.lead == 0 || self.lead == rank || !identity {
            return None;
        }
        // contiguous: the last dim's stride is 1 (a constant to Triton), the others' the
        // product of the dims after them
        let last = rank - 1;
        let mut terms: Vec<(usize, String)> = (self.lead..last)
            .map(|d| (d, format!("h{}", d - self.lead)))
            .collect();
        terms.push((last, format!("(ol * {spatial} + h{})", last - self.lead)));
        Some(terms)
    }
    fn mask_of(&self, sp: Sp, dims: &[usize]) -> String {
        // a load along leading dims only is the same at every tap: hoisted before the loops
        match sp {
            Sp::Tap if dims.iter().any(|&d| d >= self.lead) => "tap_mask".into(),
            Sp::Full | Sp::Row | Sp::Tap => "mask".into(),
        }
    }
}

/// The prologue's statements that are the same at every tap: loads along leading dims
/// only, constants, the statistics `seeds`, and pointwise math on them alone.
fn tap_invariant(prog: &Program, lead: usize, seeds: &[usize]) -> Vec<bool> {
    let mut inv = vec![false; prog.stmts.len()];
    for i in 0..prog.stmts.len() {
        let s = &prog.stmts[i];
        inv[i] = seeds.contains(&i)
            || match prog.load_of(i) {
                Some((_, _, map)) => map.iter().all(|m| m.is_none_or(|d| d < lead)),
                None => {
                    s.constant.is_some() || (!s.deps.is_empty() && s.deps.iter().all(|&d| inv[d]))
                }
            };
    }
    inv
}

fn list(attrs: &drtc_ir::Attrs, name: &str, n: usize) -> Option<Vec<i64>> {
    let v = attrs.get(name)?.as_ints()?;
    Some(if v.len() == 1 {
        vec![v[0]; n]
    } else {
        v.to_vec()
    })
}

/// Generates the kernel of a window region. `order` (outermost first) is the order in
/// which the outputs are dense: `None` for row-major, `[0, 2, 3, 1]` for a channels-last
/// pooling, whose consecutive programs' lanes then read consecutive channels of a
/// channels-last input.
pub fn window_kernel(
    g: &Graph,
    name: &str,
    (nodes, outputs): (&[NodeId], &[ValueId]),
    config: Option<LaunchConfig>,
    order: Option<&[usize]>,
    tap_norm: Option<TapNorm>,
) -> Option<TritonKernel> {
    let main = *nodes.iter().find(|&&n| {
        matches!(
            g.node(n).op.kind().pooling(),
            Some((Pool::Max | Pool::Avg, _))
        )
    })?;
    let mn = g.node(main);
    let pos = nodes.iter().position(|&n| n == main)?;
    let (pool, nsp) = mn.op.kind().pooling()?;
    let is_max = pool == Pool::Max;
    let x = mn.inputs[0];
    let tx = g.ty(x);
    if !tx.dtype.is_float() {
        return None;
    }
    let out_shape = g.ty(mn.outputs[0]).shape.clone();
    let rank = out_shape.len();
    let lead = rank - nsp;
    let kernel = list(&mn.attrs, "kernel_size", nsp)?;
    let stride = match mn.attrs.get("stride") {
        Some(Attr::Ints(v)) if !v.is_empty() => list(&mn.attrs, "stride", nsp)?,
        _ => kernel.clone(),
    };
    let padding = list(&mn.attrs, "padding", nsp)?;
    let dilation = if is_max {
        list(&mn.attrs, "dilation", nsp)?
    } else {
        vec![1; nsp]
    };
    let numel: u64 = out_shape.iter().map(|&d| d as u64).product();
    let mut prog = Program::new();
    let config = config.unwrap_or_else(|| window_config(&out_shape, nsp, order.is_none()));
    let tiled = config.blocks.iter().any(|&(n, _)| n == "BLOCK_W");
    let ix = FlatIndex {
        lead,
        merged: (!tiled && order.is_none()).then(|| (rank, tx.shape[lead..].iter().product())),
    };
    // the pooled input at a tap: loaded, or computed by the prologue
    let mut prologue: Vec<NodeId> = tap_norm.map(|t| t.nodes.to_vec()).unwrap_or_default();
    prologue.extend_from_slice(&nodes[..pos]);
    let (tap, seeds) = add_prologue(g, &mut prog, &prologue, x, &ix, tap_norm)?;
    let acc = prog.expr(Sp::Full, drtc_ir::DType::F32, "acc".into(), vec![]);
    prog.vars.insert((mn.outputs[0], Sp::Full), acc);
    add_epilogue(g, &mut prog, &nodes[pos..], main, &out_shape, &ix)?;
    let roots: Vec<usize> = outputs
        .iter()
        .map(|&v| prog.value(g, v, Sp::Full, vec![], &ix))
        .collect();
    let read = prog.inputs.iter().map(|a| a.value);
    let wide = super::pointwise::needs_int64(g, outputs.iter().copied().chain(read));
    let mut body = String::new();
    let pid = if wide {
        "tl.program_id(0).to(tl.int64)"
    } else {
        "tl.program_id(0)"
    };
    let dim_order: Vec<usize> = match order {
        Some(o) if o.len() == rank => o.to_vec(),
        Some(_) => return None,
        None => (0..rank).collect(),
    };
    let (shape, constexprs, grid) = if tiled {
        if order.is_some() || nsp < 2 {
            return None;
        }
        let (ho, wo) = (out_shape[rank - 2], out_shape[rank - 1]);
        let (nh, nw) = (
            (ho as u64).div_ceil(config.block("BLOCK_H")),
            (wo as u64).div_ceil(config.block("BLOCK_W")),
        );
        let outer: u64 = out_shape[..rank - 2].iter().map(|&d| d as u64).product();
        tile_index(&mut body, pid, (nh, nw), &out_shape);
        (
            "[BLOCK_H, BLOCK_W]",
            &["BLOCK_H", "BLOCK_W"][..],
            nh * nw * outer,
        )
    } else {
        writeln!(body, "    offs = {pid} * BLOCK + tl.arange(0, BLOCK)").unwrap();
        writeln!(body, "    mask = offs < {numel}").unwrap();
        let names: Vec<String> = dim_order.iter().map(|d| format!("o{d}")).collect();
        let physical: Vec<i64> = dim_order.iter().map(|&d| out_shape[d]).collect();
        decompose(&mut body, "    ", "offs", &physical, &names);
        if prog.inputs.iter().any(|a| a.flat) {
            // the merged leading index of the taps' flat loads (`FlatIndex::merged`)
            let spatial: i64 = out_shape[lead..].iter().product();
            writeln!(body, "    ol = offs // {spatial}").unwrap();
        }
        let grid = numel.div_ceil(config.block("BLOCK"));
        ("[BLOCK]", &["BLOCK"][..], grid)
    };
    for (d, &s) in out_shape.iter().enumerate() {
        if s == 1 {
            // a tensor, not a Python int, so every index and mask below is a tensor
            writeln!(body, "    o{d} = offs * 0").unwrap();
        }
    }
    let invariant = tap_invariant(&prog, lead, &seeds);
    let tap_order = prog.closure(&[tap], &|i| invariant[i]);
    let hoisted = prog.closure(&[tap], &|_| false);
    let hoisted: Vec<usize> = hoisted.into_iter().filter(|&i| invariant[i]).collect();
    emit_stmts(&mut body, &prog, &hoisted, "    ");
    let ct = compute_ty(tx.dtype);
    if is_max {
        writeln!(body, "    acc = tl.full({shape}, float('-inf'), {ct})").unwrap();
    } else {
        writeln!(body, "    acc = tl.zeros({shape}, {ct})").unwrap();
    }
    let mut indent = String::from("    ");
    // each loop narrows its enclosing level's mask by its own dim's bounds (a vector of
    // that dim alone in the tiled form), so an inner tap does one `&`
    let mut valid = "mask".to_string();
    for j in 0..nsp {
        let d = lead + j;
        let size = tx.shape[d];
        writeln!(body, "{indent}for k{j} in range({}):", kernel[j]).unwrap();
        indent.push_str("    ");
        writeln!(
            body,
            "{indent}h{j} = o{d} * {} - {} + k{j} * {}",
            stride[j], padding[j], dilation[j]
        )
        .unwrap();
        let m = if j + 1 == nsp {
            "tap_mask".to_string()
        } else {
            format!("m{j}")
        };
        writeln!(
            body,
            "{indent}{m} = {valid} & ((h{j} >= 0) & (h{j} < {size}))"
        )
        .unwrap();
        valid = m;
    }
    let other = if is_max { "float('-inf')" } else { "0.0" };
    emit_stmts(&mut body, &prog, &tap_order, &indent);
    writeln!(
        body,
        "{indent}v = tl.where(tap_mask, {}.to({ct}), {other})",
        prog.var(tap)
    )
    .unwrap();
    if is_max {
        writeln!(body, "{indent}acc = tl.maximum(acc, v)").unwrap();
    } else {
        writeln!(body, "{indent}acc += v").unwrap();
        let div_override = mn.attrs.get("divisor_override").and_then(Attr::as_int);
        let include_pad = mn
            .attrs
            .get("count_include_pad")
            .and_then(Attr::as_bool)
            .unwrap_or(true);
        let divisor = if let Some(dv) = div_override {
            format!("{dv}.0")
        } else {
            let mut factors = vec![];
            for j in 0..nsp {
                let d = lead + j;
                let size = tx.shape[d];
                let start = format!("(o{d} * {} - {})", stride[j], padding[j]);
                if include_pad {
                    factors.push(format!(
                        "(tl.minimum({start} + {}, {}) - {start})",
                        kernel[j],
                        size + padding[j]
                    ));
                } else {
                    factors.push(format!(
                        "(tl.minimum({start} + {}, {size}) - tl.maximum({start}, 0))",
                        kernel[j]
                    ));
                }
            }
            format!("({}).to({ct})", factors.join(" * "))
        };
        writeln!(body, "    acc = acc / {divisor}").unwrap();
    }
    let order = prog.closure(&roots, &|_| false);
    emit_stmts(&mut body, &prog, &order, "    ");
    for (k, (&v, &r)) in outputs.iter().zip(&roots).enumerate() {
        body.push_str(&store_line(g, &prog, (k, v, r), "offs", shape, "mask"));
    }
    let (extra, scratch_args) = match tap_norm {
        Some(t) => {
            let (mean, var) = super::reduction::batch_stats_names(t.norm);
            (STATS_PARAMS.map(String::from).to_vec(), vec![mean, var])
        }
        None => (vec![], vec![]),
    };
    let listed: Vec<NodeId> = prologue.iter().chain(&nodes[pos..]).copied().collect();
    let head = (outputs.len(), &extra[..], constexprs);
    let mut source = kernel_head(g, name, &prog, head, &listed, &[], &dim_order);
    source.push_str(&body);
    Some(TritonKernel {
        name: name.to_string(),
        source,
        inputs: prog.inputs,
        outputs: outputs.to_vec(),
        grid: vec![grid.max(1)],
        grid_expr: None,
        config,
        extra_args: vec![],
        scratch_args,
        operand_prep: vec![],
        phase_launches: None,
    })
}

/// The tiled form's indices: program `pid` takes tile (`tile_h`, `tile_w`) of its plane
/// (`nh` x `nw` tiles a plane); the leading dims' indices are `[1, 1]` tensors (so that
/// loads along them alone broadcast over the tile), the last two a column and a row of
/// the tile; `offs` the outputs' row-major offsets.
fn tile_index(body: &mut String, pid: &str, (nh, nw): (u64, u64), out_shape: &[i64]) {
    let rank = out_shape.len();
    let (h, w) = (rank - 2, rank - 1);
    let (ho, wo) = (out_shape[h], out_shape[w]);
    writeln!(body, "    pid = {pid}").unwrap();
    writeln!(body, "    tile_w = pid % {nw}").unwrap();
    writeln!(body, "    tile_h = (pid // {nw}) % {nh}").unwrap();
    writeln!(
        body,
        "    plane = pid // {} + tl.zeros([1, 1], tl.int32)",
        nh * nw
    )
    .unwrap();
    let names: Vec<String> = (0..h).map(|d| format!("o{d}")).collect();
    decompose(body, "    ", "plane", &out_shape[..h], &names);
    writeln!(
        body,
        "    o{h} = tile_h * BLOCK_H + tl.arange(0, BLOCK_H)[:, None]"
    )
    .unwrap();
    writeln!(
        body,
        "    o{w} = tile_w * BLOCK_W + tl.arange(0, BLOCK_W)[None, :]"
    )
    .unwrap();
    writeln!(body, "    mask = (o{h} < {ho}) & (o{w} < {wo})").unwrap();
    writeln!(body, "    offs = plane * {} + o{h} * {wo} + o{w}", ho * wo).unwrap();
}

/// The pooled input `x` at a tap, in space `Tap`: computed by the `prologue` nodes
/// (pointwise, over `x`'s shape, or `norm` from its statistics) from loads
/// at the tap's index, or loaded when there are none. Also the statistics' statements.
fn add_prologue(
    g: &Graph,
    prog: &mut Program,
    prologue: &[NodeId],
    x: ValueId,
    ix: &FlatIndex,
    norm: Option<TapNorm>,
) -> Option<(usize, Vec<usize>)> {
    let shape = &g.ty(x).shape;
    let identity: Vec<usize> = (0..shape.len()).collect();
    let mut seeds = vec![];
    for &n in prologue {
        if drtc_passes::fuse::is_inlined_constant(g, n) {
            continue;
        }
        let node = g.node(n);
        let out_shape = &g.ty(node.outputs[0]).shape;
        if out_shape != shape {
            return None;
        }
        if norm.is_some_and(|t| t.norm == n) {
            let (y, stats) = apply_norm(g, prog, n, (ix, ix.lead))?;
            prog.vars.insert((node.outputs[0], Sp::Tap), y);
            seeds.extend(stats);
            continue;
        }
        let args: Vec<usize> = node
            .inputs
            .iter()
            .map(|&v| prog.value(g, v, Sp::Tap, align(&g.ty(v).shape, shape, &identity), ix))
            .collect();
        prog.pointwise(g, n, Sp::Tap, args)?;
    }
    let tap = prog.value(g, x, Sp::Tap, align(shape, shape, &identity), ix);
    Some((tap, seeds))
}
