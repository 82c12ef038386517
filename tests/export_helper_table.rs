//! The export helper's decomposition table (`frontends/src/export/helper.py`), checked
//! in drtc's Python: the same graph on every supported PyTorch version.

use std::path::{Path, PathBuf};
use std::process::Command;

fn python() -> PathBuf {
    let home = drtc::verifier::DrtcHome::from_env();
    drtc::verifier::PythonEnv::locate(&home)
        .unwrap_or_else(|e| panic!("{e}"))
        .python
}

/// The helper's decomposition table is the same on every supported PyTorch: an op some
/// versions leave whole (torch 2.11 keeps `linalg_vector_norm`, which `F.normalize` calls,
/// and drtc would run it as an opaque library call) is decomposed anyway. Simulated here
/// by a default table without it.
#[test]
fn norms_are_decomposed_on_every_torch_version() {
    let helper = Path::new(env!("CARGO_MANIFEST_DIR")).join("frontends/src/export/helper.py");
    let script = r#"
import importlib.util, sys, torch
import torch.nn.functional as F
spec = importlib.util.spec_from_file_location("drtc_export_helper", sys.argv[1])
h = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h)
norm = torch.ops.aten.linalg_vector_norm.default
full = torch.export.default_decompositions
def older():
    t = full()
    t.pop(norm, None)
    return t
torch.export.default_decompositions = older
table = h.decomposition_table(torch)
assert norm in table, "linalg_vector_norm not decomposed"
assert torch.ops.aten.linear.default not in table, "a KEEP op is decomposed"
class M(torch.nn.Module):
    def forward(self, x):
        return F.normalize(x, dim=1)
ep = torch.export.export(M(), (torch.randn(4, 8),), strict=False).run_decompositions(table)
print(sorted({str(n.target) for n in ep.graph.nodes if n.op == "call_function"}))
"#;
    let o = Command::new(python())
        .arg("-c")
        .arg(script)
        .arg(&helper)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!stdout.contains("linalg_vector_norm"), "{stdout}");
    assert!(stdout.contains("aten.pow.Tensor_Scalar"), "{stdout}");
}
