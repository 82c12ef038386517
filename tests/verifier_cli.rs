//! The verifier's subcommands as a user runs them: exit codes, one-line reasons, `--json`,
//! CPU refusal of `bench-pair`, `devices` without a GPU, `setup` plans and no-ops.

use std::path::PathBuf;
use std::process::{Command, Output};

fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/verifier")).join(name)
}

fn drtc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_drtc"))
        .args(args)
        .output()
        .expect("run drtc")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn has_gpu() -> bool {
    matches!(
        drtc::verifier::devices::scan(),
        drtc::verifier::DeviceScan::Gpus(ref g) if !g.is_empty()
    )
}

#[test]
fn verify_exit_codes_reasons_and_json() {
    let seed = data("seed_relu_add.py");
    let seed = seed.to_str().unwrap();
    let ok = drtc(&[
        "verify",
        "--device",
        "cpu",
        seed,
        data("ok_relu_add.py").to_str().unwrap(),
    ]);
    assert!(ok.status.success(), "{}", text(&ok));
    assert!(
        text(&ok).starts_with("verified: 5 trials on cpu (seed)"),
        "{}",
        text(&ok)
    );

    let bad = drtc(&[
        "verify",
        "--device",
        "cpu",
        seed,
        data("bad_shape.py").to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(1));
    let out = text(&bad);
    let lines: Vec<&str> = out.lines().collect();
    // the reason, then where the candidate ran (its own sandboxed process)
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[2].starts_with("isolated in its own process"), "{out}");
    // its tensors cross through the shared-memory arenas, not the pipe
    assert!(lines[2].contains("tensors cross by shared memory"), "{out}");
    assert!(
        lines[1]
            .trim_start()
            .starts_with("shape: output 0: shape [185]"),
        "{out}"
    );

    let json = drtc(&[
        "verify",
        "--device",
        "cpu",
        "--json",
        "--trials",
        "6",
        seed,
        data("bad_mutate.py").to_str().unwrap(),
    ]);
    assert_eq!(json.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON report");
    assert_eq!(v["verified"], false);
    assert_eq!(v["trials"].as_array().unwrap().len(), 6);
    assert_eq!(v["failures"][0]["check"], "inputs_modified");
}

/// A reference that fails on its own is the input's fault (exit 2), not the candidate's
/// (exit 1), and the message says to fix the reference.
#[test]
fn a_broken_reference_exits_2_and_a_wrong_candidate_1() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken_ref.py");
    std::fs::write(
        &broken,
        "import torch\n\ndef get_inputs():\n    return [torch.randn(4)]\n\n\
         def fused_operator(x):\n    raise RuntimeError('the reference is broken')\n",
    )
    .unwrap();
    let o = drtc(&[
        "verify",
        "--device",
        "cpu",
        broken.to_str().unwrap(),
        data("ok_relu_add.py").to_str().unwrap(),
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("fix the reference"), "{t}");
    let o = drtc(&[
        "verify",
        "--device",
        "cpu",
        data("seed_relu_add.py").to_str().unwrap(),
        data("bad_values.py").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
}

/// `verify --set` runs the reference with the constant changed and leaves no copy of it
/// behind under the drtc home.
#[test]
fn verify_with_set_leaves_no_reference_copy_behind() {
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("rows.py");
    std::fs::write(
        &reference,
        "import torch\n\nROWS = 5\n\n\ndef get_inputs():\n    return [torch.randn(ROWS, 37), \
         torch.randn(37)]\n\n\ndef fused_operator(x, b):\n    return [torch.relu(x + b) * 3.0]\n",
    )
    .unwrap();
    let home = dir.path().join("home");
    let o = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .env("DRTC_HOME", &home)
        .env("DRTC_SERVICE", "off")
        .env(
            "DRTC_PYTHON",
            drtc::verifier::PythonEnv::locate(&drtc::verifier::DrtcHome::from_env())
                .expect("python")
                .python,
        )
        .args(["verify", "--device", "cpu", "--set", "ROWS=3"])
        .arg(&reference)
        .arg(data("ok_relu_add.py"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let left: Vec<_> = std::fs::read_dir(home.join("programs"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn seed_references_can_be_jsonl_lines() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(data("seed_relu_add.py")).unwrap();
    let jsonl = dir.path().join("seeds.jsonl");
    let line = serde_json::json!({"pytorch": src, "difficulty": 1});
    std::fs::write(&jsonl, format!("{{\"pytorch\": \"x\"}}\n{line}\n")).unwrap();
    let cand = data("ok_relu_add.py");
    let o = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .env("DRTC_HOME", dir.path())
        .env(
            "DRTC_PYTHON",
            drtc::verifier::PythonEnv::locate(&drtc::verifier::DrtcHome::from_env())
                .expect("python")
                .python,
        )
        .args(["verify", "--device", "cpu", "--line", "2"])
        .arg(&jsonl)
        .arg(&cand)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let no_line = drtc(&["verify", jsonl.to_str().unwrap(), cand.to_str().unwrap()]);
    assert!(!no_line.status.success());
    assert!(text(&no_line).contains("--line N"), "{}", text(&no_line));
}

#[test]
fn missing_environment_says_how_to_fix_it() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .env("DRTC_HOME", dir.path())
        .env_remove("DRTC_PYTHON")
        .args(["verify", "--device", "cpu"])
        .arg(data("seed_relu_add.py"))
        .arg(data("ok_relu_add.py"))
        .output()
        .unwrap();
    // drtc's runtime cannot start: exit status 3 (not the candidate's 1)
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("run `drtc setup`"), "{}", text(&o));

    // An interpreter without torch: the message names what is missing and the command.
    let bare = dir.path().join("bare-python");
    std::fs::write(&bare, "#!/bin/sh\nexec python3 -S -I \"$@\"\n").unwrap();
    std::fs::set_permissions(&bare, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .env("DRTC_HOME", dir.path())
        .env("DRTC_PYTHON", &bare)
        .args(["verify", "--device", "cpu"])
        .arg(data("seed_relu_add.py"))
        .arg(data("ok_relu_add.py"))
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(3), "{t}");
    assert!(t.contains("lacks numpy, torch, triton"), "{t}");
    assert!(t.contains("-m pip install"), "{t}");
}

#[test]
fn bench_pair_refuses_without_gpu_and_devices_says_cpu_mode() {
    if has_gpu() {
        return; // covered by bench/gpu_runtime_check.sh on GPU machines
    }
    let o = drtc(&[
        "bench-pair",
        data("seed_relu_add.py").to_str().unwrap(),
        data("ok_relu_add.py").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("needs a CUDA GPU"), "{}", text(&o));
    assert!(
        text(&o).contains("drtc verify --device cpu"),
        "{}",
        text(&o)
    );

    let d = drtc(&["devices"]);
    assert!(d.status.success());
    assert!(text(&d).contains("CPU mode applies"), "{}", text(&d));
    let j = drtc(&["devices", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(v["status"], "none");

    let v = drtc(&[
        "verify",
        "--device",
        "cuda",
        data("seed_relu_add.py").to_str().unwrap(),
        data("ok_relu_add.py").to_str().unwrap(),
    ]);
    assert!(!v.status.success());
    assert!(text(&v).contains("no CUDA GPU"), "{}", text(&v));
}

#[test]
fn setup_plans_a_fresh_env_and_is_a_no_op_when_up_to_date() {
    let fresh = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .env("DRTC_HOME", fresh.path())
        .args(["setup", "--dry-run"])
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("venv"), "{t}");
    assert!(
        t.contains("install") && t.contains("requirements.txt"),
        "{t}"
    );
    assert!(
        !fresh.path().join("venv").exists(),
        "dry run created nothing"
    );

    // A venv whose python is the one the tests use: nothing to do, when it holds the pins.
    let python = drtc::verifier::PythonEnv::locate(&drtc::verifier::DrtcHome::from_env())
        .expect("python")
        .python;
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join("venv/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let py = bin.join("python");
    std::fs::write(
        &py,
        format!("#!/bin/sh\nexec {} \"$@\"\n", python.display()),
    )
    .unwrap();
    std::fs::set_permissions(&py, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let h = drtc::verifier::DrtcHome {
        root: home.path().to_path_buf(),
    };
    let outdated = drtc::verifier::setup::outdated(&h).unwrap();
    let start = std::time::Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .env("DRTC_HOME", home.path())
        .args(["setup", "--dry-run"])
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    if outdated.is_empty() {
        assert!(t.contains("is up to date"), "{t}");
        assert!(start.elapsed().as_secs() < 10, "the no-op is fast");
    } else {
        assert!(t.contains("pip install"), "{t}");
        assert!(!t.contains(" venv "), "the venv exists already: {t}");
    }
}
