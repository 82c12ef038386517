//! GEMM regions under each implementation the precision policy can choose: drtc's Triton
//! template at tf32, tf32x3 and ieee, the library call with its fused epilogue, and the
//! all-PyTorch fallback. Each module runs under Triton's CPU interpreter against the
//! program emitted as PyTorch; the reports say what was chosen. The GPU form of the
//! template (persistent grid, TMA descriptors behind a host test, K-major operands) is
//! snapshotted. Needs the Python of `drtc setup` (or `DRTC_PYTHON`).

mod common;

use drtc_backends::plan::LoweringPlan;
use drtc_backends::stitch::{
    emit_module, generate_module, CodegenOptions, GeneratedModule, ModuleForm,
};
use drtc_backends::torch::emit_seed_program;
use drtc_backends::triton::{small_tiles_config, DotPrecision, GemmImpl, GemmShape, Precision};
use drtc_ir::Graph;
use drtc_passes::fuse::{plan_fusion, FuseOptions, FusionPlan};
use std::path::Path;

fn load(name: &str) -> (Graph, FusionPlan, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/programs/{name}.drt"));
    let src = std::fs::read_to_string(path).unwrap();
    let g = drtc_ir::text::parse(&src).unwrap();
    let reference = emit_seed_program(&g);
    let plan = plan_fusion(&g, &FuseOptions::default());
    plan.verify(&g).expect("a valid fusion plan");
    (g, plan, reference)
}

fn module(g: &Graph, plan: &FusionPlan, imp: Option<GemmImpl>, interpret: bool) -> GeneratedModule {
    let opts = CodegenOptions {
        interpret,
        ..Default::default()
    };
    let mut lowering = LoweringPlan::new(g, plan, &opts);
    if let Some(imp) = imp {
        for i in lowering.gemm_regions() {
            lowering.set_gemm((g, plan), i, imp, "test").unwrap();
        }
    }
    emit_module(g, plan, &lowering, &ModuleForm::Seed)
}

