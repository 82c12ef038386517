//! Which strategy and tile a reduction region gets (stated heuristics).
//!
//! - **Rows inner**: when the memory-innermost non-unit dim of the domain-shaped tensors is
//!   a row dim of at least 16 (a reduction over the batch of a `[batch, features]` matrix,
//!   a BatchNorm over channels-last activations), consecutive rows are adjacent in memory
//!   and consecutive columns are not. A tile of 1-2 rows and thousands of columns then
//!   reads 4-8 useful bytes per 32-byte sector; the tile is turned around instead:
//!   BLOCK_R = min(64, next_pow2(inner extent)) rows (256 contiguous bytes) by
//!   BLOCK_C = 4096 / BLOCK_R columns. With fewer than 264 row blocks (two per SM of a large
//!   GPU) and at least 8 column blocks per row, the columns are also split into chunks
//!   (the split strategy with BLOCK_R rows per program) so that at most 1056 programs run.
//!   With at most [`TINY_COLS`] columns the rows adjacent in memory are the whole run of
//!   trailing row dims laid out in order (not only the innermost), and the tile takes up
//!   to 256 of them.
//! - **Otherwise** the row-major rule: [`reduction_config`](super::reduction_config) for
//!   the row strategy, the split strategy (one row per program, BLOCK_C = 2048) for fewer
//!   than 264 rows of at least 32768 columns; where its last stage writes domain-shaped
//!   outputs (a norm), chunks of at most [`OUTPUT_CHUNK`] columns ([`output_chunks`]).

use super::space::{DimKind, Dims};
use crate::triton::kernel::LaunchConfig;
use crate::triton::ty::next_pow2;

/// Programs the split strategy aims for: eight per SM of a 132-SM GPU, and no more (the
/// chunks per row round down): a few programs past a whole number of waves run as one more
/// wave, nearly empty. Level-1 BatchNorm (64 channels) took 17 chunks, 1088 programs, and
/// ran at 0.75x torch.compile (`bench/results/level1_h200_2030ff2_default_vs_compile.md`);
/// 16 chunks make 1024.
const SPLIT_PROGRAMS: u64 = 1056;
/// Fewer row blocks than this (two per SM) leave a large GPU idle.
const FEW_ROW_BLOCKS: u64 = 264;
const ROW_MAJOR_SPLIT_BLOCK_C: u64 = 2048;
/// Chunks per row of the row-major split: up to [`SPLIT_PROGRAMS`] for one row. One
/// streamed input at 256 chunks (2 programs of 8 warps per SM) kept too few loads in flight:
/// level-1 hinge loss (1 row of 2^30 columns) ran at 51% of the copy bandwidth
/// (`bench/results/level1_losses_h200_a449238_default_vs_compile.md`). The last stage reads
/// one row's partials as one tile of up to 1024, so only one-row-per-program plans go
/// this far (the tall tiles of the rows-inner split keep 256).
const ROW_MAJOR_MAX_CHUNKS: u64 = 1024;
/// Reductions of at most this many columns (a sum over 2-8 chunks, an einsum pair over a
/// tiny K) take tall tiles of up to 256 rows over the run of row dims adjacent in memory:
/// Mamba2's recurrence (16,777,216 rows of 3 columns, innermost row dim 16) ran 16 x 4
/// tiles, a million programs of 64 lanes, where 256 x 4 tiles make 65,536 (predicted from
/// the program count: waves of tiny programs are latency-bound; not measured).
pub(crate) const TINY_COLS: u64 = 8;

/// Whether `cols` columns are at most [`TINY_COLS`] (as their tile's width).
fn tiny(cols: u64) -> bool {
    next_pow2(cols) <= TINY_COLS
}
/// Chunks per row block of the rows-inner split (a last-stage tile of BLOCK_R x chunks).
const ROWS_INNER_MAX_CHUNKS: u64 = 256;

/// The split strategy's tiles: programs over (row block, column chunk).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SplitPlan {
    pub(crate) block_r: u64,
    pub(crate) block_c: u64,
    /// Number of column chunks, and columns per chunk (a multiple of `block_c`).
    pub(crate) chunks: u64,
    pub(crate) chunk: u64,
}

impl SplitPlan {
    fn new(block_r: u64, block_c: u64, chunks: u64, cols: u64) -> SplitPlan {
        let chunk = cols.div_ceil(chunks.max(1)).div_ceil(block_c).max(1) * block_c;
        SplitPlan {
            block_r,
            block_c,
            chunks: cols.div_ceil(chunk).max(1),
            chunk,
        }
    }
}

