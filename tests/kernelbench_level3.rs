//! KernelBench level 3 (whole models) through the export frontend, shrunk by `--shrink`'s
//! size rules, under Triton's CPU interpreter: the few tasks small enough for CI (an MLP
//! over a list of layer sizes, a multi-layer GRU run by PyTorch as a reported library op,
//! a DenseNet transition layer: training-mode BatchNorm, conv and pooling in an `nn.Sequential`,
//! a vanilla RNN cell whose hidden state is a tensor attribute assigned in forward). Each must be read by the export
//! frontend (the native parser refuses their `for` loops and `nn.Sequential`s) and verify.
//! The figure for all 25 tasks comes from `drtc suite ../shared/kernelbench/level3 --device
//! cpu --shrink` (see the report of the export frontend's branch).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Tasks small enough for CI once shrunk, and the library ops each must report.
const TASKS: &[(&str, &[&str])] = &[
    ("1_MLP", &[]),
    ("39_GRU", &["aten.gru.input"]),
    ("13_DenseNet121TransitionLayer", &[]),
    // the hidden state is a plain tensor attribute, assigned in forward: module state
    ("33_VanillaRNN", &[]),
];

fn level3() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/kernelbench/level3")
}

#[test]
fn small_level3_tasks_export_compile_and_verify() {
    let dir = level3();
    assert!(
        dir.is_dir(),
        "{} is missing: the benchmark must sit beside the repository",
        dir.display()
    );
    let out = std::env::temp_dir().join(format!("drtc-kb-level3-{}.jsonl", std::process::id()));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_drtc"));
    cmd.args([
        "suite",
        dir.to_str().unwrap(),
        "--device",
        "cpu",
        "--shrink",
        "--jobs",
        "2",
    ]);
    for (t, _) in TASKS {
        cmd.args(["--filter", t]);
    }
    let status = cmd.arg("--json").arg(&out).status().expect("drtc runs");
    assert!(status.success(), "drtc suite failed on level 3");
    let rows: Vec<Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), TASKS.len(), "{rows:?}");
    for (task, calls) in TASKS {
        let r = rows
            .iter()
            .find(|r| r["task"].as_str().is_some_and(|n| n == *task))
            .unwrap_or_else(|| panic!("no row for {task}"));
        println!(
            "{task}: {} ({} kernels, library calls {})",
            r["status"], r["kernels"], r["frontend_used"]["library_calls"]
        );
        assert_eq!(r["status"], "verified", "{task}: {r}");
        assert_eq!(r["frontend_used"]["name"], "export", "{task}: {r}");
        let got: Vec<&str> = r["frontend_used"]["library_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["target"].as_str().unwrap())
            .collect();
        assert_eq!(&got, calls, "{task}");
        if *task == "33_VanillaRNN" {
            let u = &r["frontend_used"]["state_updates"];
            assert_eq!(u[0]["name"], "hidden", "{task}: {r}");
            assert_eq!(u[0]["assigned"], true, "{task}: {r}");
        }
    }
    let _ = std::fs::remove_file(&out);
}
