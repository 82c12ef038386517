//! Cooperative rows: a row too long for one program's tile split over `COOP` programs that
//! each hold `BLOCK_C` of its columns in registers. Each reduction's partial goes to
//! scratch, the row's programs meet at an arrival counter, each combines the partials and
//! goes on with the columns it still holds: the data is read once and written once, where
//! looped passes read it once per reduction and again for the outputs. Predicted from the
//! bytes for level-1 L1 norm (32768 rows of 65535): two thirds of the looped passes' traffic
//! once the second read misses L2, about 6.5-7 ms on an H100 against 9.09; measured 7.46
//! with four programs an SM ([`COOP_SM_COLUMNS`]). The quick search races it against the
//! looped passes on regions of at least 2^24 elements, the full search offers it among the
//! launch configurations.
//!
//! Waiting on other programs is safe only while every program of the grid is resident: the
//! grid is persistent, as many programs per SM as [`residency`] fits (the launch caps each
//! thread's registers so that they do: `maxnreg`), a multiple of `COOP`, and walks the
//! (row, chunk) items in order, so the `COOP` programs of a row are the same round's
//! neighbours. Triton's interpreter runs programs one at a time, so only `COOP` = 1 (no
//! waiting) runs there; the search runs on the GPU only, where every candidate is verified
//! before it is timed. The end-to-end race of this form is not yet measured (the probe's
//! hand-written kernel is).

use super::flat::{runs_decompose, store_offset};
use super::lower::{comps_decompose, reduce_line, row_store, Builder};
use super::{BatchStats, RegionCode, Scratch};
use crate::triton::kernel::{ops_comment, signature, LaunchConfig, Placements, TritonKernel};
use crate::triton::statements::{Code, RedKind, Sp};
use crate::triton::ty::{compute_ty, next_pow2, storage_ty};
use drtc_ir::{DType, Graph, NodeId, ValueId};
use drtc_passes::fuse::ReduceSpace;
use std::fmt::Write;

/// Columns the programs resident on one SM hold together: 4 programs of 4096 columns or 2
/// of 8192, 8 warps each. Measured on level-1 38 (32768 rows of 65535, H100,
/// `bench/results/level1_coop_rows_probe_h100_5459fef.txt`): one program of 16384 columns
/// an SM on 16 warps 8.97 ms (each program's load, meeting and store run one after the
/// other), no faster than the looped passes' 8.96; two of 8192 7.53, four of 4096 7.46.
pub const COOP_SM_COLUMNS: u64 = 16384;
/// Column chunks one program holds, the narrowest first.
const COOP_CHUNKS: [u64; 2] = [4096, 8192];
/// At most this many programs share a row.
pub const COOP_MAX: u64 = 32;
/// Warps of one cooperative program.
const COOP_WARPS: u32 = 8;

/// The cooperative configuration for rows of `cols` columns (beyond one tile of the row
/// strategy): the narrowest chunk whose row fits `COOP_MAX` programs.
pub fn coop_config(cols: u64) -> Option<LaunchConfig> {
    if next_pow2(cols) <= 4096 {
        return None;
    }
    let chunk = COOP_CHUNKS
        .into_iter()
        .find(|&c| cols.div_ceil(c) <= COOP_MAX)?;
    let g = cols.div_ceil(chunk);
    Some(LaunchConfig {
        blocks: vec![
            ("BLOCK_R", 1),
            ("BLOCK_C", next_pow2(cols.div_ceil(g))),
            ("COOP", g),
        ],
        num_warps: COOP_WARPS,
        num_stages: 1,
    })
}

/// Programs of `block_c` columns on `warps` warps resident on one SM, and the registers a
/// thread may use so that they all fit the SM's 65536 (the launch's `maxnreg`): the
/// programs of a row wait for each other, so they must all be resident at once.
fn residency(block_c: u64, warps: u32) -> (u64, u64) {
    let per_sm = (COOP_SM_COLUMNS / block_c.max(1)).clamp(1, 4);
    let regs = (65536 / (per_sm * u64::from(warps.max(1)) * 32)).min(255);
    (per_sm, regs)
}