/// How a reduction region is computed.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Strategy {
    /// One program per BLOCK_R rows (single pass or looped passes over the columns).
    Rows(LaunchConfig),
    /// Each reduction by its own kernel over (row block, column chunk) programs.
    Split(SplitPlan),
}

/// The extent of the memory-innermost non-unit dim when it is a row dim and also the last
/// row dim of the flat row index (so that consecutive rows are adjacent in memory); with at
/// most [`TINY_COLS`] columns, the product over the run of trailing row dims that are also
/// the innermost in memory, in the same order. `order` is the memory order of the
/// domain-shaped tensors, outermost first (`None`: row-major).
pub(crate) fn inner_rows(
    dims: &Dims,
    domain: &[i64],
    order: Option<&[usize]>,
    cols: u64,
) -> Option<i64> {
    let row_major: Vec<usize> = (0..domain.len()).collect();
    let order = order.unwrap_or(&row_major);
    let rows: Vec<usize> = (0..domain.len())
        .filter(|&i| domain[i] != 1 && dims.kinds[i] != DimKind::Col)
        .collect();
    let whole_run = tiny(cols);
    let mut extent = 1;
    let mut left = rows.len();
    for &d in order.iter().rev().filter(|&&d| domain[d] != 1) {
        if left == 0 || dims.kinds[d] != DimKind::Row || rows[left - 1] != d {
            break;
        }
        extent *= domain[d];
        left -= 1;
        if !whole_run {
            break;
        }
    }
    (left < rows.len()).then_some(extent)
}

/// The strategy for `rows` x `cols` whose memory-innermost row extent is `inner`.
pub(crate) fn choose(rows: u64, cols: u64, inner: Option<i64>) -> Strategy {
    match inner {
        Some(e) if e >= 16 => {
            let (block_r, block_c) = tall_tile(e, rows, cols);
            let row_blocks = rows.div_ceil(block_r);
            let max_chunks = cols.div_ceil(4 * block_c);
            if row_blocks < FEW_ROW_BLOCKS && cols >= 8 * block_c && max_chunks >= 2 {
                let chunks = (SPLIT_PROGRAMS / row_blocks)
                    .clamp(2, ROWS_INNER_MAX_CHUNKS)
                    .min(max_chunks);
                return Strategy::Split(SplitPlan::new(block_r, block_c, chunks, cols));
            }
            Strategy::Rows(tile_config(block_r, block_c))
        }
        _ if rows < FEW_ROW_BLOCKS && cols >= 32768 => {
            let max_chunks = cols.div_ceil(4 * ROW_MAJOR_SPLIT_BLOCK_C).max(1);
            let chunks = (SPLIT_PROGRAMS / rows)
                .clamp(2, ROW_MAJOR_MAX_CHUNKS)
                .min(max_chunks)
                .max(1);
            Strategy::Split(SplitPlan::new(1, ROW_MAJOR_SPLIT_BLOCK_C, chunks, cols))
        }
        _ => Strategy::Rows(super::reduction_config(rows, cols)),
    }
}

/// Columns a chunk of a row-major split takes at most when its last stage writes the
/// domain-shaped outputs: that stage streams its chunk in and out like a pointwise kernel,
/// and faster in more, shorter chunks. Level-1 LayerNorm (16 rows of 4,194,304): the
/// output stage 0.237 ms in 64 chunks of 65536, 0.194 in 256 of 16384, the statistics
/// stage 0.095 / 0.094, on an H100 (`bench/results/kernel_variants_h100_acad4ad.txt`).
const OUTPUT_CHUNK: u64 = 16384;

/// `plan`, a split [`choose`] made, for a region whose last stage writes domain-shaped
/// outputs: row-major rows take chunks of at most [`OUTPUT_CHUNK`] columns (up to
/// [`ROW_MAJOR_MAX_CHUNKS`] a row); the tall tiles of rows adjacent in memory keep theirs.
pub(crate) fn output_chunks(plan: SplitPlan, cols: u64, inner: Option<i64>) -> SplitPlan {
    if matches!(inner, Some(e) if e >= 16) {
        return plan;
    }
    let chunks = (plan.chunks)
        .max(cols.div_ceil(OUTPUT_CHUNK))
        .min(ROW_MAJOR_MAX_CHUNKS);
    SplitPlan::new(plan.block_r, plan.block_c, chunks, cols)
}

