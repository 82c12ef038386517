//! The host side of concatenations without copies (`plan/concat.rs`): which outputs of
//! the kernel being launched are views of a concatenation's result, which operands were
//! written there, and the lines that allocate the result and copy the other operands.

use crate::plan::Placement;
use drtc_ir::{Attr, Graph, NodeId, ValueId};
use std::collections::HashSet;

/// What the stitcher has done with the plan's placements so far.
pub(crate) struct InPlace<'p> {
    placements: &'p [Placement],
    /// Outputs of the kernel being launched that are views of a concatenation's result.
    current: HashSet<ValueId>,
    /// Operands written into their slice (their kernel honored the placement).
    written: HashSet<ValueId>,
    /// Concatenation results allocated already.
    allocated: HashSet<ValueId>,
}

impl<'p> InPlace<'p> {
    pub(crate) fn new(placements: &'p [Placement]) -> Self {
        InPlace {
            placements,
            current: HashSet::new(),
            written: HashSet::new(),
            allocated: HashSet::new(),
        }
    }

    /// Region `region`'s kernel is launched next; `honored`: it was generated with the
    /// plan's placements and writes them (a kernel generated otherwise writes contiguously).
    pub(crate) fn begin(&mut self, region: usize, honored: bool) {
        self.current = self
            .placements
            .iter()
            .filter(|p| honored && p.producer == region)
            .map(|p| p.value)
            .collect();
    }

    pub(crate) fn end(&mut self) {
        self.current.clear();
    }

    /// The placement of output `v` of the kernel being launched, when it is written in
    /// place; recorded as written.
    pub(crate) fn output(&mut self, v: ValueId) -> Option<Placement> {
        if !self.current.contains(&v) {
            return None;
        }
        self.written.insert(v);
        self.placements.iter().find(|p| p.value == v).cloned()
    }

    /// Whether the concatenation result `cat` must be allocated now (the first time).
    pub(crate) fn allocate(&mut self, cat: ValueId) -> bool {
        self.allocated.insert(cat)
    }

    /// For concatenation node `n`, when some operand was written in place: the operands
    /// left to copy, each with the dim, its offset and its length there (`None`: no
    /// operand was, so PyTorch's `cat` computes it).
    pub(crate) fn copies(&self, g: &Graph, n: NodeId) -> Option<Vec<(ValueId, usize, i64, i64)>> {
        let node = g.node(n);
        let cat = node.outputs[0];
        let placed = |v: &ValueId| {
            self.written.contains(v)
                && self
                    .placements
                    .iter()
                    .any(|p| p.cat == cat && p.value == *v)
        };
        if !node.inputs.iter().any(placed) {
            return None;
        }
        let rank = g.ty(cat).rank().max(1) as i64;
        let dim = node.attrs.get("dim").and_then(Attr::as_int).unwrap_or(0);
        let dim = dim.rem_euclid(rank) as usize;
        let mut offset = 0;
        let mut out = vec![];
        for v in &node.inputs {
            let len = g.ty(*v).shape[dim];
            if !placed(v) {
                out.push((*v, dim, offset, len));
            }
            offset += len;
        }
        Some(out)
    }
}

/// The Python expression of a slice of `buf` along `dim`.
pub(crate) fn slice(buf: &str, dim: usize, offset: i64, len: i64) -> String {
    format!("{buf}.narrow({dim}, {offset}, {len})")
}
