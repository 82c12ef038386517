//! The README's verl recipe against verl itself: python/tests/test_verl.py drives verl's
//! reward loop worker, its `naive` reward manager, `load_reward_manager` and `RLHFDataset`
//! with drtc's reward and parquet, on the CPU, with a tokenizer built in the test.
//!
//! verl (python/tests/requirements-verl.txt) is installed once into a venv layered on
//! drtc's environment (a `.pth` file puts drtc's site-packages on its path, so torch and
//! triton are not installed twice), under the drtc home in `test-envs/verl-<hash>`; the
//! first run downloads about 700 MB from PyPI (measured: 4.5 minutes on a 2-core machine).

#[path = "support/wheel.rs"]
mod wheel;

use drtc::verifier::{DrtcHome, PythonEnv};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use wheel::run;

/// The layered venv with verl, made on first use; its Python.
fn verl_python(home: &DrtcHome, python: &Path, requirements: &Path) -> PathBuf {
    let pins = std::fs::read_to_string(requirements).expect("requirements-verl.txt");
    let mut h = std::collections::hash_map::DefaultHasher::new();
    pins.hash(&mut h);
    let dir = home
        .dir("test-envs")
        .expect("the drtc home is writable")
        .join(format!("verl-{:016x}", h.finish()));
    let venv_python = dir.join("bin").join("python");
    let ready = dir.join(".ready");
    if ready.exists() {
        return venv_python;
    }
    let _ = std::fs::remove_dir_all(&dir);
    run(
        "python -m venv",
        Command::new(python).arg("-m").arg("venv").arg(&dir),
    );
    let site = |py: &Path| {
        run(
            "site-packages",
            Command::new(py).args([
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            ]),
        )
        .trim()
        .to_string()
    };
    let drtc_site = site(python);
    let own_site = PathBuf::from(site(&venv_python));
    std::fs::write(own_site.join("drtc_runtime.pth"), format!("{drtc_site}\n"))
        .expect("write the .pth file");
    run(
        "pip install -r requirements-verl.txt",
        Command::new(&venv_python)
            .args(["-m", "pip", "install", "--quiet", "-r"])
            .arg(requirements),
    );
    std::fs::write(&ready, pins).expect("mark the venv ready");
    venv_python
}

#[test]
fn verls_reward_loop_and_dataset_run_drtcs_reward_and_parquet() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let home = DrtcHome::from_env();
    let python = PythonEnv::locate(&home)
        .expect("a Python environment (run `drtc setup`)")
        .python;
    let verl = verl_python(
        &home,
        &python,
        &root.join("python/tests/requirements-verl.txt"),
    );
    let scratch = tempfile::tempdir().expect("scratch dir");
    let site = wheel::build_and_install(&python, scratch.path());
    let report = run(
        "pytest test_verl.py",
        Command::new(&verl)
            .args(["-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA"])
            .arg(root.join("python/tests/test_verl.py"))
            .current_dir(scratch.path())
            .env("PYTHONPATH", &site)
            .env("DRTC_REQUIRE_VERL", "1")
            .env("DRTC_PYTHON", &python)
            .env("HF_HUB_OFFLINE", "1")
            .env("DRTC_BIN", env!("CARGO_BIN_EXE_drtc")),
    );
    println!("{report}");
    assert!(report.contains(" passed"), "{report}");
    assert!(
        !report.contains(" failed") && !report.contains(" skipped"),
        "{report}"
    );
}
