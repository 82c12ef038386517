//! drtc's attention template (`triton/attention.rs`) computing every attention region of
//! a module, as the search would choose it: a written-out causal attention (a mask from a
//! buffer, rewritten to SDPA), PyTorch's causal SDPA and one with an additive mask broadcast
//! over the batch, head dim 24 (padded). Each module is verified under Triton's CPU
//! interpreter with the fp32 rule (allclose 1e-4), at both precisions the race may pick.

mod support {
    pub mod compile;
}

use drtc::driver::compile::{compile_graph, CompileOptions};
use drtc::driver::load::load_programs;
use drtc_backends::attention_choice::region_attention;
use drtc_backends::triton::{AttentionImpl, DotPrecision, LaunchConfig};
use std::path::{Path, PathBuf};
use support::compile::verify_json;

#[test]
fn template_modules_verify() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/attention/attention_forms.py");
    let text = std::fs::read_to_string(&file).unwrap();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("attention_template_verify");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    // the heuristic launch configuration at both precisions, and the search's variant with
    // 128 query rows per program (several row blocks end past the 80 queries)
    let wide = LaunchConfig {
        blocks: vec![("BLOCK_M", 128), ("BLOCK_N", 32)],
        num_warps: 8,
        num_stages: 2,
    };
    for (dot, config) in [
        (DotPrecision::Tf32x3, None),
        (DotPrecision::Ieee, None),
        (DotPrecision::Tf32x3, Some(wide)),
    ] {
        let Ok(p) = load_programs(&file, &text, &[], None).unwrap().remove(0) else {
            panic!("{} does not load", file.display())
        };
        let opts = CompileOptions {
            interpret: true,
            simplify: true,
            ..Default::default()
        };
        let c = compile_graph(p.graph, &p.form, &opts).unwrap();
        let mut lowering = c.lowering(&opts);
        let regions: Vec<usize> = (0..c.plan.regions.len())
            .filter(|&i| region_attention(&c.graph, &c.plan, i).is_some())
            .collect();
        assert_eq!(regions.len(), 3, "the written-out attention is SDPA too");
        for &i in &regions {
            if let Some(cfg) = &config {
                lowering
                    .set_config((&c.graph, &c.plan), i, cfg.clone())
                    .unwrap();
            }
            lowering
                .set_attention(i, AttentionImpl::Triton { dot }, "test")
                .unwrap();
        }
        let m = c.emit(&lowering, &p.form);
        assert!(
            !m.source.contains("scaled_dot_product_attention(v"),
            "a library call is left"
        );
        let kernels = m.regions.iter().filter(|r| r.template.is_some()).count();
        assert_eq!(kernels, 3);
        assert!(
            m.source.contains("offs_n[None, :] <= offs_m[:, None]"),
            "causal"
        );
        if config.is_some() {
            assert!(m.source.contains("BLOCK_M=128"), "the variant's launch");
        }
        let path = out.join(format!("{}_{}.py", dot.name(), config.is_some()));
        std::fs::write(&path, &m.source).unwrap();
        let v = verify_json(&file, &path);
        assert_eq!(v["verified"], true, "{}: {v}", dot.name());
    }
}
