//! Convolution regions under drtc's small-reduction template (`triton/conv.rs`) at each
//! product precision: fused with their one pointwise consumer, or alone (strided, padded,
//! dilated, 1-D and 3-D, with and without a bias). Each module runs under Triton's CPU
//! interpreter against the program emitted as PyTorch; the reports say what was chosen.
//! The library call stays the default. Needs the Python of `drtc setup` (or `DRTC_PYTHON`).

mod common;

use drtc_backends::conv_choice::{conv_partner, region_conv};
use drtc_backends::plan::LoweringPlan;
use drtc_backends::stitch::{emit_module, generate_module, CodegenOptions, ModuleForm};
use drtc_backends::torch::emit_seed_program;
use drtc_backends::triton::{ConvImpl, DotPrecision, PhaseLaunch};
use drtc_ir::Graph;
use drtc_passes::fuse::{plan_fusion, FuseOptions, FusionPlan};
use std::path::Path;

fn load(name: &str) -> (Graph, FusionPlan) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/programs/{name}.drt"));
    let g = drtc_ir::text::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    let plan = plan_fusion(&g, &FuseOptions::default());
    plan.verify(&g).expect("a valid fusion plan");
    (g, plan)
}

fn conv_regions(g: &Graph, plan: &FusionPlan) -> Vec<usize> {
    (0..plan.regions.len())
        .filter(|&i| region_conv(g, plan, i).is_some())
        .collect()
}

#[test]
fn partners_are_the_only_pointwise_reader() {
    let (g, plan) = load("conv_template");
    let convs = conv_regions(&g, &plan);
    assert_eq!(convs.len(), 1);
    let j = conv_partner(&g, &plan, convs[0]).expect("relu, mul, hardswish fuse");
    assert!(j > convs[0]);
    // the 2-D result is returned: no partner; 3-D and 1-D have theirs
    let (g, plan) = load("conv_template_alone");
    let partners: Vec<Option<usize>> = conv_regions(&g, &plan)
        .into_iter()
        .map(|i| conv_partner(&g, &plan, i))
        .collect();
    assert_eq!(partners.len(), 3);
    assert!(partners[0].is_none());
    assert!(partners[1].is_some() && partners[2].is_some());
}

#[test]
fn the_library_call_is_the_default() {
    let (g, plan) = load("conv_template");
    let m = generate_module(&g, &plan, &ModuleForm::Seed, &CodegenOptions::default());
    assert!(m.source.contains("torch.nn.functional.conv2d("));
    assert!(!m.source.contains("_conv("));
}