/// Columns one program of a long-rows split takes ([`long_rows_split`]): 64 blocks of
/// 2048, half a megabyte of fp32.
const LONG_ROWS_CHUNK: u64 = 131072;
/// The launch configuration's key that asks for the split strategy with this many chunks a
/// row (whatever [`choose`] says): the full search's variant for many long rows.
pub(crate) const SPLIT_KEY: &str = "SPLIT";

/// The split strategy for many row-major rows of at least two [`LONG_ROWS_CHUNK`]s, where
/// [`choose`] takes the row strategy (264 rows and more): one row a program, chunks of
/// [`LONG_ROWS_CHUNK`] columns. The looped passes read a row twice from one program;
/// the split reads it twice too, from programs of a fixed size, a grid of many more
/// programs (level-1 GroupNorm, 896 rows of 2^21: 14,336 against 448). A variant of the
/// full search only: raced by the quick scope on an H200 it lost on level-1 GroupNorm (6.42
/// against the looped passes' 6.14 ms) and tied on InstanceNorm (5.64 against 5.70), each
/// race costing about 25 s (`bench/results/level1_long_rows_h200_3ed2512_default_vs_modes.md`).
pub(crate) fn long_rows_split(rows: u64, cols: u64, inner: Option<i64>) -> Option<LaunchConfig> {
    let row_major = !matches!(inner, Some(e) if e >= 16);
    let rows_strategy = matches!(choose(rows, cols, inner), Strategy::Rows(_));
    (row_major && rows_strategy && cols >= 2 * LONG_ROWS_CHUNK).then(|| LaunchConfig {
        blocks: vec![
            ("BLOCK_R", 1),
            ("BLOCK_C", ROW_MAJOR_SPLIT_BLOCK_C),
            (
                SPLIT_KEY,
                cols.div_ceil(LONG_ROWS_CHUNK).min(ROW_MAJOR_MAX_CHUNKS),
            ),
        ],
        num_warps: 8,
        num_stages: 1,
    })
}

/// The split plan a launch configuration asks for ([`SPLIT_KEY`]), if it does.
pub(crate) fn asked_split(config: &LaunchConfig, cols: u64) -> Option<SplitPlan> {
    let chunks = config.blocks.iter().find(|b| b.0 == SPLIT_KEY)?.1;
    Some(SplitPlan::new(
        config.block("BLOCK_R"),
        config.block("BLOCK_C"),
        chunks,
        cols,
    ))
}

/// Warps of a scan's tile at most: the 16 of the unaligned rule ([`reduction_config`]'s,
/// for passes that only reduce) cost a scan's carried blocks, whose float64 running value
/// takes registers. Level-1 92 (exclusive cumsum, 32768 rows of 32767, 2 x 4096 tiles):
/// 3.77 ms on 16 warps, 2.89 on 8, at the copy bandwidth, on an H100
/// (`bench/results/kernel_variants_h100_acad4ad.txt`).
///
/// [`reduction_config`]: super::reduction_config
const SCAN_MAX_WARPS: u32 = 8;

/// The row strategy's tile for `rows` x `cols` whose memory-innermost row extent is
/// `inner`, where the split strategy is not an option (a scan carries its running value
/// through one program's column blocks): [`choose`]'s tile without the split, on at most
/// [`SCAN_MAX_WARPS`] warps.
pub(crate) fn choose_rows(rows: u64, cols: u64, inner: Option<i64>) -> LaunchConfig {
    let c = match inner {
        Some(e) if e >= 16 => {
            let (block_r, block_c) = tall_tile(e, rows, cols);
            tile_config(block_r, block_c)
        }
        _ => super::reduction_config(rows, cols),
    };
    LaunchConfig {
        num_warps: c.num_warps.min(SCAN_MAX_WARPS),
        ..c
    }
}

/// The tall tile over rows adjacent in memory: up to 64 of them (256 contiguous bytes), or
/// with at most [`TINY_COLS`] columns up to 256 while [`FEW_ROW_BLOCKS`] row blocks remain,
/// by 4096 / BLOCK_R columns.
fn tall_tile(inner: i64, rows: u64, cols: u64) -> (u64, u64) {
    let mut most = 64;
    while tiny(cols) && most < 256 && rows / (most * 2) >= FEW_ROW_BLOCKS {
        most *= 2;
    }
    let block_r = next_pow2(inner as u64).min(most);
    (block_r, (4096 / block_r).min(next_pow2(cols)).max(1))
}

