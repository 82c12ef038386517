//! Generated modules called with inputs their kernels were not compiled for: other batch
//! sizes, spatial sizes and dtypes, non-contiguous views, Python numbers of another type,
//! CPU tensors into a module compiled for CUDA. Every call must give the reference's
//! result (by recompiling through drtc, or by computing the reference) or a clear error;
//! the recompile cache must be hit the second time, in memory and on disk. Runs the
//! modules under Triton's CPU interpreter (`tests/check_guards.py`), with small shapes.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

fn python() -> PathBuf {
    let home = drtc::verifier::DrtcHome::from_env();
    drtc::verifier::PythonEnv::locate(&home)
        .unwrap_or_else(|e| panic!("{e}"))
        .python
}

fn drtc(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "drtc {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("guards_{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs the calls against `module` and its `reference`; one fact object per call, by label.
fn call(module: &Path, reference: &Path, cache: &Path, calls: Value) -> Vec<Value> {
    let list = module.with_extension("calls.json");
    std::fs::write(&list, calls.to_string()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check_guards.py");
    let py = python();
    // no drtc on PATH, none in DRTC_BIN: the only drtc is the one each module records
    let path = format!(
        "{}:/usr/bin:/bin",
        py.parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    );
    let out = Command::new(&py)
        .arg(&script)
        .arg(module)
        .arg(reference)
        .arg(&list)
        .env("DRTC_GUARD_CACHE", cache)
        .env("TRITON_INTERPRET", "1")
        .env("PATH", path)
        .env_remove("DRTC_BIN")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "check_guards.py failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn fact<'a>(facts: &'a [Value], label: &str) -> &'a Value {
    facts
        .iter()
        .find(|f| f["label"] == label)
        .unwrap_or_else(|| panic!("no call `{label}` in {facts:?}"))
}

fn stat(f: &Value, key: &str) -> u64 {
    f["stats"][key].as_u64().unwrap()
}

/// The output equals the reference's, and the module raised nothing.
fn assert_matches(f: &Value) {
    assert!(
        f["error"].is_null() && f["ref_error"].is_null() && f["allclose"] == true,
        "{} does not match the reference: {f}",
        f["label"]
    );
}

fn warnings(f: &Value) -> Vec<String> {
    f["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

fn image(shape: [i64; 4], view: Option<&str>, dtype: &str) -> Value {
    json!({"shape": shape, "dtype": dtype, "view": view})
}

const EXAMPLE: &str = "data/examples/conv_relu_gn.py";
const SMALL: [&str; 6] = [
    "--set",
    "batch_size=2",
    "--set",
    "height=8",
    "--set",
    "width=8",
];

/// The example's source with the small constants, as the reference the checks compare to.
fn small_reference(d: &Path) -> PathBuf {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(EXAMPLE))
        .unwrap()
        .replace("batch_size = 8", "batch_size = 2")
        .replace("height, width = 32, 32", "height, width = 8, 8");
    let p = d.join("reference.py");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn kernelbench_module_recompiles_for_other_shapes_and_caches() {
    let d = dir("recompile");
    let cache = d.join("cache");
    let module = d.join("module.py");
    let reference = small_reference(&d);
    let m = module.to_str().unwrap();
    let mut args = vec![
        "compile",
        EXAMPLE,
        "-o",
        m,
        "--device",
        "cpu",
        "--no-verify",
    ];
    args.extend(SMALL);
    drtc(&args);
    let facts = call(
        &module,
        &reference,
        &cache,
        json!([
            {"label": "same", "inputs": [image([2, 3, 8, 8], None, "float32")]},
            {"label": "transposed", "inputs": [image([2, 3, 8, 8], Some("transpose"), "float32")]},
            {"label": "batch4", "inputs": [image([4, 3, 8, 8], None, "float32")]},
            {"label": "batch4 again", "inputs": [image([4, 3, 8, 8], Some("slice"), "float32")]},
            {"label": "batch1", "inputs": [image([1, 3, 8, 8], None, "float32")]},
            {"label": "12x12 sliced", "inputs": [image([2, 3, 12, 12], Some("slice"), "float32")]},
            {"label": "float64", "inputs": [image([2, 3, 8, 8], None, "float64")]},
            {"label": "no drtc", "patch": {"drtc": null},
             "inputs": [image([3, 3, 8, 8], None, "float32")]},
        ]),
    );
    let same = fact(&facts, "same");
    assert_matches(same);
    assert_eq!(stat(same, "mismatches"), 0);
    // a non-contiguous view of the compiled shape runs the kernels (made contiguous)
    let t = fact(&facts, "transposed");
    assert_matches(t);
    assert_eq!(t["contiguous"], json!([false]));
    assert_eq!(stat(t, "mismatches"), 0);
    let b4 = fact(&facts, "batch4");
    assert_matches(b4);
    assert_eq!(stat(b4, "compiles"), 1);
    assert_eq!(stat(b4, "reference"), 0);
    assert!(warnings(b4).is_empty(), "{b4}");
    let again = fact(&facts, "batch4 again");
    assert_matches(again);
    assert_eq!(stat(again, "compiles"), 1, "the second call recompiled");
    assert_eq!(stat(again, "memory_hits"), 1);
    let b1 = fact(&facts, "batch1");
    assert_matches(b1);
    assert_eq!(stat(b1, "compiles"), 2);
    let big = fact(&facts, "12x12 sliced");
    assert_matches(big);
    assert_eq!(stat(big, "compiles"), 3);
    assert_eq!(stat(big, "reference"), 0);
    // float64 images into the float32 convolution: PyTorch refuses, and so does the module
    // (the recompile fails; the reference raises the reference's own error)
    let f64 = fact(&facts, "float64");
    assert!(!f64["ref_error"].is_null(), "{f64}");
    assert_eq!(f64["error"], f64["ref_error"], "{f64}");
    assert!(warnings(f64)[0].contains("failed"), "{f64}");
    let none = fact(&facts, "no drtc");
    assert_matches(none);
    let w = warnings(none);
    assert_eq!(w.len(), 1, "{none}");
    assert!(w[0].contains("no drtc to recompile with"), "{none}");
    assert!(w[0].contains("f32[3, 3, 8, 8]"), "{none}");

    // a new process finds the recompiled kernels on disk
    let facts = call(
        &module,
        &reference,
        &cache,
        json!([{"label": "batch4 later", "inputs": [image([4, 3, 8, 8], None, "float32")]}]),
    );
    let later = fact(&facts, "batch4 later");
    assert_matches(later);
    assert_eq!(stat(later, "compiles"), 0);
    assert_eq!(stat(later, "disk_hits"), 1);
}

#[test]
fn error_and_reference_modes_and_a_cuda_module_given_cpu_tensors() {
    let d = dir("modes");
    let cache = d.join("cache");
    let reference = small_reference(&d);
    let compile = |name: &str, extra: &[&str]| {
        let out = d.join(name);
        let mut args = vec![
            "compile",
            EXAMPLE,
            "-o",
            out.to_str().unwrap(),
            "--no-verify",
        ];
        args.extend(SMALL);
        args.extend(extra);
        drtc(&args);
        out
    };
    let error = compile("error.py", &["--device", "cpu", "--guard", "error"]);
    let facts = call(
        &error,
        &reference,
        &cache,
        json!([
            {"label": "batch4", "inputs": [image([4, 3, 8, 8], None, "float32")]},
            {"label": "transposed", "inputs": [image([2, 3, 8, 8], Some("transpose"), "float32")]},
        ]),
    );
    let b4 = fact(&facts, "batch4");
    let msg = b4["error"].as_str().unwrap();
    assert!(
        msg.starts_with("ValueError: drtc: this module's kernels were compiled for x: f32[2, 3, 8, 8], bias: f32[16, 1, 1]"),
        "{msg}"
    );
    assert!(msg.contains("given x: f32[4, 3, 8, 8] on cpu"), "{msg}");
    assert!(
        msg.contains("`x` is f32[4, 3, 8, 8], compiled for f32[2, 3, 8, 8]"),
        "{msg}"
    );
    assert_matches(fact(&facts, "transposed"));

    let reference_mode = compile("reference.py", &["--device", "cpu", "--guard", "reference"]);
    let facts = call(
        &reference_mode,
        &reference,
        &cache,
        json!([
            {"label": "first", "inputs": [image([4, 3, 8, 8], None, "float32")]},
            {"label": "second", "inputs": [image([4, 3, 8, 8], None, "float32")]},
        ]),
    );
    let (first, second) = (fact(&facts, "first"), fact(&facts, "second"));
    assert_matches(first);
    assert_matches(second);
    assert_eq!(warnings(first).len(), 1, "warns once: {first}");
    assert!(warnings(second).is_empty(), "warns once: {second}");
    assert_eq!(stat(second, "reference"), 2);
    assert_eq!(stat(second, "compiles"), 0);

    // compiled for CUDA (not run: this machine may have no GPU), given CPU tensors
    let cuda_error = compile("cuda_error.py", &["--device", "cuda", "--guard", "error"]);
    let facts = call(
        &cuda_error,
        &reference,
        &cache,
        json!([{"label": "cpu", "inputs": [image([2, 3, 8, 8], None, "float32")]}]),
    );
    let msg = fact(&facts, "cpu")["error"].as_str().unwrap().to_string();
    assert!(
        msg.contains("the inputs are on cpu, the kernels were compiled for cuda"),
        "{msg}"
    );
    let cuda = compile("cuda.py", &["--device", "cuda"]);
    let facts = call(
        &cuda,
        &reference,
        &cache,
        json!([{"label": "cpu", "inputs": [image([2, 3, 8, 8], None, "float32")]}]),
    );
    let f = fact(&facts, "cpu");
    assert_matches(f);
    assert_eq!(stat(f, "compiles"), 0);
    assert!(warnings(f)[0].contains("cannot recompile"), "{f}");
}

const SEED: &str = "import torch


def get_inputs():
    x = torch.randn([4, 8], dtype=torch.float32)
    y = torch.randn([8], dtype=torch.float32)
    return [x, y, 0.5]


def fused_operator(x, y, alpha):
    z = torch.relu(x + y) * alpha
    return [torch.softmax(z, dim=1), torch.sum(z, dim=0)]
";

#[test]
fn seed_module_recompiles_for_other_dtypes_and_checks_numbers() {
    let d = dir("seed");
    let cache = d.join("cache");
    let reference = d.join("seed.py");
    std::fs::write(&reference, SEED).unwrap();
    let module = d.join("module.py");
    drtc(&[
        "compile",
        reference.to_str().unwrap(),
        "-o",
        module.to_str().unwrap(),
        "--device",
        "cpu",
        "--no-verify",
    ]);
    let t = |shape: &[i64], dtype: &str, view: Option<&str>| json!({"shape": shape, "dtype": dtype, "view": view});
    let facts = call(
        &module,
        &reference,
        &cache,
        json!([
            {"label": "same", "inputs": [t(&[4, 8], "float32", None), t(&[8], "float32", None), {"number": 0.5}]},
            {"label": "views", "inputs": [t(&[4, 8], "float32", Some("transpose")), t(&[8], "float32", Some("expand")), {"number": 2.0}]},
            {"label": "float64", "inputs": [t(&[4, 8], "float64", None), t(&[8], "float64", None), {"number": 0.5}]},
            {"label": "float16 rows", "inputs": [t(&[6, 8], "float16", None), t(&[8], "float16", None), {"number": 0.5}]},
            {"label": "int alpha", "inputs": [t(&[4, 8], "float32", None), t(&[8], "float32", None), {"number": 3}]},
        ]),
    );
    let same = fact(&facts, "same");
    assert_matches(same);
    assert_eq!(stat(same, "mismatches"), 0);
    let views = fact(&facts, "views");
    assert_matches(views);
    assert_eq!(views["contiguous"], json!([false, false]));
    assert_eq!(stat(views, "mismatches"), 0);
    let f64 = fact(&facts, "float64");
    assert_matches(f64);
    assert_eq!(stat(f64, "compiles"), 1, "{f64}");
    assert_eq!(stat(f64, "reference"), 0, "{f64}");
    let f16 = fact(&facts, "float16 rows");
    assert_matches(f16);
    assert_eq!(stat(f16, "compiles"), 2, "{f16}");
    assert_eq!(stat(f16, "reference"), 0, "{f16}");
    // an int where a float was compiled: not the same program, so the reference computes it
    let int = fact(&facts, "int alpha");
    assert_matches(int);
    assert_eq!(stat(int, "reference"), 1);
    assert!(
        warnings(int)[0].contains("`alpha` is a Python int"),
        "{int}"
    );
}

/// Kernel modules that are the subproblems' own reference code.
fn reference_kernels(sub: &Path, kernels: &Path) {
    let text = std::fs::read_to_string(sub).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let s: Value = serde_json::from_str(line).unwrap();
        let module = format!(
            "{}\ntriton_fused_operator = fused_operator\n",
            s["pytorch"].as_str().unwrap()
        );
        let k = json!({"source_line": s["source_line"], "subproblem": s["subproblem"], "module": module});
        out.push_str(&format!("{k}\n"));
    }
    std::fs::write(kernels, out).unwrap();
}

#[test]
fn stitched_modules_guard_their_inputs() {
    let d = dir("stitch");
    let cache = d.join("cache");
    let reference = small_reference(&d);
    let (sub, kernels) = (d.join("sub.jsonl"), d.join("kernels.jsonl"));
    let mut args = vec![
        "decompose",
        EXAMPLE,
        "--max-ops",
        "2",
        "-o",
        sub.to_str().unwrap(),
    ];
    args.extend(SMALL);
    drtc(&args);
    reference_kernels(&sub, &kernels);
    let stitch = |name: &str, guard: &str| {
        let out = d.join(name);
        let mut args = vec![
            "stitch",
            "--programs",
            EXAMPLE,
            "--subproblems",
            sub.to_str().unwrap(),
            "--kernels",
            kernels.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--guard",
            guard,
        ];
        args.extend(SMALL);
        drtc(&args);
        out
    };
    let error = stitch("error.py", "error");
    let facts = call(
        &error,
        &reference,
        &cache,
        json!([
            {"label": "same", "inputs": [image([2, 3, 8, 8], Some("slice"), "float32")]},
            {"label": "batch4", "inputs": [image([4, 3, 8, 8], None, "float32")]},
        ]),
    );
    assert_matches(fact(&facts, "same"));
    let msg = fact(&facts, "batch4")["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(msg.starts_with("ValueError: drtc:"), "{msg}");
    assert!(msg.contains("f32[4, 3, 8, 8]"), "{msg}");
    let recompile = stitch("recompile.py", "recompile");
    let facts = call(
        &recompile,
        &reference,
        &cache,
        json!([{"label": "batch3", "inputs": [image([3, 3, 8, 8], None, "float32")]}]),
    );
    let b3 = fact(&facts, "batch3");
    assert_matches(b3);
    assert_eq!(stat(b3, "compiles"), 1);
    assert_eq!(stat(b3, "reference"), 0);
}
