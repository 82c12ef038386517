//! The lowering plan as text: every program under `tests/programs/` goes through the
//! pipeline of `snapshots.rs` (cleanup, fusion) and its plan is snapshotted (insta), one
//! line per region: implementation, precision and reason, configuration, layout and
//! partners. A change of what code generation decides shows here, before the code.
//! Edits (the search's and the retries') are snapshotted on representative programs.

use drtc_backends::graphs::GraphMode;
use drtc_backends::layout::LayoutChoice;
use drtc_backends::plan::{LoweringPlan, PlanError};
use drtc_backends::stitch::{emit_module, generate_module, CodegenOptions, ModuleForm};
use drtc_backends::triton::{ConvImpl, DotPrecision, GemmImpl};
use drtc_ir::Graph;
use drtc_passes::fuse::{plan_fusion, FuseOptions, FusionPlan};
use drtc_passes::{ManagerOptions, PassManager};
use std::path::Path;

fn load(path: &Path) -> (Graph, FusionPlan) {
    let src = std::fs::read_to_string(path).unwrap();
    let mut g = drtc_ir::text::parse(&src).unwrap();
    let pm = PassManager::parse(
        "dce,cse,dce",
        ManagerOptions {
            verify_each: true,
            print_ir_after: vec![],
        },
    )
    .unwrap();
    pm.run(&mut g).unwrap();
    g.compact();
    let plan = plan_fusion(&g, &FuseOptions::default());
    (g, plan)
}

fn program(name: &str) -> (Graph, FusionPlan) {
    load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/programs/{name}.drt")))
}

#[test]
fn the_plan_of_every_program() {
    insta::glob!("programs/*.drt", |path| {
        let (g, plan) = load(path);
        let lowering = LoweringPlan::new(&g, &plan, &CodegenOptions::default());
        // the module records the plan it was emitted from
        let m = generate_module(&g, &plan, &ModuleForm::Seed, &CodegenOptions::default());
        assert_eq!(m.plan.regions, lowering.regions);
        insta::assert_snapshot!("plan", lowering.to_string());
    });
}

#[test]
fn edits_of_a_plan() {
    let (g, plan) = program("conv_template");
    let mut lowering = LoweringPlan::new(&g, &plan, &CodegenOptions::default());
    let conv = (0..lowering.regions.len())
        .find(|&i| lowering.regions[i].implementation.conv().is_some())
        .expect("a convolution region");
    let dot = DotPrecision::Tf32x3;
    lowering
        .set_conv((&g, &plan), conv, ConvImpl::triton(dot), "search: faster")
        .unwrap();
    lowering.set_layout((&g, &plan), LayoutChoice::Nchw);
    lowering.set_graphs(GraphMode::Off);
    assert_eq!(
        lowering.set_gemm((&g, &plan), conv, GemmImpl::Library, "no"),
        Err(PlanError::NotGemm(conv))
    );
    insta::assert_snapshot!("conv_template_edited", lowering.to_string());

    let (g, plan) = program("linear_batch_norm");
    let mut lowering = LoweringPlan::new(&g, &plan, &CodegenOptions::default());
    let before = lowering.to_string();
    for i in lowering.gemm_regions() {
        let why = "failed verification; library call instead";
        lowering
            .set_gemm((&g, &plan), i, GemmImpl::Library, why)
            .unwrap();
    }
    // the library path has no epilogue to write the moments in: the link goes
    assert!(lowering.regions.iter().all(|r| r.moments.is_none()));
    let m = emit_module(&g, &plan, &lowering, &ModuleForm::Seed);
    assert!(m
        .regions
        .iter()
        .any(|r| r.gemm.as_ref().is_some_and(|p| p.imp == GemmImpl::Library)));
    insta::assert_snapshot!(
        "linear_batch_norm_library",
        format!("{before}-- every GEMM region: library call --\n{lowering}")
    );
}

#[test]
fn the_plan_as_json() {
    let (g, plan) = program("linear_batch_norm");
    let lowering = LoweringPlan::new(&g, &plan, &CodegenOptions::default());
    let v = lowering.json();
    assert_eq!(v["precision"], "fp32");
    let regions = v["regions"].as_array().unwrap();
    assert_eq!(regions.len(), plan.regions.len());
    let gemm = regions
        .iter()
        .find(|r| r["kind"] == "contraction")
        .expect("a contraction region");
    assert!(gemm["implementation"]
        .as_str()
        .unwrap()
        .starts_with("gemm "));
    assert!(gemm["reason"].is_string());
    // the fp32 policy's product: three TF32 dots
    assert_eq!(gemm["precision"], "tf32x3");
    assert_eq!(gemm["moments_to"], 1);
}

/// A concatenation its operands' kernels write in place (the others copied into their
/// slices) is drtc's lowering, not a PyTorch op: the module reports no fallback for it; a
/// concatenation left to PyTorch (its operands are inputs) still is one.
#[test]
fn a_concatenation_written_in_place_is_not_reported_as_computed_with_pytorch() {
    let (g, plan) = program("concat_in_place");
    let m = generate_module(&g, &plan, &ModuleForm::Seed, &CodegenOptions::default());
    assert!(!m.source.contains("torch.cat("), "{}", m.source);
    assert!(m.fallback_ops().is_empty(), "{:?}", m.fallback_ops());
    let src = "graph @inputs(%x: f32[4, 6], %y: f32[4, 3]) {\n  \
               %0 = cat(%x, %y) {dim = 1} : f32[4, 9]\n  return %0\n}\n";
    let g = drtc_ir::text::parse(src).unwrap();
    let plan = plan_fusion(&g, &FuseOptions::default());
    let m = generate_module(&g, &plan, &ModuleForm::Seed, &CodegenOptions::default());
    assert!(m.source.contains("torch.cat("), "{}", m.source);
    assert_eq!(m.fallback_ops(), ["cat"]);
}
