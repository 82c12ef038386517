//! A kernel region the backend cannot generate is computed with PyTorch and reported with
//! its reason, never dropped silently: here a reduction region whose plan lost its
//! reduction space (what `FusionPlan::verify` rejects; the stitcher does not trust it).

use drtc_backends::stitch::{generate_module, CodegenOptions, ModuleForm};
use drtc_ir::{Attr, DType, GraphBuilder, Op, TensorType};
use drtc_passes::fuse::{plan_fusion, FuseOptions, RegionKind};

#[test]
fn a_reduction_region_without_its_space_is_a_reported_fallback() {
    let mut b = GraphBuilder::new("g");
    let x = b.input("x", TensorType::new(DType::F32, vec![4, 8]));
    let e = b.op1(Op::Exp, &[x], []).unwrap();
    let s = b
        .op1(Op::Sum, &[e], [("dim", Attr::Ints(vec![1]))])
        .unwrap();
    let g = b.finish(vec![s]);
    let mut plan = plan_fusion(&g, &FuseOptions::default());
    assert_eq!(plan.regions.len(), 1);
    assert_eq!(plan.regions[0].kind, RegionKind::Reduction);
    let opts = CodegenOptions {
        interpret: true,
        ..Default::default()
    };
    let good = generate_module(&g, &plan, &ModuleForm::Seed, &opts);
    assert_eq!(good.kernel_count(), 1);
    assert_eq!(good.regions[0].fallback_reason, None);

    plan.regions[0].reduction = None;
    assert!(plan.verify(&g).is_err());
    let m = generate_module(&g, &plan, &ModuleForm::Seed, &opts);
    let r = &m.regions[0];
    assert!(r.fallback && r.kernel.is_none());
    assert_eq!(
        r.fallback_reason.as_deref(),
        Some("the plan gives this reduction region no reduction space")
    );
    assert_eq!(m.fallback_ops(), ["exp", "sum"]);
    assert!(m.source.contains("torch.sum("), "{}", m.source);
}
