//! The reduction template: reductions, softmax-like ops, normalizations and scans over one
//! (rows x columns) space, with their pointwise producers and consumers. A scan's result is
//! domain-shaped; in looped passes it adds the running value of the blocks before
//! (`carry<i>`) and only the row strategy carries it (a region with a scan never splits).
//!
//! The domain's reduced dims index columns, the others rows (group_norm splits the channel
//! dim into a row part and a column part). Each program handles BLOCK_R rows.
//! Row-major rows (stated heuristic, [`reduction_config`]): when the padded row length
//! next_pow2(C) <= 4096 the whole row is loaded once (single pass, BLOCK_C =
//! next_pow2(C)); otherwise every reduction makes a looped pass over BLOCK_C = 2048
//! columns, recomputing its producers, and a last pass writes the domain-shaped outputs.
//! BLOCK_R fills a tile of 4096 elements (at most 64 rows); 8 warps for tiles of 4096
//! elements or more, else 4. Rows adjacent in memory and few long rows take other tiles
//! and the split strategy: `strategy.rs` states when.

use super::kernel::{LaunchConfig, Placements, TritonKernel};
use super::statements::{Program, Sp};
use super::ty::next_pow2;
use drtc_ir::{DType, Graph, NodeId, Op, ValueId};
use drtc_passes::fuse::{space_of, ReduceSpace, Space};
use lower::Builder;
use space::{dims_in_order, dims_of};
use split::{split_kernels, split_scratch};
use std::collections::HashMap;
use strategy::{asked_split, choose, choose_rows, inner_rows, output_chunks, Strategy, SPLIT_KEY};

pub use coop::coop_config;

mod coop;
mod flat;
mod looped;
mod lower;
mod space;
mod split;
mod strategy;

/// Per-row statistics a norm's kernel writes: a training-mode batch_norm's per-channel
/// batch mean and unbiased variance, so the host can update the running statistics like
/// PyTorch does (`running`), and a window kernel that applies the norm reads them; or,
/// from a kernel that writes only statistics, another norm's row mean and rstd, for the
/// window kernel that applies it (`tap_norm::TapNorm`).
#[derive(Clone, Debug)]
pub struct BatchStats {
    pub node: NodeId,
    /// Kernel output index of the mean and of the unbiased variance (a batch norm's) or
    /// the rstd.
    pub mean_out: usize,
    pub var_out: usize,
    /// Rows: a batch norm's channels.
    pub channels: i64,
    /// A batch norm's: the host updates its module's running statistics.
    pub running: bool,
}

/// The host's names of the statistics norm `node`'s kernel writes ([`BatchStats`]): the
/// running statistics' update and a window kernel that applies the norm at each tap
/// (`tap_norm::TapNorm`) read them.
pub fn batch_stats_names(node: NodeId) -> (String, String) {
    let n = node.0;
    (format!("drtc_bn{n}_mean"), format!("drtc_bn{n}_var"))
}

/// The heuristic configuration for R rows of C columns.
///
/// Looped rows whose length is not a multiple of 4 begin at addresses no 16-byte vector load
/// can take: scalar loads, four instructions where a vector load is one. They get a 2 x 4096
/// tile and 16 warps, twice the bytes in flight: level-1 L1 and L2 norms (rows of 65535)
/// 14.7 -> 10.0 ms on an H100 (torch.compile 13.4), where rows of 262144 and 2097152
/// columns (instance and group norm) ran within 1% either way
/// (`bench/results/norm_tiles_probe_h100_b6e7965.txt`).
pub fn reduction_config(rows: u64, cols: u64) -> LaunchConfig {
    let single = next_pow2(cols) <= 4096;
    if !single && !cols.is_multiple_of(4) {
        return LaunchConfig {
            blocks: vec![("BLOCK_R", next_pow2(rows).min(2)), ("BLOCK_C", 4096)],
            num_warps: 16,
            num_stages: 1,
        };
    }
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
    // a row longer than one tile, held by programs that meet at a counter (`coop.rs`)
    out.extend(coop_config(cols));
    out
}

/// The code of one region: its kernels in launch order (the last one writes the region's
/// outputs and batch statistics), and scratch buffers they share.
#[derive(Clone, Debug)]
pub struct RegionCode {
    pub kernels: Vec<TritonKernel>,
    pub scratch: Vec<Scratch>,
    pub stats: Vec<BatchStats>,
    /// When the region takes its moment partials from a producer ([`GivenMoments`]): the
    /// scratch buffers the producer writes, sums then squared deviations (they are in
    /// `scratch`; the producer's launch comes first).
    pub given: Option<(String, String)>,
    /// Whether the kernels store the outputs the caller placed elsewhere ([`Placements`])
    /// there: both strategies do for domain-shaped outputs.
    pub placed: bool,
}

/// Moment partials another kernel offers to write for a reduction region: per column of
/// `value` ([M, N], the region's input), the sum and the squared deviations around their
/// mean of each chunk of `chunk` rows (`chunks` of them): a GEMM epilogue's per-tile
/// statistics, so that the region's statistics pass over `value` is not needed. Taken
/// only by a split reduction whose one partial stage is the moments of `value` itself over
/// its dim 0 (a training-mode batch norm of a `[batch, features]` matrix).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GivenMoments {
    pub value: ValueId,
    pub chunks: u64,
    pub chunk: u64,
}

