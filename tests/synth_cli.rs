//! `drtc synth` and `drtc synth-report` end to end: seed-format lines with metadata,
//! reproducibility for a seed, PyTorch validation, the report and its PNG charts.

use std::process::Command;

fn drtc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_drtc"))
}

fn synth(dir: &std::path::Path, name: &str, extra: &[&str]) -> Vec<serde_json::Value> {
    let out = dir.join(name);
    let st = drtc()
        .args([
            "synth",
            "--count",
            "6",
            "--seed",
            "9",
            "--flops",
            "2^10..2^20",
            "--quiet",
            "-o",
        ])
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn synth_writes_reproducible_validated_seed_lines() {
    let dir = std::env::temp_dir().join(format!("drtc-synth-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = synth(&dir, "a.jsonl", &["--level", "3", "--validate", "cpu"]);
    let b = synth(&dir, "b.jsonl", &["--ops", "5"]);
    let c = synth(&dir, "c.jsonl", &["--ops", "5", "--jobs", "1"]);
    assert_eq!(
        b, c,
        "a seed must give the same programs, whatever the thread count"
    );
    assert_eq!(a.len(), 6);
    for r in &a {
        assert_eq!(r["num_ops"], 5);
        assert_eq!(r["difficulty"], 3);
        let py = r["pytorch"].as_str().unwrap();
        assert!(py.contains("def get_inputs():") && py.contains("def fused_operator("));
        assert!(r["flops"].as_u64().unwrap() <= 1 << 20);
        assert_eq!(r["ops"].as_array().unwrap().len(), 5);
    }
    // validation does not change what a seed makes when nothing is rejected
    let texts = |v: &[serde_json::Value]| -> Vec<String> {
        v.iter().map(|r| r["hash"].to_string()).collect()
    };
    let (ta, tb) = (texts(&a), texts(&b));
    let shared = ta.iter().filter(|h| tb.contains(h)).count();
    assert!(
        shared >= 5,
        "same seed, different programs: {ta:?} vs {tb:?}"
    );

    let plots = dir.join("plots");
    let rep = drtc()
        .args(["synth-report"])
        .arg(dir.join("a.jsonl"))
        .arg("--plots")
        .arg(&plots)
        .output()
        .unwrap();
    assert!(rep.status.success());
    let text = String::from_utf8_lossy(&rep.stdout);
    assert!(text.contains("programs: 6"), "{text}");
    assert!(text.contains("distinct (canonical IR hash): 6"), "{text}");
    for f in [
        "ops.png",
        "op_pairs.png",
        "dims.png",
        "flops.png",
        "ranks.png",
    ] {
        let bytes = std::fs::read(plots.join(f)).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_arguments_are_errors() {
    let st = drtc()
        .args(["synth", "--ops", "2", "--flops", "9..3", "-o", "/dev/null"])
        .output()
        .unwrap();
    assert!(!st.status.success());
    assert!(String::from_utf8_lossy(&st.stderr).contains("exceeds the maximum"));
    let st = drtc()
        .args([
            "synth",
            "--ops",
            "2",
            "--op-set",
            "relu,frob",
            "-o",
            "/dev/null",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&st.stderr).contains("unknown op `frob`"));
}

#[test]
fn a_flop_floor_gives_every_program_and_names_the_excluded_ops_once() {
    // the reproduction (it wrote 111 of 120 programs and exited 1)
    let dir = std::env::temp_dir().join(format!("drtc-synth-floor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("s.jsonl");
    let st = drtc()
        .args([
            "synth",
            "--ops",
            "1",
            "--count",
            "120",
            "--flops",
            "100000..20000000",
            "--quiet",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(st.status.success(), "{err}");
    let lines = std::fs::read_to_string(&out).unwrap();
    assert_eq!(lines.lines().count(), 120, "{err}");
    assert_eq!(
        err.matches("excludes 5 ops without FLOPs").count(),
        1,
        "{err}"
    );
    assert!(err.contains("transpose, triu, tril, cat, stack"), "{err}");
    for l in lines.lines() {
        let r: serde_json::Value = serde_json::from_str(l).unwrap();
        let op = r["ops"][0].as_str().unwrap();
        assert!(!["transpose", "triu", "tril", "cat", "stack"].contains(&op));
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_floor_no_op_can_meet_is_refused_before_solving() {
    let dir = std::env::temp_dir().join(format!("drtc-synth-nofloor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("s.jsonl");
    let st = drtc()
        .args([
            "synth",
            "--ops",
            "2",
            "--count",
            "4",
            "--op-set",
            "transpose,cat,flip",
            "--flops",
            "1000..100000",
            "--quiet",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(!st.status.success());
    assert!(err.contains("no op of the op set has FLOPs"), "{err}");
    assert!(err.contains("--flops 0..100000"), "{err}");
    assert!(!out.exists(), "nothing is solved or written");
    std::fs::remove_dir_all(&dir).ok();
}

fn rows(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn default_range_programs_are_proved_not_run_and_written_chunk_by_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big.jsonl");
    // the default FLOP range (2^34..2^35), stderr a pipe: progress comes as lines
    let run = drtc()
        .args(["synth", "--ops", "3", "--count", "5", "--seed", "4"])
        .args(["--chunk", "2", "--progress-every", "0", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    for k in ["2/5", "4/5", "5/5"] {
        assert!(
            err.contains(&format!("synth: {k} programs written")),
            "{err}"
        );
    }
    let big = rows(&out);
    assert_eq!(big.len(), 5);
    // on the CPU beyond the run budget: the meta run plus the interval proof (a machine
    // with a GPU runs them there)
    let gpu = big.iter().all(|r| r["validation"] == "run-cuda");
    for r in &big {
        assert!(r["flops"].as_u64().unwrap() > 1 << 28, "{r}");
        assert!(gpu || r["validation"] == "meta+interval", "{r}");
    }
    assert!(
        gpu || err.contains("validated 5 programs (5 meta+interval)"),
        "{err}"
    );
    // chunking does not change the programs
    let whole = dir.path().join("whole.jsonl");
    let again = drtc()
        .args([
            "synth", "--ops", "3", "--count", "5", "--seed", "4", "--quiet",
        ])
        .arg("-o")
        .arg(&whole)
        .output()
        .unwrap();
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr)
        .lines()
        .all(|l| !l.starts_with("synth: ")));
    assert_eq!(rows(&whole), big);
    // small programs run in full
    let small = dir.path().join("small.jsonl");
    let run = drtc()
        .args([
            "synth",
            "--ops",
            "3",
            "--count",
            "3",
            "--flops",
            "2^10..2^20",
            "--quiet",
        ])
        .arg("-o")
        .arg(&small)
        .output()
        .unwrap();
    assert!(run.status.success());
    for r in rows(&small) {
        assert!(
            r["validation"] == "run-cpu" || r["validation"] == "run-cuda",
            "{r}"
        );
    }
}

#[test]
fn a_validation_worker_that_cannot_start_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("bare");
    let python = drtc_synth::default_python();
    let made = Command::new(&python)
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(made.success());
    let out = dir.path().join("p.jsonl");
    let run = drtc()
        .args(["synth", "--ops", "2", "--count", "2", "--quiet", "-o"])
        .arg(&out)
        .env("DRTC_PYTHON", venv.join("bin/python"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(err.contains("the validation worker did not start"), "{err}");
    assert!(err.contains("No module named 'torch'"), "{err}");
    assert!(
        err.contains("the programs kept before this are in"),
        "{err}"
    );
}
