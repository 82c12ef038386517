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
use drtc_passes::egraph::analysis::folds;
use drtc_passes::egraph::coverage::rules_matching;
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
    let synth = drtc_frontends::synth::catalog::family(op)
        .map(|f| {
            let text = format!("{f:?}");
            text.split([' ', '(', '{']).next().unwrap_or("").to_string()
        })
        .unwrap_or_else(|| "-".into());
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
    OpRow {
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
    }
}

/// Every op's row, in table order.
pub fn op_matrix() -> Vec<OpRow> {
    Op::ALL.iter().map(|&op| op_row(op)).collect()
}