/// A scratch buffer the host allocates for a region's kernels.
#[derive(Clone, Debug)]
pub struct Scratch {
    pub name: String,
    pub numel: u64,
    pub dtype: DType,
    /// Zeros before the launch (cooperative rows' partials and arrival counters), else
    /// uninitialized.
    pub zeroed: bool,
}

/// Generates the kernel of a reduction region; `None` when something has no template.
/// `out_order` (outermost first) is the order in which its domain-shaped outputs are
/// dense: `None` for row-major, `[0, 2, 3, 1]` for the channels-last outputs of a
/// reduction over the channels of a channels-last input. `given`: moment partials a
/// producer offers to write; the code says in [`RegionCode::given`] whether it took them.
/// `placed`: domain-shaped outputs to write into a slice of a larger tensor ([`Placements`];
/// [`RegionCode::placed`] says whether they were).
#[allow(clippy::too_many_arguments)]
pub fn reduction_kernel(
    g: &Graph,
    name: &str,
    (nodes, outputs): (&[NodeId], &[ValueId]),
    space: &ReduceSpace,
    config: Option<LaunchConfig>,
    out_order: Option<&[usize]>,
    given: Option<GivenMoments>,
    placed: &Placements,
) -> Option<RegionCode> {
    if out_order.is_some_and(|o| o.len() != space.domain.len()) {
        return None;
    }
    // arg-reductions return a column index and scans run in column order
    let order_free = !scans(g, nodes)
        && !nodes
            .iter()
            .any(|&n| matches!(g.node(n).op, Op::Argmax | Op::Argmin));
    let dims = dims_in_order(space, out_order, order_free);
    let rows: u64 = dims.row_comps.iter().map(|c| c.1 as u64).product();
    let cols: u64 = dims.col_comps.iter().map(|c| c.1 as u64).product();
    let mut b = Builder {
        g,
        prog: Program::new(),
        dims,
        space: space.clone(),
        cols,
        stats: vec![],
        row_stats: vec![],
        welford: vec![],
        moments: HashMap::new(),
        online: vec![],
        exp_sums: HashMap::new(),
    };
    for &n in nodes {
        if drtc_passes::fuse::is_inlined_constant(g, n) {
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
    // batch norms' statistics (for the running statistics), and in a kernel of statistics
    // only every other norm's row mean and rstd
    let batch = b.stats.iter().map(|&(n, m, v)| (n, m, v, true));
    let others = b.row_stats.iter().map(|&(n, m, r)| (n, m, r, false));
    let stat_list: Vec<_> = batch.chain(others.filter(|_| outputs.is_empty())).collect();
    let mut stats = vec![];
    for (node, mean, second, running) in stat_list {
        let k = stores.len();
        stores.push((mean, Sp::Row));
        stores.push((second, Sp::Row));
        stats.push(BatchStats {
            node,
            mean_out: k,
            var_out: k + 1,
            channels: rows as i64,
            running,
        });
    }
    let inner = inner_rows(&b.dims, &space.domain, out_order, cols);
    // the last pass takes the blocks of columns from the last one when its scans are reverse
    // (`looped.rs`): a forward scan in the same pass would see them backwards
    b.prog.scan_direction()?;
    if reduces_a_scan(&b.prog) {
        return None;
    }
    // a scan's carry runs through one program's column blocks: never the split strategy;
    // a configuration may ask for it (`long_rows_split`)
    let asked = config.as_ref().and_then(|c| asked_split(c, cols));
    let strategy = if b.prog.has_scan() {
        Strategy::Rows(choose_rows(rows, cols, inner))
    } else if let Some(plan) = asked {
        Strategy::Split(plan)
    } else {
        match choose(rows, cols, inner) {
            Strategy::Split(plan) if stores.iter().any(|s| s.1 == Sp::Full) => {
                Strategy::Split(output_chunks(plan, cols, inner))
            }
            other => other,
        }
    };
    let config = match (config, strategy) {
        (Some(c), Strategy::Rows(_)) => LaunchConfig {
            blocks: c.blocks.into_iter().filter(|b| b.0 != SPLIT_KEY).collect(),
            ..c
        },
        (Some(c), Strategy::Split(_)) if asked.is_none() => c,
        (None, Strategy::Rows(c)) => c,
        (_, Strategy::Split(plan)) => {
            let taken = given.and_then(|m| takes_moments(&b, &space.domain, m, cols));
            let layout = taken.and(given).map(|m| (m.chunks, m.chunk));
            let kernels = split_kernels(
                g, name, nodes, outputs, &b, &stores, plan, cols, out_order, layout, placed,
            );
            return Some(RegionCode {
                kernels,
                scratch: split_scratch(name, &b.prog, rows, plan, layout),
                stats,
                given: taken.map(|(sum, m2)| (format!("{name}_ws{sum}"), format!("{name}_ws{m2}"))),
                placed: full_outputs_only(&stores, placed),
            });
        }
    };
    // cooperative rows where the form applies, else the row strategy without them
    let config = if config.blocks.iter().any(|b| b.0 == "COOP") {
        let coop = coop::coop_kernel(
            g,
            name,
            (nodes, outputs),
            space,
            &b,
            &stores,
            stats.clone(),
            config.clone(),
            (rows, cols),
            out_order,
            placed,
        );
        if let Some(code) = coop {
            return Some(code);
        }
        LaunchConfig {
            blocks: config
                .blocks
                .into_iter()
                .filter(|b| b.0 != "COOP")
                .collect(),
            ..config
        }
    } else {
        config
    };
    Some(looped::row_kernel(
        g,
        name,
        (nodes, outputs),
        space,
        &b,
        &stores,
        stats,
        config,
        (rows, cols),
        out_order,
        placed,
    ))
}

/// Whether every output placed elsewhere ([`Placements`]) is domain-shaped: the templates
/// store those through their map (a row output has no place in a larger tensor here).
pub(super) fn full_outputs_only(stores: &[(usize, Sp)], placed: &Placements) -> bool {
    stores
        .iter()
        .enumerate()
        .all(|(k, &(_, sp))| sp == Sp::Full || super::kernel::placement(placed, k).is_none())
}

/// Whether a reduction reads a scan's result: its pass would need the scan's carry (the
/// fusion planner keeps such pairs in separate regions).
fn reduces_a_scan(prog: &Program) -> bool {
    use super::statements::Code;
    let scans: Vec<usize> = (0..prog.stmts.len())
        .filter(|&i| matches!(prog.stmts[i].code, Code::Scan { .. }))
        .collect();
    prog.stmts.iter().any(|s| match s.code {
        Code::Reduce { input, .. } => {
            let need = prog.closure(&[input], &|_| false);
            scans.iter().any(|sc| need.contains(sc))
        }
        Code::Expr(_) | Code::Scan { .. } => false,
    })
}

/// The moment pair's statements (sum, M2) when the region's one partial stage is the
/// moments of `m.value` itself per index of its dim 1 (a GEMM's `[batch, features]`
/// output over the batch, a convolution's `[batch, channels, spatial...]` over batch and
/// pixels), `m.chunks` chunks of `m.chunk` covering its `cols` other elements: then a
/// producer's partials can stand for that stage (the merge reads only each chunk's count).
fn takes_moments(
    b: &Builder,
    domain: &[i64],
    m: GivenMoments,
    cols: u64,
) -> Option<(usize, usize)> {
    let reduces = split::reduce_ids(&b.prog).len();
    let [(sum, m2, x)] = b.welford[..] else {
        return None;
    };
    let (v, sp, map) = b.prog.load_of(x)?;
    let rank = domain.len();
    let kinds = &b.dims.kinds;
    let plain = v == m.value
        && sp == Sp::Full
        && rank >= 2
        && map.len() == rank
        && map.iter().enumerate().all(|(d, &o)| o == Some(d))
        && kinds.len() == rank
        && kinds.iter().enumerate().all(|(d, k)| {
            *k == if d == 1 {
                space::DimKind::Row
            } else {
                space::DimKind::Col
            }
        });
    let covered = m.chunk > 0 && m.chunks == cols.div_ceil(m.chunk);
    (reduces == 2 && plain && covered).then_some((sum, m2))
}

/// Rows and columns of a reduction space (row-major), and whether the split strategy
/// applies.
pub fn reduction_shape(space: &ReduceSpace) -> (u64, u64, bool) {
    let (rows, cols, inner) = rows_cols_inner(space);
    let split = matches!(choose(rows, cols, inner), Strategy::Split(_));
    (rows, cols, split)
}

/// The split candidate of a reduction region of many long rows (row-major) over `space`,
/// if it has one (`strategy::long_rows_split`): not for scans, whose carry runs through one
/// program's column blocks.
pub fn long_rows_split_config(
    g: &Graph,
    nodes: &[NodeId],
    space: &ReduceSpace,
) -> Option<LaunchConfig> {
    if scans(g, nodes) {
        return None;
    }
    let (rows, cols, inner) = rows_cols_inner(space);
    strategy::long_rows_split(rows, cols, inner)
}

/// Whether `nodes` hold a scan (`cumsum`, `cumprod`).
fn scans(g: &Graph, nodes: &[NodeId]) -> bool {
    nodes
        .iter()
        .any(|&n| matches!(g.node(n).op, Op::Cumsum | Op::Cumprod))
}

/// Rows, columns and the memory-innermost row extent of a row-major reduction space.
fn rows_cols_inner(space: &ReduceSpace) -> (u64, u64, Option<i64>) {
    let dims = dims_of(space);
    let rows: u64 = dims.row_comps.iter().map(|c| c.1 as u64).product();
    let cols: u64 = dims.col_comps.iter().map(|c| c.1 as u64).product();
    (rows, cols, inner_rows(&dims, &space.domain, None, cols))
}
