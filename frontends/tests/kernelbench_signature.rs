//! Lowers every KernelBench level-1 and level-2 task and every seed program in
//! `data/seeds/`, and compares each `--signature` with what PyTorch itself reports for the
//! same file (meta device, `python_helpers/signature.py`, one batched Python process).
//!
//! A program passes when inputs, parameters (state_dict names and shapes) and outputs agree
//! exactly. A program may fail to lower only with a "random at run time" error, and only if
//! PyTorch's own run of forward called a random op; any other failure fails the test.

use drtc_frontends::python::FrontendError;
use drtc_frontends::{lower, split_programs, Signature};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The Python with torch that drtc uses, if there is one.
fn python() -> Option<String> {
    let py = drtc_env::PythonEnv::locate(&drtc_env::DrtcHome::from_env())
        .ok()?
        .python
        .display()
        .to_string();
    let ok = Command::new(&py)
        .args(["-c", "import torch"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    ok.then_some(py)
}

/// One program to check: where it is, its text, and its group in the report.
struct Case {
    group: &'static str,
    path: PathBuf,
    line: Option<usize>,
    label: String,
    text: String,
}

fn cases() -> Vec<Case> {
    let mut out = vec![];
    let shared = workspace().join("../shared/kernelbench");
    for group in ["level1", "level2"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(shared.join(group))
            .unwrap_or_else(|e| panic!("cannot read {group} tasks: {e}"))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "py"))
            .collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).expect("task file");
            let label = format!(
                "{group}/{}",
                path.file_name().unwrap_or_default().to_string_lossy()
            );
            out.push(Case {
                group,
                path,
                line: None,
                label,
                text,
            });
        }
    }
    let seeds = workspace().join("data/seeds");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&seeds)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    for path in files {
        let contents = std::fs::read_to_string(&path).expect("seed file");
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        for p in split_programs(&name, &contents) {
            let p = p.unwrap_or_else(|(e, p)| panic!("{}: {e}", p.name));
            out.push(Case {
                group: "seeds",
                path: path.clone(),
                line: p.line,
                label: p.name,
                text: p.text,
            });
        }
    }
    out
}

fn reference(py: &str, cases: &[Case]) -> Vec<Value> {
    let helper = workspace().join("frontends/python_helpers/signature.py");
    let mut child = Command::new(py)
        .arg(helper)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the reference helper");
    let mut requests = String::new();
    for c in cases {
        let req = serde_json::json!({"path": c.path.to_string_lossy(), "line": c.line});
        requests.push_str(&req.to_string());
        requests.push('\n');
    }
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(requests.as_bytes())
        .expect("write requests");
    let out = child.wait_with_output().expect("reference helper output");
    let replies: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("reply is JSON"))
        .collect();
    assert_eq!(
        replies.len(),
        cases.len(),
        "the helper answered {} of {} requests",
        replies.len(),
        cases.len()
    );
    replies
}

#[test]
fn signatures_agree_with_pytorch() {
    let Some(py) = python() else {
        println!("SKIPPED: no Python with torch found (set DRTC_PYTHON or install /root/.cache/drtc/venv)");
        return;
    };
    let cases = cases();
    let refs = reference(&py, &cases);
    let mut problems = vec![];
    let mut random_failures = vec![];
    let mut counts: Vec<(&str, usize, usize)> = vec![];
    for (case, reply) in cases.iter().zip(&refs) {
        let total = match counts.iter_mut().find(|c| c.0 == case.group) {
            Some(c) => c,
            None => {
                counts.push((case.group, 0, 0));
                counts.last_mut().expect("just pushed")
            }
        };
        total.2 += 1;
        let Some(expected) = reply.get("ok") else {
            problems.push(format!(
                "{}: PyTorch itself fails: {}",
                case.label, reply["error"]
            ));
            continue;
        };
        let random = expected["random"].as_array().is_some_and(|r| !r.is_empty());
        match lower(&case.text) {
            Ok(l) => {
                let errors: Vec<String> = drtc_ir::verify(&l.graph)
                    .iter()
                    .filter(|e| e.is_error())
                    .map(|e| e.to_string())
                    .collect();
                if !errors.is_empty() {
                    problems.push(format!(
                        "{}: the graph does not verify: {errors:?}",
                        case.label
                    ));
                    continue;
                }
                if random {
                    problems.push(format!(
                        "{}: forward is random in PyTorch ({}) but drtc lowered it",
                        case.label, expected["random"]
                    ));
                    continue;
                }
                let ours: Value = serde_json::from_str(&Signature::of(&l.graph).to_json())
                    .expect("signature JSON");
                let mut mismatch = vec![];
                for key in ["inputs", "params", "outputs"] {
                    if ours[key] != expected[key] {
                        mismatch.push(format!(
                            "{key}: drtc {} vs torch {}",
                            ours[key], expected[key]
                        ));
                    }
                }
                if mismatch.is_empty() {
                    total.1 += 1;
                } else {
                    problems.push(format!("{}: {}", case.label, mismatch.join("; ")));
                }
            }
            Err(e @ FrontendError::Random { .. }) if random => {
                random_failures.push(format!("{}: {e}", case.label));
            }
            Err(e) => problems.push(format!(
                "{}:\n{}",
                case.label,
                e.render(&case.label, &case.text)
            )),
        }
    }
    for (group, pass, total) in &counts {
        println!("{group}: {pass}/{total} signatures agree with PyTorch");
    }
    for f in &random_failures {
        println!("expected failure (random at run time): {f}");
    }
    assert!(
        counts.iter().any(|c| c.0 == "seeds"),
        "no seed programs found in data/seeds"
    );
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
