//! `chunk`, `split` (an int and a list of sizes), `masked_fill` (a number and a 0-dim
//! tensor as the value, broadcasting masks) and `torch.where(mask, x, number)` read by the
//! native parser (`--frontend native`, and `auto`, which then needs no export), compiled
//! and verified against PyTorch under Triton's CPU interpreter.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn model() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/native/chunk_split_masked_fill.py")
}

/// Compiles the program with `--frontend frontend`; the report and the module's path.
fn compile(frontend: &str) -> (Value, PathBuf) {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("native_split_{frontend}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let model = model();
    let report = d.join("report.json");
    let o = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .args(["compile", model.to_str().unwrap(), "-o"])
        .arg(d.join("out.py"))
        .args(["--device", "cpu", "--frontend", frontend, "--report"])
        .arg(&report)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "drtc compile --frontend {frontend} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    (r, d.join("out.py"))
}

#[test]
fn chunk_split_and_masked_fill_compile_natively_and_verify() {
    let (r, module) = compile("native");
    assert_eq!(r["frontend"]["name"], "native", "{r}");
    assert_eq!(r["verification"]["verified"], true, "{}", r["verification"]);
    // six outputs, each compared with PyTorch's
    let o = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .args(["verify", "--device", "cpu", "--json"])
        .arg(model())
        .arg(&module)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).expect("a JSON report");
    assert_eq!(v["verified"], true, "{v}");
    let outputs = &v["trials"][0]["outputs"];
    assert_eq!(outputs.as_array().map(Vec::len), Some(6), "{v}");
    let ops: Vec<&str> = r["regions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["ops"].as_array().unwrap().iter())
        .map(|o| o.as_str().unwrap())
        .collect();
    for op in ["slice", "where"] {
        assert!(ops.contains(&op), "{op} missing from {ops:?}");
    }
    // auto takes the native parser's graph (no torch.export)
    let (r, _) = compile("auto");
    assert_eq!(r["frontend"]["name"], "native", "{r}");
    assert_eq!(r["verification"]["verified"], true, "{}", r["verification"]);
}
