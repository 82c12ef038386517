//! One kernel region's code: the template that covers its kind, with the launch
//! configuration, layout and moment links (`gemm_moments.rs`) the stitcher decided.

use crate::gemm_choice::gemm_choice;
use crate::layout::{channels_last_order, plan_layout};
use crate::options::CodegenOptions;
use crate::triton::{
    contraction_kernel, pointwise_kernel, pointwise_kernel_in_order, reduction_kernel,
    window_kernel, DotMode, GemmImpl, GivenMoments, LaunchConfig, RegionCode, TileMoments,
    TritonKernel,
};
use drtc_ir::Graph;
use drtc_passes::fuse::{FusionPlan, Region, RegionKind};

/// How one kernel region is generated, besides the module's options.
#[derive(Clone, Debug, Default)]
pub(crate) struct Emit {
    /// A launch configuration instead of the heuristic.
    pub config: Option<LaunchConfig>,
    /// The region reads and writes channels-last (`layout.rs`).
    pub channels_last: bool,
    /// A reduction region: moment partials a GEMM epilogue writes (`gemm_moments.rs`).
    pub given: Option<GivenMoments>,
    /// A contraction region: the tile moments its epilogue writes for a later region.
    pub moments: Option<TileMoments>,
}

/// The kernels of kernel region `r`, or why it has none (then it is computed with
/// PyTorch, and the report says why).
pub(crate) fn region_kernel(
    g: &Graph,
    r: &Region,
    index: usize,
    name: &str,
    opts: &CodegenOptions,
    emit: &Emit,
) -> Result<RegionCode, String> {
    let (config, channels_last) = (emit.config.clone(), emit.channels_last);
    let one = |k: TritonKernel| RegionCode {
        kernels: vec![k],
        scratch: vec![],
        stats: vec![],
        given: None,
    };
    let uncovered = || format!("the {} template does not cover this region", r.kind);
    match r.kind {
        RegionKind::Pointwise if channels_last => {
            let order = channels_last_order(r.iteration.len());
            pointwise_kernel_in_order(g, name, &r.nodes, &r.outputs, &r.iteration, config, &order)
                .map(one)
                .ok_or_else(uncovered)
        }
        RegionKind::Pointwise => {
            pointwise_kernel(g, name, &r.nodes, &r.outputs, &r.iteration, config)
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
            reduction_kernel(
                g,
                name,
                (&r.nodes, &r.outputs),
                space,
                config,
                order.as_deref(),
                emit.given,
            )
            .ok_or_else(uncovered)
        }
        RegionKind::Contraction => {
            let mode = match gemm_choice(g, r, index, opts).ok_or_else(uncovered)?.0 {
                GemmImpl::Triton { dot } => DotMode {
                    dot,
                    moments: emit.moments.clone(),
                },
                imp @ (GemmImpl::Library | GemmImpl::PaddedLibrary | GemmImpl::PyTorch) => {
                    return Err(format!("the GEMM is computed as {}", imp.describe()))
                }
            };
            contraction_kernel(g, name, &r.nodes, &r.outputs, mode, opts.interpret, config)
                .map(one)
                .ok_or_else(uncovered)
        }
        RegionKind::Window => {
            let order = channels_last.then(|| channels_last_order(r.iteration.len()));
            window_kernel(g, name, &r.nodes, &r.outputs, config, order.as_deref())
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
    let layout = plan_layout(g, plan, opts.layout);
    let emit = Emit {
        config,
        channels_last: layout.regions.contains(&index),
        ..Emit::default()
    };
    region_kernel(
        g,
        &plan.regions[index],
        index,
        &format!("drtc_k{index}"),
        opts,
        &emit,
    )
    .ok()
    .and_then(|c| c.kernels.into_iter().last())
}
