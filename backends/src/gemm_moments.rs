//! A GEMM whose output a training-mode batch norm normalizes (`[batch, features]`, the
//! statistics over the batch): the template's epilogue already holds each output tile, so
//! it writes the tile's column sums and squared deviations (`TileMoments`), and the batch
//! norm's region merges those partials (`GivenMoments`) instead of reading the whole
//! output once more for its statistics. On the H200 that pass was 0.077 ms of level-2
//! task 39's 1.9 (268 MB read; `bench/results/kernel_variants_h200_711e57d.txt`). Exact in
//! real arithmetic: the same sums and squared deviations per chunk of rows, merged by the
//! same Chan update.
//!
//! The link is made only when the GEMM runs as the Triton template (the library path has
//! no epilogue to put it in) and the consumer takes it (`reduction::takes_moments`: its
//! one partial stage is the moments of the GEMM's output itself); otherwise both regions
//! are generated as before.

use crate::plan::{LoweringPlan, MomentsLink};
use crate::region::{region_kernel, Links};
use crate::triton::{contraction_config, GemmImpl, GivenMoments, RegionCode, Scratch, TileMoments};
use drtc_ir::Graph;
use drtc_passes::fuse::{FusionPlan, RegionKind};

/// The link from contraction region `i` to the first later reduction region that reads
/// its output and takes the tile moments, if any: the lowering plan's decision
/// (`plan/partners.rs`). Whether the consumer takes them is its template's answer, so the
/// consumer's code is generated here with the partials offered.
pub(crate) fn find_link(
    g: &Graph,
    plan: &FusionPlan,
    lowering: &LoweringPlan,
    i: usize,
) -> Option<MomentsLink> {
    let r = &plan.regions[i];
    if r.kind != RegionKind::Contraction {
        return None;
    }
    let gemm = lowering.regions[i].implementation.gemm()?;
    let GemmImpl::Triton { dot } = gemm.imp else {
        return None;
    };
    let shape = &gemm.shape;
    if shape.batch != 1 {
        return None;
    }
    let config = lowering.regions[i]
        .config
        .clone()
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
        let link = MomentsLink {
            consumer: j,
            value: v,
            chunks,
            chunk: bm,
        };
        if consumer_code(g, plan, lowering, &link).is_some() {
            return Some(link);
        }
    }
    None
}

/// The consumer's code generated with the partials of `link` given, when it takes them.
fn consumer_code(
    g: &Graph,
    plan: &FusionPlan,
    lowering: &LoweringPlan,
    link: &MomentsLink,
) -> Option<RegionCode> {
    let j = link.consumer;
    let rj = &plan.regions[j];
    let links = Links {
        given: Some(GivenMoments {
            value: link.value,
            chunks: link.chunks,
            chunk: link.chunk,
        }),
        moments: None,
    };
    let name = format!("drtc_k{j}_{}", rj.kind);
    let code = region_kernel(g, rj, j, &name, lowering, &links).ok()?;
    code.given.is_some().then_some(code)
}

/// The code of a planned link: what the contraction's epilogue writes, the partial buffers
/// it writes them into (allocated before its launch), and the consumer's code.
pub(crate) struct LinkCode {
    pub consumer: usize,
    pub code: RegionCode,
    pub scratch: Vec<Scratch>,
    pub moments: TileMoments,
}

/// The code of contraction region `i`'s planned link, if it has one.
pub(crate) fn link_code(
    g: &Graph,
    plan: &FusionPlan,
    lowering: &LoweringPlan,
    i: usize,
) -> Option<LinkCode> {
    let link = lowering.regions[i].moments.as_ref()?;
    let mut code = consumer_code(g, plan, lowering, link)?;
    let (sum, m2) = code.given.clone()?;
    let (scratch, rest): (Vec<Scratch>, Vec<Scratch>) = code
        .scratch
        .into_iter()
        .partition(|s| s.name == sum || s.name == m2);
    code.scratch = rest;
    Some(LinkCode {
        consumer: link.consumer,
        code,
        scratch,
        moments: TileMoments {
            value: link.value,
            sum,
            m2,
            chunks: link.chunks,
        },
    })
}
