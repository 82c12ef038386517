//! `drtc suite` as a run that survives: rows written as tasks finish, one-line reasons in
//! the progress lines, a per-task time limit, `--resume`, `--stop-after`, and
//! `drtc suite-report` rebuilding the table from the rows (CPU, Triton's interpreter).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn drtc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_drtc"))
        .args(args)
        .output()
        .expect("run drtc")
}

fn rows(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn row<'a>(rows: &'a [Value], prefix: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["task"].as_str().unwrap().starts_with(prefix))
        .unwrap_or_else(|| panic!("no row for {prefix}: {rows:?}"))
}

const REJECTED: &str = "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    \
def forward(self, x):\n        return torch.linalg.svd(x).S\n\n\ndef get_inputs():\n    \
return [torch.randn(4, 4)]\n\n\ndef get_init_inputs():\n    return []\n";

/// A pointwise program over 2^26 elements: about a minute per call under the interpreter.
const SLOW: &str = "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    \
def forward(self, x):\n        return torch.relu(x) * 2.0\n\n\ndef get_inputs():\n    \
return [torch.randn(8192, 8192)]\n\n\ndef get_init_inputs():\n    return []\n";

/// A program whose inputs no machine can hold (2^50 floats): out of memory, every time.
const HUGE: &str = "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    \
def forward(self, x):\n        return torch.relu(x)\n\n\ndef get_inputs():\n    \
return [torch.randn(33554432, 33554432)]\n\n\ndef get_init_inputs():\n    return []\n";

#[test]
fn suite_rows_survive_time_limits_resume_and_rebuild_the_table() {
    let dir = std::env::temp_dir().join(format!("drtc-suite-cli-{}", std::process::id()));
    let tasks = dir.join("tasks");
    std::fs::create_dir_all(&tasks).unwrap();
    // 64k Triton programs per call under the interpreter: far past a 20 s task limit
    std::fs::write(tasks.join("1_slow.py"), SLOW).unwrap();
    std::fs::copy(
        root().join("tests/data/verifier/kb_linear_bn.py"),
        tasks.join("2_linear_bn.py"),
    )
    .unwrap();
    std::fs::write(tasks.join("3_rejected.py"), REJECTED).unwrap();
    std::fs::write(tasks.join("4_huge.py"), HUGE).unwrap();
    let json = dir.join("r.jsonl");
    let md = dir.join("r.md");
    let (t, j, m) = (
        tasks.to_str().unwrap(),
        json.to_str().unwrap(),
        md.to_str().unwrap(),
    );
    let common = [
        "suite",
        t,
        "--device",
        "cpu",
        "--jobs",
        "2",
        // rows and limits with the native parser: `3_rejected` is what it refuses (the
        // export frontend would run `svd` as a library op; tests/export_frontend.rs)
        "--frontend",
        "native",
        "--json",
        j,
        "--baseline",
        "compile",
        "--torch-precision",
        "high",
        "--search",
        "--cuda-graphs",
        "on",
    ];

    let out = drtc(&[&common[..], &["--task-timeout", "20", "--markdown", m]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("timing, baselines and search need a GPU"),
        "{stderr}"
    );
    let r = rows(&json);
    assert_eq!(r.len(), 4);
    for x in &r {
        assert_eq!(x["device"], "cpu");
        assert_eq!(x["baseline"], "compile");
        assert_eq!(x["torch_precision"], "high");
        assert_eq!(x["precision"], "fp32");
        assert_eq!(x["jobs"], 2);
        // search runs on a GPU only: the rows say it did not run
        assert_eq!(x["search"], "off");
        assert_eq!(x["cuda_graphs"], "on");
    }
    // the option reaches the compiler: on the CPU interpreter graphs are a no-op, and say so
    let g = &row(&r, "2_")["graphs"];
    assert_eq!(g["mode"], "on", "{g}");
    assert_eq!(g["enabled"], false, "{g}");
    assert!(
        g["reason"].as_str().unwrap().contains("CPU interpreter"),
        "{g}"
    );
    let slow = row(&r, "1_");
    assert_eq!(slow["status"], "timeout", "{slow}");
    assert!(
        slow["reasons"].to_string().contains("--task-timeout 20 s"),
        "{slow}"
    );
    assert_eq!(row(&r, "2_")["status"], "verified");
    // where the verification's time went
    let phases = &row(&r, "2_")["verification_phases"];
    assert!(phases["trials_s"].as_f64().unwrap_or(0.0) > 0.0, "{phases}");
    assert_eq!(row(&r, "3_")["status"], "frontend");
    // Out of memory beside another job is retried alone before it counts.
    let huge = row(&r, "4_");
    assert_eq!(huge["status"], "failed", "{huge}");
    assert!(
        huge["reasons"][0]
            .as_str()
            .unwrap()
            .starts_with("out_of_memory: "),
        "{huge}"
    );
    assert!(
        huge["oom_retried_alone"]["first_attempt"][0]
            .as_str()
            .unwrap()
            .contains("ran out of memory"),
        "{huge}"
    );
    // one line per finished task, with the reason
    let progress: Vec<&str> = stderr.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(progress.len(), 4, "{stderr}");
    assert!(
        progress
            .iter()
            .any(|l| l.contains("3_rejected: frontend: ") && l.contains("torch.linalg.svd")),
        "{stderr}"
    );
    assert!(
        progress.iter().any(|l| l.contains("1_slow: timeout: ")),
        "{stderr}"
    );
    let table = std::fs::read_to_string(&md).unwrap();
    assert!(table.contains("| 2_linear_bn | verified |"), "{table}");

    // A run stopped while writing: one finished row, one cut line. Resuming runs the rest.
    let kept = std::fs::read_to_string(&json)
        .unwrap()
        .lines()
        .find(|l| l.contains("2_linear_bn"))
        .unwrap()
        .to_string();
    std::fs::write(&json, format!("{kept}\n{{\"task\": \"3_rej")).unwrap();
    let out = drtc(
        &[
            &common[..],
            &["--resume", "--filter", "2_", "--filter", "3_"],
        ]
        .concat(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("resuming: 1 task(s) already in the results, 1 to run"),
        "{stderr}"
    );
    let r = rows(&json);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0]["task"], "2_linear_bn");
    assert_eq!(r[1]["task"], "3_rejected");

    // Other settings never mix into the same file.
    let out = drtc(&[
        "suite",
        t,
        "--device",
        "cpu",
        "--json",
        j,
        "--resume",
        "--baseline",
        "compile",
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("torch_precision: file \"high\""),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(rows(&json).len(), 2);

    // --stop-after: nothing new starts; the exit status says tasks are left.
    let out = drtc(&[&common[..], &["--resume", "--stop-after", "0"]].concat());
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("2 task(s) not run"));

    // The table comes back from the rows alone.
    let report = drtc(&["suite-report", j]);
    assert!(report.status.success());
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(text.contains("| 2_linear_bn | verified |"), "{text}");
    assert!(
        text.contains("2 programs on cpu: 1 verified (accuracy 50.0%)"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
