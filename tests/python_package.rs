//! The Python package end to end: builds the wheel with maturin (dev profile, so the
//! workspace's debug artifacts are reused), installs it into a scratch directory (never
//! into drtc's environment), and runs its pytest suite (python/tests) with drtc's Python.
//! `drtc setup` installs maturin, pytest and pyarrow (data/runtime/requirements.txt).

#[path = "support/wheel.rs"]
mod wheel;

use drtc::verifier::{DrtcHome, PythonEnv};
use std::path::Path;
use std::process::Command;
use wheel::run;

#[test]
fn python_package_builds_imports_and_passes_its_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let home = DrtcHome::from_env();
    let python = PythonEnv::locate(&home)
        .expect("a Python environment (run `drtc setup`)")
        .python;
    let missing = PythonEnv {
        python: python.clone(),
        source: drtc::verifier::PythonSource::EnvVar,
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
    let site = wheel::build_and_install(&python, scratch.path());
    let report = run(
        "pytest",
        Command::new(&python)
            .args([
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-q",
                "-rA",
                "--durations=25",
            ])
            .arg(root.join("python/tests"))
            .current_dir(scratch.path())
            .env("PYTHONPATH", &site)
            .env("DRTC_BIN", env!("CARGO_BIN_EXE_drtc")),
    );
    println!("{report}");
    assert!(report.contains(" passed"), "{report}");
    assert!(!report.contains(" failed"), "{report}");
}
