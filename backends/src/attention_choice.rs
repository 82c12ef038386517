//! The implementation of each attention region: PyTorch's fused attention (the library
//! call, `F.scaled_dot_product_attention`) unless the search measured drtc's template
//! (`triton/attention.rs`) faster and verified it (an edit of the lowering plan,
//! `plan/edit.rs`).

use crate::triton::{
    attention_kernel, attention_shape, AttentionShape, DotPrecision, LaunchConfig, Precision,
    TritonKernel,
};
use drtc_ir::Graph;
use drtc_passes::fuse::{FusionPlan, RegionKind};

/// The template's precisions worth racing under `policy`: tf32x3 for the fp32 policy
/// (within fp32 rounding for the products' short reductions, like the convolution
/// template's), tf32 under the relative-norm rule, fp32 FMAs (ieee) where asked for.
pub fn attention_precisions(policy: Precision) -> Vec<DotPrecision> {
    match policy {
        Precision::Fp32 => vec![DotPrecision::Tf32x3],
        Precision::Tf32 => vec![DotPrecision::Tf32],
        Precision::Ieee => vec![DotPrecision::Ieee],
    }
}

/// The attention of region `index`, when it is a one-op library region the template
/// covers.
pub fn region_attention(g: &Graph, plan: &FusionPlan, index: usize) -> Option<AttentionShape> {
    let r = plan.regions.get(index)?;
    if r.kind != RegionKind::Library || r.nodes.len() != 1 {
        return None;
    }
    attention_shape(g, r.nodes[0])
}

/// The template's kernel for attention region `index` at `dot`, launched with `config`
/// (the plan's, when the search chose one).
pub(crate) fn attention_region_kernel(
    g: &Graph,
    plan: &FusionPlan,
    index: usize,
    dot: DotPrecision,
    config: Option<LaunchConfig>,
) -> Option<TritonKernel> {
    let shape = region_attention(g, plan, index)?;
    Some(attention_kernel(
        g,
        &shape,
        dot,
        &format!("drtc_k{index}_attention"),
        config,
    ))
}