fn tile_config(block_r: u64, block_c: u64) -> LaunchConfig {
    LaunchConfig {
        blocks: vec![("BLOCK_R", block_r), ("BLOCK_C", block_c)],
        num_warps: if block_r * block_c >= 4096 { 8 } else { 4 },
        num_stages: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_statistics_of_a_wide_matrix_split_with_tall_tiles() {
        // [16384, 4096] reduced over dim 0: 64 row blocks of 64 rows, 16 chunks of 1024
        let s = choose(4096, 16384, Some(4096));
        assert_eq!(
            s,
            Strategy::Split(SplitPlan {
                block_r: 64,
                block_c: 64,
                chunks: 16,
                chunk: 1024
            })
        );
    }

    #[test]
    fn a_full_reduction_of_one_huge_row_splits_into_enough_programs() {
        // one row of 2^30 columns: 1024 chunks (about eight programs per SM), not 256
        let Strategy::Split(p) = choose(1, 1 << 30, None) else {
            panic!("expected the split strategy");
        };
        assert_eq!((p.block_r, p.block_c, p.chunks), (1, 2048, 1024));
        // two rows share the programs; a short row is bounded by its own columns
        let Strategy::Split(p) = choose(2, 1 << 30, None) else {
            panic!("expected the split strategy");
        };
        assert_eq!(p.chunks, 528);
        let Strategy::Split(p) = choose(1, 1 << 16, None) else {
            panic!("expected the split strategy");
        };
        assert_eq!(p.chunks, 8);
    }

    #[test]
    fn many_inner_rows_use_the_row_strategy_with_tall_tiles() {
        let Strategy::Rows(c) = choose(1 << 16, 512, Some(1 << 16)) else {
            panic!("expected the row strategy");
        };
        assert_eq!((c.block("BLOCK_R"), c.block("BLOCK_C")), (64, 64));
    }

    #[test]
    fn row_major_rule_is_unchanged() {
        assert_eq!(
            choose(128, 4096, None),
            Strategy::Rows(super::super::reduction_config(128, 4096))
        );
        assert_eq!(
            choose(64, 1 << 20, Some(8)),
            Strategy::Split(SplitPlan::new(1, 2048, 16, 1 << 20))
        );
        let Strategy::Split(p) = choose(8, 1 << 20, None) else {
            panic!("expected the split strategy");
        };
        assert_eq!((p.block_r, p.block_c, p.chunks), (1, 2048, 128));
    }

    fn inner(domain: &[i64], reduced: &[bool], order: Option<&[usize]>) -> Option<i64> {
        let space = drtc_passes::fuse::ReduceSpace {
            domain: domain.to_vec(),
            reduced: reduced.to_vec(),
            groups: None,
        };
        inner_rows(
            &super::super::space::dims_of(&space),
            domain,
            order,
            1 << 20,
        )
    }

    #[test]
    fn inner_rows_need_the_innermost_dim_to_be_the_last_row_dim() {
        let cl = [0, 2, 3, 1];
        // a BatchNorm over N, H, W and a spatial mean of a channels-last tensor
        assert_eq!(
            inner(&[8, 64, 5, 5], &[true, false, true, true], Some(&cl)),
            Some(64)
        );
        assert_eq!(
            inner(&[8, 64, 5, 5], &[false, false, true, true], Some(&cl)),
            Some(64)
        );
        // a norm over W only: consecutive rows are consecutive H, not adjacent channels
        assert_eq!(
            inner(&[8, 64, 5, 5], &[false, false, false, true], Some(&cl)),
            None
        );
        // row-major: a reduction over dim 0 keeps the last dim as rows; over the last dim not
        assert_eq!(inner(&[100, 48], &[true, false], None), Some(48));
        assert_eq!(inner(&[100, 48], &[false, true], None), None);
    }

    #[test]
    fn tiny_column_counts_take_the_whole_run_of_adjacent_rows() {
        // [b, h, c, p, n] summed over c (3 chunks): rows (b, h, p, n), p and n adjacent
        let space = drtc_passes::fuse::ReduceSpace {
            domain: vec![2048, 8, 3, 64, 16],
            reduced: vec![false, false, true, false, false],
            groups: None,
        };
        let dims = super::super::space::dims_of(&space);
        assert_eq!(inner_rows(&dims, &space.domain, None, 3), Some(1024));
        // more columns: the innermost row dim only, as before
        assert_eq!(inner_rows(&dims, &space.domain, None, 64), Some(16));
        let Strategy::Rows(c) = choose(2048 * 8 * 64 * 16, 3, Some(1024)) else {
            panic!("expected the row strategy");
        };
        assert_eq!((c.block("BLOCK_R"), c.block("BLOCK_C")), (256, 4));
        // fewer rows: the tile stays tall only while 264 row blocks remain
        let Strategy::Rows(c) = choose(54016, 3, Some(1024)) else {
            panic!("expected the row strategy");
        };
        assert_eq!(c.block("BLOCK_R"), 128);
        let Strategy::Rows(c) = choose(6400, 3, Some(1024)) else {
            panic!("expected the row strategy");
        };
        assert_eq!(c.block("BLOCK_R"), 64);
        // a channels-last order: the run stops at the first dim out of the rows' order
        let cl = [0, 2, 3, 4, 1];
        assert_eq!(inner_rows(&dims, &space.domain, Some(&cl), 3), None);
    }

    #[test]
    fn unaligned_long_rows_take_wider_tiles_and_more_warps() {
        // rows of 65535 (no 16-byte vector loads): 2 x 4096, 16 warps; rows of 65536 as before
        let Strategy::Rows(c) = choose(32768, 65535, None) else {
            panic!("expected the row strategy");
        };
        assert_eq!(
            (c.block("BLOCK_R"), c.block("BLOCK_C"), c.num_warps),
            (2, 4096, 16)
        );
        let Strategy::Rows(c) = choose(32768, 65536, None) else {
            panic!("expected the row strategy");
        };
        assert_eq!(
            (c.block("BLOCK_R"), c.block("BLOCK_C"), c.num_warps),
            (2, 2048, 8)
        );
        // a row that fits one block is unchanged
        let Strategy::Rows(c) = choose(32768, 1023, None) else {
            panic!("expected the row strategy");
        };
        assert_eq!(c.block("BLOCK_C"), 1024);
        // a scan's unaligned rows keep the tile on 8 warps
        let c = choose_rows(32768, 32767, None);
        assert_eq!(
            (c.block("BLOCK_R"), c.block("BLOCK_C"), c.num_warps),
            (2, 4096, 8)
        );
    }

    #[test]
    fn a_split_that_writes_rows_takes_short_chunks() {
        // LayerNorm's 16 rows of 2^22: 64 chunks of 65536 for the reductions alone, 256 of
        // 16384 when the last stage writes the normalized rows
        let Strategy::Split(p) = choose(16, 1 << 22, None) else {
            panic!("expected the split strategy");
        };
        assert_eq!((p.chunks, p.chunk), (64, 65536));
        let q = output_chunks(p, 1 << 22, None);
        assert_eq!(
            (q.block_r, q.block_c, q.chunks, q.chunk),
            (1, 2048, 256, 16384)
        );
        // one row of 2^30: at most 1024 chunks either way
        let Strategy::Split(p) = choose(1, 1 << 30, None) else {
            panic!("expected the split strategy");
        };
        assert_eq!(output_chunks(p, 1 << 30, None), p);
        // tall tiles over rows adjacent in memory keep their chunks
        let Strategy::Split(p) = choose(64, 1 << 20, Some(64)) else {
            panic!("expected the split strategy");
        };
        assert_eq!(output_chunks(p, 1 << 20, Some(64)), p);
    }

    #[test]
    fn many_long_rows_get_a_split_candidate_of_fixed_chunks() {
        // 896 rows of 2^21 (GroupNorm's groups): the rule takes rows, the candidate splits
        let c = long_rows_split(896, 1 << 21, None).expect("a candidate");
        assert!(matches!(choose(896, 1 << 21, None), Strategy::Rows(_)));
        assert_eq!(
            asked_split(&c, 1 << 21),
            Some(SplitPlan {
                block_r: 1,
                block_c: 2048,
                chunks: 16,
                chunk: 131072
            })
        );
        // a ragged row: chunks cover it, the last one short
        let p = asked_split(&long_rows_split(7168, 300_000, None).unwrap(), 300_000).unwrap();
        assert_eq!((p.chunks, p.chunk), (3, 100_352));
        // rows the rule already splits, short rows, rows inner in memory: none
        assert_eq!(long_rows_split(16, 1 << 22, None), None);
        assert_eq!(long_rows_split(4096, 65536, None), None);
        assert_eq!(long_rows_split(4096, 1 << 20, Some(4096)), None);
        // a configuration without the key asks for nothing
        assert_eq!(asked_split(&choose_rows(896, 1 << 21, None), 1 << 21), None);
    }

    #[test]
    fn short_columns_are_not_split() {
        // 64 rows inner, 100 columns: one row block, too few columns to split
        let Strategy::Rows(c) = choose(64, 100, Some(64)) else {
            panic!("expected the row strategy");
        };
        assert_eq!(c.block("BLOCK_C"), 64);
    }
}
