//! A GEMM whose output a training-mode batch norm normalizes (`[batch, features]`, the
//! statistics over the batch): the template's epilogue already holds each output tile, so
//! it writes the tile's column sums and squared deviations (`TileMoments`), and the batch
//! norm's region merges those partials (`GivenMoments`) instead of reading the whole
//! output once more for its statistics. On the H200 that pass was 0.077 ms of level-2
//! task 39's 1.9 (268 MB read; `bench/results`, commit 711e57d). Exact in real arithmetic:
//! the same sums and squared deviations per chunk of rows, merged by the same Chan update.
//!
//! The link is made only when the GEMM runs as the Triton template (the library path has
//! no epilogue to put it in) and the consumer takes it (`reduction::takes_moments`: its
//! one partial stage is the moments of the GEMM's output itself); otherwise both regions
//! are generated as before.

use crate::gemm_choice::gemm_choice;
use crate::layout::LayoutPlan;
use crate::options::CodegenOptions;
use crate::region::{region_kernel, Emit};
use crate::triton::{contraction_config, GemmImpl, GivenMoments, RegionCode, Scratch, TileMoments};
use drtc_ir::Graph;
use drtc_passes::fuse::{FusionPlan, RegionKind};

/// A contraction region's moments for a later reduction region.
pub(crate) struct MomentsLink {
    /// The consumer region's index, and its code generated with the partials given.
    pub consumer: usize,
    pub code: RegionCode,
    /// The partial buffers, allocated before the contraction's launch.
    pub scratch: Vec<Scratch>,
    /// What the contraction's epilogue writes.
    pub moments: TileMoments,
}

/// The link from contraction region `i` to the first later reduction region that reads
/// its output and takes the tile moments, if any.
pub(crate) fn link_moments(
    g: &Graph,
    plan: &FusionPlan,
    i: usize,
    opts: &CodegenOptions,
    layout: &LayoutPlan,
) -> Option<MomentsLink> {
    let r = &plan.regions[i];
    if r.kind != RegionKind::Contraction {
        return None;
    }
    let (imp, _, _, shape) = gemm_choice(g, r, i, opts)?;
    let GemmImpl::Triton { dot } = imp else {
        return None;
    };
    if shape.batch != 1 {
        return None;
    }
    let config = opts
        .configs
        .get(&i)
        .cloned()
        .unwrap_or_else(|| contraction_config(shape.m, shape.n, shape.k, shape.half, dot));
    let bm = config.block("BLOCK_M");
    let chunks = shape.m.div_ceil(bm);
    let plain = |v: &drtc_ir::ValueId| {
        let t = g.ty(*v);
        t.rank() == 2 && t.shape == [shape.m as i64, shape.n as i64] && t.dtype.is_float()
    };
    for &v in r.outputs.iter().filter(|v| plain(v)) {
        let reads = |j: &usize| {
            plan.regions[*j].kind == RegionKind::Reduction
                && plan.regions[*j]
                    .nodes
                    .iter()
                    .any(|&n| g.node(n).inputs.contains(&v))
        };
        let Some(j) = (i + 1..plan.regions.len()).find(reads) else {
            continue;
        };
        let rj = &plan.regions[j];
        let emit = Emit {
            config: opts.configs.get(&j).cloned(),
            channels_last: layout.regions.contains(&j),
            given: Some(GivenMoments {
                value: v,
                chunks,
                chunk: bm,
            }),
            moments: None,
        };
        let name = format!("drtc_k{j}_{}", rj.kind);
        let Ok(mut code) = region_kernel(g, rj, j, &name, opts, &emit) else {
            continue;
        };
        let Some((sum, m2)) = code.given.clone() else {
            continue;
        };
        let (scratch, rest): (Vec<Scratch>, Vec<Scratch>) = code
            .scratch
            .into_iter()
            .partition(|s| s.name == sum || s.name == m2);
        code.scratch = rest;
        return Some(MomentsLink {
            consumer: j,
            code,
            scratch,
            moments: TileMoments {
                value: v,
                sum,
                m2,
                chunks,
            },
        });
    }
    None
}
