//! `F.pad` in constant mode (`aten.constant_pad_nd` through the export frontend) is the IR's
//! `pad`, computed in a pointwise kernel over its result (a masked load at shifted indices,
//! with its consumers' pointwise ops), not by PyTorch: both frontends compile the program
//! and it verifies against PyTorch under Triton's CPU interpreter. Another mode is refused
//! by the native parser at the call, and `auto` then exports it.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/native")
        .join(name)
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
        let (o, d) = compile(
            &data("pad_constant.py"),
            frontend,
            &format!("pad_{frontend}"),
        );
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "--frontend {frontend}:\n{stderr}");
        let r: Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("report.json")).unwrap()).unwrap();
        assert_eq!(r["verification"]["verified"], true, "{}", r["verification"]);
        // every pad is in a pointwise kernel, two of them with their consumers' ops
        let regions = r["regions"].as_array().unwrap();
        let with_pad: Vec<&Value> = regions
            .iter()
            .filter(|g| g["ops"].as_array().unwrap().iter().any(|o| o == "pad"))
            .collect();
        assert_eq!(with_pad.len(), 3, "--frontend {frontend}: {regions:?}");
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
    let model = data("pad_reflect.py");
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
