//! A generated kernel: its Triton source and how the host launches it.

use super::statements::{InputArg, Program};
use super::store_map::StoreMap;
use drtc_ir::{Graph, NodeId, ValueId};
use std::fmt::Write;

/// Launch configuration of a kernel (block sizes by name, warps, stages).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    pub blocks: Vec<(&'static str, u64)>,
    pub num_warps: u32,
    /// Software-pipelining stages; passed to the launch only above 1, so 1 means Triton's
    /// own default (3 on CUDA), under which every configuration of 1 was measured.
    pub num_stages: u32,
}

impl LaunchConfig {
    pub fn block(&self, name: &str) -> u64 {
        self.blocks
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, b)| *b)
            .unwrap_or(1)
    }
    pub fn describe(&self) -> String {
        let b: Vec<String> = self
            .blocks
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        format!(
            "{} warps={} stages={}",
            b.join(" "),
            self.num_warps,
            self.num_stages
        )
    }
}

/// One generated Triton kernel.
#[derive(Clone, Debug)]
pub struct TritonKernel {
    pub name: String,
    /// The `@triton.jit` function.
    pub source: String,
    /// Region inputs in kernel-argument order (each followed by its strides).
    pub inputs: Vec<InputArg>,
    /// Region outputs, written contiguously, in argument order after the inputs.
    pub outputs: Vec<ValueId>,
    /// The launch grid (static: every shape is known).
    pub grid: Vec<u64>,
    /// A Python expression for a one-dimensional grid computed at launch (persistent
    /// kernels: `min(tiles, _drtc_sms())`), used instead of `grid` when set.
    pub grid_expr: Option<String>,
    pub config: LaunchConfig,
    /// Extra scalar arguments passed by the host after the outputs, with their values.
    pub extra_args: Vec<(String, String)>,
    /// Scratch buffers of the region (allocated by the host), passed after the outputs.
    pub scratch_args: Vec<String>,
    /// Host-side rewrites of inputs before the launch, by input index: a Python
    /// expression over `{x}` (the input) whose value is passed instead (GEMM operands made
    /// contiguous along K).
    pub operand_prep: Vec<(usize, String)>,
    /// Launched once per value `0..n` of this constexpr argument, one after another on the
    /// stream, each launch specialized on its value (a transposed convolution's phases:
    /// `conv_phase.rs`); `None`: one launch.
    pub phase_launches: Option<(String, u64)>,
}

/// Where a kernel writes each of its outputs, by output index: its own contiguous tensor
/// (`None`, or no entry), or elsewhere ([`StoreMap`]): a slice of a concatenation's result
/// (`plan/concat.rs`), or the result of a chain of views (`plan/view_chain.rs`); the host
/// passes the tensor written as the output.
pub type Placements = [Option<StoreMap>];

/// The placement of output `k`, if it is not stored at its own contiguous offset.
pub fn placement(placed: &Placements, k: usize) -> Option<&StoreMap> {
    placed.get(k).and_then(Option::as_ref)
}

/// A comment naming the IR ops a kernel computes.
pub fn ops_comment(g: &Graph, nodes: &[NodeId]) -> String {
    let pos: std::collections::HashMap<NodeId, usize> =
        g.body().iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let ops: Vec<String> = nodes
        .iter()
        .map(|n| {
            format!(
                "#{} {}",
                pos.get(n).copied().unwrap_or(0),
                g.node(*n).op.name()
            )
        })
        .collect();
    let mut s = String::from("    # computes:");
    let mut width = s.len();
    for (i, o) in ops.iter().enumerate() {
        let piece = if i == 0 {
            format!(" {o}")
        } else {
            format!(", {o}")
        };
        if width + piece.len() > 96 {
            s.push_str(",\n    #  ");
            s.push_str(o);
            width = 8 + o.len();
        } else {
            width += piece.len();
            s.push_str(&piece);
        }
    }
    s.push('\n');
    s
}

