//! `drtc compile --shrink` on a program whose sizes coincide (a `[B, B]` product broadcast
//! against `B` targets, `batch_size` and `input_shape` written apart): the plain caps break
//! the shapes, so the shrink's fallbacks keep equal sizes equal, say so, and the report
//! names the sizes the module was built with.

use std::process::Command;

const HINGE: &str = "import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


batch_size = 4096
input_shape = (4096,)


def get_inputs():
    return [torch.rand(batch_size, *input_shape), torch.randint(0, 2, (batch_size,)).float() * 2 - 1]


def get_init_inputs():
    return []
";

#[test]
fn a_shape_coincidence_survives_shrinking() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("hinge.py");
    std::fs::write(&src, HINGE).unwrap();
    let report = dir.path().join("r.json");
    let out = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .arg("compile")
        .arg(&src)
        .args(["--shrink", "--no-verify", "-o"])
        .arg(dir.path().join("out.py"))
        .arg("--report")
        .arg(&report)
        .output()
        .expect("drtc runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("did not load with those sizes") && stderr.contains("input_shape=(2,)"),
        "{stderr}"
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(
        r["overrides"],
        serde_json::json!(["batch_size=2", "input_shape=(2,)"])
    );
}
