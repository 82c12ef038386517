//! The row strategy: one program per BLOCK_R rows, either a single pass over whole
//! rows (BLOCK_C >= columns) or looped passes over BLOCK_C columns, one per reduction
//! (two moments in one Welford pass; a softmax's row max and sum of exponentials in one
//! online pass), then a last pass that writes the domain-shaped outputs.

use super::flat::{runs_decompose, store_offset};
use super::lower::{
    acc_finish, comps_decompose, group_init, group_update, needs_only_block, reduce_line,
    reduce_of, row_store, Builder, Moments, LANE_MOMENTS_MIN_ROWS,
};
use super::space::{DimKind, Dims};
use super::{BatchStats, RegionCode};
use crate::triton::kernel::{
    emit_stmts, ops_comment, placement, signature, LaunchConfig, Placements, TritonKernel,
};
use crate::triton::statements::{Code, Program, RedKind, ScanKind, Sp};
use crate::triton::ty::{compute_ty, float_lit, storage_ty};
use drtc_ir::{DType, Graph, NodeId, ValueId};
use drtc_passes::fuse::ReduceSpace;
use std::fmt::Write;

/// The kernel of a reduction region in the row strategy with `config`'s tile.
#[allow(clippy::too_many_arguments)]
pub(super) fn row_kernel(
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
) -> RegionCode {
    let (block_r, block_c) = (config.block("BLOCK_R"), config.block("BLOCK_C"));
    let single = block_c >= cols;
    let prog = &b.prog;
    let dims = &b.dims;
    let wide = crate::triton::pointwise::needs_int64(
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
    let full_off = store_offset(dims, &space.domain, out_order);
    // a pass over blocks of columns; `backwards` (the last pass of reverse scans, and the
    // last pass after others that read the rows) takes the blocks from the last one, each
    // still in ascending columns (contiguous, so loads stay vectorized: descending columns
    // cost level-1 reverse cumsum 30%,
    // `bench/results/level1_scans_h200_b37f54b_default_vs_modes.md`); a scan's block is
    // scanned from its end
    // `shift` > 0 (the last pass, when the outputs' view begins that many elements before
    // their slice: `StoreMap::Strided`'s origin, `aligned_shift`): the blocks are the
    // view's columns (`ocols`), so the stores are aligned, and the region's own columns
    // (`cols`, the loads) run `shift` behind them
    let col_header = |out: &mut String, indent: &str, start: &str, backwards: bool, shift: i64| {
        if shift > 0 {
            let ostart = match backwards {
                true => format!("{} // BLOCK_C * BLOCK_C - cstart", cols + shift as u64 - 1),
                false => "cstart".to_string(),
            };
            writeln!(out, "{indent}ostart = {ostart}").unwrap();
            writeln!(
                out,
                "{indent}ocols = ostart + tl.arange(0, BLOCK_C)[None, :]"
            )
            .unwrap();
            writeln!(out, "{indent}cols = ocols - {shift}").unwrap();
            writeln!(out, "{indent}mask = rmask & (cols >= 0) & (cols < {cols})").unwrap();
        } else {
            if backwards && !start.is_empty() {
                writeln!(
                    out,
                    "{indent}cols = ({} // BLOCK_C * BLOCK_C - cstart) + tl.arange(0, BLOCK_C)[None, :]",
                    cols.saturating_sub(1)
                )
                .unwrap();
            } else {
                writeln!(out, "{indent}cols = {start}tl.arange(0, BLOCK_C)[None, :]").unwrap();
            }
            writeln!(out, "{indent}mask = rmask & (cols < {cols})").unwrap();
        }
        comps_decompose(out, indent, "cols", &dims.col_comps);
        runs_decompose(out, indent, dims);
    };
    let shift = aligned_shift(space, dims, stores, placed);
    let backwards = prog.scan_direction() == Some(true);
    let store_full = |out: &mut String, indent: &str, shifted: Option<(i64, usize)>| {
        for (k, &(i, sp)) in stores.iter().enumerate() {
            if sp == Sp::Full {
                let st = storage_ty(prog.stmts[i].dtype);
                let value = format!(
                    "({} + tl.zeros([BLOCK_R, BLOCK_C], {})).to({st})",
                    prog.var(i),
                    compute_ty(prog.stmts[i].dtype)
                );
                // an output stored elsewhere: a slice of a larger tensor, a chain of views'
                // result
                let map = placement(placed, k);
                let view = |(_, along): (i64, usize)| {
                    let index = |d: usize| match d == along {
                        true => "ocols".to_string(),
                        false => dims.full[d].clone(),
                    };
                    map?.view_offset(&space.domain, along, &index)
                };
                if let (Some(off), Some((s, _))) = (shifted.and_then(view), shifted) {
                    // the block holding the view's first columns (before the slice) stores
                    // lane by lane; the others' mask is whole vectors
                    writeln!(out, "{indent}if ostart == 0:").unwrap();
                    writeln!(
                        out,
                        "{indent}    tl.store(out{k} + {off}, {value}, mask=mask)"
                    )
                    .unwrap();
                    writeln!(out, "{indent}else:").unwrap();
                    writeln!(
                        out,
                        "{indent}    tl.store(out{k} + {off}, {value}, mask=rmask & (ocols < {}))",
                        cols + s as u64
                    )
                    .unwrap();
                    continue;
                }
                let off = match map {
                    Some(map) => map.offset(&space.domain, &|d| dims.full[d].clone()),
                    None => full_off.clone(),
                };
                writeln!(out, "{indent}tl.store(out{k} + {off}, {value}, mask=mask)").unwrap();
            }
        }
    };
    let full_roots: Vec<usize> = stores
        .iter()
        .filter(|s| s.1 == Sp::Full)
        .map(|s| s.0)
        .collect();
    if single {
        col_header(&mut body, "    ", "", backwards, 0);
        for (i, s) in prog.stmts.iter().enumerate() {
            match &s.code {
                Code::Expr(code) => writeln!(body, "    {} = {code}", s.var).unwrap(),
                Code::Reduce { kind, input } => {
                    let line = reduce_line(*kind, prog.var(*input), s.dtype);
                    writeln!(body, "    {} = {line}[:, None]", s.var).unwrap();
                }
                Code::Scan {
                    kind,
                    input,
                    reverse,
                } => {
                    let at = scan_acc_ty(s.dtype);
                    let line = scan_line(*kind, prog.var(*input), at, *reverse);
                    let ct = compute_ty(s.dtype);
                    writeln!(body, "    {} = ({line}).to({ct})", s.var).unwrap();
                }
            }
            let _ = i;
        }
        store_full(&mut body, "    ", None);
    } else {
        let mut emitted = vec![false; prog.stmts.len()];
        for (i, s) in prog.stmts.iter().enumerate() {
            if emitted[i] {
                continue;
            }
            if let Some(&(_, q, x)) = b.welford.iter().find(|w| w.0 == i) {
                // one pass for both moments (Chan et al.): per-lane Welford updates in the
                // loop and the lanes merged once after it (tall tiles), or each block's
                // mean and squared deviations merged into the running pair
                let ct = compute_ty(prog.stmts[x].dtype);
                let (mean, m2, n) = (format!("wmean{i}"), format!("wm2{i}"), format!("wn{i}"));
                let names = (mean.as_str(), m2.as_str(), n.as_str());
                let m = Moments {
                    names,
                    lanes: block_r >= LANE_MOMENTS_MIN_ROWS,
                    ct,
                };
                m.init(&mut body);
                writeln!(body, "    for cstart in range(0, {cols}, BLOCK_C):").unwrap();
                col_header(&mut body, "        ", "cstart + ", false, 0);
                let need = prog.closure(&[x], &|j| emitted[j]);
                emit_stmts(&mut body, prog, &need, "        ");
                let valid = format!("tl.minimum({cols} - cstart, BLOCK_C)");
                m.update(&mut body, prog.var(x), &valid, false);
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
            if let Some(&(_, sum, x)) = b.online.iter().find(|o| o.0 == i) {
                // one pass for the row max and the row sum of exp(x - max): the running
                // sum is rescaled whenever the running max grows (online softmax), so x
                // is read once here instead of twice
                let ct = compute_ty(prog.stmts[x].dtype);
                let (mx, sm) = (format!("acc{i}"), format!("acc{sum}"));
                writeln!(body, "    {mx} = tl.full([BLOCK_R], float('-inf'), {ct})").unwrap();
                writeln!(body, "    {sm} = tl.zeros([BLOCK_R], {ct})").unwrap();
                writeln!(body, "    for cstart in range(0, {cols}, BLOCK_C):").unwrap();
                col_header(&mut body, "        ", "cstart + ", false, 0);
                let need = prog.closure(&[x], &|j| emitted[j]);
                emit_stmts(&mut body, prog, &need, "        ");
                let xv = prog.var(x);
                let block_max = reduce_line(RedKind::Max, xv, prog.stmts[x].dtype);
                writeln!(body, "        bm = tl.maximum({mx}, {block_max})").unwrap();
                writeln!(
                    body,
                    "        {sm} = {sm} * tl.exp({mx} - bm) + tl.sum(tl.where(mask, tl.exp({xv} - bm[:, None]), 0.0), axis=1)"
                )
                .unwrap();
                writeln!(body, "        {mx} = bm").unwrap();
                writeln!(body, "    {} = {mx}[:, None]", s.var).unwrap();
                writeln!(body, "    {} = {sm}[:, None]", prog.var(sum)).unwrap();
                emitted[i] = true;
                emitted[sum] = true;
                continue;
            }
            match (&s.code, s.space) {
                (Code::Expr(code), Sp::Row) => {
                    writeln!(body, "    {} = {code}", s.var).unwrap();
                    emitted[i] = true;
                }
                (Code::Reduce { .. }, _) => {
                    // this reduction and every later one that needs nothing but the loaded
                    // blocks share one loop: the row is read once for all of them
                    let group = sibling_reductions(prog, b, i, &emitted);
                    group_init(&mut body, prog, &group);
                    writeln!(body, "    for cstart in range(0, {cols}, BLOCK_C):").unwrap();
                    col_header(&mut body, "        ", "cstart + ", false, 0);
                    group_update(&mut body, prog, &group, &|j| emitted[j], "cstart");
                    for &j in &group {
                        let kind = reduce_of(prog, j).0;
                        acc_finish(&mut body, kind, &format!("acc{j}"));
                        let fin = if matches!(kind, RedKind::ArgMax | RedKind::ArgMin) {
                            "idx"
                        } else {
                            "acc"
                        };
                        writeln!(body, "    {} = {fin}{j}[:, None]", prog.var(j)).unwrap();
                        emitted[j] = true;
                    }
                }
                _ => {}
            }
        }
        if !full_roots.is_empty() {
            let need = prog.closure(&full_roots, &|j| emitted[j]);
            for &i in &need {
                if let Code::Scan { kind, .. } = prog.stmts[i].code {
                    let ct = scan_acc_ty(prog.stmts[i].dtype);
                    let init = match kind {
                        ScanKind::Sum => format!("tl.zeros([BLOCK_R, 1], {ct})"),
                        ScanKind::Prod => format!("tl.full([BLOCK_R, 1], 1.0, {ct})"),
                    };
                    writeln!(body, "    carry{i} = {init}").unwrap();
                }
            }
            // without scans, after passes that read the rows, the last pass takes the
            // column blocks from the last one too: the blocks the previous pass read last
            // are read again first, while still in L2 (level-1 L1 norm, rows of 65535:
            // 9.78 -> 9.03 ms on an H100,
            // `bench/results/level1_store_bound_long_rows_h100_7f54f14_vs_c810396.txt`)
            let scans = prog
                .stmts
                .iter()
                .any(|s| matches!(s.code, Code::Scan { .. }));
            let reread = !scans
                && (prog.stmts.iter().zip(&emitted))
                    .any(|(s, &e)| e && matches!(s.code, Code::Reduce { .. }));
            let s = shift.map_or(0, |(s, _)| s);
            let span = cols + s as u64;
            writeln!(body, "    for cstart in range(0, {span}, BLOCK_C):").unwrap();
            col_header(&mut body, "        ", "cstart + ", backwards || reread, s);
            emit_carried(&mut body, prog, &need, "        ");
            store_full(&mut body, "        ", shift);
        }
    }
    for (k, &(i, sp)) in stores.iter().enumerate() {
        if sp == Sp::Row {
            row_store(&mut body, g, prog, outputs, (k, i), "    ", None);
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
    RegionCode {
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
            phase_launches: None,
        }],
        scratch: vec![],
        stats,
        given: None,
        placed: super::full_outputs_only(stores, placed),
    }
}

/// The origin `s` and column dim of a row kernel's last pass tiled from its outputs' view
/// (`StoreMap::view_offset`): every domain-shaped output is placed in a view that begins
/// `s` > 0 elements before its slice, along the one column dim, which the view holds
/// contiguously. Level-1 92 (a cumsum written from column 1 of its concatenation with a
/// zero column): stores from the slice's start are not 16-byte aligned, and Triton stores
/// them lane by lane; tiled from the view's start its kernel ran 4.02 -> 3.64 ms on an H100
/// (`bench/results/level1_unaligned_stores_probe_h100_eae7aed.txt`).
fn aligned_shift(
    space: &ReduceSpace,
    dims: &Dims,
    stores: &[(usize, Sp)],
    placed: &Placements,
) -> Option<(i64, usize)> {
    // one column dim, whose index is the kernel's `cols`
    if dims.col_comps.len() != 1 {
        return None;
    }
    let along = dims.kinds.iter().position(|k| *k == DimKind::Col)?;
    let mut origin = None;
    for (k, &(_, sp)) in stores.iter().enumerate() {
        if sp != Sp::Full {
            continue;
        }
        let map = placement(placed, k)?;
        map.view_offset(&space.domain, along, &|_| String::new())?;
        let s = map.origin();
        if s <= 0 || origin.is_some_and(|o| o != s) {
            return None;
        }
        origin = Some(s);
    }
    origin.map(|s| (s, along))
}

/// The plain reduction `first` and every later one (not a Welford or online pair's) whose
/// input needs only statements on the loaded block, so one loop over the columns computes
/// them all. Level-1 99's two distances, each over its own pass, read the anchor twice.
fn sibling_reductions(prog: &Program, b: &Builder, first: usize, emitted: &[bool]) -> Vec<usize> {
    let paired = |j: usize| {
        b.welford.iter().any(|w| w.0 == j || w.1 == j)
            || b.online.iter().any(|o| o.0 == j || o.1 == j)
    };
    let mut group = vec![first];
    for j in first + 1..prog.stmts.len() {
        if emitted[j] || paired(j) {
            continue;
        }
        if let Code::Reduce { input, .. } = prog.stmts[j].code {
            if needs_only_block(prog, input, &|k| emitted[k]) {
                group.push(j);
            }
        }
    }
    group
}

/// The type a scan's running value of `dtype` data is kept in: float64 for floating data.
/// A float32 running sum rounds at every step, so its error grows along the row; a float64
/// one rounds once, when stored. A row in one tile is scanned in float64 (a short row: the
/// wider shuffles cost little; Mamba2's rows of 64 failed the fp32 rule on the H200 with a
/// float32 scan, `level3_attn_h200_d2e381e_default_vs_modes.md`); a row scanned block by
/// block scans each block in the data's own type and keeps the carried value in float64,
/// so the error is one block's, not the row's (a float64 scan of every block cost level-1
/// 89-91 19-57%, `level1_scans_h200_1cdfb2d_default_vs_compile.md`).
fn scan_acc_ty(dtype: DType) -> &'static str {
    match dtype {
        DType::F16 | DType::BF16 | DType::F32 | DType::F64 => "tl.float64",
        DType::I32 | DType::I64 | DType::Bool => compute_ty(dtype),
    }
}

/// `x` (a tile, masked columns neutral) in type `ty`.
fn scan_operand(kind: ScanKind, x: &str, ty: &str) -> String {
    let neutral = match kind {
        ScanKind::Sum => "0.0",
        ScanKind::Prod => "1.0",
    };
    format!("tl.where(mask, {x}, {neutral}).to({ty})")
}

/// The inclusive scan of one tile along its columns in type `ty`, from its last column
/// when `reverse` (masked columns are neutral).
fn scan_line(kind: ScanKind, x: &str, ty: &str, reverse: bool) -> String {
    let rev = if reverse { ", reverse=True" } else { "" };
    let x = scan_operand(kind, x, ty);
    match kind {
        ScanKind::Sum => format!("tl.cumsum({x}, axis=1{rev})"),
        ScanKind::Prod => format!("tl.cumprod({x}, axis=1{rev})"),
    }
}

/// Python lines (inside the last pass's column loop) for the statements `order`: scans add
/// the block's own scan to the running value of the blocks before it (`carry<i>`, started
/// before the loop) and fold the block's total into it.
fn emit_carried(out: &mut String, prog: &Program, order: &[usize], indent: &str) {
    for &i in order {
        let s = &prog.stmts[i];
        match &s.code {
            Code::Expr(code) => writeln!(out, "{indent}{} = {code}", s.var).unwrap(),
            Code::Scan {
                kind,
                input,
                reverse,
            } => {
                let x = prog.var(*input);
                // the block in its own type, the carried value in `scan_acc_ty`'s
                let (ct, at) = (compute_ty(s.dtype), scan_acc_ty(s.dtype));
                let block = scan_operand(*kind, x, ct);
                let (op, total) = match kind {
                    ScanKind::Sum => ("+", format!("tl.sum({block}, axis=1)")),
                    ScanKind::Prod => ("*", format!("tl.reduce({block}, 1, _drtc_mul)")),
                };
                let line = scan_line(*kind, x, ct, *reverse);
                writeln!(
                    out,
                    "{indent}{} = (carry{i} {op} ({line}).to({at})).to({ct})",
                    s.var
                )
                .unwrap();
                writeln!(
                    out,
                    "{indent}carry{i} = carry{i} {op} ({total}).to({at})[:, None]"
                )
                .unwrap();
            }
            // reductions were computed by the passes before this one
            Code::Reduce { .. } => {}
        }
    }
}
