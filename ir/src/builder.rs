//! A builder that checks attributes and infers result types as nodes are added.

use crate::{Attr, Attrs, Graph, InputKind, Op, TensorType, ValueId};

/// Why the builder refused a node.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BuildError {
    #[error("{op}: {message}")]
    Attr { op: &'static str, message: String },
    #[error("{op}: {message}")]
    Infer { op: &'static str, message: String },
}

/// Builds a [`Graph`], inferring every result type from the op table.
pub struct GraphBuilder {
    graph: Graph,
}

impl GraphBuilder {
    pub fn new(name: impl Into<String>) -> Self {
        GraphBuilder {
            graph: Graph::new(name),
        }
    }

    /// A runtime input.
    pub fn input(&mut self, name: impl Into<String>, ty: TensorType) -> ValueId {
        self.graph.add_input(name, InputKind::Activation, ty)
    }

    /// A parameter, named by its state_dict name.
    pub fn param(&mut self, name: impl Into<String>, ty: TensorType) -> ValueId {
        self.graph.add_input(name, InputKind::Param, ty)
    }

    /// A buffer, named by its state_dict name.
    pub fn buffer(&mut self, name: impl Into<String>, ty: TensorType) -> ValueId {
        self.graph.add_input(name, InputKind::Buffer, ty)
    }

    pub fn ty(&self, v: ValueId) -> &TensorType {
        self.graph.ty(v)
    }

    /// Adds `op(inputs) {attrs}` and returns its results. Missing attributes take defaults.
    pub fn op(
        &mut self,
        op: Op,
        inputs: &[ValueId],
        attrs: impl IntoIterator<Item = (&'static str, Attr)>,
    ) -> Result<Vec<ValueId>, BuildError> {
        let raw: Attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let attrs = op.normalize_attrs(&raw).map_err(|errs| BuildError::Attr {
            op: op.name(),
            message: errs
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("; "),
        })?;
        let types: Vec<&TensorType> = inputs.iter().map(|&v| self.graph.ty(v)).collect();
        let results = op
            .infer(&types, &attrs)
            .map_err(|message| BuildError::Infer {
                op: op.name(),
                message,
            })?;
        let node = self
            .graph
            .add_node_unchecked(op, inputs.to_vec(), attrs, results);
        Ok(self.graph.node(node).outputs.clone())
    }

    /// Like [`op`](Self::op) for the (usual) single-result ops.
    pub fn op1(
        &mut self,
        op: Op,
        inputs: &[ValueId],
        attrs: impl IntoIterator<Item = (&'static str, Attr)>,
    ) -> Result<ValueId, BuildError> {
        Ok(self.op(op, inputs, attrs)?[0])
    }

    /// A scalar constant of `dtype`.
    pub fn constant(&mut self, value: f64, dtype: crate::DType) -> ValueId {
        self.op1(
            Op::Full,
            &[],
            [
                ("shape", Attr::Ints(vec![])),
                ("value", Attr::Float(value)),
                ("dtype", Attr::DType(dtype)),
            ],
        )
        .expect("a scalar constant always type-checks")
    }

    pub fn finish(mut self, outputs: Vec<ValueId>) -> Graph {
        self.graph.set_outputs(outputs);
        self.graph
    }

    /// The graph built so far.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }
}
