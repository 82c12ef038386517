//! The verification worker compiles a drtc module's kernels concurrently before its first
//! trial, from a dry run of the forward (`drtc_worker/precompile.py`). Without a GPU the
//! compile itself cannot run: `tests/check_precompile.py` stands in for it and checks
//! what the dry run records and leaves behind.

mod support {
    pub mod python_check;
}

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::python_check::{case, run_check};

#[test]
fn the_dry_run_records_every_launch_and_leaves_the_module_as_it_was() {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("precompile");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // a convolution, training-mode batch norm (a buffer the dry run's PyTorch op updates),
    // a pooling and a group norm: several kernels; CUDA graphs on
    let module = d.join("module.py");
    let out = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .arg("compile")
        .arg(root.join("tests/data/precompile_model.py"))
        .args([
            "--device",
            "cuda",
            "--no-verify",
            "--cuda-graphs",
            "on",
            "-o",
        ])
        .arg(&module)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = run_check("check_precompile.py", &[&module])
        .pop()
        .expect("one JSON line");
    let compiled = r["compiled"].as_array().unwrap();
    assert!(compiled.len() >= 2, "{r}");
    assert!(compiled.iter().all(|c| c[1] == true), "compile only: {r}");
    assert_eq!(r["answer"][0], compiled.len(), "{r}");
    assert_eq!(r["graphed_restored"], true, "{r}");
    assert_eq!(r["kernels_restored"], true, "{r}");
    assert_eq!(
        r["captures"], 0,
        "no graph captured from launches that did not run: {r}"
    );
    assert_eq!(r["state_is_the_references"], true, "{r}");
}

#[test]
fn an_untrusted_answer_compiles_ahead_in_its_own_process_and_is_loaded_again() {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("compile_ahead");
    let _ = std::fs::remove_dir_all(&d);
    let cases = run_check("check_compile_ahead.py", &[&d]);
    let case = |name: &str| case(&cases, name);
    for name in ["two kernels and an autotuned one", "host loop"] {
        let c = case(name);
        // two plain launches and one per autotune config, each compiled, none launched
        let compiled = c["compiled"].as_array().unwrap();
        assert_eq!(compiled.len(), 7, "{c}");
        assert!(compiled.iter().all(|k| k[1] == true), "compile only: {c}");
        let blocks: Vec<&Value> = compiled
            .iter()
            .filter(|k| k[0] == "negate")
            .map(|k| &k[2])
            .collect();
        assert_eq!(
            blocks,
            [32, 64, 128, 256, 512],
            "every autotune config: {c}"
        );
        assert_eq!(c["reply"]["launches"], 7, "{c}");
        // the instance that ran the dry run is gone; the trials get a fresh one
        assert_eq!(c["old_module_ran"], 1, "{c}");
        assert_eq!(c["reloaded"], true, "{c}");
        assert_eq!(c["fresh_module_state"], true, "{c}");
        assert_eq!(c["restored"], true, "{c}");
    }
    // the host loop after the launches ends at the dry run's timer (1 s here)
    let looped = case("host loop")["seconds"].as_f64().unwrap();
    assert!((0.9..10.0).contains(&looped), "{looped}");
    let one = case("one kernel");
    assert_eq!(one["reply"]["launches"], 0, "{one}");
    assert_eq!(one["reloaded"], false, "{one}");
    assert_eq!(one["old_module_ran"], 0, "no dry run: {one}");
}
