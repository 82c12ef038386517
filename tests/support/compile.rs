//! Compiling a program for the CPU with the `drtc` binary and asserting that it verifies.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Compiles `backends/tests/programs/<name>.drt` for the CPU, asserts that it verifies,
/// and returns the generated module's source.
#[allow(dead_code)] // each test crate compiles this module; not every one compiles a program
pub fn compile_verified(name: &str) -> String {
    let program = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("backends/tests/programs")
        .join(format!("{name}.drt"));
    compile_file_verified(&program, name)
}

/// Compiles `program` for the CPU into a fresh folder named after `name`, asserts that it
/// verifies, and returns the generated module's source.
#[allow(dead_code)] // each test crate compiles this module; not every one compiles a file
pub fn compile_file_verified(program: &Path, name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("drtc-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("{name}.py"));
    let run = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .args(["compile", program.to_str().unwrap(), "-o"])
        .arg(&out)
        .args(["--device", "cpu"])
        .output()
        .expect("drtc runs");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("verified on cpu"), "{stderr}");
    std::fs::read_to_string(&out).unwrap()
}

/// The host code of a generated module's `drtc_forward`, up to its `return`.
#[allow(dead_code)] // each test crate compiles this module; not every one reads the body
pub fn forward_body(src: &str) -> &str {
    let start = src.find("def drtc_forward").expect("a drtc_forward");
    let end = start + src[start..].find("\n    return").expect("a return");
    &src[start..end]
}

/// `drtc verify --device cpu --json reference module`'s report.
#[allow(dead_code)] // each test crate compiles this module; not every one verifies a file
pub fn verify_json(reference: &Path, module: &Path) -> serde_json::Value {
    let o = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .args(["verify", "--device", "cpu", "--json"])
        .arg(reference)
        .arg(module)
        .output()
        .expect("drtc runs");
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)))
}
