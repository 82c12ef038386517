//! The graph: an SSA dataflow graph in one block, with arena storage and typed ids.

use crate::{Attrs, Op, TensorType};
use serde::{Deserialize, Serialize};

/// Index of a value in its graph's arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ValueId(pub u32);

/// Index of a node in its graph's arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NodeId(pub u32);

impl ValueId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl NodeId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a graph input is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    /// A runtime argument (`get_inputs()` / `forward` argument).
    Activation,
    /// A module parameter; the input's name is its state_dict name.
    Param,
    /// A module buffer (BatchNorm running statistics); the name is its state_dict name.
    Buffer,
}

/// Where a value comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueDef {
    /// The `index`-th graph input.
    Input { index: usize, kind: InputKind },
    /// The `index`-th result of `node`.
    Node { node: NodeId, index: usize },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Value {
    pub ty: TensorType,
    pub def: ValueDef,
    /// The name of a graph input (state_dict name for params and buffers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub op: Op,
    pub inputs: Vec<ValueId>,
    /// Normalized: every declared attribute present.
    pub attrs: Attrs,
    pub outputs: Vec<ValueId>,
}

/// A tensor program: inputs, nodes in program order, outputs.
///
/// Nodes removed by passes stay in the arena but leave `body`; [`Graph::compact`] drops
/// them and renumbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Graph {
    pub name: String,
    values: Vec<Value>,
    nodes: Vec<Node>,
    inputs: Vec<ValueId>,
    body: Vec<NodeId>,
    outputs: Vec<ValueId>,
}

impl Graph {
    pub fn new(name: impl Into<String>) -> Graph {
        Graph {
            name: name.into(),
            values: vec![],
            nodes: vec![],
            inputs: vec![],
            body: vec![],
            outputs: vec![],
        }
    }

    // ------------------------------------------------------------ queries

