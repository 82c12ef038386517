//! The Python package for tests: builds the wheel with maturin (dev profile, so the
//! workspace's debug artifacts are reused) and installs it into a scratch directory
//! (never into drtc's environment). `run` runs a command and returns its output, failing
//! the test with that output when it fails.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn run(what: &str, cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{text}",
        out.status
    );
    text
}

/// Builds the abi3 wheel with `python`'s maturin and installs it (no dependencies) into
/// `scratch/site`; returns that directory, for `PYTHONPATH`.
pub fn build_and_install(python: &Path, scratch: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let wheels = scratch.join("wheels");
    let site = scratch.join("site");
    run(
        "maturin build",
        Command::new(python)
            .args([
                "-m",
                "maturin",
                "build",
                "--profile",
                "dev",
                "--quiet",
                "-m",
            ])
            .arg(root.join("python/Cargo.toml"))
            .arg("-i")
            .arg(python)
            .arg("-o")
            .arg(&wheels),
    );
    let wheel = std::fs::read_dir(&wheels)
        .expect("wheel dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .expect("maturin wrote a wheel");
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.contains("abi3"), "not an abi3 wheel: {name}");
    run(
        "pip install",
        Command::new(python)
            .args(["-m", "pip", "install", "--quiet", "--no-deps", "--target"])
            .arg(&site)
            .arg(&wheel),
    );
    site
}