#[test]
fn every_template_precision_matches_pytorch() {
    let out = std::env::temp_dir().join(format!("drtc-conv-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let mut pairs = vec![];
    for prog in [
        "conv_template",
        "conv_template_alone",
        "conv_template_grouped",
        "conv_template_transposed",
        "conv_template_depthwise",
        "conv_template_cat",
        "conv_template_bn",
        "conv_template_shuffle",
    ] {
        let (g, plan) = load(prog);
        let reference = emit_seed_program(&g);
        let mut imps: Vec<ConvImpl> =
            [DotPrecision::Tf32, DotPrecision::Tf32x3, DotPrecision::Ieee]
                .map(ConvImpl::triton)
                .to_vec();
        if prog.contains("transposed") {
            imps.push(ConvImpl::Triton {
                dot: DotPrecision::Tf32x3,
                phases: PhaseLaunch::Each,
            });
        }
        for imp in imps {
            let ConvImpl::Triton { dot, phases } = imp else {
                unreachable!("templates only")
            };
            let opts = CodegenOptions {
                interpret: true,
                ..Default::default()
            };
            let mut lowering = LoweringPlan::new(&g, &plan, &opts);
            for i in conv_regions(&g, &plan) {
                lowering.set_conv((&g, &plan), i, imp, "test").unwrap();
            }
            let m = emit_module(&g, &plan, &lowering, &ModuleForm::Seed);
            assert!(!m.source.contains("torch.nn.functional.conv"), "{prog}");
            let convs: Vec<_> = m.regions.iter().filter(|r| r.template.is_some()).collect();
            assert_eq!(convs.len(), conv_regions(&g, &plan).len(), "{prog}");
            for r in convs {
                let text = r.template.as_deref().unwrap();
                assert!(text.starts_with(&imp.describe()), "{text}");
                let (name, _) = r.kernel.as_ref().expect("the template's kernel");
                assert!(name.ends_with("_conv"), "{name}");
            }
            match dot {
                // a depthwise convolution is per-channel FMAs at every precision
                _ if prog.contains("depthwise") => assert!(m.source.contains("acc += a * b")),
                DotPrecision::Ieee => assert!(m.source.contains("acc += a * b")),
                DotPrecision::Tf32 | DotPrecision::Tf32x3 => {
                    let want = format!("input_precision=\"{}\"", dot.name());
                    assert!(m.source.contains(&want), "{prog}: {want}");
                }
            }
            let launches = m.source.contains("for _drtc_phase in range(");
            assert_eq!(launches, phases == PhaseLaunch::Each, "{prog}");
            let tag = imp.describe().replace(':', "_");
            let tag = tag.as_str();
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

/// Convolutions concatenated along the channels: the template's kernels (two with their
/// relu, one alone) write into their slices of the result, nothing is copied; with the
/// library calls, the relu kernels write theirs and the lone convolution's output is
/// copied.
#[test]
fn template_convolutions_write_their_slices_of_a_concatenation() {
    let m = template_module("conv_template_cat", ConvImpl::triton(DotPrecision::Tf32x3));
    assert!(!m.contains("torch.cat("), "{m}");
    assert!(!m.contains(".copy_("), "{m}");
    for slice in [".narrow(1, 0, 4)", ".narrow(1, 4, 5)", ".narrow(1, 9, 2)"] {
        assert!(m.contains(slice), "{slice}: {m}");
    }
    // stored through the result's strides: 11 channels x 6 x 7 per image
    assert_eq!(
        m.matches("o0 * 462 + o1 * 42 + o2 * 7 + o3").count(),
        3,
        "{m}"
    );
    let (g, plan) = load("conv_template_cat");
    let library = generate_module(&g, &plan, &ModuleForm::Seed, &CodegenOptions::default());
    assert_eq!(
        library.source.matches(".copy_(").count(),
        1,
        "{}",
        library.source
    );
}

/// Channel shuffles of the template's outputs (with its relu, and alone): its kernels
/// store each element at its place in the shuffle's result; no view of the chains is
/// emitted (numerics in `every_template_precision_matches_pytorch`).
#[test]
fn template_convolutions_write_their_channel_shuffles() {
    let m = template_module(
        "conv_template_shuffle",
        ConvImpl::triton(DotPrecision::Tf32x3),
    );
    let start = m.find("def drtc_forward").expect("a forward");
    let body = &m[start..start + m[start..].find("\n    return").expect("a return")];
    assert_eq!(body.matches("torch.reshape(").count(), 0, "{body}");
    assert_eq!(body.matches("transpose(").count(), 0, "{body}");
    assert_eq!(m.matches("_conv[").count(), 2, "{m}");
}

/// A batch norm after a convolution the template computes takes the statistics from the
/// convolution's tiles: the kernel writes each tile's channel moments, the batch norm's
/// kernels merge them (no stage of its own reads the output for them); with the library
/// call, the batch norm computes them itself.
#[test]
fn a_batch_norm_after_a_template_convolution_merges_its_tile_moments() {
    let m = template_module("conv_template_bn", ConvImpl::triton(DotPrecision::Tf32x3));
    assert!(m.contains("# the tile's column moments"), "{m}");
    let kernels: Vec<&str> = m
        .lines()
        .filter_map(|l| l.strip_prefix("def drtc_k"))
        .collect();
    assert_eq!(
        kernels.len(),
        2,
        "the convolution and the batch norm's last stage: {kernels:?}"
    );
    assert!(!m.contains("_part"), "no statistics stage: {m}");
    let (g, plan) = load("conv_template_bn");
    let library = generate_module(&g, &plan, &ModuleForm::Seed, &CodegenOptions::default());
    assert!(!library.source.contains("tile's column moments"));
}

#[test]
fn the_fused_kernel_snapshot() {
    insta::assert_snapshot!(first_template_kernel("conv_template"));
}

/// A grouped convolution: the grid's second axis walks groups, then a group's tiles.
#[test]
fn the_grouped_kernel_snapshot() {
    insta::assert_snapshot!(first_template_kernel("conv_template_grouped"));
}

/// A transposed convolution: each tap gathers from the input pixel it lands on.
/// A depthwise convolution's tile stops at 64 channels (`conv_config`): 96 channels are a
/// full tile and a masked one.
#[test]
fn the_depthwise_kernel_snapshot() {
    let source = template_module(
        "conv_template_depthwise",
        ConvImpl::triton(DotPrecision::Ieee),
    );
    assert!(source.contains("BLOCK_N=64"), "{source}");
    assert!(
        source.contains("[(1, 2,)]"),
        "a grid of 2 channel tiles: {source}"
    );
    insta::assert_snapshot!(kernel_text(&source));
}

#[test]
fn the_transposed_kernel_snapshot() {
    insta::assert_snapshot!(first_template_kernel("conv_template_transposed"));
}

/// A transposed convolution launched once per phase: the phase a constexpr, and the host's
/// loop of launches.
#[test]
fn the_transposed_kernel_launched_per_phase_snapshot() {
    let imp = ConvImpl::Triton {
        dot: DotPrecision::Tf32x3,
        phases: PhaseLaunch::Each,
    };
    let m = template_module("conv_template_transposed", imp);
    let launch = m
        .find("    for _drtc_phase in range(")
        .expect("a launch per phase");
    let end = m[launch..].find(")\n").map_or(m.len(), |e| launch + e + 1);
    insta::assert_snapshot!(format!("{}\n\n{}", kernel_text(&m), &m[launch..end]));
}

fn first_template_kernel(prog: &str) -> String {
    kernel_text(&template_module(
        prog,
        ConvImpl::triton(DotPrecision::Tf32x3),
    ))
}

fn template_module(prog: &str, imp: ConvImpl) -> String {
    let (g, plan) = load(prog);
    let mut lowering = LoweringPlan::new(&g, &plan, &CodegenOptions::default());
    for i in conv_regions(&g, &plan) {
        lowering.set_conv((&g, &plan), i, imp, "snapshot").unwrap();
    }
    emit_module(&g, &plan, &lowering, &ModuleForm::Seed).source
}

fn kernel_text(source: &str) -> String {
    let start = source.find("@triton.jit\ndef drtc_k").expect("a kernel");
    let end = source[start..]
        .find("\n\n")
        .map_or(source.len(), |e| start + e);
    source[start..end].to_string()
}