/// The kernel of a reduction region as cooperative rows with `config`'s `COOP` programs
/// per row; `None` where the form does not apply (scans, arg-reductions, reductions of
/// other than 32/64-bit values, outputs placed in a larger tensor, a tile that misses
/// columns).
#[allow(clippy::too_many_arguments)]
pub(super) fn coop_kernel(
    g: &Graph,
    name: &str,
    (nodes, outputs): (&[NodeId], &[ValueId]),
    space: &ReduceSpace,
    b: &Builder,
    stores: &[(usize, Sp)],
    stats: Vec<BatchStats>,
    config: LaunchConfig,
    (rows, cols): (u64, u64),
    out_order: Option<&[usize]>,
    placed: &Placements,
) -> Option<RegionCode> {
    let (coop, block_c) = (config.block("COOP"), config.block("BLOCK_C"));
    if config.block("BLOCK_R") != 1 || coop * block_c < cols || placed.iter().any(Option::is_some) {
        return None;
    }
    let prog = &b.prog;
    let dims = &b.dims;
    let mut reduces = vec![];
    for (i, s) in prog.stmts.iter().enumerate() {
        match s.code {
            Code::Scan { .. } => return None,
            Code::Reduce { kind, .. } => {
                let kept = matches!(s.dtype, DType::F32 | DType::F64 | DType::I32 | DType::I64);
                if matches!(kind, RedKind::ArgMax | RedKind::ArgMin) || !kept {
                    return None;
                }
                reduces.push(i);
            }
            Code::Expr(_) => {}
        }
    }
    let wide = crate::triton::pointwise::needs_int64(
        g,
        outputs
            .iter()
            .copied()
            .chain(prog.inputs.iter().map(|a| a.value)),
    );
    let ws = |i: usize| format!("{name}_cw{i}");
    let cnt = format!("{name}_cnt");
    let mut body = String::new();
    writeln!(body, "    pid = tl.program_id(0)").unwrap();
    writeln!(body, "    for w in range(pid, {}, NUM_PROGS):", rows * coop).unwrap();
    let row0 = if wide {
        "(w // COOP).to(tl.int64)"
    } else {
        "w // COOP"
    };
    let ind = "        ";
    writeln!(body, "{ind}row0 = {row0}").unwrap();
    writeln!(body, "{ind}chunk = w % COOP").unwrap();
    writeln!(body, "{ind}rows = row0 + tl.arange(0, BLOCK_R)[:, None]").unwrap();
    writeln!(body, "{ind}rmask = rows < {rows}").unwrap();
    comps_decompose(&mut body, ind, "rows", &dims.row_comps);
    writeln!(
        body,
        "{ind}cols = chunk * BLOCK_C + tl.arange(0, BLOCK_C)[None, :]"
    )
    .unwrap();
    writeln!(body, "{ind}mask = rmask & (cols < {cols})").unwrap();
    comps_decompose(&mut body, ind, "cols", &dims.col_comps);
    runs_decompose(&mut body, ind, dims);
    let lanes = next_pow2(coop);
    for (i, s) in prog.stmts.iter().enumerate() {
        match &s.code {
            Code::Expr(code) => writeln!(body, "{ind}{} = {code}", s.var).unwrap(),
            Code::Reduce { kind, input } => {
                let ct = compute_ty(s.dtype);
                let round = reduces.iter().position(|&r| r == i).unwrap_or(0) + 1;
                let part = reduce_line(*kind, prog.var(*input), s.dtype);
                // the chunk's partial, then the row's: every program of the row arrives
                // once per reduction, so the counter reaches `round` x COOP when all have
                // written this round's partial
                writeln!(body, "{ind}part{i} = {part}").unwrap();
                writeln!(
                    body,
                    "{ind}tl.atomic_add({} + w, tl.sum(part{i}, axis=0))",
                    ws(i)
                )
                .unwrap();
                writeln!(body, "{ind}arrived = tl.atomic_add({cnt} + row0, 1) + 1").unwrap();
                writeln!(body, "{ind}while arrived < {round} * COOP:").unwrap();
                writeln!(body, "{ind}    arrived = tl.atomic_add({cnt} + row0, 0)").unwrap();
                let (identity, combine) = match kind {
                    RedKind::Sum => ("0", "tl.sum({p}, axis=0)"),
                    RedKind::Max => ("float('-inf')", "tl.max({p}, axis=0)"),
                    RedKind::Min => ("float('inf')", "tl.min({p}, axis=0)"),
                    RedKind::Prod => ("1", "tl.reduce({p}, 0, _drtc_mul)"),
                    RedKind::ArgMax | RedKind::ArgMin => return None,
                };
                let parts = format!("parts{i}");
                writeln!(
                    body,
                    "{ind}{parts} = tl.load({} + row0 * COOP + tl.arange(0, {lanes}), mask=tl.arange(0, {lanes}) < COOP, other={identity}, volatile=True)",
                    ws(i)
                )
                .unwrap();
                let combined = combine.replace("{p}", &parts);
                writeln!(
                    body,
                    "{ind}{} = ({combined} + tl.zeros([BLOCK_R], {ct}))[:, None]",
                    s.var
                )
                .unwrap();
            }
            Code::Scan { .. } => return None,
        }
    }
    let full_off = store_offset(dims, &space.domain, out_order);
    for (k, &(i, sp)) in stores.iter().enumerate() {
        let ct = compute_ty(prog.stmts[i].dtype);
        match sp {
            Sp::Full => {
                let st = storage_ty(prog.stmts[i].dtype);
                writeln!(
                    body,
                    "{ind}tl.store(out{k} + {full_off}, ({} + tl.zeros([BLOCK_R, BLOCK_C], {ct})).to({st}), mask=mask)",
                    prog.var(i)
                )
                .unwrap();
            }
            Sp::Row => row_store(&mut body, g, prog, outputs, (k, i), ind, Some("chunk")),
            Sp::Tap => return None,
        }
    }
    let mut scratch: Vec<Scratch> = reduces
        .iter()
        .map(|&i| Scratch {
            name: ws(i),
            numel: rows * coop,
            dtype: prog.stmts[i].dtype,
            zeroed: true,
        })
        .collect();
    scratch.push(Scratch {
        name: cnt,
        numel: rows,
        dtype: DType::I32,
        zeroed: true,
    });
    let mut params: Vec<String> = scratch.iter().map(|s| s.name.clone()).collect();
    params.push("NUM_PROGS".into());
    let mut source = String::new();
    writeln!(source, "@triton.jit").unwrap();
    writeln!(
        source,
        "def {name}({}):",
        signature(prog, stores.len(), &params, &["BLOCK_R", "BLOCK_C", "COOP"])
    )
    .unwrap();
    source.push_str(&ops_comment(g, nodes));
    writeln!(
        source,
        "    # {rows} rows x {cols} columns, cooperative rows: {coop} programs a row"
    )
    .unwrap();
    source.push_str(&body);
    let total = rows * coop;
    let (per_sm, regs) = residency(block_c, config.num_warps);
    let grid_expr = format!("min({total}, _drtc_sms() * {per_sm} // {coop} * {coop})");
    Some(RegionCode {
        kernels: vec![TritonKernel {
            name: name.to_string(),
            source,
            inputs: prog.inputs.clone(),
            outputs: outputs.to_vec(),
            grid: vec![total],
            grid_expr: Some(grid_expr.clone()),
            config,
            extra_args: vec![
                ("NUM_PROGS".into(), grid_expr),
                ("maxnreg".into(), regs.to_string()),
            ],
            scratch_args: scratch.iter().map(|s| s.name.clone()).collect(),
            operand_prep: vec![],
            phase_launches: None,
        }],
        scratch,
        stats,
        given: None,
        placed: super::full_outputs_only(stores, placed),
    })
}

