//! The op table drives the Python frontend: every spelling in the table lowers to its op,
//! and every op is reachable from Python code (the checklist a new op goes through).

use drtc_frontends::lower;
use drtc_ir::{Arity, Category, Op};

/// The ops of `src`'s lowered graph, in order.
fn ops(src: &str) -> Result<Vec<Op>, String> {
    let l = lower(src).map_err(|e| e.render("prog.py", src))?;
    Ok(l.graph.body().iter().map(|&n| l.graph.node(n).op).collect())
}

/// `fused_operator(x)` returning `expr`, on a 4x8 float tensor `x`.
fn seed(expr: &str) -> String {
    format!(
        "import torch\nimport torch.nn.functional as F\n\ndef get_inputs():\n    return [torch.randn(4, 8)]\n\ndef fused_operator(x):\n    return {expr}\n"
    )
}

/// The Python expression calling `call` (a canonical path) on `x`.
fn call_on_x(call: &str) -> String {
    match call.strip_prefix("Tensor.") {
        Some(m) => format!("x.{m}()"),
        None => format!("{call}(x)"),
    }
}

/// Every spelling of every one-tensor op whose other arguments all have defaults, called
/// with the tensor alone, lowers to exactly that op (generic and custom lowerings alike).
#[test]
fn every_one_tensor_spelling_lowers_to_its_op() {
    let mut checked = 0;
    for &op in Op::ALL {
        let def = op.def();
        let defaulted = def.attrs.iter().all(|a| a.default.value().is_some());
        // dropout with its training default draws random numbers: an error by design
        // clamp needs one of its bounds
        if def.arity != Arity::Exact(1) || !defaulted || matches!(op, Op::Dropout | Op::Clamp) {
            continue;
        }
        for call in def.torch.calls {
            let got = ops(&seed(&call_on_x(call))).unwrap_or_else(|e| panic!("{call}: {e}"));
            assert_eq!(got, vec![op], "{call}");
            checked += 1;
        }
    }
    assert!(checked > 80, "only {checked} spellings checked");
}

/// Table defaults reach the IR: `F.leaky_relu(x)` gets the table's negative_slope.
#[test]
fn defaults_are_the_tables() {
    let l = lower(&seed("F.leaky_relu(x)")).unwrap();
    let n = l.graph.body()[0];
    assert_eq!(
        l.graph.node(n).attrs.get("negative_slope"),
        Some(&Op::LeakyRelu.default_of("negative_slope"))
    );
    let l = lower(&seed("F.leaky_relu(x, 0.2)")).unwrap();
    let n = l.graph.body()[0];
    assert_eq!(
        l.graph.node(n).attrs.get("negative_slope"),
        Some(&drtc_ir::Attr::Float(0.2))
    );
}

/// Every parameter-free `nn` module of a pointwise op, built without arguments and called
/// on a tensor, lowers to its op.
#[test]
fn every_pointwise_module_lowers_to_its_op() {
    let mut checked = 0;
    for &op in Op::ALL {
        if op.category() != Category::Pointwise {
            continue;
        }
        for m in op.def().torch.modules {
            let src = format!(
                "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.f = nn.{}()\n\n    def forward(self, x):\n        return self.f(x)\n\ndef get_inputs():\n    return [torch.randn(4, 8)]\n\ndef get_init_inputs():\n    return []\n",
                m.name
            );
            let got = ops(&src).unwrap_or_else(|e| panic!("nn.{}: {e}", m.name));
            assert_eq!(got, vec![op], "nn.{}", m.name);
            checked += 1;
        }
    }
    assert!(checked >= 16, "only {checked} modules checked");
}

/// `nn.ReLU6` is `hardtanh` with the settings its table row gives it.
#[test]
fn module_settings_reach_the_op() {
    let src = "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.f = nn.ReLU6()\n\n    def forward(self, x):\n        return self.f(x)\n\ndef get_inputs():\n    return [torch.randn(4, 8)]\n\ndef get_init_inputs():\n    return []\n";
    let l = lower(src).unwrap();
    let node = l.graph.node(l.graph.body()[0]);
    assert_eq!(node.op, Op::Hardtanh);
    assert_eq!(node.attrs.get("max_val"), Some(&drtc_ir::Attr::Float(6.0)));
}

/// The checklist: every op is spelled in the table, or reached from Python by a construct
/// this test names (a new op must be added to one or the other).
#[test]
fn every_op_is_reachable_from_python() {
    let otherwise: &[(Op, &str)] = &[
        (Op::Full, "torch.zeros(4, 8) + x"),
        (Op::Cast, "x.double()"),
        (Op::Slice, "x[:, 1:3]"),
    ];
    for &op in Op::ALL {
        // the opaque ATen call is made by the export frontend only (tests/export_frontend.rs),
        // `arange` by the `expand-losses` rewrite only (passes' filetests)
        if !op.def().torch.calls.is_empty() || op == Op::Aten || op == Op::Arange {
            continue;
        }
        let (_, expr) = otherwise.iter().find(|(o, _)| *o == op).unwrap_or_else(|| {
            panic!("`{op}` has no torch spelling in the table and no construct here")
        });
        let got = ops(&seed(expr)).unwrap_or_else(|e| panic!("{expr}: {e}"));
        assert!(got.contains(&op), "{expr} lowered to {got:?}");
    }
}

/// Fixed: these spellings were in the frontend but unreachable (the namespace was cut at
/// the first dot); a matrix norm is refused rather than computed as a vector norm.
#[test]
fn dotted_namespaces_reach_their_ops() {
    assert_eq!(ops(&seed("torch.special.erf(x)")).unwrap(), vec![Op::Erf]);
    assert_eq!(
        ops(&seed("torch.linalg.vector_norm(x, ord=3, dim=1)")).unwrap(),
        vec![Op::Norm]
    );
    assert_eq!(ops(&seed("torch.linalg.norm(x)")).unwrap(), vec![Op::Norm]);
    assert!(ops(&seed("torch.linalg.norm(x, ord=2)")).is_err());
    assert!(ops(&seed("torch.linalg.norm(x, ord=2, dim=(0, 1))")).is_err());
}