#[test]
fn every_gemm_implementation_matches_pytorch() {
    let out = std::env::temp_dir().join(format!("drtc-gemm-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let imps = [
        GemmImpl::Triton {
            dot: DotPrecision::Tf32,
        },
        GemmImpl::Triton {
            dot: DotPrecision::Tf32x3,
        },
        GemmImpl::Triton {
            dot: DotPrecision::Ieee,
        },
        GemmImpl::Library,
        GemmImpl::PaddedLibrary,
        GemmImpl::PyTorch,
    ];
    let mut pairs = vec![];
    for prog in ["linear_gelu_softmax", "bmm_max", "linear_odd"] {
        let (g, plan, reference) = load(prog);
        for imp in imps {
            let m = module(&g, &plan, Some(imp), true);
            let gemm: Vec<_> = m.regions.iter().filter(|r| r.gemm.is_some()).collect();
            assert_eq!(gemm.len(), 1, "{prog}: one GEMM region");
            let r = gemm[0];
            assert_eq!(r.gemm.as_ref().unwrap().imp, imp);
            match imp {
                GemmImpl::PyTorch => assert!(r.fallback && r.kernel.is_none(), "{prog}"),
                GemmImpl::Library | GemmImpl::PaddedLibrary => {
                    assert!(!r.fallback);
                    // bmm_max's K = 33 is padded to 36 (N = 40 needs none), linear_odd's
                    // K = 7 and N = 9 to 8 and 12; in linear_gelu_softmax K = 20, N = 24
                    let padded = m.source.contains("torch.nn.functional.pad(");
                    let odd = prog != "linear_gelu_softmax";
                    assert_eq!(padded, imp == GemmImpl::PaddedLibrary && odd, "{prog}");
                    assert!(m
                        .source
                        .contains("_drtc_library(\"highest\", lambda: torch."));
                    if let Some((name, _)) = &r.kernel {
                        assert!(name.ends_with("_epilogue"), "{name}");
                    }
                }
                GemmImpl::Triton { dot } => {
                    assert!(!r.fallback && r.kernel.is_some());
                    let want = format!("input_precision=\"{}\"", dot.name());
                    assert!(m.source.contains(&want), "{prog}: {want}");
                    // the interpreter gets pointer loads only
                    assert!(m.source.contains("USE_TMA=False"));
                }
            }
            let tag = imp.describe().replace(':', "_");
            pairs.push(common::write_pair(
                &out,
                &format!("{prog}_{tag}"),
                &format!("{prog}/{tag}"),
                &reference,
                &m.source,
            ));
        }
    }
    common::assert_pairs_match(&out, &pairs);
}

/// The 64 x 64 tiles the search races where the heuristic tiles would starve the GPU
/// (`small_tiles_config`, taken from a 1024 x 1024 x 1024 product), applied to each program's
/// GEMM under tf32x3 and run under the interpreter against PyTorch.
#[test]
fn the_small_tiles_the_search_offers_match_pytorch() {
    let x3 = DotPrecision::Tf32x3;
    let narrow = GemmShape {
        main: drtc_ir::NodeId(0),
        m: 1024,
        n: 1024,
        k: 1024,
        batch: 1,
        half: false,
    };
    let config = small_tiles_config(&narrow, x3).expect("64 x 64 tiles");
    let out = std::env::temp_dir().join(format!("drtc-gemm-small-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let mut pairs = vec![];
    for prog in ["linear_gelu_softmax", "bmm_max", "linear_odd"] {
        let (g, plan, reference) = load(prog);
        let opts = CodegenOptions {
            interpret: true,
            ..Default::default()
        };
        let mut lowering = LoweringPlan::new(&g, &plan, &opts);
        for i in lowering.gemm_regions() {
            lowering.set_config((&g, &plan), i, config.clone()).unwrap();
            let imp = GemmImpl::Triton { dot: x3 };
            lowering.set_gemm((&g, &plan), i, imp, "test").unwrap();
        }
        let m = emit_module(&g, &plan, &lowering, &ModuleForm::Seed);
        assert!(m.source.contains("BLOCK_M=64, BLOCK_N=64"), "{prog}");
        pairs.push(common::write_pair(
            &out,
            &format!("{prog}_small_tiles"),
            &format!("{prog}/small tiles"),
            &reference,
            &m.source,
        ));
    }
    common::assert_pairs_match(&out, &pairs);
}

#[test]
fn the_policy_reports_its_choice_and_reason() {
    let (g, plan, _) = load("linear_gelu_softmax");
    for (policy, want) in [
        (Precision::Fp32, "triton:tf32x3"),
        (Precision::Tf32, "triton:tf32"),
        (Precision::Ieee, "library"),
    ] {
        let opts = CodegenOptions {
            precision: policy,
            ..Default::default()
        };
        let m = generate_module(&g, &plan, &ModuleForm::Seed, &opts);
        let r = m.regions.iter().find_map(|r| r.gemm.as_ref()).unwrap();
        assert_eq!(r.imp.describe(), want, "{policy:?}");
        assert!(r.reason.contains(policy.name()), "{}", r.reason);
        assert_eq!((r.shape.m, r.shape.n, r.shape.k), (6, 24, 20));
    }
}

/// The first kernel's source and the host lines that launch it.
fn kernel_and_launch(m: &GeneratedModule) -> String {
    let start = m.source.find("@triton.jit\ndef drtc_k0").unwrap();
    let kernel_end = m.source[start..].find("\n\n").unwrap() + start;
    let launch = m
        .source
        .lines()
        .filter(|l| l.contains("drtc_k0_contraction") && !l.contains("def "))
        .collect::<Vec<_>>()
        .join("\n");
    format!("{}\n\n# host\n{launch}", &m.source[start..kernel_end])
}

#[test]
fn gpu_form_of_the_template() {
    let (g, plan, _) = load("linear_gelu_softmax");
    let m = module(
        &g,
        &plan,
        Some(GemmImpl::Triton {
            dot: DotPrecision::Tf32x3,
        }),
        false,
    );
    insta::assert_snapshot!(kernel_and_launch(&m));
}

/// On the GPU the host copies an operand that is not contiguous along K only where the
/// product repays the copy (`PREP_MIN_INTENSITY` FLOPs per byte of the operand): a square
/// product of 4096 copies its [K, N] operand transposed; a batched product of small
/// matrices (as an einsum's contraction writes it) reads its operands in place.
#[test]
fn operands_are_copied_k_contiguous_only_where_the_copy_pays() {
    let tf32x3 = Some(GemmImpl::Triton {
        dot: DotPrecision::Tf32x3,
    });
    let big = "graph @big(%a: f32[4096, 4096], %b: f32[4096, 4096]) {\n  %0 = matmul(%a, %b) : f32[4096, 4096]\n  return %0\n}";
    let small = "graph @small(%a: f32[4096, 64, 64], %b: f32[4096, 64, 16]) {\n  %0 = matmul(%a, %b) : f32[4096, 64, 16]\n  return %0\n}";
    for (src, copied) in [(big, true), (small, false)] {
        let g = drtc_ir::text::parse(src).unwrap();
        let plan = plan_fusion(&g, &FuseOptions::default());
        let m = module(&g, &plan, tf32x3, false);
        assert_eq!(
            m.source
                .contains(".transpose(-1, -2).contiguous().transpose(-1, -2))"),
            copied,
            "{}",
            m.source
        );
    }
}

/// A product whose output is the work (one K step over a large output, no batch dims) runs
/// four persistent programs per SM and stores its tiles through a TMA descriptor on the
/// GPU (pointer stores where the host's TMA test fails); a batched product of small
/// matrices, one K step too, keeps a program per tile and pointer stores.
#[test]
fn store_bound_products_store_through_a_descriptor() {
    let tf32x3 = Some(GemmImpl::Triton {
        dot: DotPrecision::Tf32x3,
    });
    let tall = "graph @tall(%a: f32[32768, 32], %b: f32[32, 32768]) {\n  %0 = matmul(%a, %b) : f32[32768, 32768]\n  return %0\n}";
    let g = drtc_ir::text::parse(tall).unwrap();
    let plan = plan_fusion(&g, &FuseOptions::default());
    let m = module(&g, &plan, tf32x3, false);
    insta::assert_snapshot!(kernel_and_launch(&m));
    let small = "graph @small(%a: f32[4096, 64, 64], %b: f32[4096, 64, 16]) {\n  %0 = matmul(%a, %b) : f32[4096, 64, 16]\n  return %0\n}";
    let g = drtc_ir::text::parse(small).unwrap();
    let plan = plan_fusion(&g, &FuseOptions::default());
    let m = module(&g, &plan, tf32x3, false);
    assert!(!m.source.contains("o_desc"), "{}", m.source);
    assert!(m.source.contains("PERSISTENT=0"), "{}", m.source);
}
