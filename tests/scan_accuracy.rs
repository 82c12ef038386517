//! A scan's running value is kept in float64 for float32 data: a row in one tile is
//! scanned in float64, so its error against the float64 truth is the final rounding's,
//! not one rounding per element summed along the row (with a float32 scan: 26x PyTorch's
//! CPU cumsum over rows of 2,048 normal values under the interpreter, whose `tl.cumsum`
//! adds in order in the tile's own type); a long row's blocks are scanned in float32 and
//! the value carried between blocks is float64 (checked by its form only: the
//! interpreter's in-order block scan is not the GPU's tree of partial sums).

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
    // the row in one tile scanned in float64; the long row's blocks in float32, with the
    // carried value in float64
    let one_tile = ".to(tl.float64), axis=1)).to(tl.float32)";
    assert_eq!(src.matches(one_tile).count(), 1, "{src}");
    assert!(
        src.contains("= tl.zeros([BLOCK_R, 1], tl.float64)"),
        "{src}"
    );
    assert!(
        src.contains("axis=1)).to(tl.float64)).to(tl.float32)"),
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
    // the row in one tile; PyTorch's CPU cumsum adds in float64 too: both are the truth
    // rounded once
    let (ours, torch) = (
        rows[0]["ours"].as_f64().unwrap(),
        rows[0]["torch"].as_f64().unwrap(),
    );
    assert!(ours <= 2.0 * torch, "{rows:?}");
}