/// The parameter list: inputs with strides, outputs, extra scalars, then constexprs.
pub fn signature(
    prog: &Program,
    n_outputs: usize,
    extra: &[String],
    constexprs: &[&str],
) -> String {
    let mut params = vec![];
    for a in &prog.inputs {
        params.push(a.ptr.clone());
        for (_, s) in &a.strides {
            params.push(s.clone());
        }
    }
    for k in 0..n_outputs {
        params.push(format!("out{k}"));
    }
    params.extend(extra.iter().cloned());
    for a in prog.inputs.iter().filter(|a| a.flat) {
        params.push(format!("{}: tl.constexpr", a.flat_flag()));
    }
    for c in constexprs {
        params.push(format!("{c}: tl.constexpr"));
    }
    params.join(", ")
}

/// Emits the statements `order` of `prog` as `var = code` lines at `indent`.
pub fn emit_stmts(out: &mut String, prog: &Program, order: &[usize], indent: &str) {
    use super::statements::Code;
    for &i in order {
        match &prog.stmts[i].code {
            Code::Expr(code) => writeln!(out, "{indent}{} = {code}", prog.stmts[i].var).unwrap(),
            // emitted by the reduction template's passes, which own their accumulators
            Code::Reduce { .. } | Code::Scan { .. } => {}
        }
    }
}

/// Python lines decomposing the flat index `flat` into per-dim indices `{prefix}{d}` of
/// `shape` (row-major), skipping dims of size 1. The remainder variable is named after
/// `flat`, so decompositions before and inside a loop never share a variable (Triton
/// requires loop-carried variables to keep their type).
pub fn decompose(out: &mut String, indent: &str, flat: &str, shape: &[i64], names: &[String]) {
    let dims: Vec<usize> = (0..shape.len()).filter(|&d| shape[d] != 1).collect();
    if dims.is_empty() {
        return;
    }
    if dims.len() == 1 {
        writeln!(out, "{indent}{} = {flat}", names[dims[0]]).unwrap();
        return;
    }
    let rem = format!("{flat}_rem");
    writeln!(out, "{indent}{rem} = {flat}").unwrap();
    for (k, &d) in dims.iter().enumerate().rev() {
        if k == 0 {
            writeln!(out, "{indent}{} = {rem}", names[d]).unwrap();
        } else {
            writeln!(out, "{indent}{} = {rem} % {}", names[d], shape[d]).unwrap();
            writeln!(out, "{indent}{rem} = {rem} // {}", shape[d]).unwrap();
        }
    }
}

/// The head of a kernel's source: `@triton.jit`, the signature (no extra scalars), the
/// ops it computes, `notes` (comment lines, without `#`), and the dense output order
/// when it is not the dims' own.
#[allow(clippy::too_many_arguments)]
pub fn kernel_head(
    g: &Graph,
    name: &str,
    prog: &Program,
    (n_outputs, extra, constexprs): (usize, &[String], &[&str]),
    nodes: &[NodeId],
    notes: &[String],
    order: &[usize],
) -> String {
    let mut source = String::new();
    writeln!(source, "@triton.jit").unwrap();
    writeln!(
        source,
        "def {name}({}):",
        signature(prog, n_outputs, extra, constexprs)
    )
    .unwrap();
    source.push_str(&ops_comment(g, nodes));
    for n in notes {
        writeln!(source, "    # {n}").unwrap();
    }
    if order.iter().enumerate().any(|(i, &d)| i != d) {
        writeln!(
            source,
            "    # outputs dense in dim order {order:?} (outermost first)"
        )
        .unwrap();
    }
    source
}

/// A store of statement `r` into output `k` (value `v`) at `offset`: broadcast to the
/// Triton shape `shape` and cast to `v`'s storage type.
pub fn store_line(
    g: &Graph,
    prog: &Program,
    (k, v, r): (usize, ValueId, usize),
    offset: &str,
    shape: &str,
    mask: &str,
) -> String {
    format!(
        "    tl.store(out{k} + {offset}, ({} + tl.zeros({shape}, {})).to({}), mask={mask})\n",
        prog.var(r),
        super::ty::compute_ty(prog.stmts[r].dtype),
        super::ty::storage_ty(g.ty(v).dtype)
    )
}
