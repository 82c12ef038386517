//! The implementation of each convolution region: the library call (cuDNN through
//! PyTorch, the pointwise consumer in its own Triton kernel) unless the search measured
//! drtc's small-reduction template (`triton/conv.rs`) faster and verified it (an edit of
//! the lowering plan, `plan/edit.rs`); then the template computes the convolution with its
//! single pointwise consumer region fused (the consumer's kernel is not emitted), or
//! alone when there is none.

use crate::layout::{channels_last_order, LayoutPlan};
use crate::triton::{
    conv_kernel, conv_shape, ConvShape, DotPrecision, PhaseLaunch, Placements, Precision,
    TileMoments, TritonKernel,
};
use drtc_ir::Graph;
use drtc_passes::fuse::{FusionPlan, RegionKind};

/// The template's precisions worth racing under `policy`: those that meet its rule
/// (tf32x3 stays within fp32 rounding for the short reductions the template takes;
/// plain tf32 only under the relative-norm rule). The FMA form (ieee) only where the
/// policy asks for it: on the H200 it ran 3x slower than tf32x3 on every level-2 task
/// raced (57: 3.05 against 1.01 ms); and for a depthwise convolution, which has no GEMM.
pub fn conv_precisions(policy: Precision, shape: &ConvShape) -> Vec<DotPrecision> {
    // a depthwise convolution is per-channel FMAs at every policy (fp32 arithmetic)
    if shape.depthwise {
        return vec![DotPrecision::Ieee];
    }
    match policy {
        Precision::Fp32 => vec![DotPrecision::Tf32x3],
        Precision::Tf32 => vec![DotPrecision::Tf32],
        Precision::Ieee => vec![DotPrecision::Ieee],
    }
}

/// The convolution of region `index`, when it is a one-op library region the template
/// covers.
pub fn region_conv(g: &Graph, plan: &FusionPlan, index: usize) -> Option<ConvShape> {
    let r = plan.regions.get(index)?;
    if r.kind != RegionKind::Library || r.nodes.len() != 1 {
        return None;
    }
    conv_shape(g, r.nodes[0])
}

/// The pointwise region that the template fuses with convolution region `index`: the
/// only region reading the convolution's result, over the result's shape, when the
/// result is not a graph output.
pub fn conv_partner(g: &Graph, plan: &FusionPlan, index: usize) -> Option<usize> {
    let shape = region_conv(g, plan, index)?;
    let out = g.node(shape.node).outputs[0];
    if g.outputs().contains(&out) {
        return None;
    }
    let readers: Vec<usize> = plan
        .regions
        .iter()
        .enumerate()
        .filter(|(_, r)| r.nodes.iter().any(|&n| g.node(n).inputs.contains(&out)))
        .map(|(j, _)| j)
        .collect();
    match readers[..] {
        [j] if j > index
            && plan.regions[j].kind == RegionKind::Pointwise
            && plan.regions[j].iteration == g.ty(out).shape =>
        {
            Some(j)
        }
        _ => None,
    }
}

/// The template's kernel for convolution region `index` at `imp` (its precision and how
/// a transposed convolution's phases launch), fused with `partner`
/// (its pointwise consumer region, [`conv_partner`]) or alone; outputs stored in the
/// layout the host allocates them in (`layout.values`), or through the placements' maps
/// (a concatenation's slice); with tile moments, each tile's channel moments written for
/// a later batch norm (`gemm_moments.rs`).
pub(crate) fn conv_region_kernel(
    g: &Graph,
    plan: &FusionPlan,
    index: usize,
    partner: Option<usize>,
    imp: (DotPrecision, PhaseLaunch),
    layout: &LayoutPlan,
    stores: (&Placements, Option<&TileMoments>),
) -> Option<TritonKernel> {
    let shape = region_conv(g, plan, index)?;
    let conv_out = g.node(shape.node).outputs[0];
    let (at, epilogue, outputs) = match partner {
        Some(j) => {
            let r = &plan.regions[j];
            (j, r.nodes.clone(), r.outputs.clone())
        }
        None => (index, vec![], vec![conv_out]),
    };
    let rank = g.ty(conv_out).rank();
    let cl = outputs.iter().any(|v| layout.values.contains(v));
    let order = cl.then(|| channels_last_order(rank));
    conv_kernel(
        g,
        &format!("drtc_k{at}_conv"),
        shape.node,
        &epilogue,
        &outputs,
        imp,
        // the heuristic configuration (a searched configuration of the partner region is
        // the pointwise kernel's, not this one's)
        None,
        order.as_deref(),
        stores,
    )
}
