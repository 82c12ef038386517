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
