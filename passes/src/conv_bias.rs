//! `conv-bias`: moves a convolution's bias into the fused epilogue. `conv(x, w, b)` whose
//! only use is a pointwise op or a reduction-region op (a normalization, softmax, a
//! reduction) becomes `conv(x, w)` followed by `add(_, reshape(b, [C, 1, ...]))`, so the
//! library call runs without its bias and the add joins the consumer's Triton kernel
//! instead of costing cuDNN a separate pass over the output. The sum is the same one
//! PyTorch computes (each output element plus its channel's bias); only where it happens
//! changes. A pooling that commutes with a per-channel constant reads the convolution in
//! between (a max pool: `max(x + b) = max(x) + b`; an average pool whose divisor counts
//! exactly the elements it sums: no counted padding, no divisor override): then
//! `pool(conv(x, w, b))` becomes `add(pool(conv(x, w)), reshape(b))`, and the add joins the
//! pooling kernel's epilogue, on the pooled (smaller) tensor. Convolutions whose result is
//! a graph output or has several uses keep their bias (there the add would be a kernel of
//! its own), except a convolution that only a concatenation reads: its bias add is a
//! kernel of its own that writes the convolution's slice of the concatenation
//! (`drtc-backends`' `plan/concat.rs`), in place of PyTorch's bias pass and the copy
//! into the result.

use crate::fuse::{classify, RegionKind};
use crate::PassInfo;
use crate::{Changed, Pass, PassContext, PassError};
use drtc_ir::{Attr, Graph, Kind, NodeId, Op, Pool};

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
    matches!(op.kind(), Kind::Conv { .. })
}

/// The number of spatial dims of a convolution op (its kind's rank).
fn spatial_rank(op: Op) -> usize {
    match op.kind() {
        Kind::Conv { rank, .. } => rank,
        _ => 3,
    }
}

/// Whether pooling node `p` commutes with adding a per-channel constant to its input: a
/// max pool (a max over a non-empty window; padding is -inf), or an average pool whose
/// divisor counts exactly the elements it sums (no padding, or padding not counted; no
/// divisor override).
fn bias_commutes(g: &Graph, p: NodeId) -> bool {
    let node = g.node(p);
    let attr = |k: &str| node.attrs.get(k);
    match node.op.kind().pooling() {
        Some((Pool::Max, _)) => true,
        Some((Pool::Avg, _)) => {
            let unpadded = attr("padding")
                .and_then(Attr::as_ints)
                .is_some_and(|p| p.iter().all(|&x| x == 0));
            let uncounted = attr("count_include_pad").and_then(Attr::as_bool) == Some(false);
            let no_override = matches!(attr("divisor_override"), None | Some(Attr::None));
            (unpadded || uncounted) && no_override
        }
        _ => false,
    }
}

/// The single user of `v` when `v` has exactly one use.
fn single_user(g: &Graph, v: drtc_ir::ValueId) -> Option<NodeId> {
    let users = g.users(v);
    let uses: usize = users
        .iter()
        .map(|&u| g.node(u).inputs.iter().filter(|&&x| x == v).count())
        .sum();
    (uses == 1).then(|| users[0])
}

/// The result of conv node `n` when the node has a bias that can move: a rank-1 bias of
/// the result's dtype, and a result that is not a graph output.
fn biased_result(g: &Graph, n: NodeId) -> Option<drtc_ir::ValueId> {
    let node = g.node(n);
    if !is_conv(node.op) || node.inputs.len() != 3 {
        return None;
    }
    let out = node.outputs[0];
    let bias = g.ty(node.inputs[2]);
    let movable = !g.outputs().contains(&out) && bias.rank() == 1 && bias.dtype == g.ty(out).dtype;
    movable.then_some(out)
}

/// The pooling between conv node `n` and the bias add, when its bias moves past one.
fn pool_between(g: &Graph, n: NodeId) -> Option<NodeId> {
    let out = biased_result(g, n)?;
    let p = single_user(g, out)?;
    let pooled = g.node(p).outputs[0];
    let ok = bias_commutes(g, p)
        && g.node(p).inputs.len() == 1
        && g.node(p).outputs.len() == 1
        && g.ty(pooled).rank() == g.ty(out).rank()
        && !g.outputs().contains(&pooled);
    ok.then_some(p)
}

/// Whether the bias of conv node `n` should move into its consumer.
fn splittable(g: &Graph, n: NodeId) -> bool {
    let Some(out) = biased_result(g, n) else {
        return false;
    };
    single_user(g, out).is_some_and(|u| {
        matches!(
            classify(g, u),
            RegionKind::Pointwise | RegionKind::Reduction
        ) || g.node(u).op == Op::Cat
    }) || pool_between(g, n).is_some()
}

fn insert(
    g: &mut Graph,
    op: Op,
    inputs: Vec<drtc_ir::ValueId>,
    attrs: &[(&str, Attr)],
) -> Result<NodeId, PassError> {
    crate::insert::insert(g, "conv-bias", op, inputs, attrs)
}

impl Pass for ConvBias {
    fn name(&self) -> &'static str {
        "conv-bias"
    }

    fn run(&self, graph: &mut Graph, cx: &mut PassContext) -> Result<Changed, PassError> {
        let body = graph.body().to_vec();
        let mut order = vec![];
        let mut moved_pools: Vec<NodeId> = vec![];
        let mut changed = Changed::No;
        for (pos, &n) in body.iter().enumerate() {
            if moved_pools.contains(&n) {
                // replaced by its copy right after the unbiased convolution
                continue;
            }
            order.push(n);
            if !splittable(graph, n) {
                continue;
            }
            let pool = pool_between(graph, n);
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
            let mut plain = graph.node(conv).outputs[0];
            // the value the bias is added to, and the value the add replaces
            let mut out = out;
            let mut new_nodes = vec![conv];
            if let Some(p) = pool {
                let (pop, pattrs, pty, pout) = {
                    let node = graph.node(p);
                    (
                        node.op,
                        node.attrs.clone(),
                        graph.ty(node.outputs[0]).clone(),
                        node.outputs[0],
                    )
                };
                let copy = graph.add_node_unchecked(pop, vec![plain], pattrs, vec![pty]);
                plain = graph.node(copy).outputs[0];
                out = pout;
                new_nodes.push(copy);
                moved_pools.push(p);
            }
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
            let into_cat = single_user(graph, out).is_some_and(|u| graph.node(u).op == Op::Cat);
            graph.replace_all_uses(out, sum);
            order.pop();
            order.extend(new_nodes);
            order.extend([view, add]);
            let past = match pool {
                Some(p) => format!(" past its `{}`", graph.node(p).op.name()),
                None => String::new(),
            };
            let into = if into_cat {
                "a kernel that writes its slice of the concatenation"
            } else {
                "its consumer's kernel"
            };
            cx.log(format!(
                "#{pos} `{}`: bias moved{past} into {into}",
                op.name()
            ));
            changed = Changed::Yes;
        }
        graph.set_body(order);
        Ok(changed)
    }
}
