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

/// Nodes added by one rewrite, in order, each inferred by [`insert`]: the rewrite places
/// `nodes` in the body where the value they replace was computed.
pub struct Builder<'g> {
    pub g: &'g mut Graph,
    pass: &'static str,
    pub nodes: Vec<NodeId>,
}

impl<'g> Builder<'g> {
    pub fn new(g: &'g mut Graph, pass: &'static str) -> Self {
        Builder {
            g,
            pass,
            nodes: vec![],
        }
    }

    /// Adds `op(inputs)` with `attrs` and returns its (first) result.
    pub fn op(
        &mut self,
        op: Op,
        inputs: Vec<ValueId>,
        attrs: &[(&str, Attr)],
    ) -> Result<ValueId, PassError> {
        let n = insert(self.g, self.pass, op, inputs, attrs)?;
        self.nodes.push(n);
        Ok(self.g.node(n).outputs[0])
    }

    pub fn binary(&mut self, op: Op, a: ValueId, b: ValueId) -> Result<ValueId, PassError> {
        self.op(op, vec![a, b], &[])
    }

    pub fn unary(&mut self, op: Op, a: ValueId) -> Result<ValueId, PassError> {
        self.op(op, vec![a], &[])
    }

    /// The nodes added, once `result` replaces every use of `old` (the rewritten value,
    /// described as `what` in the error when the two types differ).
    pub fn replace(
        self,
        old: ValueId,
        result: ValueId,
        what: &str,
    ) -> Result<Vec<NodeId>, PassError> {
        if self.g.ty(result) != self.g.ty(old) {
            return Err(PassError::Failed {
                pass: self.pass,
                message: format!(
                    "{what}: the rewrite has type {}, the value it replaces {}",
                    self.g.ty(result),
                    self.g.ty(old)
                ),
            });
        }
        self.g.replace_all_uses(old, result);
        Ok(self.nodes)
    }

    /// A scalar constant of `like`'s dtype.
    pub fn constant(&mut self, value: f64, like: ValueId) -> Result<ValueId, PassError> {
        let dtype = self.g.ty(like).dtype;
        self.op(
            Op::Full,
            vec![],
            &[
                ("shape", Attr::Ints(vec![])),
                ("value", Attr::Float(value)),
                ("dtype", Attr::DType(dtype)),
            ],
        )
    }
}
