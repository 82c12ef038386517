//! `drtc compile --cuda-graphs` on a machine without a GPU: on CPU the option is a no-op
//! that says so; a module written for CUDA (`--device cuda --no-verify`) with graphs on
//! calls its forward through `_drtc_graphed` and reports the decision; with graphs off it
//! does not. The CUDA module is also imported and called on CPU tensors (under Triton's
//! interpreter): the graph path must hand them to the guard, which computes the reference
//! (a module compiled for CUDA never runs its kernels on CPU tensors). Needs the Python of
//! `drtc setup` (or `DRTC_PYTHON`).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/examples/conv_relu_gn.py")
}

fn drtc(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .args(args)
        .output()
        .expect("drtc runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("graphs_cli");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn compile(name: &str, extra: &[&str]) -> (String, Value, String) {
    let d = dir();
    let (out, report) = (d.join(format!("{name}.py")), d.join(format!("{name}.json")));
    let ex = example();
    let mut args = vec![
        "compile",
        ex.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--no-verify",
        "--report",
        report.to_str().unwrap(),
        "--set",
        "batch_size=2",
        "--set",
        "height=8",
        "--set",
        "width=8",
    ];
    args.extend_from_slice(extra);
    let (ok, stderr) = drtc(&args);
    assert!(ok, "{stderr}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    (std::fs::read_to_string(&out).unwrap(), r, stderr)
}

#[test]
fn cuda_graphs_on_cpu_are_a_no_op_that_says_so() {
    let (src, report, stderr) = compile("cpu_on", &["--device", "cpu", "--cuda-graphs", "on"]);
    assert!(
        stderr.contains("--cuda-graphs on is a no-op on cpu"),
        "{stderr}"
    );
    assert!(!src.contains("_drtc_graphed"));
    let g = &report["cuda_graphs"];
    assert_eq!(g["mode"], "on");
    assert_eq!(g["enabled"], false);
    assert!(
        g["reason"].as_str().unwrap().contains("CPU interpreter"),
        "{g}"
    );
}

#[test]
fn a_cuda_module_with_and_without_graphs() {
    let (src, report, stderr) = compile("cuda_on", &["--device", "cuda", "--cuda-graphs", "on"]);
    assert!(stderr.contains("CUDA graphs: on"), "{stderr}");
    assert!(
        src.contains("_drtc_m0 = self.conv\n            _drtc_m1 = self.group_norm\n            _drtc_args = [x, self.bias, _drtc_m0.weight, _drtc_m0.bias, _drtc_m1.weight")
            && src.contains("outs = _drtc_graphed(_drtc_args)"),
        "{src}"
    );
    assert!(src.contains("torch.cuda.CUDAGraph()"));
    let g = &report["cuda_graphs"];
    assert_eq!(g["enabled"], true, "{g}");
    assert!(g["launches"].as_u64().unwrap() >= 2, "{g}");
    let (off, report, _) = compile("cuda_off", &["--device", "cuda", "--cuda-graphs", "off"]);
    assert!(!off.contains("_drtc_graphed") && off.contains("outs = _drtc_dispatch(_drtc_args)"));
    assert_eq!(report["cuda_graphs"]["reason"], "--cuda-graphs off");
    // auto decides by the cost rule and says which way
    let (_, report, _) = compile("cuda_auto", &["--device", "cuda"]);
    let g = &report["cuda_graphs"];
    assert_eq!(g["mode"], "auto");
    let saved = g["saved_us"].as_f64().unwrap();
    let added = g["added_us"].as_f64().unwrap();
    assert_eq!(g["enabled"] == true, saved > added, "{g}");

    // the CUDA module on CPU tensors: the guard's path (the reference), never a graph
    let home = drtc::verifier::DrtcHome::from_env();
    let py = drtc::verifier::PythonEnv::locate(&home)
        .unwrap_or_else(|e| panic!("{e}"))
        .python;
    let module = dir().join("cuda_on.py");
    let script = format!(
        r#"
import importlib.util, sys, warnings, torch
spec = importlib.util.spec_from_file_location("m", {module:?})
m = importlib.util.module_from_spec(spec); sys.modules["m"] = m; spec.loader.exec_module(m)
torch.manual_seed(0)
ref = m.Model(*m.get_init_inputs())
new = m.ModelNew(*m.get_init_inputs()); new.load_state_dict(ref.state_dict())
x = torch.randn(2, 3, 8, 8)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    out = new(x)
assert torch.allclose(out, ref(x), atol=1e-5), "not the reference's result"
assert m._DRTC_GRAPHS.stats["last"] == "guard", m._DRTC_GRAPHS.stats
assert not m._DRTC_GRAPHS.graphs and m._DRTC_GRAPHS.stats["captures"] == 0
assert any("compiled for cuda" in str(x.message) for x in w), [str(x.message) for x in w]
print("ok")
"#
    );
    let out = Command::new(py)
        .arg("-c")
        .arg(&script)
        .env("TRITON_INTERPRET", "1")
        .env("DRTC_GUARD_CACHE", dir().join("guard_cache"))
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "ok",
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
