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

/// Hostile nesting must stop at the parser's depth limit instead of overflowing the stack.
#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    survives(&format!(
        "x = {}1{}\n",
        "(".repeat(20000),
        ")".repeat(20000)
    ));
    survives(&format!("x = {}1\n", "-".repeat(20000)));
    survives(&format!("x = {}1\n", "not ".repeat(20000)));
    survives(&format!(
        "x = {}1{}\n",
        "[".repeat(20000),
        "]".repeat(20000)
    ));
    survives(&format!("x = 2{}\n", " ** 2".repeat(20000)));
    survives(&format!("x = a{}\n", "[0]".repeat(20000)));
    survives(&format!("x = f{}\n", "()".repeat(20000)));
    survives(&format!("x = 1{}\n", " + 1".repeat(20000)));
    let mut deep_defs = String::new();
    for i in 0..500 {
        deep_defs.push_str(&format!("{}def f{i}():\n", " ".repeat(i)));
    }
    deep_defs.push_str(&format!("{}pass\n", " ".repeat(500)));
    survives(&deep_defs);
}

/// Recursion in user functions stops at the interpreter's call-depth limit.
#[test]
fn recursion_is_an_error_not_a_crash() {
    survives(
        "import torch\n\ndef f(x):\n    return f(x)\n\ndef get_inputs():\n    return [torch.randn(2)]\n\ndef fused_operator(x):\n    return [f(x)]\n",
    );
}

/// Huge sizes and integer overflow are errors, not arithmetic panics.
#[test]
fn huge_numbers_are_errors() {
    let seed = |inputs: &str, body: &str| {
        format!("import torch\n\ndef get_inputs():\n    return [{inputs}]\n\ndef fused_operator(x):\n    return [{body}]\n")
    };
    survives(&seed("torch.randn(2**40, 2**40)", "x"));
    survives(&seed("torch.randn(-1, 3)", "x"));
    survives(&seed("torch.randn(9223372036854775807)", "x"));
    survives(&seed(
        "torch.randn(2, 3)",
        "x.view(9223372036854775807, -1)",
    ));
    survives(&seed("torch.randn(2, 3)", "x * (9223372036854775807 + 1)"));
    survives(&seed("torch.randn(2, 3)", "x[9223372036854775807:]"));
    survives(&seed(
        "torch.randn(2, 3)",
        "x.narrow(0, 9223372036854775807, 9223372036854775807)",
    ));
    survives(&seed(
        "torch.randn(2, 3)",
        "x.unsqueeze(-9223372036854775808)",
    ));
    survives(&seed(
        "torch.randn(2, 3)",
        "x.expand(-9223372036854775807, 3)",
    ));
    survives(&seed("torch.randn(2, 3)", "x // 0"));
    survives(&seed(
        "torch.randn(2, 3)",
        "x[(-9223372036854775807 - 1) // -1]",
    ));
}

/// Nesting just under the limit still parses and evaluates (the limit is not too tight for
/// the interpreter's stack either).
#[test]
fn nesting_under_the_limit_evaluates() {
    let seed = |expr: &str| {
        format!("import torch\n\ndef get_inputs():\n    return [torch.randn(2)]\n\ndef fused_operator(x):\n    return [x + ({expr})]\n")
    };
    for expr in [
        format!("{}1", "-".repeat(80)),
        format!("1{}", " + 1".repeat(80)),
        format!("{}1{}", "(".repeat(40), ")".repeat(40)),
        format!("x{}", ".abs()".repeat(40)),
    ] {
        let src = seed(&expr);
        if let Err(e) = drtc_frontends::lower(&src) {
            panic!("{}", e.render("nested.py", &src));
        }
    }
}

/// Assigning a layer twice to the same attribute replaced nothing and left two children with
/// one name (duplicate graph inputs); PyTorch replaces the module in place.
#[test]
fn reassigned_attributes_replace_in_place() {
    let src = "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.a = nn.Linear(4, 4)\n        self.b = nn.Parameter(torch.randn(3))\n        self.a = nn.Linear(4, 2)\n        self.b = nn.Parameter(torch.randn(2))\n\n    def forward(self, x):\n        return self.a(x) + self.b\n\ndef get_inputs():\n    return [torch.randn(5, 4)]\n\ndef get_init_inputs():\n    return []\n";
    survives(src);
    let g = drtc_frontends::lower(src).expect("lowers").graph;
    let sig = drtc_frontends::Signature::of(&g).to_json();
    assert_eq!(
        sig,
        r#"{"inputs":[{"shape":[5,4],"dtype":"float32"}],"params":{"b":{"shape":[2],"dtype":"float32"},"a.weight":{"shape":[2,4],"dtype":"float32"},"a.bias":{"shape":[2],"dtype":"float32"}},"outputs":[{"shape":[5,2],"dtype":"float32"}]}"#
    );
}

/// `math.sqrt` of a negative number produced a NaN constant, which the IR verifier cannot
/// accept (NaN attributes never compare equal); Python raises "math domain error".
#[test]
fn nan_constants_are_errors() {
    let seed = |body: &str| {
        format!("import torch\nimport math\n\ndef get_inputs():\n    return [torch.randn(2)]\n\ndef fused_operator(x):\n    return [{body}]\n")
    };
    survives(&seed("x * math.sqrt(-9223372036854775808.0 / math.pi)"));
    survives(&seed("x * math.log(-1.0)"));
    survives(&seed("x + float(\"nan\")"));
    survives(&seed("x + float(\"inf\") * 0"));
    survives(&seed("torch.clamp(x, min=float(\"nan\"))"));
}

/// Attribute values up to 2^40 overflowed products in the IR's output-size formulas
/// (`dilation * (kernel - 1)`) and reshape's element count.
#[test]
fn large_attributes_do_not_overflow_size_formulas() {
    let seed = |inputs: &str, body: &str| {
        format!("import torch\nimport torch.nn.functional as F\n\ndef get_inputs():\n    return [{inputs}]\n\ndef fused_operator(x, w):\n    return [{body}]\n")
    };
    let big = 1i64 << 40;
    let mid = (1i64 << 30) - 1;
    for v in [big, mid] {
        survives(&seed(
            "torch.randn(2, 4, 8, 8), torch.randn(4, 4, 3, 3)",
            &format!("F.max_pool2d(x, {v}, dilation={v})"),
        ));
        survives(&seed(
            "torch.randn(2, 4, 8, 8), torch.randn(4, 4, 3, 3)",
            &format!("F.conv2d(x, w, dilation={v}, padding={v})"),
        ));
        survives(&seed(
            "torch.randn(2, 4, 8, 8), torch.randn(4, 4, 3, 3)",
            &format!("F.conv_transpose2d(x, w, stride={v}, dilation={v}, output_padding={v})"),
        ));
        survives(&seed(
            "torch.randn(2, 4, 8, 8), torch.randn(4, 4, 3, 3)",
            &format!("x.view({v}, {v}, {v}, -1)"),
        ));
        survives(&seed(
            "torch.randn(2, 4, 8, 8), torch.randn(4, 4, 3, 3)",
            &format!("x.expand({v}, {v}, {v}, 2, 4, 8, 8)"),
        ));
        survives(&seed(
            &format!("torch.randn({v}, {v}), torch.randn({v})"),
            "x",
        ));
    }
}
