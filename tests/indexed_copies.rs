//! Copies computed from the domain's indices in pointwise kernels, not by PyTorch, verified
//! against PyTorch under Triton's CPU interpreter: `F.pad` in constant mode
//! (`aten.constant_pad_nd` through the export frontend) is the IR's `pad`, a masked load at
//! shifted indices with its consumers' pointwise ops, from both frontends (another mode is
//! refused by the native parser at the call, and `auto` then exports it); a causal mask
//! (a bool `full`, `tril`, `~mask`, `masked_fill`) and a `triu` through the export
//! frontend, with no ATen call left to PyTorch.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn report(d: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(d.join("report.json")).unwrap()).unwrap()
}

/// The regions of a compile report whose ops include `op`.
fn regions_with<'a>(r: &'a Value, op: &str) -> Vec<&'a Value> {
    r["regions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["ops"].as_array().unwrap().iter().any(|o| o == op))
        .collect()
}

fn compile(model: &Path, frontend: &str, dir: &str) -> (Output, PathBuf) {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(dir);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .arg("compile")
        .arg(model)
        .args([
            "--device",
            "cpu",
            "--no-cache",
            "--frontend",
            frontend,
            "-o",
        ])
        .arg(d.join("out.py"))
        .arg("--report")
        .arg(d.join("report.json"))
        .output()
        .unwrap();
    (o, d)
}

#[test]
fn constant_pads_run_in_pointwise_kernels_and_verify() {
    for frontend in ["native", "export"] {
        let model = data("native/pad_constant.py");
        let (o, d) = compile(&model, frontend, &format!("pad_{frontend}"));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "--frontend {frontend}:\n{stderr}");
        let r = report(&d);
        assert_eq!(r["verification"]["verified"], true, "{}", r["verification"]);
        // every pad is in a pointwise kernel, two of them with their consumers' ops
        let with_pad = regions_with(&r, "pad");
        assert_eq!(with_pad.len(), 3, "--frontend {frontend}: {}", r["regions"]);
        for g in &with_pad {
            assert_eq!(g["kind"], "pointwise", "{g}");
        }
        assert!(
            with_pad
                .iter()
                .any(|g| g["ops"].as_array().unwrap().len() > 1),
            "{with_pad:?}"
        );
        let module = std::fs::read_to_string(d.join("out.py")).unwrap();
        assert!(!module.contains("functional.pad("), "{module}");
        assert!(!module.contains("constant_pad_nd"), "{module}");
    }
}

#[test]
fn another_mode_is_refused_at_the_call_and_exported_by_auto() {
    let model = data("native/pad_reflect.py");
    let (o, _) = compile(&model, "native", "pad_reflect_native");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{stderr}");
    assert!(
        stderr.contains("mode `reflect` is not supported") && stderr.contains("pad_reflect.py:9:"),
        "{stderr}"
    );
    let (o, _) = compile(&model, "auto", "pad_reflect_auto");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("verified on cpu"), "{stderr}");
}

#[test]
fn a_causal_mask_and_triangles_run_in_pointwise_kernels_and_verify() {
    let (o, d) = compile(&data("export/causal_mask.py"), "export", "causal_mask");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let r = report(&d);
    assert_eq!(r["verification"]["verified"], true, "{}", r["verification"]);
    // no ATen call (the bool `full`, `bitwise_not`) and no op left to PyTorch
    assert_eq!(
        r["frontend"]["library_calls"],
        serde_json::json!([]),
        "{}",
        r["frontend"]
    );
    assert_eq!(
        r["fallback_ops"],
        serde_json::json!([]),
        "{}",
        r["fallback_ops"]
    );
    for op in ["tril", "triu"] {
        let with = regions_with(&r, op);
        assert_eq!(with.len(), 1, "{op}: {}", r["regions"]);
        assert_eq!(with[0]["kind"], "pointwise", "{}", with[0]);
    }
    // `~mask` is `mask == False`, in the tril's kernel
    assert!(
        regions_with(&r, "tril")[0]["ops"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o == "eq"),
        "{}",
        r["regions"]
    );
}
