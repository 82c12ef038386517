//! `reverse-scans`: a scan between two flips of its own dim, `flip(cumsum(flip(x, [d]), d),
//! [d])`, is the scan run from the last index: `cumsum(x, d, reverse = true)` (and the same
//! for `cumprod`). PyTorch has no reverse scan, so programs spell it with the two flips;
//! each flip is a copy with no template (a pass over memory of its own, computed by
//! PyTorch), while the reduction template runs a reverse scan over the columns in
//! descending order at the cost of the forward one. The value is the same element by
//! element: `y[i] = sum_{j >= i} x[j]` either way, accumulated from the last index.
//!
//! Rewritten only when the scan's result has no other use than the outer flip (the forward
//! scan would otherwise still be computed); the inner flip stays while something else reads
//! it, and `dce` drops what is left unused.

use crate::insert::insert;
use crate::PassInfo;
use crate::{Changed, Pass, PassContext, PassError};
use drtc_ir::{Attr, Graph, NodeId, Op, ValueId};

const NAME: &str = "reverse-scans";

/// Registry entry.
pub const INFO: PassInfo = PassInfo {
    name: NAME,
    summary: "write flip(cumsum(flip(x, [d]), d), [d]) (and cumprod) as a reverse scan of x, \
              for the reduction template",
    options: &[],
    build: |_| Ok(Box::new(ReverseScans)),
};

/// The reverse-scan rewrite.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReverseScans;

/// The dim of `flip` when it flips exactly one dim (normalized), else `None`.
fn flipped_dim(g: &Graph, n: NodeId) -> Option<usize> {
    let node = g.node(n);
    if node.op != Op::Flip {
        return None;
    }
    let rank = g.ty(node.inputs[0]).rank() as i64;
    match node.attrs.get("dims").and_then(Attr::as_ints)? {
        [d] if rank > 0 => Some(d.rem_euclid(rank) as usize),
        _ => None,
    }
}

/// For a forward scan node `s`: the flipped input `x` and the outer flip's result, when
/// `s` sits between two flips of its own dim and the outer flip is its only use.
fn sandwich(g: &Graph, uses: &[usize], s: NodeId) -> Option<(ValueId, ValueId, usize)> {
    let node = g.node(s);
    if !matches!(node.op, Op::Cumsum | Op::Cumprod)
        || node.attrs.get("reverse").and_then(Attr::as_bool) == Some(true)
    {
        return None;
    }
    let rank = g.ty(node.inputs[0]).rank() as i64;
    let d = node.attrs.get("dim").and_then(Attr::as_int)?;
    if rank == 0 {
        return None;
    }
    let d = d.rem_euclid(rank) as usize;
    let inner = g.producer(node.inputs[0])?;
    (flipped_dim(g, inner)? == d).then_some(())?;
    let out = node.outputs[0];
    if uses[out.index()] != 1 {
        return None;
    }
    let [outer] = g.users(out)[..] else {
        return None;
    };
    (flipped_dim(g, outer)? == d).then_some(())?;
    Some((g.node(inner).inputs[0], g.node(outer).outputs[0], d))
}

impl Pass for ReverseScans {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(&self, graph: &mut Graph, cx: &mut PassContext) -> Result<Changed, PassError> {
        let body = graph.body().to_vec();
        let uses = graph.use_counts();
        let mut order = vec![];
        let mut changed = Changed::No;
        for (pos, &n) in body.iter().enumerate() {
            order.push(n);
            let Some((x, flipped_out, d)) = sandwich(graph, &uses, n) else {
                continue;
            };
            let op = graph.node(n).op;
            let scan = insert(
                graph,
                NAME,
                op,
                vec![x],
                &[("dim", Attr::Int(d as i64)), ("reverse", Attr::Bool(true))],
            )?;
            let result = graph.node(scan).outputs[0];
            if graph.ty(result) != graph.ty(flipped_out) {
                return Err(PassError::Failed {
                    pass: NAME,
                    message: format!(
                        "#{pos} `{}`: the reverse scan has type {}, the flipped scan {}",
                        op.name(),
                        graph.ty(result),
                        graph.ty(flipped_out)
                    ),
                });
            }
            graph.replace_all_uses(flipped_out, result);
            order.push(scan);
            cx.log(format!(
                "#{pos} `{}` between two flips of dim {d}: a reverse scan",
                op.name()
            ));
            changed = Changed::Yes;
        }
        graph.set_body(order);
        Ok(changed)
    }
}
