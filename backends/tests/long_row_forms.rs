//! The forms the search offers a reduction region of rows longer than one tile, each run
//! under Triton's interpreter against PyTorch:
//! - cooperative rows (`triton/reduction/coop.rs`), generated with the configuration the
//!   search offers (one program a row under the interpreter, which runs programs one at a
//!   time); the form with several programs a row is snapshotted;
//! - the split strategy asked for by a configuration (`SPLIT`: `long_rows_split` in
//!   `triton/reduction/strategy.rs`), whatever the heuristic says; a scan keeps its looped
//!   passes.

mod common;

use drtc_backends::plan::LoweringPlan;
use drtc_backends::stitch::{emit_module, CodegenOptions, ModuleForm};
use drtc_backends::torch::emit_seed_program;
use drtc_backends::triton::{coop_config, reduction_shape, LaunchConfig};
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

/// The module with every long-row reduction region in its cooperative configuration (under
/// the interpreter, which runs programs one at a time, one program a row), and how many
/// regions took it.
fn cooperative(g: &Graph, plan: &FusionPlan, interpret: bool) -> (String, usize) {
    let opts = CodegenOptions {
        interpret,
        ..Default::default()
    };
    let mut lowering = LoweringPlan::new(g, plan, &opts);
    let mut offered = 0;
    for (i, r) in plan.regions.iter().enumerate() {
        let Some(space) = r
            .reduction
            .as_ref()
            .filter(|_| r.kind == RegionKind::Reduction)
        else {
            continue;
        };
        let (_, cols, split) = reduction_shape(space);
        if let Some(mut c) = coop_config(cols).filter(|_| !split) {
            if interpret {
                c.blocks = vec![
                    ("BLOCK_R", 1),
                    ("BLOCK_C", cols.next_power_of_two()),
                    ("COOP", 1),
                ];
            }
            lowering.set_config((g, plan), i, c).unwrap();
            offered += 1;
        }
    }
    assert!(offered > 0, "no region of rows longer than one tile");
    (
        emit_module(g, plan, &lowering, &ModuleForm::Seed).source,
        offered,
    )
}

#[test]
fn cooperative_rows_match_pytorch_under_the_interpreter() {
    let mut modules = vec![];
    for name in ["coop_rows", "long_rows", "looped_norms"] {
        let (g, plan) = load(&program(name));
        let (source, offered) = cooperative(&g, &plan, true);
        let taken = source.matches("cooperative rows: 1 programs a row").count();
        // long_rows' argmax keeps its region in looped passes
        let want = if name == "long_rows" {
            offered - 1
        } else {
            offered
        };
        assert_eq!(taken, want, "{name}:\n{source}");
        modules.push((name, g, source));
    }
    match_pytorch("coop", &modules);
}

/// Runs each generated module against its program's PyTorch reference.
fn match_pytorch(tag: &str, modules: &[(&str, Graph, String)]) {
    let out = std::env::temp_dir().join(format!("drtc-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let pairs: Vec<_> = modules
        .iter()
        .map(|(name, g, source)| {
            common::write_pair(&out, name, name, &emit_seed_program(g), source)
        })
        .collect();
    common::assert_pairs_match(&out, &pairs);
}

#[test]
fn several_programs_a_row_meet_at_a_counter() {
    let src = "graph @l1(%x: f32[300, 40000]) {
  %0 = abs(%x) : f32[300, 40000]
  %1 = mean(%0) {dim = [1], keepdim = true} : f32[300, 1]
  %2 = div(%x, %1) : f32[300, 40000]
  return %2
}";
    let (g, plan) = load(src);
    let (source, _) = cooperative(&g, &plan, false);
    let kernel = source
        .split("@triton.jit")
        .find(|k| k.contains("cooperative rows"))
        .and_then(|k| k.split("\n\n\n").next())
        .expect("the cooperative kernel");
    insta::assert_snapshot!(kernel);
    let launch = source
        .lines()
        .find(|l| l.contains("[(min(3000, _drtc_sms() * 4 // 10 * 10),)]"))
        .unwrap_or_else(|| panic!("a persistent grid of whole rows:\n{source}"));
    // ten programs of 4096 columns a row, four resident an SM: 64 registers a thread
    assert!(launch.contains("COOP=10"), "{launch}");
    assert!(launch.contains("maxnreg=64"), "{launch}");
    assert!(launch.contains("num_warps=8"), "{launch}");
    assert!(
        source.contains("_cnt = torch.zeros([300], dtype=torch.int32"),
        "{source}"
    );
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
    let mut modules = vec![];
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
        modules.push((name, g, source));
    }
    match_pytorch("long-split", &modules);
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
