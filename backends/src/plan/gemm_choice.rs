//! The policy's implementation of each GEMM region, recorded in the lowering plan: the
//! precision policy's choice by the error model (`triton/precision.rs`),
//! except that a large product with too few output tiles for the template is a library
//! call (`triton/contraction.rs`, [`FEW_TILES`]). The search and the retries edit the
//! plan's choice (`plan/edit.rs`).

use super::GemmPlan;
use crate::options::CodegenOptions;
use crate::triton::{
    choose, gemm_shape, predicted_error, template_tiles, too_few_tiles, GemmChoice, GemmImpl,
    FEW_TILES,
};
use drtc_ir::Graph;
use drtc_passes::fuse::Region;

/// The policy's implementation of contraction region `r` by the error model, with the
/// prediction, the reason and the shape; `None` when the template cannot take its product.
pub(crate) fn gemm_choice(g: &Graph, r: &Region, opts: &CodegenOptions) -> Option<GemmPlan> {
    let shape = gemm_shape(g, &r.nodes)?;
    // under the interpreter every product stays a Triton kernel, however narrow: the CPU
    // tests exercise the template there, and no speed is measured
    let narrow = if opts.interpret {
        u64::MAX
    } else {
        shape.m.min(shape.n)
    };
    let mut policy_choice = choose(opts.precision, shape.k, shape.half, narrow, shape.flops());
    if let GemmImpl::Triton { dot } = policy_choice.imp {
        if !opts.interpret && too_few_tiles(&shape, dot) {
            policy_choice = GemmChoice {
                imp: GemmImpl::Library,
                predicted: predicted_error(GemmImpl::Library, shape.k, opts.precision),
                reason: format!(
                    "{} policy: {} output tiles of the template (fewer than {FEW_TILES}: most \
                     multiprocessors idle, no split-K over K = {}); library call, which \
                     splits K",
                    opts.precision.name(),
                    template_tiles(&shape, dot),
                    shape.k
                ),
            };
        }
    }
    Some(GemmPlan {
        imp: policy_choice.imp,
        predicted_error: policy_choice.predicted,
        reason: policy_choice.reason,
        shape,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::triton::Precision;
    use drtc_passes::fuse::{plan_fusion, FuseOptions};

    fn choice(m: usize, k: usize, n: usize, interpret: bool) -> (GemmImpl, String) {
        let src = format!(
            "graph @g(%x: f32[{m}, {k}], %w: param f32[{n}, {k}]) {{\n  \
             %0 = linear(%x, %w) : f32[{m}, {n}]\n  return %0\n}}\n"
        );
        let g = drtc_ir::text::parse(&src).unwrap();
        let plan = plan_fusion(&g, &FuseOptions::default());
        let opts = CodegenOptions {
            precision: Precision::Fp32,
            interpret,
            ..CodegenOptions::default()
        };
        let p = gemm_choice(&g, &plan.regions[0], &opts).unwrap();
        (p.imp, p.reason)
    }

    #[test]
    fn a_large_product_with_few_tiles_is_a_library_call() {
        // 256 x 256 x 16384 (2.1 GFLOP): tf32x3 meets the fp32 budget, but its 4 tiles of
        // 128 x 128 would leave most of the GPU idle
        let (imp, why) = choice(256, 16384, 256, false);
        assert_eq!(imp, GemmImpl::Library, "{why}");
        assert!(why.contains("4 output tiles"), "{why}");
        // the interpreter keeps the template (the CPU tests exercise it)
        assert!(matches!(
            choice(256, 16384, 256, true).0,
            GemmImpl::Triton { .. }
        ));
        // enough tiles (2048 x 2048: 256), or a small product: the template
        assert!(matches!(
            choice(2048, 4096, 2048, false).0,
            GemmImpl::Triton { .. }
        ));
        assert!(matches!(
            choice(256, 512, 256, false).0,
            GemmImpl::Triton { .. }
        ));
    }
}
