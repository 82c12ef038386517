//! One kernel region's code: the template that covers its kind, with the implementation,
//! launch configuration and layout the lowering plan records, and the moment links
//! (`gemm_moments.rs`) the stitcher passes.

use crate::layout::channels_last_order;
use crate::options::CodegenOptions;
use crate::plan::{Implementation, LoweringPlan};
use crate::triton::{
    contraction_kernel, pointwise_kernel_in_order, reduction_kernel, window_kernel, DotMode,
    GemmImpl, GivenMoments, LaunchConfig, RegionCode, TapNorm, TileMoments, TritonKernel,
};
use drtc_ir::{Graph, ValueId};
use drtc_passes::fuse::{FusionPlan, Region, RegionKind};

/// The moment links of one kernel region (`gemm_moments.rs`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Links {
    /// A reduction region: moment partials a GEMM epilogue writes.
    pub given: Option<GivenMoments>,
    /// A contraction region: the tile moments its epilogue writes for a later region.
    pub moments: Option<TileMoments>,
}

/// The kernels of kernel region `r` (region `index` of `lowering`), or why it has none
/// (then it is computed with PyTorch, and the report says why).
pub(crate) fn region_kernel(
    g: &Graph,
    r: &Region,
    index: usize,
    name: &str,
    lowering: &LoweringPlan,
    links: &Links,
) -> Result<RegionCode, String> {
    let plan = &lowering.regions[index];
    let (config, channels_last) = (plan.config.clone(), plan.channels_last);
    // outputs the plan stores elsewhere: a concatenation's slice, a chain of views' result
    let placed = lowering.region_placements(g, index, &r.outputs);
    let one = |k: TritonKernel| RegionCode {
        kernels: vec![k],
        scratch: vec![],
        stats: vec![],
        given: None,
        placed: true,
    };
    let uncovered = || format!("the {} template does not cover this region", r.kind);
    match r.kind {
        RegionKind::Pointwise if channels_last => {
            let order = channels_last_order(r.iteration.len());
            let region = (&r.nodes[..], &r.outputs[..]);
            pointwise_kernel_in_order(g, name, region, &r.iteration, config, &order, &placed)
                .map(one)
                .ok_or_else(uncovered)
        }
        RegionKind::Pointwise => {
            let order: Vec<usize> = (0..r.iteration.len()).collect();
            let region = (&r.nodes[..], &r.outputs[..]);
            pointwise_kernel_in_order(g, name, region, &r.iteration, config, &order, &placed)
                .map(one)
                .ok_or_else(uncovered)
        }
        RegionKind::Reduction => {
            // the plan records every reduction region's space (FusionPlan::verify)
            let space = r
                .reduction
                .as_ref()
                .ok_or("the plan gives this reduction region no reduction space")?;
            let order = channels_last.then(|| channels_last_order(space.domain.len()));
            // a norm applied in a window's prologue: its statistics alone are written
            let outputs: &[ValueId] = if plan.applied_in.is_some() {
                &[]
            } else {
                &r.outputs
            };
            reduction_kernel(
                g,
                name,
                (&r.nodes, outputs),
                space,
                config,
                order.as_deref(),
                links.given,
                &placed,
            )
            .ok_or_else(uncovered)
        }
        RegionKind::Contraction => {
            let gemm = match &plan.implementation {
                Implementation::Gemm(p) => p,
                Implementation::Template
                | Implementation::Conv(_)
                | Implementation::Attention(_)
                | Implementation::Host => return Err(uncovered()),
            };
            let imp = gemm.imp;
            let mode = match imp {
                GemmImpl::Triton { dot } => DotMode {
                    dot,
                    moments: links.moments.clone(),
                },
                GemmImpl::Library | GemmImpl::PaddedLibrary | GemmImpl::PyTorch => {
                    return Err(format!("the GEMM is computed as {}", imp.describe()))
                }
            };
            let interpret = lowering.options.interpret;
            let region = (&r.nodes[..], &r.outputs[..]);
            contraction_kernel(
                g,
                name,
                region,
                &gemm.shape,
                mode,
                interpret,
                config,
                &placed,
            )
            .map(one)
            .ok_or_else(uncovered)
        }
        RegionKind::Window => {
            let order = channels_last.then(|| channels_last_order(r.iteration.len()));
            let tap_norm = plan.applies.as_ref().map(|a| TapNorm {
                nodes: &a.nodes,
                norm: a.norm,
            });
            let region = (&r.nodes[..], &r.outputs[..]);
            window_kernel(g, name, region, config, order.as_deref(), tap_norm)
                .map(one)
                .ok_or_else(uncovered)
        }
        RegionKind::Library | RegionKind::View | RegionKind::Fallback => {
            Err(format!("{} regions are computed on the host", r.kind))
        }
    }
}

/// Generates the kernel of region `index` alone (for search and tests).
pub fn generate_region_kernel(
    g: &Graph,
    plan: &FusionPlan,
    index: usize,
    opts: &CodegenOptions,
    config: Option<LaunchConfig>,
) -> Option<TritonKernel> {
    let mut lowering = LoweringPlan::new(g, plan, opts);
    lowering.regions.get_mut(index)?.config = config;
    region_kernel(
        g,
        &plan.regions[index],
        index,
        &format!("drtc_k{index}"),
        &lowering,
        &Links::default(),
    )
    .ok()
    .and_then(|c| c.kernels.into_iter().last())
}
