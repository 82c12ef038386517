//! The split strategy: few long rows, each reduction computed by its own kernel over
//! (row, chunk) programs that write partial results to scratch. A normalization's two
//! moments take one kernel: each chunk stores its sum and its squared deviations around
//! its own mean, and the later kernels merge them (Chan et al.), so the input is read
//! once for the statistics instead of twice. A program covers BLOCK_R rows (1 for
//! row-major rows; more when rows are the memory-innermost dim, `strategy.rs`).
//! Stages run 8 warps, except a moments stage with per-lane accumulators (tiles of at
//! least `LANE_MOMENTS_MIN_ROWS` rows), which runs 4 (measured on the H200, see there).

use super::flat::{runs_decompose, store_offset};
use super::lower::{
    acc_finish, comps_decompose, group_init, group_update, needs_only_block, reduce_of, row_store,
    Builder, Moments, LANE_MOMENTS_MIN_ROWS,
};
use super::strategy::SplitPlan;
use super::Scratch;
use crate::triton::kernel::{
    emit_stmts, ops_comment, placement, signature, LaunchConfig, Placements, TritonKernel,
};
use crate::triton::statements::{Code, Program, RedKind, Sp};
use crate::triton::ty::{compute_ty, next_pow2, storage_ty};
use drtc_ir::{DType, Graph, NodeId, ValueId};
use std::fmt::Write;

pub(super) fn reduce_ids(prog: &Program) -> Vec<usize> {
    (0..prog.stmts.len())
        .filter(|&i| matches!(prog.stmts[i].code, Code::Reduce { .. }))
        .collect()
}

/// The partials' layout: `chunks` per row, of `chunk` columns each. The split strategy's
/// own chunks, or those of a producer that writes a moment pair's partials for the region
/// (`given`: a GEMM epilogue's per-tile column sums and squared deviations).
pub(super) fn partials(plan: SplitPlan, given: Option<(u64, u64)>) -> (u64, u64) {
    given.unwrap_or((plan.chunks, plan.chunk))
}

pub(super) fn split_scratch(
    name: &str,
    prog: &Program,
    rows: u64,
    plan: SplitPlan,
    given: Option<(u64, u64)>,
) -> Vec<Scratch> {
    let s = partials(plan, given).0;
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
            zeroed: false,
        });
        if matches!(kind, RedKind::ArgMax | RedKind::ArgMin) {
            out.push(Scratch {
                name: format!("{name}_wsidx{i}"),
                numel: rows * s,
                dtype: DType::I64,
                zeroed: false,
            });
        }
    }
    out
}

/// The first stages' reductions, grouped: a moment pair's first alone, and each plain
/// reduction with the later plain ones whose inputs need only statements on the loaded
/// chunk (one stage reads the chunk once for all of them; level-1 95's two sums).
fn stage_groups(b: &Builder, reduces: &[usize]) -> Vec<Vec<usize>> {
    let prog = &b.prog;
    let paired = |j: usize| b.welford.iter().any(|w| w.0 == j || w.1 == j);
    // a stage starting at reduction `i` has every row statement before `i` (earlier
    // reductions combined from their partials, row math); `j` joins when its input needs
    // nothing else but statements on the loaded chunk
    let on_chunk = |i: usize, j: usize| {
        let before = |k: usize| k < i && prog.stmts[k].space == Sp::Row;
        needs_only_block(prog, reduce_of(prog, j).1, &before)
    };
    let mut groups: Vec<Vec<usize>> = vec![];
    let mut taken = vec![false; prog.stmts.len()];
    for (n, &i) in reduces.iter().enumerate() {
        if taken[i] {
            continue;
        }
        let mut group = vec![i];
        if !paired(i) {
            for &j in &reduces[n + 1..] {
                if !taken[j] && !paired(j) && on_chunk(i, j) {
                    group.push(j);
                    taken[j] = true;
                }
            }
        }
        taken[i] = true;
        groups.push(group);
    }
    groups
}

