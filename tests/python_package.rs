//! The Python package end to end: builds the wheel with maturin (dev profile, so the
//! workspace's debug artifacts are reused), installs it into a scratch directory (never
//! into drtc's environment), and runs its pytest suite (python/tests) with drtc's Python.
//! `drtc setup` installs maturin, pytest and pyarrow (data/runtime/requirements.txt).

use drtc::runtime::{DrtcHome, PythonEnv};
use std::path::Path;
use std::process::Command;

fn run(what: &str, cmd: &mut Command) -> String {
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

#[test]
fn python_package_builds_imports_and_passes_its_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let home = DrtcHome::from_env();
    let python = PythonEnv::locate(&home)
        .expect("a Python environment (run `drtc setup`)")
        .python;
    let missing = PythonEnv {
        python: python.clone(),
        source: drtc::runtime::PythonSource::EnvVar,
    }
    .installed_versions(&["maturin", "pytest", "pyarrow"])
    .expect("package probe");
    let missing: Vec<&str> = missing
        .iter()
        .filter(|(_, v)| v.is_none())
        .map(|(n, _)| n.as_str())
        .collect();
    assert!(
        missing.is_empty(),
        "{} lacks {}: run `drtc setup` (it installs data/runtime/requirements.txt)",
        python.display(),
        missing.join(", ")
    );
    let scratch = tempfile::tempdir().expect("scratch dir");
    let wheels = scratch.path().join("wheels");
    let site = scratch.path().join("site");
    run(
        "maturin build",
        Command::new(&python)
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
            .arg(&python)
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
        Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "--no-deps", "--target"])
            .arg(&site)
            .arg(&wheel),
    );
    let report = run(
        "pytest",
        Command::new(&python)
            .args(["-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA"])
            .arg(root.join("python/tests"))
            .current_dir(scratch.path())
            .env("PYTHONPATH", &site)
            .env("DRTC_BIN", env!("CARGO_BIN_EXE_drtc")),
    );
    println!("{report}");
    assert!(report.contains(" passed"), "{report}");
    assert!(!report.contains(" failed"), "{report}");
}
