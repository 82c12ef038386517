//! Inputs that once crashed the frontend (found by `fuzz.rs`), kept as plain tests: each
//! must come back as an error or a verified graph, never a panic.

use drtc_frontends::lower;

fn survives(src: &str) {
    match lower(src) {
        Ok(l) => {
            let errors: Vec<_> = drtc_ir::verify(&l.graph)
                .into_iter()
                .filter(|e| e.is_error())
                .collect();
            assert!(errors.is_empty(), "{errors:?}");
        }
        Err(e) => {
            let rendered = e.render("regression.py", src);
            assert!(rendered.contains("regression.py"), "{rendered}");
        }
    }
}

/// A non-ASCII character inside a triple-quoted string: the closing-quote scan sliced the
/// text inside the character.
#[test]
fn triple_quoted_string_with_multibyte_char() {
    survives("x = \"\"\"N×N\"\"\"\n");
    survives("x = '''N×N");
    survives("x = \"\"\"\\×\"\"\"");
}

/// A zero stride reached the IR's output-size formula, which divides by it.
#[test]
fn zero_stride_pooling_and_convolution() {
    let seed = |call: &str| {
        format!(
            "import torch\nimport torch.nn.functional as F\n\ndef get_inputs():\n    return [torch.randn(2, 4, 8, 8), torch.randn(4, 4, 3, 3)]\n\ndef fused_operator(x, w):\n    return [{call}]\n"
        )
    };
    survives(&seed("F.max_pool2d(x, 2, stride=0)"));
    survives(&seed("F.avg_pool2d(x, 2, stride=(1, 0))"));
    survives(&seed("F.conv2d(x, w, stride=0)"));
    survives(&seed("F.conv_transpose2d(x, w, stride=0)"));
    survives(&seed("F.conv2d(x, w, dilation=0)"));
    survives(&seed("F.max_pool2d(x, 0)"));
    survives(&seed("F.conv2d(x, w, groups=0)"));
}