#[allow(clippy::too_many_arguments)]
pub(super) fn split_kernels(
    g: &Graph,
    name: &str,
    nodes: &[NodeId],
    outputs: &[ValueId],
    b: &Builder,
    stores: &[(usize, Sp)],
    plan: SplitPlan,
    cols: u64,
    out_order: Option<&[usize]>,
    given: Option<(u64, u64)>,
    placed: &Placements,
) -> Vec<TritonKernel> {
    let prog = &b.prog;
    let dims = &b.dims;
    let rows: u64 = dims.row_comps.iter().map(|c| c.1 as u64).product();
    let SplitPlan {
        block_r,
        block_c,
        chunks,
        chunk,
    } = plan;
    let reduces = reduce_ids(prog);
    let scratch = split_scratch(name, prog, rows, plan, given);
    let (pchunks, pchunk) = partials(plan, given);
    let scratch_params: Vec<String> = scratch.iter().map(|s| s.name.clone()).collect();
    let wide = crate::triton::pointwise::needs_int64(
        g,
        outputs
            .iter()
            .copied()
            .chain(prog.inputs.iter().map(|a| a.value)),
    ) || rows * chunks * block_c >= (1 << 31) - 1;
    let pid = if wide { ".to(tl.int64)" } else { "" };
    let full_off = store_offset(dims, &b.space.domain, out_order);
    // stage k computes the partials of reduction k (a moment pair's first computes both:
    // each chunk's sum and its squared deviations around its own mean, merged by the later
    // stages with Chan's formula), a last stage stores
    let second_moments: Vec<usize> = b.welford.iter().map(|w| w.1).collect();
    let reduces: Vec<usize> = reduces
        .into_iter()
        .filter(|i| !second_moments.contains(i))
        .collect();
    let groups = stage_groups(b, &reduces);
    let mut kernels = vec![];
    // given partials: only the last stage runs (the producer wrote the first's)
    let first = if given.is_some() { groups.len() } else { 0 };
    for stage in first..=groups.len() {
        let last = stage == groups.len();
        let mut warps = 8;
        let kname = if last {
            format!("{name}_out")
        } else {
            format!("{name}_part{}", groups[stage][0])
        };
        let mut body = String::new();
        writeln!(
            body,
            "    rows = tl.program_id(0){pid} * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]"
        )
        .unwrap();
        writeln!(body, "    s = tl.program_id(1){pid}").unwrap();
        writeln!(body, "    rmask = rows < {rows}").unwrap();
        comps_decompose(&mut body, "    ", "rows", &dims.row_comps);
        // combine the partials of earlier reductions, then the row math that follows them
        let mut available = vec![false; prog.stmts.len()];
        writeln!(body, "    sidx = tl.arange(0, BLOCK_S)[None, :]").unwrap();
        writeln!(body, "    smask = rmask & (sidx < {pchunks})").unwrap();
        let upto = if last {
            prog.stmts.len()
        } else {
            groups[stage][0]
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
                    writeln!(body, "    p = tl.load({part} + rows * {pchunks} + sidx, mask=smask, other={other}).to({ct})").unwrap();
                    if let Some(&(sum, _, _)) = b.welford.iter().find(|w| w.1 == i) {
                        // M2 = sum of the chunks' M2 + sum of n_s (mean_s - mean)^2
                        let c = crate::triton::ty::float_lit(cols as f64);
                        writeln!(body, "    ps = tl.load({name}_ws{sum} + rows * {pchunks} + sidx, mask=smask, other=0.0).to({ct})").unwrap();
                        writeln!(body, "    ns = tl.maximum(tl.minimum({pchunk}, {cols} - sidx * {pchunk}), 0).to({ct})").unwrap();
                        writeln!(body, "    dm = tl.where(smask & (ns > 0), ps / tl.maximum(ns, 1.0) - (tl.sum(ps, axis=1) / {c})[:, None], 0.0)").unwrap();
                        writeln!(
                            body,
                            "    {} = (tl.sum(p, axis=1) + tl.sum(ns * dm * dm, axis=1))[:, None]",
                            st.var
                        )
                        .unwrap();
                        available[i] = true;
                        continue;
                    }
                    match kind {
                        RedKind::ArgMax | RedKind::ArgMin => {
                            let f = if *kind == RedKind::ArgMax {
                                "tl.argmax"
                            } else {
                                "tl.argmin"
                            };
                            writeln!(body, "    best = {f}(p, axis=1)[:, None]").unwrap();
                            writeln!(body, "    pi = tl.load({name}_wsidx{i} + rows * {pchunks} + sidx, mask=smask, other=0)").unwrap();
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
            runs_decompose(out, "        ", dims);
        };
        let pair = (!last)
            .then(|| b.welford.iter().find(|w| w.0 == groups[stage][0]))
            .flatten();
        if let Some(&(sum, m2, x)) = pair {
            let ct = compute_ty(prog.stmts[x].dtype);
            let m = Moments {
                names: ("wmean", "wm2", "wn"),
                lanes: block_r >= LANE_MOMENTS_MIN_ROWS,
                ct,
            };
            // per-lane moments hold three tile-sized accumulators: 4 warps (twice the
            // elements per thread in flight) measured 0.077 ms against 0.115 with 8 for a
            // [16384, 4096] batch norm's statistics, 64 x 64 tiles, on the H200 (the
            // output stage, one accumulator-free pass, stays faster with 8: 0.134 / 0.145)
            if m.lanes {
                warps = 4;
            }
            m.init(&mut body);
            header(&mut body);
            let need = prog.closure(&[x], &|j| available[j]);
            emit_stmts(&mut body, prog, &need, "        ");
            let valid = format!("tl.maximum(tl.minimum({cols} - ({start} + cstart), BLOCK_C), 0)");
            m.update(&mut body, prog.var(x), &valid, true);
            // the chunk's sum (its mean times its columns) and its M2
            writeln!(
                body,
                "    nc = tl.maximum(tl.minimum({chunk}, {cols} - {start}), 0).to({ct})"
            )
            .unwrap();
            writeln!(body, "    tl.store({name}_ws{sum} + rows * {chunks} + s, (wmean * nc)[:, None], mask=rmask)").unwrap();
            writeln!(
                body,
                "    tl.store({name}_ws{m2} + rows * {chunks} + s, wm2[:, None], mask=rmask)"
            )
            .unwrap();
        } else if !last {
            // the group's reductions (siblings on the loaded block) share the chunk's loop
            let group = &groups[stage];
            group_init(&mut body, prog, group);
            header(&mut body);
            let first_col = format!("{start} + cstart");
            group_update(&mut body, prog, group, &|j| available[j], &first_col);
            for &i in group {
                let kind = reduce_of(prog, i).0;
                acc_finish(&mut body, kind, &format!("acc{i}"));
                writeln!(
                    body,
                    "    tl.store({name}_ws{i} + rows * {chunks} + s, acc{i}[:, None], mask=rmask)"
                )
                .unwrap();
                if matches!(kind, RedKind::ArgMax | RedKind::ArgMin) {
                    writeln!(
                        body,
                        "    tl.store({name}_wsidx{i} + rows * {chunks} + s, idx{i}[:, None], mask=rmask)"
                    )
                    .unwrap();
                }
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
                        // an output stored elsewhere (`StoreMap`)
                        let off = match placement(placed, k) {
                            Some(map) => map.offset(&b.space.domain, &|d| dims.full[d].clone()),
                            None => full_off.clone(),
                        };
                        writeln!(
                            body,
                            "        tl.store(out{k} + {off}, ({} + tl.zeros([BLOCK_R, BLOCK_C], {})).to({st}), mask=mask)",
                            prog.var(i),
                            compute_ty(prog.stmts[i].dtype)
                        )
                        .unwrap();
                    }
                }
            }
            for (k, &(i, sp)) in stores.iter().enumerate() {
                if sp == Sp::Row {
                    row_store(&mut body, g, prog, outputs, (k, i), "    ", Some("s"));
                }
            }
        }
        let mut source = String::new();
        writeln!(source, "@triton.jit").unwrap();
        let n_out = if last { stores.len() } else { 0 };
        let writes_full = stores.iter().any(|&(_, sp)| sp == Sp::Full);
        writeln!(
            source,
            "def {kname}({}):",
            signature(
                prog,
                n_out,
                &scratch_params,
                &["BLOCK_R", "BLOCK_C", "BLOCK_S"]
            )
        )
        .unwrap();
        source.push_str(&ops_comment(g, nodes));
        writeln!(
            source,
            "    # split reduction, stage {} of {}: {rows} rows x {cols} columns in {chunks} chunks of {chunk}, {block_r} row(s) per program",
            stage + 1,
            groups.len() + 1
        )
        .unwrap();
        source.push_str(&body);
        kernels.push(TritonKernel {
            name: kname,
            source,
            inputs: prog.inputs.clone(),
            outputs: if last { outputs.to_vec() } else { vec![] },
            // a last stage that stores only row values (a norm's statistics) needs
            // one program per block of rows, not one per chunk
            grid: vec![
                rows.div_ceil(block_r).max(1),
                if last && !writes_full { 1 } else { chunks },
            ],
            grid_expr: None,
            config: LaunchConfig {
                blocks: vec![
                    ("BLOCK_R", block_r),
                    ("BLOCK_C", block_c),
                    ("BLOCK_S", next_pow2(pchunks)),
                ],
                num_warps: warps,
                num_stages: 1,
            },
            extra_args: vec![],
            scratch_args: scratch_params.clone(),
            operand_prep: vec![],
            phase_launches: None,
        });
    }
    kernels
}
