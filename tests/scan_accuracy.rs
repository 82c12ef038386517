//! A scan's running value is kept in float64 for float32 data: its error against the
//! float64 truth is the final rounding's, not one rounding per element summed along the
//! row (with float32 running values: 26x and 9x PyTorch's CPU cumsum over rows of 2,048
//! and 40,000 normal values). Checked under the interpreter, whose `tl.cumsum` adds in the tile's own type,
//! for a row in one tile and a row scanned block by block with a carried value.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn python() -> PathBuf {
    let home = drtc::verifier::DrtcHome::from_env();
    drtc::verifier::PythonEnv::locate(&home)
        .unwrap_or_else(|e| panic!("{e}"))
        .python
}

/// Max abs error of the module's outputs and of PyTorch's float32 cumsum against float64.
const CHECK: &str = r#"
import importlib.util, json, sys, torch
spec = importlib.util.spec_from_file_location("m", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
torch.manual_seed(0)
inputs = m.get_inputs()
ours = m.ModelNew(*m.get_init_inputs())(*inputs)
rows = []
for x, o in zip(inputs, ours):
    truth = torch.cumsum(x.double(), dim=1)
    rows.append({"cols": x.shape[1],
                 "ours": (o.double() - truth).abs().max().item(),
                 "torch": (torch.cumsum(x, dim=1).double() - truth).abs().max().item()})
print(json.dumps(rows))
"#;

#[test]
fn float_scans_accumulate_in_float64() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("drtc-scan-accuracy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let module = dir.join("long_rows.py");
    let out = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .arg("compile")
        .arg(root.join("tests/data/scans/long_rows.py"))
        .arg("-o")
        .arg(&module)
        .args(["--device", "cpu", "--no-verify"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let src = std::fs::read_to_string(&module).unwrap();
    // one scan in one tile, one carried across blocks
    assert_eq!(
        src.matches(".to(tl.float64), axis=1)).to(tl.float32)")
            .count(),
        2,
        "{src}"
    );
    assert!(
        src.contains("= tl.zeros([BLOCK_R, 1], tl.float64)"),
        "{src}"
    );
    let run = Command::new(python())
        .arg("-c")
        .arg(CHECK)
        .arg(&module)
        .env("TRITON_INTERPRET", "1")
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let rows: Vec<Value> = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(rows.len(), 2);
    for r in &rows {
        let (ours, torch) = (r["ours"].as_f64().unwrap(), r["torch"].as_f64().unwrap());
        // PyTorch's CPU cumsum adds in float64 too: both are the truth rounded once
        assert!(ours <= 2.0 * torch, "{rows:?}");
    }
}