    pub fn value(&self, id: ValueId) -> &Value {
        &self.values[id.index()]
    }
    pub fn ty(&self, id: ValueId) -> &TensorType {
        &self.values[id.index()].ty
    }
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }
    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id.index()]
    }
    /// Graph inputs, in order.
    pub fn inputs(&self) -> &[ValueId] {
        &self.inputs
    }
    /// Live nodes, in program order.
    pub fn body(&self) -> &[NodeId] {
        &self.body
    }
    pub fn outputs(&self) -> &[ValueId] {
        &self.outputs
    }
    pub fn num_values(&self) -> usize {
        self.values.len()
    }
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }
    /// Is `id` a valid arena index?
    pub fn contains_value(&self, id: ValueId) -> bool {
        id.index() < self.values.len()
    }
    pub fn contains_node(&self, id: NodeId) -> bool {
        id.index() < self.nodes.len()
    }
    /// The node that defines `v`, if any.
    pub fn producer(&self, v: ValueId) -> Option<NodeId> {
        match self.value(v).def {
            ValueDef::Node { node, .. } => Some(node),
            ValueDef::Input { .. } => None,
        }
    }
    /// Number of uses of every value by live nodes and outputs, indexed by value.
    pub fn use_counts(&self) -> Vec<usize> {
        let mut counts = vec![0; self.values.len()];
        for node in self.body.iter().filter_map(|n| self.nodes.get(n.index())) {
            for &v in &node.inputs {
                if let Some(c) = counts.get_mut(v.index()) {
                    *c += 1;
                }
            }
        }
        for &v in &self.outputs {
            if let Some(c) = counts.get_mut(v.index()) {
                *c += 1;
            }
        }
        counts
    }
    /// Live nodes that use `v`.
    pub fn users(&self, v: ValueId) -> Vec<NodeId> {
        self.body
            .iter()
            .copied()
            .filter(|&n| {
                self.nodes
                    .get(n.index())
                    .is_some_and(|node| node.inputs.contains(&v))
            })
            .collect()
    }
    /// Total FLOPs of the live nodes (saturating; nodes with dangling ids count 0).
    pub fn flops(&self) -> u64 {
        let ty = |v: &ValueId| self.values.get(v.index()).map(|val| &val.ty);
        self.body
            .iter()
            .filter_map(|n| self.nodes.get(n.index()))
            .map(|node| {
                let ins: Option<Vec<&TensorType>> = node.inputs.iter().map(ty).collect();
                let outs: Option<Vec<TensorType>> =
                    node.outputs.iter().map(|v| ty(v).cloned()).collect();
                match (ins, outs) {
                    (Some(ins), Some(outs)) => node.op.flops(&ins, &outs, &node.attrs),
                    _ => 0,
                }
            })
            .fold(0u64, u64::saturating_add)
    }

    // ------------------------------------------------------------ raw mutation
    // (the builder wraps these with type inference; the parser and passes use them directly)

    /// Appends a graph input.
    pub fn add_input(
        &mut self,
        name: impl Into<String>,
        kind: InputKind,
        ty: TensorType,
    ) -> ValueId {
        let id = ValueId(self.values.len() as u32);
        self.values.push(Value {
            ty,
            def: ValueDef::Input {
                index: self.inputs.len(),
                kind,
            },
            name: Some(name.into()),
        });
        self.inputs.push(id);
        id
    }

    /// Appends a node with given result types, without checking anything.
    pub fn add_node_unchecked(
        &mut self,
        op: Op,
        inputs: Vec<ValueId>,
        attrs: Attrs,
        result_types: Vec<TensorType>,
    ) -> NodeId {
        let node = NodeId(self.nodes.len() as u32);
        let outputs = result_types
            .into_iter()
            .enumerate()
            .map(|(index, ty)| {
                let id = ValueId(self.values.len() as u32);
                self.values.push(Value {
                    ty,
                    def: ValueDef::Node { node, index },
                    name: None,
                });
                id
            })
            .collect();
        self.nodes.push(Node {
            op,
            inputs,
            attrs,
            outputs,
        });
        self.body.push(node);
        node
    }

    pub fn set_outputs(&mut self, outputs: Vec<ValueId>) {
        self.outputs = outputs;
    }

    /// Replaces the program order (passes that reorder or delete nodes).
    pub fn set_body(&mut self, body: Vec<NodeId>) {
        self.body = body;
    }

    /// Removes a node from the program (it stays in the arena until `compact`).
    pub fn remove_node(&mut self, id: NodeId) {
        self.body.retain(|&n| n != id);
    }

    /// Rewrites every use of `from` (by live nodes and outputs) to `to`.
    pub fn replace_all_uses(&mut self, from: ValueId, to: ValueId) {
        for i in 0..self.body.len() {
            let n = self.body[i];
            for v in &mut self.nodes[n.index()].inputs {
                if *v == from {
                    *v = to;
                }
            }
        }
        for v in &mut self.outputs {
            if *v == from {
                *v = to;
            }
        }
    }

    /// Drops dead nodes and values from the arenas and renumbers ids in program order.
    pub fn compact(&mut self) {
        let mut g = Graph::new(self.name.clone());
        let mut map = vec![None; self.values.len()];
        for &v in &self.inputs {
            let val = &self.values[v.index()];
            let kind = match &val.def {
                ValueDef::Input { kind, .. } => kind.clone(),
                ValueDef::Node { .. } => InputKind::Activation,
            };
            map[v.index()] =
                Some(g.add_input(val.name.clone().unwrap_or_default(), kind, val.ty.clone()));
        }
        for &n in &self.body {
            let node = &self.nodes[n.index()];
            let inputs = node
                .inputs
                .iter()
                .map(|v| map.get(v.index()).copied().flatten().unwrap_or(*v))
                .collect();
            let types = node
                .outputs
                .iter()
                .map(|&v| self.values[v.index()].ty.clone())
                .collect();
            let new = g.add_node_unchecked(node.op, inputs, node.attrs.clone(), types);
            for (old, new) in node.outputs.iter().zip(g.node(new).outputs.clone()) {
                map[old.index()] = Some(new);
            }
        }
        g.outputs = self
            .outputs
            .iter()
            .map(|v| map.get(v.index()).copied().flatten().unwrap_or(*v))
            .collect();
        *self = g;
    }
}
