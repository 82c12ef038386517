//! `conv-bias`: moves a convolution's bias into the fused epilogue. `conv(x, w, b)` whose
//! only use is a pointwise op or a reduction-region op (a normalization, softmax, a
//! reduction) becomes `conv(x, w)` followed by `add(_, reshape(b, [C, 1, ...]))`, so the
//! library call runs without its bias and the add joins the consumer's Triton kernel
//! instead of costing cuDNN a separate pass over the output. The sum is the same one
//! PyTorch computes (each output element plus its channel's bias); only where it happens
//! changes. Convolutions whose result is a graph output or has several uses keep their
//! bias (there the add would be a kernel of its own).

use crate::fuse::{classify, RegionKind};
use crate::PassInfo;
use crate::{Changed, Pass, PassContext, PassError};
use drtc_ir::{Attr, Attrs, Graph, NodeId, Op};

/// Registry entry.
pub const INFO: PassInfo = PassInfo {
    name: "conv-bias",
    summary: "call convolutions without their bias and add it in the consumer's kernel",
    options: &[],
    build: |_| Ok(Box::new(ConvBias)),
};

/// The bias split.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConvBias;

/// Whether `op` is a convolution (plain or transposed).
pub fn is_conv(op: Op) -> bool {
    matches!(
        op,
        Op::Conv1d
            | Op::Conv2d
            | Op::Conv3d
            | Op::ConvTranspose1d
            | Op::ConvTranspose2d
            | Op::ConvTranspose3d
    )
}

/// The number of spatial dims of a convolution op.
fn spatial_rank(op: Op) -> usize {
    match op {
        Op::Conv1d | Op::ConvTranspose1d => 1,
        Op::Conv2d | Op::ConvTranspose2d => 2,
        _ => 3,
    }
}

/// Whether the bias of conv node `n` should move into its consumer.
fn splittable(g: &Graph, n: NodeId) -> bool {
    let node = g.node(n);
    if !is_conv(node.op) || node.inputs.len() != 3 {
        return false;
    }
    let out = node.outputs[0];
    let bias = g.ty(node.inputs[2]);
    if g.outputs().contains(&out) || bias.rank() != 1 || bias.dtype != g.ty(out).dtype {
        return false;
    }
    let users = g.users(out);
    let uses: usize = users
        .iter()
        .map(|&u| g.node(u).inputs.iter().filter(|&&v| v == out).count())
        .sum();
    uses == 1
        && matches!(
            classify(g, users[0]),
            RegionKind::Pointwise | RegionKind::Reduction
        )
}

/// Adds `op(inputs)` with inferred types after position `at` of the body.
fn insert(
    g: &mut Graph,
    op: Op,
    inputs: Vec<drtc_ir::ValueId>,
    attrs: &[(&str, Attr)],
) -> Result<NodeId, PassError> {
    let raw: Attrs = attrs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let attrs = op.normalize_attrs(&raw).map_err(|e| PassError::Failed {
        pass: "conv-bias",
        message: format!("{} attributes: {e:?}", op.name()),
    })?;
    let tys: Vec<&drtc_ir::TensorType> = inputs.iter().map(|&v| g.ty(v)).collect();
    let results = op.infer(&tys, &attrs).map_err(|e| PassError::Failed {
        pass: "conv-bias",
        message: format!("{}: {e}", op.name()),
    })?;
    Ok(g.add_node_unchecked(op, inputs, attrs, results))
}

impl Pass for ConvBias {
    fn name(&self) -> &'static str {
        "conv-bias"
    }

    fn run(&self, graph: &mut Graph, cx: &mut PassContext) -> Result<Changed, PassError> {
        let body = graph.body().to_vec();
        let mut order = vec![];
        let mut changed = Changed::No;
        for (pos, &n) in body.iter().enumerate() {
            order.push(n);
            if !splittable(graph, n) {
                continue;
            }
            let (op, out, bias) = {
                let node = graph.node(n);
                (node.op, node.outputs[0], node.inputs[2])
            };
            let channels = graph.ty(bias).shape[0];
            let mut shape = vec![channels];
            shape.extend(std::iter::repeat_n(1, spatial_rank(op)));
            // the unbiased convolution: a new node with the same attributes
            let (x, w, attrs) = {
                let node = graph.node(n);
                (node.inputs[0], node.inputs[1], node.attrs.clone())
            };
            let tys = vec![graph.ty(out).clone()];
            let conv = graph.add_node_unchecked(op, vec![x, w], attrs, tys);
            let plain = graph.node(conv).outputs[0];
            let view = insert(
                graph,
                Op::Reshape,
                vec![bias],
                &[("shape", Attr::Ints(shape))],
            )?;
            let b = graph.node(view).outputs[0];
            let add = insert(graph, Op::Add, vec![plain, b], &[])?;
            let sum = graph.node(add).outputs[0];
            if graph.ty(sum) != graph.ty(out) {
                return Err(PassError::Failed {
                    pass: "conv-bias",
                    message: format!(
                        "the bias add of #{pos} has type {}, the convolution {}",
                        graph.ty(sum),
                        graph.ty(out)
                    ),
                });
            }
            graph.replace_all_uses(out, sum);
            order.pop();
            order.extend([conv, view, add]);
            cx.log(format!(
                "#{pos} `{}`: bias moved into its consumer's kernel",
                op.name()
            ));
            changed = Changed::Yes;
        }
        graph.set_body(order);
        Ok(changed)
    }
}
