//! Stride-1 transposed convolutions of 1 or 3 spatial dims computed as convolutions with
//! the flipped kernel (the `transposed-convs` pass), under both precision policies,
//! verified against PyTorch on the CPU; a 2-D one stays transposed. (The retry ladder's
//! test takes the rewrite back for a module that fails.)

mod support {
    pub mod compile;
}

use std::path::Path;
use std::process::Command;
use support::compile::forward_body;

/// `drtc compile tests/data/conv/conv_transposed_stride_one.py --precision <precision>` on
/// the CPU: asserts that it verifies and returns the module's forward.
fn forward_at(precision: &str) -> String {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conv/conv_transposed_stride_one.py");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("transposed_convs_{precision}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("module.py");
    let run = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .arg("compile")
        .arg(&file)
        .args([
            "--device",
            "cpu",
            "--no-cache",
            "--precision",
            precision,
            "-o",
        ])
        .arg(&out)
        .output()
        .expect("drtc runs");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("verified on cpu"), "{stderr}");
    forward_body(&std::fs::read_to_string(&out).unwrap()).to_string()
}

#[test]
fn stride_one_transposed_convs_run_as_convolutions_and_verify() {
    for precision in ["fp32", "tf32"] {
        let body = forward_at(precision);
        // the 3-D one: its kernel swapped and flipped, padding d * (k - 1) - p
        assert!(body.contains("torch.flip(v"), "{body}");
        assert!(
            body.contains("torch.nn.functional.conv3d(") && body.contains("padding=[2, 0, 0]"),
            "{body}"
        );
        // the dilated, grouped 1-D one
        assert!(
            body.contains("torch.nn.functional.conv1d(y, ")
                && body.contains("dilation=[2], groups=2"),
            "{body}"
        );
        assert!(
            !body.contains("conv_transpose3d") && !body.contains("conv_transpose1d"),
            "{body}"
        );
        // a 2-D one stays transposed
        assert!(
            body.contains("torch.nn.functional.conv_transpose2d("),
            "{body}"
        );
    }
}
