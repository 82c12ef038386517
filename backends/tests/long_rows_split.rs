//! The split strategy asked for by a launch configuration (`SPLIT`, the search's candidate
//! for many long rows: `long_rows_split` in `triton/reduction/strategy.rs`): every
//! reduction region of the long-row programs, generated split into chunks whatever the
//! heuristic says, runs under Triton's interpreter against PyTorch; a scan keeps its
//! looped passes.

mod common;

use drtc_backends::plan::LoweringPlan;
use drtc_backends::stitch::{emit_module, CodegenOptions, ModuleForm};
use drtc_backends::torch::emit_seed_program;
use drtc_backends::triton::LaunchConfig;
use drtc_ir::Graph;
use drtc_passes::fuse::{plan_fusion, FuseOptions, FusionPlan, RegionKind};
use std::path::Path;

fn load(src: &str) -> (Graph, FusionPlan) {
    let g = drtc_ir::text::parse(src).unwrap();
    let plan = plan_fusion(&g, &FuseOptions::default());
    plan.verify(&g).expect("a valid fusion plan");
    (g, plan)
}

fn program(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/programs/{name}.drt"));
    std::fs::read_to_string(path).unwrap()
}

/// The module with every reduction region asked to split into `chunks` chunks of blocks
/// of 256 columns, and how many regions were asked.
fn split_everywhere(g: &Graph, plan: &FusionPlan, chunks: u64) -> (String, usize) {
    let opts = CodegenOptions {
        interpret: true,
        ..Default::default()
    };
    let mut lowering = LoweringPlan::new(g, plan, &opts);
    let mut asked = 0;
    for (i, r) in plan.regions.iter().enumerate() {
        if r.kind != RegionKind::Reduction || r.reduction.is_none() {
            continue;
        }
        let config = LaunchConfig {
            blocks: vec![("BLOCK_R", 1), ("BLOCK_C", 256), ("SPLIT", chunks)],
            num_warps: 8,
            num_stages: 1,
        };
        lowering.set_config((g, plan), i, config).unwrap();
        asked += 1;
    }
    (
        emit_module(g, plan, &lowering, &ModuleForm::Seed).source,
        asked,
    )
}

#[test]
fn asked_splits_match_pytorch_under_the_interpreter() {
    let out = std::env::temp_dir().join(format!("drtc-long-split-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let mut pairs = vec![];
    for (name, chunks) in [("long_rows", 5), ("looped_norms", 3), ("coop_rows", 4)] {
        let (g, plan) = load(&program(name));
        let (source, asked) = split_everywhere(&g, &plan, chunks);
        assert!(asked > 0, "{name}: no reduction region");
        let split = source.matches("split reduction, stage 1 of").count();
        assert_eq!(split, asked, "{name}: every region split:\n{source}");
        assert!(
            source.contains(&format!("in {chunks} chunks of")),
            "{source}"
        );
        assert!(!source.contains("SPLIT="), "{source}");
        pairs.push(common::write_pair(
            &out,
            name,
            name,
            &emit_seed_program(&g),
            &source,
        ));
    }
    common::assert_pairs_match(&out, &pairs);
}

#[test]
fn a_scan_keeps_its_looped_passes_when_asked_to_split() {
    let src = "graph @scan(%x: f32[4, 9000]) {
  %0 = cumsum(%x) {dim = 1} : f32[4, 9000]
  return %0
}";
    let (g, plan) = load(src);
    let (source, asked) = split_everywhere(&g, &plan, 4);
    assert_eq!(asked, 1);
    assert!(!source.contains("split reduction"), "{source}");
    assert!(!source.contains("SPLIT="), "{source}");
}
