//! The torch.export frontend end to end, on small models written here: `drtc compile`
//! (default `--frontend auto`) reads what the native parser refuses — `for` over an
//! `nn.ModuleList`, `if`, `nn.Sequential`, `chunk`, `masked_fill`, an LSTM (a library op
//! run by PyTorch and reported by name), BatchNorm in training mode — verifies the module
//! under Triton's CPU interpreter, and the module keeps the reference's state_dict names,
//! weights under the same seed and batch-norm statistics (`tests/check_export_module.py`).
//! A model torch.export cannot capture gets export's reason and the line it points at.
//! Module state in plain tensor attributes (`self.hidden`) is updated as the reference
//! does and checked by the verifier (`tests/data/export/`).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn python() -> PathBuf {
    let home = drtc::verifier::DrtcHome::from_env();
    drtc::verifier::PythonEnv::locate(&home)
        .unwrap_or_else(|e| panic!("{e}"))
        .python
}

fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("export_{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn drtc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_drtc"))
        .args(args)
        .output()
        .unwrap()
}

/// Compiles `source` on the CPU; returns the report and the written module's path.
fn compile(name: &str, source: &str) -> (Value, PathBuf, PathBuf) {
    let d = dir(name);
    let model = d.join(format!("{name}.py"));
    std::fs::write(&model, source).unwrap();
    let out = d.join("out.py");
    let report = d.join("report.json");
    let o = drtc(&[
        "compile",
        model.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--device",
        "cpu",
        "--report",
        report.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "drtc compile {name} failed:\n{stderr}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    (r, model, out)
}

fn check_module(model: &Path, module: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check_export_module.py");
    let o = Command::new(python())
        .arg(&script)
        .arg(model)
        .arg(module)
        .env("TRITON_INTERPRET", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "check_export_module.py failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or("{}")).unwrap()
}

const CONTROL_FLOW: &str = r#"import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
        self.head = nn.Sequential(nn.Linear(width, 6), nn.GELU())
        self.scale = 0.5 if depth > 1 else 1.0

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x)) * self.scale
        a, b = x.chunk(2, dim=-1)
        x = torch.cat([b, a], dim=-1).masked_fill(x > 0.4, -1.0)
        if self.scale < 1.0:
            x = self.head(x)
        return x


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return [8, 3]
"#;

#[test]
fn control_flow_containers_chunk_and_masked_fill_compile_and_verify() {
    let (r, model, module) = compile("control", CONTROL_FLOW);
    assert_eq!(r["frontend"]["name"], "export", "{r}");
    assert_eq!(r["frontend"]["library_calls"], serde_json::json!([]), "{r}");
    assert_eq!(r["verification"]["verified"], true, "{}", r["verification"]);
    let ops: Vec<String> = r["regions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| {
            g["ops"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o.as_str().unwrap().to_string())
        })
        .collect();
    for op in ["linear", "slice", "cat", "where", "gelu"] {
        assert!(ops.iter().any(|o| o == op), "{op} missing from {ops:?}");
    }
    let f = check_module(&model, &module);
    assert_eq!(f["same_names"], true, "{f}");
    assert_eq!(f["same_weights"], true, "{f}");
    assert_eq!(f["loads_state_dict"], true, "{f}");
    assert_eq!(f["outputs_close"], true, "{f}");
    assert!(f["names"].to_string().contains("layers.2.weight"), "{f}");
}

const LSTM_BN: &str = r#"import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, hidden):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU()
        )
        self.lstm = nn.LSTM(channels, hidden, num_layers=2, batch_first=True)
        self.fc = nn.Linear(hidden, 5)

    def forward(self, x):
        f = self.features(x)
        seq = f.flatten(2).transpose(1, 2)
        out, (h, c) = self.lstm(seq)
        return self.fc(out[:, -1, :]) + h[-1].sum(-1, keepdim=True)


def get_inputs():
    return [torch.randn(2, 3, 4, 4)]


def get_init_inputs():
    return [6, 8]
"#;

