//! IR back to a PyTorch program in the DRTriton seed format (`get_inputs`,
//! `fused_operator`), used for reference programs, subproblems and synthesized data.

use super::names::PyNames;
use super::{torch_dtype, torch_expr, Dialect};
use crate::{DType, Graph, TensorType, ValueId};
use std::collections::HashMap;
use std::fmt::Write;

/// A random-input expression for a tensor of this type.
pub fn random_input(ty: &TensorType) -> String {
    let shape = format!(
        "[{}]",
        ty.shape
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    match ty.dtype {
        DType::Bool => format!("torch.randint(0, 2, {shape}).to(torch.bool)"),
        DType::I32 | DType::I64 => format!(
            "torch.randint(0, 2, {shape}, dtype={})",
            torch_dtype(ty.dtype)
        ),
        d => format!("torch.randn({shape}, dtype={})", torch_dtype(d)),
    }
}

/// Emits `g` as a seed-format program in the reference dialect.
pub fn emit_seed_program(g: &Graph) -> String {
    let mut out = String::from("import torch\n\n\ndef get_inputs():\n    return [\n");
    for &v in g.inputs() {
        writeln!(out, "        {},", random_input(g.ty(v))).unwrap();
    }
    out.push_str("    ]\n\n\n");
    // inputs first, then a fresh `tensor_k` for every result: never an input's name
    let mut namer = PyNames::new();
    namer.reserve("get_inputs");
    namer.reserve("fused_operator");
    let mut names: HashMap<ValueId, String> = HashMap::new();
    let mut params = vec![];
    for &v in g.inputs() {
        let n = namer.input(g.value(v).name.as_deref().unwrap_or("x"));
        params.push(n.clone());
        names.insert(v, n);
    }
    writeln!(out, "def fused_operator({}):", params.join(", ")).unwrap();
    let device = params
        .first()
        .map(|p| format!("{p}.device"))
        .unwrap_or_else(|| "'cpu'".into());
    for &n in g.body() {
        let node = g.node(n);
        let args: Vec<String> = node.inputs.iter().map(|v| names[v].clone()).collect();
        let tys: Vec<&TensorType> = node.inputs.iter().map(|&v| g.ty(v)).collect();
        let expr = torch_expr(
            node.op,
            &node.attrs,
            &args,
            &tys,
            &device,
            Dialect::Reference,
        );
        let first = namer.numbered("tensor_");
        let mut outs = vec![first.clone()];
        for k in 1..node.outputs.len() {
            outs.push(namer.fresh(&format!("{first}_{k}")));
        }
        let lhs = super::call::assign_targets(node.op, &node.attrs, &outs);
        writeln!(out, "    {lhs} = {expr}").unwrap();
        for (&v, name) in node.outputs.iter().zip(outs) {
            names.insert(v, name);
        }
    }
    let rets: Vec<String> = g.outputs().iter().map(|v| names[v].clone()).collect();
    writeln!(out, "    return [{}]", rets.join(", ")).unwrap();
    out
}
