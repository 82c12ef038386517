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
//! are generated as before. The lowering plan decides it (`plan/partners.rs`); this file
//! emits it.

use crate::plan::{LoweringPlan, MomentsLink};
use crate::region::{region_kernel, Links};
use crate::triton::{GivenMoments, RegionCode, Scratch, TileMoments};
use drtc_ir::Graph;
use drtc_passes::fuse::FusionPlan;

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