#[test]
fn lstm_is_a_reported_library_op_and_batch_norm_statistics_are_exact() {
    let (r, model, module) = compile("lstm_bn", LSTM_BN);
    assert_eq!(r["frontend"]["name"], "export", "{r}");
    let calls: Vec<&str> = r["frontend"]["library_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["target"].as_str().unwrap())
        .collect();
    assert_eq!(calls, vec!["aten.lstm.input"], "{r}");
    // the line of the call in the model's source
    assert_eq!(r["frontend"]["library_calls"][0]["line"], 17, "{r}");
    assert_eq!(r["verification"]["verified"], true, "{}", r["verification"]);
    let f = check_module(&model, &module);
    assert_eq!(f["same_names"], true, "{f}");
    assert_eq!(f["same_weights"], true, "{f}");
    assert_eq!(f["loads_state_dict"], true, "{f}");
    assert_eq!(f["outputs_close"], true, "{f}");
    assert!(
        f["stats"].to_string().contains("features.1.running_var"),
        "{f}"
    );
    assert_eq!(f["stats_equal"], true, "{f}");
}

const DATA_DEPENDENT: &str = r#"import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x


def get_inputs():
    return [torch.randn(4)]


def get_init_inputs():
    return []
"#;

#[test]
fn export_failures_give_exports_reason_and_line() {
    let d = dir("data_dependent");
    let model = d.join("dd.py");
    std::fs::write(&model, DATA_DEPENDENT).unwrap();
    let out = d.join("out.py");
    let o = drtc(&[
        "compile",
        model.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--frontend",
        "export",
        "--no-verify",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{stderr}");
    assert!(stderr.contains("torch.export cannot capture"), "{stderr}");
    assert!(stderr.contains("dd.py:7"), "{stderr}");
    assert!(stderr.contains("if x.sum() > 0"), "{stderr}");
    // the native parser's verdict on the same file, with --frontend native
    let o = drtc(&[
        "compile",
        model.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--frontend",
        "native",
        "--no-verify",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && stderr.contains("if"), "{stderr}");
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/export")
        .join(name)
}

/// `drtc verify --json` of a candidate against a reference on the CPU.
fn verify(model: &Path, module: &Path) -> Value {
    let o = drtc(&[
        "verify",
        "--device",
        "cpu",
        "--json",
        model.to_str().unwrap(),
        module.to_str().unwrap(),
    ]);
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "drtc verify printed no JSON ({e}):\n{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// Plain tensor attributes (`self.hidden`, made in `__init__`, not in state_dict) that the
/// forward assigns or updates in place: exported as state, updated by `ModelNew` after
/// each call exactly as the reference does, and compared by the verifier after every
/// trial; a module that leaves them alone fails verification on its state.
#[test]
fn tensor_attribute_state_is_carried_over_and_checked() {
    let source = std::fs::read_to_string(data("stateful_cell.py")).unwrap();
    let (r, model, module) = compile("stateful_cell", &source);
    assert_eq!(r["frontend"]["name"], "export", "{r}");
    let updates = &r["frontend"]["state_updates"];
    assert_eq!(updates[0]["name"], "hidden", "{r}");
    assert_eq!(updates[0]["assigned"], true, "{r}");
    assert_eq!(updates[1]["name"], "steps", "{r}");
    assert_eq!(updates[1]["assigned"], false, "{r}");
    assert_eq!(r["verification"]["verified"], true, "{}", r["verification"]);
    // the state is compared after every trial
    let v = verify(&model, &module);
    assert_eq!(v["verified"], true, "{v}");
    for trial in v["trials"].as_array().unwrap() {
        let names: Vec<&str> = trial["state"]
            .as_array()
            .unwrap_or_else(|| panic!("no state in {v}"))
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert!(
            names.contains(&"hidden") && names.contains(&"steps"),
            "{names:?}"
        );
    }
    let text = std::fs::read_to_string(&module).unwrap();
    assert!(text.contains("self.hidden = outs[1]"), "{text}");
    assert!(text.contains("self.steps.copy_(outs[2])"), "{text}");
    let f = check_module(&model, &module);
    assert_eq!(f["same_names"], true, "{f}");
    assert_eq!(f["same_weights"], true, "{f}");
    assert_eq!(f["outputs_close"], true, "{f}");
    // the same module without its state updates: right outputs on the first call, but
    // the state after it (and the outputs of later calls) differ
    let bad = module.with_file_name("no_update.py");
    let stripped: String = text
        .lines()
        .filter(|l| !l.contains("self.hidden = outs[") && !l.contains("self.steps.copy_("))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(stripped, text);
    std::fs::write(&bad, stripped).unwrap();
    let v = verify(&model, &bad);
    assert_eq!(v["verified"], false, "{v}");
    let failures = v["failures"].to_string();
    assert!(failures.contains("\"state\""), "{failures}");
    assert!(failures.contains("`hidden` after the call"), "{failures}");
    assert!(failures.contains("`steps` after the call"), "{failures}");
}

/// An assignment torch.export would not record (a submodule's tensor attribute) is
/// refused with the line, never dropped.
#[test]
fn a_state_update_export_cannot_record_is_refused() {
    let d = dir("submodule_assign");
    let o = drtc(&[
        "compile",
        data("submodule_assign.py").to_str().unwrap(),
        "-o",
        d.join("out.py").to_str().unwrap(),
        "--no-verify",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{stderr}");
    assert!(stderr.contains("forward assigns `cell.state`"), "{stderr}");
    assert!(stderr.contains("submodule_assign.py:13"), "{stderr}");
    assert!(stderr.contains("self.state = self.state + x"), "{stderr}");
    // an assignment that changes the tensor's shape (export would broadcast it into the
    // old one)
    let o = drtc(&[
        "compile",
        data("assign_new_shape.py").to_str().unwrap(),
        "-o",
        d.join("out.py").to_str().unwrap(),
        "--no-verify",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{stderr}");
    assert!(
        stderr
            .contains("forward assigns `total` a float32[1, 3] tensor where it held float32[2, 3]"),
        "{stderr}"
    );
    assert!(stderr.contains("assign_new_shape.py:14"), "{stderr}");
}
