//! Concatenations without copies, verified end to end under the interpreter: the operands
//! that a kernel computes and nothing else reads are written by that kernel into their
//! slice of the result (a view of it, stored through the result's strides); the others
//! are copied into theirs.

mod support {
    pub mod compile;
}

use std::path::PathBuf;
use std::process::Command;
use support::compile::{compile_verified, forward_body};

#[test]
fn kernel_operands_are_written_into_their_slices_and_verify() {
    let src = compile_verified("concat_in_place");
    // the result is allocated before the first placed operand's kernel, which writes a view
    let body = forward_body(&src);
    assert!(body.contains("= torch.empty([4, 14, 5]"), "{body}");
    assert!(body.contains(".narrow(1, 0, 6)"), "{body}");
    assert!(body.contains(".narrow(1, 6, 3)"), "{body}");
    // the input operand and the operand the exp also reads are copied
    assert!(body.contains(".narrow(1, 9, 3).copy_(y)"), "{body}");
    assert_eq!(body.matches(".copy_(").count(), 2, "{body}");
    assert!(!body.contains("torch.cat("), "{body}");
    // the placed kernels store through the result's strides (70 = 14 x 5 per batch)
    assert!(src.contains(" * 70 + "), "{src}");
}

/// Concatenations that extend one another (a dense block): the last one's result is
/// allocated at the first, each operand is copied into it once (the last operand written
/// there by its kernel), and the earlier concatenations are views of its first slice.
#[test]
fn concatenations_that_extend_one_another_share_the_last_ones_result_and_verify() {
    let src = compile_verified("concat_prefix");
    let body = forward_body(&src);
    assert!(!body.contains("torch.cat("), "{body}");
    assert_eq!(
        body.matches("torch.empty([2, 32, 3, 3]").count(),
        1,
        "{body}"
    );
    // three operands copied once each: relu's and sigmoid's at the first, tanh's at the
    // second; exp's written by its kernel
    assert_eq!(body.matches(".copy_(").count(), 3, "{body}");
    assert!(body.contains(".narrow(1, 0, 8)\n"), "{body}");
    assert!(body.contains(".narrow(1, 0, 16)\n"), "{body}");
    assert!(body.contains(".narrow(1, 16, 16)\n"), "{body}");
}

/// Products drtc's GEMM template computes are written into their slices too: along a
/// batch dim and along N (two products side by side), each stored through the result's
/// strides; the input operand is copied.
#[test]
fn products_are_written_into_their_slices_and_verify() {
    let src = compile_verified("concat_products");
    let body = forward_body(&src);
    for slice in [
        ".narrow(1, 1, 3)",
        ".narrow(1, 0, 32)",
        ".narrow(1, 32, 16)",
    ] {
        assert!(body.contains(slice), "{slice}: {body}");
    }
    assert!(body.contains(".narrow(1, 0, 1).copy_(z)"), "{body}");
    assert_eq!(body.matches(".copy_(").count(), 1, "{body}");
    assert!(!body.contains("torch.cat("), "{body}");
    // batch strides of the [2, 4, 24, 32] result, rows of the [48, 48] one
    assert!(src.contains("b0 * 3072 + b1 * 768 + offs_m * 32"), "{src}");
    assert_eq!(src.matches("offs_m * 48 + offs_n").count(), 2, "{src}");
}

/// Convolution branches concatenated along the channels, in both layouts: each
/// convolution runs without its bias (`conv-bias`), and the bias add is a kernel that
/// writes its slice of the result, channels-last when the convolutions are; the input
/// operand is copied.
#[test]
fn convolution_branches_add_their_bias_into_their_slices_in_both_layouts() {
    let program =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/inception_branches.py");
    for layout in ["nchw", "channels-last"] {
        let dir =
            std::env::temp_dir().join(format!("drtc-branches-{layout}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("branches.py");
        let run = Command::new(env!("CARGO_BIN_EXE_drtc"))
            .arg("compile")
            .arg(&program)
            .arg("-o")
            .arg(&out)
            .args(["--device", "cpu", "--layout", layout])
            .output()
            .expect("drtc runs");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(
            run.status.success() && stderr.contains("verified on cpu"),
            "{stderr}"
        );
        let src = std::fs::read_to_string(&out).unwrap();
        let body = forward_body(&src);
        assert_eq!(body.matches(", None, stride=").count(), 3, "{body}");
        for slice in [
            ".narrow(1, 0, 16)",
            ".narrow(1, 16, 12)",
            ".narrow(1, 28, 8)",
        ] {
            assert!(body.contains(slice), "{slice}: {body}");
        }
        assert!(body.contains(".narrow(1, 36, 8).copy_(x)"), "{body}");
        assert!(!body.contains("torch.cat("), "{body}");
        let channels_last = body.contains("[2, 44, 9, 9], dtype=torch.float32, device=x.device, memory_format=torch.channels_last)");
        assert_eq!(channels_last, layout == "channels-last", "{body}");
    }
}

/// Scans written into slices that start between 16-byte boundaries of a contiguous
/// concatenation dim (an exclusive cumsum from column 1, a softmax's cumsum and a reverse
/// cumsum from column 3): the host's view begins at the boundary before each slice and the
/// last pass tiles the view's columns from there, storing lane by lane only in the block
/// that holds the columns before the slice, which another kernel wrote first.
#[test]
fn scans_tile_unaligned_slices_from_the_boundary_before_and_verify() {
    let src = compile_verified("concat_scans");
    let body = forward_body(&src);
    assert!(body.contains(".narrow(1, 0, 9000)"), "{body}");
    assert_eq!(body.matches(".narrow(1, 0, 9003)").count(), 2, "{body}");
    assert_eq!(src.matches("if ostart == 0:").count(), 3, "{src}");
    assert_eq!(src.matches("cols = ocols - 1\n").count(), 1, "{src}");
    assert_eq!(src.matches("cols = ocols - 3\n").count(), 2, "{src}");
}
