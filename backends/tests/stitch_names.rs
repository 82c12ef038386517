//! The stitcher's host code names every value it computes or allocates freshly (issue 29):
//! inputs named like its own values (`v<id>`), two inputs with one Python identifier
//! (`a.b`, `a_b`), and inputs named like what the host code calls (`triton`, `tl`, the
//! `_drtc_*` helpers, the kernels `drtc_k<i>_*`) neither overwrite nor shadow anything. Each
//! program mixes a PyTorch fallback, a contraction, a pointwise and a reduction kernel, and
//! reads its inputs after results are named; it runs under Triton's CPU interpreter against
//! its PyTorch reference. Needs a Python with torch and triton (`drtc setup`, or
//! `DRTC_PYTHON`).

mod common;

use drtc_backends::stitch::{generate_module, CodegenOptions, ModuleForm};
use drtc_backends::torch::emit_seed_program;
use drtc_ir::{Attr, DType, Graph, GraphBuilder, Op, TensorType};
use drtc_passes::fuse::{plan_fusion, FuseOptions};

/// Input names colliding with the host code's own names.
const NAME_SETS: [[&str; 5]; 4] = [
    // the inputs are values 0..4: the results are v5, v6, ...
    ["v6", "v5", "a.b", "a_b", "triton"],
    [
        "_drtc_sms",
        "drtc_k0_fallback",
        "tl",
        "drtc_k2_pointwise",
        "torch",
    ],
    ["x", "x_1", "x.1", "lambda", "drtc_forward"],
    ["tensor_0", "tensor_1", "v9", "v10", "min"],
];

/// cumsum (no template: PyTorch), matmul, a pointwise chain, a row sum, and inputs read
/// again at the end.
fn program(names: [&str; 5]) -> Graph {
    let t = |shape: Vec<i64>| TensorType::new(DType::F32, shape);
    let mut b = GraphBuilder::new("fused_operator");
    let x = b.input(names[0], t(vec![4, 8]));
    let y = b.input(names[1], t(vec![4, 8]));
    let w = b.input(names[2], t(vec![8, 8]));
    let bias = b.input(names[3], t(vec![8]));
    let scale = b.input(names[4], t(vec![4, 1]));
    let c = b.op1(Op::Cumsum, &[x], [("dim", Attr::Int(1))]).unwrap();
    let m = b.op1(Op::Matmul, &[c, w], []).unwrap();
    let s = b.op1(Op::Add, &[m, bias], []).unwrap();
    let e = b.op1(Op::Tanh, &[s], []).unwrap();
    let r = b
        .op1(
            Op::Sum,
            &[e],
            [("dim", Attr::Ints(vec![1])), ("keepdim", Attr::Bool(true))],
        )
        .unwrap();
    let o = b.op1(Op::Mul, &[r, scale], []).unwrap();
    let late = b.op1(Op::Sub, &[e, y], []).unwrap();
    let late = b.op1(Op::Mul, &[late, x], []).unwrap();
    b.finish(vec![o, late])
}

/// The parameters of `drtc_forward`, and the names its body assigns.
fn forward_names(source: &str) -> (Vec<String>, Vec<String>) {
    let start = source
        .find("def drtc_forward(")
        .expect("a drtc_forward function");
    let text = &source[start..];
    let header = text.lines().next().unwrap();
    let params = header["def drtc_forward(".len()..header.len() - 2]
        .split(", ")
        .map(str::to_string)
        .collect();
    let assigned = text
        .lines()
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        // 4 spaces: the body (the prologue's tensor conversions are indented further)
        .filter_map(|l| l.strip_prefix("    "))
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_once(" = ").map(|(lhs, _)| lhs))
        .flat_map(|lhs| lhs.split(',').map(|n| n.trim().to_string()))
        .filter(|n| !n.is_empty())
        .collect();
    (params, assigned)
}

#[test]
fn host_names_never_overwrite_or_shadow_an_input() {
    let out = std::env::temp_dir().join(format!("drtc-stitch-names-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let opts = CodegenOptions {
        interpret: true,
        ..Default::default()
    };
    let mut pairs = vec![];
    for (i, names) in NAME_SETS.into_iter().enumerate() {
        let g = program(names);
        let plan = plan_fusion(&g, &FuseOptions::default());
        plan.verify(&g).expect("a valid fusion plan");
        let module = generate_module(&g, &plan, &ModuleForm::Seed, &opts);
        assert!(module.kernel_count() >= 2, "{}", module.source);
        let (params, assigned) = forward_names(&module.source);
        assert_eq!(params.len(), 5, "{}", module.source);
        for (k, p) in params.iter().enumerate() {
            assert!(
                !params[..k].contains(p),
                "parameter {p} twice:\n{}",
                module.source
            );
            assert!(!assigned.contains(p), "{p} overwritten:\n{}", module.source);
            assert!(
                !["torch", "triton", "tl", "min", "lambda"].contains(&p.as_str())
                    && !p.starts_with("_drtc")
                    && !p.starts_with("drtc_"),
                "parameter {p} shadows a name the host code uses:\n{}",
                module.source
            );
        }
        let mut seen = std::collections::HashSet::new();
        for a in &assigned {
            assert!(seen.insert(a), "{a} assigned twice:\n{}", module.source);
        }
        pairs.push(common::write_pair(
            &out,
            &format!("names{i}"),
            &format!("names{i} {names:?}"),
            &emit_seed_program(&g),
            &module.source,
        ));
    }
    common::assert_pairs_match(&out, &pairs);
}
