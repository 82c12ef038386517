//! One tool, one voice (ARCHITECTURE.md, "The command line"): every subcommand has a long
//! help that ends with the exit statuses (snapshotted, so help text drifts only on
//! purpose), and a set of bad inputs gets one `error:` prefix, a reason and the documented
//! exit status (2 for the input, 1 for a candidate that does not verify).

use std::path::Path;
use std::process::{Command, Output};

fn drtc_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_drtc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("run drtc")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The subcommands `drtc --help` lists (so a new one cannot be left out of these tests).
fn subcommands() -> Vec<String> {
    let o = drtc_in(Path::new("."), &["--help"]);
    let text = stdout(&o);
    let list = text
        .split("Commands:\n")
        .nth(1)
        .expect("a Commands: section")
        .split("\n\n")
        .next()
        .unwrap();
    list.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn every_subcommand_has_a_long_help_with_the_exit_statuses() {
    let names = subcommands();
    assert!(names.len() >= 18, "{names:?}");
    for name in &names {
        let long = drtc_in(Path::new("."), &[name, "--help"]);
        let short = drtc_in(Path::new("."), &[name, "-h"]);
        assert_eq!(long.status.code(), Some(0), "{name}");
        let (long, short) = (stdout(&long), stdout(&short));
        assert_ne!(long, short, "`drtc {name} --help` shows no long help");
        assert!(
            long.len() > short.len() + 200,
            "`drtc {name}`: long help too thin"
        );
        assert!(long.contains("Exit status:"), "`drtc {name} --help`");
        insta::assert_snapshot!(format!("help_{}", name.replace('-', "_")), long);
    }
    let top = stdout(&drtc_in(Path::new("."), &["--help"]));
    assert!(top.contains("Exit status:"), "{top}");
    insta::assert_snapshot!("help_drtc", top);
}

/// Bad inputs, each refused before any work with one `error:` prefix, a reason and exit
/// status 2 (none of these starts Python).
#[test]
fn bad_inputs_are_refused_with_a_reason_and_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("model.py"),
        "import torch\n\ndef fused_operator(x):\n    return [torch.relu(x)]\n\n\
         def get_inputs():\n    return [torch.randn(4, 8)]\n",
    )
    .unwrap();
    std::fs::write(
        d.join("bad.py"),
        "import torch\n\ndef fused_operator(x):\n    y = torch.relu(x\n    return [y]\n",
    )
    .unwrap();
    std::fs::write(
        d.join("bad.drt"),
        "graph @g(%x: f32[4]) {\n  %0 = rleu(%x) : f32[4]\n  return %0\n}\n",
    )
    .unwrap();
    std::fs::write(
        d.join("invalid.drt"),
        "graph @g(%x: f32[4]) {\n  // a comment\n  %0 = relu(%x) : f32[4]\n  \
         %1 = relu(%0) : f32[5]\n  return %1\n}\n",
    )
    .unwrap();
    std::fs::write(d.join("a_file"), "").unwrap();
    std::fs::create_dir(d.join("bench")).unwrap();
    std::fs::copy(d.join("model.py"), d.join("bench/1_relu.py")).unwrap();
    let cases: &[&[&str]] = &[
        &["parse", "bad.py", "--frontend", "native"],
        &["compile", "bad.drt", "-o", "out.py", "--no-verify"],
        &["compile", "missing.py", "-o", "out.py"],
        &["compile", "model.py", "-o", "out.py", "--max-ops", "0"],
        &[
            "compile",
            "model.py",
            "-o",
            "out.py",
            "--samples",
            "3",
            "--turns",
            "2",
        ],
        &["compile", "model.py", "-o", "out.py", "--fallback", "none"],
        &[
            "compile",
            "model.py",
            "-o",
            "out.py",
            "--strict",
            "--no-strict",
        ],
        &[
            "compile",
            "model.py",
            "-o",
            "out.py",
            "--backend",
            "llm",
            "--frontend",
            "export",
        ],
        &[
            "compile",
            "model.py",
            "-o",
            "out.py",
            "--report",
            "no/such/dir/r.json",
        ],
        &["compile", "model.py", "-o", "bench"],
        &["verify", "model.py", "model.py", "--trials", "2"],
        &["verify", "model.py", "model.py", "--set", "batch_size=2"],
        &["parse", "model.py", "--set", "batch_size=2"],
        &["suite", "bench", "--filter", "conv", "--device", "cpu"],
        &[
            "suite",
            "bench",
            "--json",
            "no/such/dir/r.jsonl",
            "--device",
            "cpu",
        ],
        &["synth-report", "model.py", "--plots", "a_file"],
        &["fmt", "bad.drt"],
        // the verifier's finding names the node's line in the text
        &["fmt", "invalid.drt"],
        &["opt", "bad.drt", "--passes", "dce"],
    ];
    let mut transcript = String::new();
    for args in cases {
        let o = drtc_in(d, args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "drtc {args:?}:\n{err}");
        assert!(err.starts_with("error: "), "drtc {args:?}:\n{err}");
        let lower = err.to_lowercase();
        assert!(
            !lower.contains("error: error") && !lower.contains("error: Error"),
            "drtc {args:?}: doubled prefix\n{err}"
        );
        assert!(!d.join("out.py").exists(), "drtc {args:?} wrote a module");
        transcript.push_str(&format!("$ drtc {}\n[exit 2]\n{err}\n", args.join(" ")));
    }
    insta::assert_snapshot!("bad_inputs", transcript);
}