#[cfg(test)]
mod tests {
    use super::super::reduction_variants;
    use super::*;

    #[test]
    fn rows_longer_than_one_tile_get_a_cooperative_variant() {
        // 65535 columns: sixteen programs of 4096, four resident an SM
        let c = coop_config(65535).expect("a cooperative configuration");
        assert_eq!((c.block("COOP"), c.block("BLOCK_C")), (16, 4096));
        assert_eq!(residency(4096, c.num_warps), (4, 64));
        assert!(reduction_variants(4096, 65535).contains(&c));
        // 200000 columns: past 32 programs of 4096, so 25 of 8192, two an SM
        let c = coop_config(200000).unwrap();
        assert_eq!((c.block("COOP"), c.block("BLOCK_C")), (25, 8192));
        assert_eq!(residency(8192, c.num_warps), (2, 128));
        // 40000 columns: ten programs of 4096 (4000 each)
        let c = coop_config(40000).unwrap();
        assert_eq!((c.block("COOP"), c.block("BLOCK_C")), (10, 4096));
        // a row of one tile has none; nor one beyond COOP_MAX programs of the widest chunk
        assert!(coop_config(4096).is_none());
        assert!(!reduction_variants(65536, 4000)
            .iter()
            .any(|v| v.blocks.iter().any(|b| b.0 == "COOP")));
        assert!(coop_config(8192 * COOP_MAX).is_some());
        assert!(coop_config(8192 * COOP_MAX + 1).is_none());
    }
}
