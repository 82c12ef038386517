//! Emits a graph as a seed-format PyTorch program: `get_inputs()` with `torch.randn`,
//! `fused_operator(...)` as a flat sequence of `tensor_N = torch.op(...)` lines, and
//! `return [...]`, each line from the shared PyTorch emitter (`drtc_ir::pytorch`) in its seed
//! dialect. `argmax`/`argmin` followed by a cast to f32 are written as one
//! `torch.argmax(...).float()` line, as the seed format does. Attributes must be normalized,
//! as they are in every graph the builder or the text parser makes.

use super::catalog::family;
use drtc_ir::pytorch::{torch_expr, Dialect, PyNames};
use drtc_ir::{Attr, Graph, NodeId, Op, ValueId};
use std::collections::HashMap;
use std::fmt::Write;

/// Why a graph could not be emitted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EmitError {
    #[error("the seed emitter has no spelling for `{0}`")]
    Unsupported(&'static str),
}

struct Ctx<'g> {
    g: &'g Graph,
    names: HashMap<ValueId, String>,
    namer: PyNames,
}

impl Ctx<'_> {
    fn arg(&self, n: NodeId, i: usize) -> String {
        let v = self.g.node(n).inputs[i];
        self.names
            .get(&v)
            .cloned()
            .unwrap_or_else(|| format!("_missing{}", v.0))
    }
    fn args(&self, n: NodeId) -> Vec<String> {
        (0..self.g.node(n).inputs.len())
            .map(|i| self.arg(n, i))
            .collect()
    }
}

/// The right-hand side for node `n`: the shared PyTorch emitter in the seed dialect, for the
/// ops the synthesizer places (and casts).
fn expr(cx: &Ctx, n: NodeId) -> Result<String, EmitError> {
    let node = cx.g.node(n);
    if node.op != Op::Cast && family(node.op).is_none() {
        return Err(EmitError::Unsupported(node.op.name()));
    }
    let tys: Vec<_> = node.inputs.iter().map(|&v| cx.g.ty(v)).collect();
    Ok(torch_expr(
        node.op,
        &node.attrs,
        &cx.args(n),
        &tys,
        "'cpu'",
        Dialect::Seed,
    ))
}

/// The seed-format program text of `g`.
pub fn emit_seed(g: &Graph) -> Result<String, EmitError> {
    let mut names: HashMap<ValueId, String> = HashMap::new();
    // one sequence `tensor_0, tensor_1, ...`: the inputs, then every result (fresh names:
    // `get_inputs` and `fused_operator` have the same parameters and locals)
    let mut namer = PyNames::new();
    namer.reserve("get_inputs");
    namer.reserve("fused_operator");
    let mut out = String::from("import torch\n\n\ndef get_inputs():\n");
    let mut inputs = vec![];
    for &v in g.inputs() {
        let name = namer.numbered("tensor_");
        let shape = &g.ty(v).shape;
        let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        writeln!(
            out,
            "    {name} = torch.randn([{}], dtype=torch.{})",
            dims.join(", "),
            g.ty(v).dtype.torch_name()
        )
        .expect("writing to a String");
        names.insert(v, name.clone());
        inputs.push(name);
    }
    writeln!(out, "    return [{}]\n\n", inputs.join(", ")).expect("writing to a String");
    writeln!(out, "def fused_operator({}):", inputs.join(", ")).expect("writing to a String");
    let uses = g.use_counts();
    // argmax/argmin whose only use is a cast to f32: written as one `.float()` line
    let mut fused: HashMap<NodeId, NodeId> = HashMap::new();
    for &n in g.body() {
        let node = g.node(n);
        if node.op == Op::Cast && node.attrs.get("dtype") == Some(&Attr::DType(drtc_ir::DType::F32))
        {
            if let Some(p) = g.producer(node.inputs[0]) {
                if matches!(g.node(p).op, Op::Argmax | Op::Argmin)
                    && uses[node.inputs[0].index()] == 1
                {
                    fused.insert(p, n);
                }
            }
        }
    }
    let fused_casts: std::collections::HashSet<NodeId> = fused.values().copied().collect();
    let mut cx = Ctx { g, names, namer };
    for &n in g.body() {
        if fused_casts.contains(&n) {
            continue;
        }
        let mut rhs = expr(&cx, n)?;
        let mut result = g.node(n).outputs[0];
        if let Some(&cast) = fused.get(&n) {
            rhs.push_str(".float()");
            result = g.node(cast).outputs[0];
        }
        let name = cx.namer.numbered("tensor_");
        writeln!(out, "    {name} = {rhs}").expect("writing to a String");
        cx.names.insert(result, name);
    }
    let outs: Vec<String> = g
        .outputs()
        .iter()
        .map(|v| {
            cx.names
                .get(v)
                .cloned()
                .unwrap_or_else(|| format!("_missing{}", v.0))
        })
        .collect();
    writeln!(out, "    return [{}]", outs.join(", ")).expect("writing to a String");
    Ok(out)
}
