//! Cooperative rows (`triton/reduction/coop.rs`): every reduction region of rows longer
//! than one tile, generated with the cooperative configuration the search offers, runs
//! under Triton's interpreter against PyTorch (one program a row there: the interpreter
//! runs programs one at a time), and the form with several programs a row is snapshotted.

mod common;

use drtc_backends::plan::LoweringPlan;
use drtc_backends::stitch::{emit_module, CodegenOptions, ModuleForm};
use drtc_backends::torch::emit_seed_program;
use drtc_backends::triton::{coop_config, reduction_shape};
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
    let out = std::env::temp_dir().join(format!("drtc-coop-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let mut pairs = vec![];
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
