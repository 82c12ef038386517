//! `transposed-convs`: a transposed convolution of stride 1 over 1 or 3 spatial dims as
//! the convolution it equals. With stride 1, no output padding, dilation `d`, padding `p`
//! and kernel extent `k` per dim, `conv_transpose(x, w)` is `conv(x, w')` with padding
//! `d * (k - 1) - p` (where that is not negative), the same dilation and groups, and `w'`
//! the kernel with each group's input and output channels swapped (`[Cin, Cout / g, k...]`
//! to `[Cout, Cin / g, k...]`) and flipped along every spatial dim: each output element
//! sums the same products. Both are library calls; cuDNN's forward path is the faster one
//! for these: on level-1's stride-1 transposed convolutions (cuDNN in TF32, PyTorch's
//! default and what drtc's library calls keep) 1.85-7.4x on the 3-D ones and 1.2-1.3x on
//! the 1-D ones, where the 2-D ones split 0.88-1.01x and stay transposed
//! (`bench/results/conv_transpose_probe_h100_dfac450.md`). The kernel's reshaping and flip
//! are small copies of the weight, in the module's forward. Where the module then fails
//! verification, `drtc compile` takes the rewrite back (its retry ladder's rewrites rung):
//! cuDNN's forward algorithm may run in TF32 where the reference's transposed one does not
//! (58 in the probe: the transposed call 8.87 ms with TF32 allowed, 9.05 without; our
//! reading, not profiled: no tensor cores), so under the fp32 rule the two can differ by
//! TF32's rounding.

use crate::insert::Builder;
use crate::PassInfo;
use crate::{Changed, Pass, PassContext, PassError};
use drtc_ir::{Attr, Graph, NodeId, Op};

const NAME: &str = "transposed-convs";

/// Registry entry.
pub const INFO: PassInfo = PassInfo {
    name: NAME,
    summary: "compute 1-D and 3-D transposed convolutions of stride 1 as convolutions with \
              the flipped kernel (cuDNN's faster path)",
    options: &[],
    build: |_| Ok(Box::new(TransposedConvs)),
};

/// The stride-1 transposed-convolution rewrite.
#[derive(Clone, Copy, Debug, Default)]
pub struct TransposedConvs;

/// The convolution op a transposed one of these spatial dims becomes (1-D and 3-D only).
fn forward_op(op: Op) -> Option<Op> {
    match op {
        Op::ConvTranspose1d => Some(Op::Conv1d),
        Op::ConvTranspose3d => Some(Op::Conv3d),
        _ => None,
    }
}

/// The equivalent convolution's padding, groups and dilation for transposed node `n`,
/// when it has stride 1, no output padding and a padding no larger than
/// `d * (k - 1)` in every dim.
fn equivalent(g: &Graph, n: NodeId) -> Option<(Vec<i64>, i64, Vec<i64>)> {
    let node = g.node(n);
    let ints = |k: &str| node.attrs.get(k).and_then(Attr::as_ints);
    let (stride, padding) = (ints("stride")?, ints("padding")?);
    let (output_padding, dilation) = (ints("output_padding")?, ints("dilation")?);
    let groups = node.attrs.get("groups").and_then(Attr::as_int)?;
    let kernel = &g.ty(node.inputs[1]).shape[2..];
    let ok = stride.iter().all(|&s| s == 1) && output_padding.iter().all(|&o| o == 0);
    let pad: Vec<i64> = (dilation.iter().zip(kernel).zip(padding))
        .map(|((&d, &k), &p)| d * (k - 1) - p)
        .collect();
    (ok && pad.iter().all(|&q| q >= 0) && pad.len() == kernel.len())
        .then(|| (pad, groups, dilation.to_vec()))
}

impl Pass for TransposedConvs {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(&self, graph: &mut Graph, cx: &mut PassContext) -> Result<Changed, PassError> {
        let body = graph.body().to_vec();
        let mut order = vec![];
        let mut changed = Changed::No;
        for (pos, &n) in body.iter().enumerate() {
            let op = graph.node(n).op;
            let (Some(conv_op), Some((pad, groups, dilation))) =
                (forward_op(op), equivalent(graph, n))
            else {
                order.push(n);
                continue;
            };
            let (inputs, out) = {
                let node = graph.node(n);
                (node.inputs.clone(), node.outputs[0])
            };
            let w = inputs[1];
            let shape = graph.ty(w).shape.clone();
            let (cin, cout_g, kernel) = (shape[0], shape[1], shape[2..].to_vec());
            let spatial: Vec<i64> = (2..2 + kernel.len() as i64).collect();
            let mut b = Builder::new(graph, NAME);
            // [Cin, Cout / g, k...] -> [g, Cin / g, Cout / g, k...], channels swapped within
            // each group, -> [Cout, Cin / g, k...], flipped along the spatial dims
            let grouped: Vec<i64> = [groups, cin / groups, cout_g]
                .into_iter()
                .chain(kernel.iter().copied())
                .collect();
            let w = b.op(Op::Reshape, vec![w], &[("shape", Attr::Ints(grouped))])?;
            let w = b.op(
                Op::Transpose,
                vec![w],
                &[("dim0", Attr::Int(1)), ("dim1", Attr::Int(2))],
            )?;
            let forward: Vec<i64> = [groups * cout_g, cin / groups]
                .into_iter()
                .chain(kernel.iter().copied())
                .collect();
            let w = b.op(Op::Reshape, vec![w], &[("shape", Attr::Ints(forward))])?;
            let w = b.op(Op::Flip, vec![w], &[("dims", Attr::Ints(spatial))])?;
            let mut conv_inputs = vec![inputs[0], w];
            conv_inputs.extend(inputs.get(2).copied());
            let result = b.op(
                conv_op,
                conv_inputs,
                &[
                    ("stride", Attr::Ints(vec![1; kernel.len()])),
                    ("padding", Attr::Ints(pad.clone())),
                    ("dilation", Attr::Ints(dilation)),
                    ("groups", Attr::Int(groups)),
                ],
            )?;
            let added = std::mem::take(&mut b.nodes);
            if graph.ty(result) != graph.ty(out) {
                return Err(PassError::Failed {
                    pass: NAME,
                    message: format!(
                        "#{pos} `{}`: the convolution has type {}, the transposed one {}",
                        op.name(),
                        graph.ty(result),
                        graph.ty(out)
                    ),
                });
            }
            graph.replace_all_uses(out, result);
            order.push(n);
            order.extend(added);
            cx.log(format!(
                "#{pos} `{}` of stride 1: `{}` with the flipped kernel, padding {pad:?}",
                op.name(),
                conv_op.name()
            ));
            changed = Changed::Yes;
        }
        graph.set_body(order);
        Ok(changed)
    }
}
