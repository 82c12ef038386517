//! Adding a node from inside a rewrite: attributes normalized and result types inferred by
//! the op's own rules, failures reported as the pass's.

use crate::PassError;
use drtc_ir::{Attr, Attrs, Graph, NodeId, Op, ValueId};

/// Adds `op(inputs)` with `attrs` to `g` (outside the body: the caller places it) and
/// returns the node.
pub fn insert(
    g: &mut Graph,
    pass: &'static str,
    op: Op,
    inputs: Vec<ValueId>,
    attrs: &[(&str, Attr)],
) -> Result<NodeId, PassError> {
    let raw: Attrs = attrs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let attrs = op.normalize_attrs(&raw).map_err(|e| PassError::Failed {
        pass,
        message: format!("{} attributes: {e:?}", op.name()),
    })?;
    let tys: Vec<&drtc_ir::TensorType> = inputs.iter().map(|&v| g.ty(v)).collect();
    let results = op.infer(&tys, &attrs).map_err(|e| PassError::Failed {
        pass,
        message: format!("{}: {e}", op.name()),
    })?;
    Ok(g.add_node_unchecked(op, inputs, attrs, results))
}
