//! KernelBench modules whose convolution drtc's small-reduction template computes
//! (`triton/conv.rs`), as the search would choose it, in both layouts: the conv-bias
//! pass has moved the bias into the fused consumer, `ModelNew` keeps the reference's
//! parameters, and the verifier checks each module under Triton's CPU interpreter with
//! the fp32 rule (allclose 1e-4).

mod support {
    pub mod compile;
}

use drtc::driver::compile::{compile_graph, CompileOptions};
use drtc::driver::load::load_programs;
use drtc_backends::conv_choice::region_conv;
use drtc_backends::layout::LayoutChoice;
use drtc_backends::triton::{ConvImpl, DotPrecision, PhaseLaunch};
use std::path::{Path, PathBuf};
use support::compile::verify_json;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/conv")
        .join(name)
}

#[test]
fn template_modules_verify_in_both_layouts() {
    template_module_verifies("conv_bias_epilogue.py");
}

/// A depthwise convolution (per-channel FMAs whatever precision the race asks for).
#[test]
fn depthwise_template_modules_verify_in_both_layouts() {
    template_module_verifies("conv_depthwise_epilogue.py");
}

/// Grouped convolutions: a GEMM per group, a tile's channels within one group (and a
/// group wider than one tile).
#[test]
fn grouped_template_modules_verify_in_both_layouts() {
    template_module_verifies("conv_grouped_epilogue.py");
    template_module_verifies("conv_grouped_wide.py");
}

/// Transposed convolutions as gathers: strided, dilated, padded, with output padding;
/// grouped in 1-D and 3-D.
#[test]
fn transposed_template_modules_verify_in_both_layouts() {
    template_module_verifies("conv_transposed_epilogue.py");
    template_module_verifies("conv_transposed_grouped_1d.py");
    template_module_verifies("conv_transposed_grouped_3d.py");
}

fn template_module_verifies(name: &str) {
    let file = data(name);
    let text = std::fs::read_to_string(&file).unwrap();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("conv_template_verify")
        .join(name);
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    for layout in [LayoutChoice::Nchw, LayoutChoice::ChannelsLast] {
        // a transposed convolution's phases: one launch at each precision, and a launch
        // per phase
        let mut imps: Vec<ConvImpl> = [DotPrecision::Tf32x3, DotPrecision::Ieee]
            .map(ConvImpl::triton)
            .to_vec();
        if name.contains("transposed") {
            imps.push(ConvImpl::Triton {
                dot: DotPrecision::Tf32x3,
                phases: PhaseLaunch::Each,
            });
        }
        for imp in imps {
            let Ok(p) = load_programs(&file, &text, &[], None).unwrap().remove(0) else {
                panic!("{} does not load", file.display())
            };
            let opts = CompileOptions {
                interpret: true,
                layout,
                ..Default::default()
            };
            let c = compile_graph(p.graph, &p.form, &opts).unwrap();
            let mut lowering = c.lowering(&opts);
            let convs: Vec<usize> = (0..c.plan.regions.len())
                .filter(|&i| region_conv(&c.graph, &c.plan, i).is_some())
                .collect();
            assert_eq!(convs.len(), 1);
            lowering
                .set_conv((&c.graph, &c.plan), convs[0], imp, "test")
                .unwrap();
            let m = c.emit(&lowering, &p.form);
            assert!(!m.source.contains("functional.conv"), "the library call");
            let fused = m.regions.iter().find(|r| r.template.is_some()).unwrap();
            assert!(fused.kernel.as_ref().unwrap().0.ends_with("_conv"));
            // the order checked is a 2-D convolution's (the 1-D and 3-D programs end in `d.py`)
            if layout == LayoutChoice::ChannelsLast && !name.ends_with("d.py") {
                assert!(m.source.contains("outputs dense in dim order [0, 2, 3, 1]"));
            }
            if let ConvImpl::Triton {
                phases: PhaseLaunch::Each,
                ..
            } = imp
            {
                assert!(
                    m.source.contains("for _drtc_phase in range("),
                    "a launch per phase"
                );
            }
            let tag = imp.describe().replace(':', "_");
            let path = out.join(format!("{}_{tag}.py", layout.name()));
            std::fs::write(&path, &m.source).unwrap();
            let v = verify_json(&file, &path);
            assert_eq!(v["verified"], true, "{} {tag}: {v}", layout.name());
        }
    }
}
