//! `drtc ops`: which layer supports which op. Every cell is the answer of the layer's own
//! code for the op's example application (`drtc_ir::op::example`), never a list kept by
//! hand: the frontend reads back the PyTorch call the emitter writes, inference types the
//! example, the FLOP rule counts it, the Triton backend says what it supports and the
//! stitcher shows what it generated, the synthesizer names its family, and the e-graph
//! counts the rules that match the op and whether it folds constants.

use drtc_backends::stitch::{generate_module, CodegenOptions, ModuleForm};
use drtc_backends::torch::{emit_seed_program, torch_expr};
use drtc_backends::triton::supports;
use drtc_ir::op::example::example_graph;
use drtc_ir::{Graph, Op, TensorType};
use drtc_passes::egraph::coverage::rules_matching;
use drtc_passes::egraph::types_and_constants::folds;
use drtc_passes::fuse::{plan_fusion, FuseOptions, RegionKind};

/// One op's row of the matrix.
#[derive(Clone, Debug, serde::Serialize)]
pub struct OpRow {
    pub op: &'static str,
    pub category: &'static str,
    /// The Python frontend reads the emitter's call back as this op: `yes`, or why not.
    pub frontend: String,
    /// The example's result types, or the inference error.
    pub infer: String,
    /// FLOPs of the example.
    pub flops: u64,
    /// `triton::supports`: template kind, library call, host view, or the gap.
    pub triton: String,
    /// What the stitcher generated for the example: `kernel`, `library`, `host`, or
    /// `pytorch` (computed with PyTorch and reported).
    pub codegen: String,
    /// The head of the PyTorch call the emitter writes.
    pub torch: String,
    /// The synthesizer's family, or `-` when it does not place the op.
    pub synth: String,
    /// Rewrite rules whose left-hand side matches the op.
    pub egraph_rules: usize,
    /// Whether constant folding evaluates the op.
    pub egraph_folds: bool,
    /// The layers that lack the op (see [`LAYERS`]), in that order.
    pub lacks: Vec<&'static str>,
}

/// The layers `drtc ops` asks, as [`OpRow::lacks`] names them, and when each lacks an op:
/// the frontend does not read the emitted call back as the op, inference rejects the
/// example, the Triton backend has no template, library call or view for it, the stitcher
/// computes it with PyTorch, the synthesizer does not place it, and no e-graph rule
/// matches it nor does constant folding evaluate it.
pub const LAYERS: [&str; 6] = ["frontend", "infer", "triton", "codegen", "synth", "e-graph"];

fn lacks(r: &OpRow, inferred: bool) -> Vec<&'static str> {
    let lacking = [
        r.frontend != "yes",
        !inferred,
        r.triton.starts_with("gap") || !inferred,
        r.codegen == "pytorch" || r.codegen == "-" || !inferred,
        r.synth == "-",
        r.egraph_rules == 0 && !r.egraph_folds,
    ];
    LAYERS
        .iter()
        .zip(lacking)
        .filter_map(|(&l, lacks)| lacks.then_some(l))
        .collect()
}

fn types(ts: &[TensorType]) -> String {
    ts.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads the emitted seed program back with the Python frontend.
fn frontend(g: &Graph, op: Op) -> String {
    let source = emit_seed_program(g);
    match drtc_frontends::python::lower(&source) {
        Ok(lowered) => {
            let ops: Vec<Op> = lowered
                .graph
                .body()
                .iter()
                .map(|&n| lowered.graph.node(n).op)
                .collect();
            if ops.contains(&op) {
                "yes".into()
            } else {
                let names: Vec<&str> = ops.iter().map(|o| o.name()).collect();
                if names.is_empty() {
                    "as no op (an identity)".into()
                } else {
                    format!("as {}", names.join("+"))
                }
            }
        }
        Err(e) => {
            let msg = e.to_string();
            format!("no: {}", msg.lines().next().unwrap_or(""))
        }
    }
}

fn codegen(g: &Graph, op: Op) -> String {
    let plan = plan_fusion(g, &FuseOptions::default());
    let m = generate_module(g, &plan, &ModuleForm::Seed, &CodegenOptions::default());
    let Some(r) = m.regions.iter().find(|r| r.ops.contains(&op.name())) else {
        return "-".into();
    };
    if r.fallback {
        return "pytorch".into();
    }
    match (&r.kernel, r.kind) {
        // a GEMM the policy sends to the library: the call plus an epilogue kernel
        (Some((name, _)), _) if name.ends_with("_epilogue") => "library".into(),
        (Some(_), _) => "kernel".into(),
        (None, RegionKind::Library | RegionKind::Contraction) => "library".into(),
        (None, _) => "host".into(),
    }
}

/// The row of `op`.
pub fn op_row(op: Op) -> OpRow {
    let def = op.def();
    let synth = drtc_synth::catalog::family(op)
        .map(|f| {
            let text = format!("{f:?}");
            text.split([' ', '(', '{']).next().unwrap_or("").to_string()
        })
        .unwrap_or_else(|| "-".into());
    let inferred = example_graph(op).is_ok();
    let (frontend, infer, flops, triton, codegen, torch) = match example_graph(op) {
        Ok(g) => {
            let node = *g.body().last().expect("one node");
            let n = g.node(node);
            let ins: Vec<&TensorType> = n.inputs.iter().map(|&v| g.ty(v)).collect();
            let outs: Vec<TensorType> = n.outputs.iter().map(|&v| g.ty(v).clone()).collect();
            let args: Vec<String> = (0..ins.len()).map(|i| format!("x{i}")).collect();
            let call = torch_expr(op, &n.attrs, &args, &ins, "x0.device");
            (
                frontend(&g, op),
                types(&outs),
                op.flops(&ins, &outs, &n.attrs),
                supports(&g, node).describe(),
                codegen(&g, op),
                call.split('(').next().unwrap_or("").to_string(),
            )
        }
        Err(e) => {
            let e = format!("no example: {e}");
            (e.clone(), e.clone(), 0, e.clone(), e.clone(), e)
        }
    };
    let mut row = OpRow {
        op: def.name,
        category: def.category.name(),
        frontend,
        infer,
        flops,
        triton,
        codegen,
        torch,
        synth,
        egraph_rules: rules_matching(op).len(),
        egraph_folds: folds(op),
        lacks: Vec::new(),
    };
    row.lacks = lacks(&row, inferred);
    row
}

/// Every op's row, in table order.
pub fn op_matrix() -> Vec<OpRow> {
    Op::ALL.iter().map(|&op| op_row(op)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use drtc_ir::Kind;

    /// A pointwise op needs its table row and its facts (`drtc_ir::op::pointwise`) and
    /// nothing else: every layer that derives from them has it. The frontend reads its
    /// call back, inference types its example, the Triton backend generates it as a kernel
    /// of the pointwise template, and its PyTorch call is one of its spellings. Only the
    /// synthesizer (opt-in lists) and the e-graph (rules written per op) may lack it;
    /// dropout in eval mode reads back as the identity it is.
    #[test]
    fn every_pointwise_op_reaches_every_derived_layer() {
        for &op in Op::ALL.iter().filter(|op| op.kind() == Kind::Pointwise) {
            let row = op_row(op);
            let lacking: Vec<&str> = row
                .lacks
                .iter()
                .copied()
                .filter(|&l| !matches!(l, "synth" | "e-graph"))
                .filter(|&l| !(op == Op::Dropout && l == "frontend"))
                .collect();
            assert!(lacking.is_empty(), "{op} lacks {lacking:?}: {row:?}");
            assert_eq!(row.triton, "template:pointwise", "{op}");
            assert_eq!(row.codegen, "kernel", "{op}");
            assert_eq!(
                row.egraph_folds,
                op.pointwise().unwrap().eval.is_some(),
                "{op}"
            );
        }
    }

    #[test]
    fn lacks_names_the_layers_without_the_op() {
        assert!(op_row(Op::Relu).lacks.is_empty());
        let cummax = op_row(Op::Cummax).lacks;
        assert!(
            cummax.contains(&"triton") && cummax.contains(&"codegen"),
            "{cummax:?}"
        );
        assert!(op_row(Op::Pow).lacks.contains(&"synth"));
    }
}
