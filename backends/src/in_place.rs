//! The host side of outputs stored elsewhere: concatenations without copies
//! (`plan/concat.rs`: which outputs of the kernel being launched are views of a
//! concatenation's result, which operands were written there, the copies of the others)
//! and chains of views written by their producer (`plan/view_chain.rs`: the chain's result
//! allocated for the kernel, its view nodes not emitted), and concatenations that are the
//! first slice of a later one (`plan/cat_prefix.rs`: how many of the later one's operands
//! were copied into it so far).

use crate::plan::{operand_slices, CatPrefix, Placement, ViewWrite};
use drtc_ir::{Graph, NodeId, ValueId};
use std::collections::{HashMap, HashSet};

/// What the stitcher has done with the plan's placements so far.
pub(crate) struct InPlace<'p> {
    placements: &'p [Placement],
    view_writes: &'p [ViewWrite],
    /// Outputs of the kernel being launched that are stored elsewhere (a view of a
    /// concatenation's slice, a chain of views' result).
    current: HashSet<ValueId>,
    /// Outputs written elsewhere (their kernel honored the plan).
    written: HashSet<ValueId>,
    /// Results (of concatenations, of chains of views) allocated already.
    allocated: HashSet<ValueId>,
    prefixes: &'p [CatPrefix],
    /// Per result of a chain of concatenations: its leading operands copied in so far.
    filled: HashMap<ValueId, usize>,
}

impl<'p> InPlace<'p> {
    pub(crate) fn new(
        placements: &'p [Placement],
        view_writes: &'p [ViewWrite],
        prefixes: &'p [CatPrefix],
    ) -> Self {
        InPlace {
            placements,
            view_writes,
            current: HashSet::new(),
            written: HashSet::new(),
            allocated: HashSet::new(),
            prefixes,
            filled: HashMap::new(),
        }
    }

    /// The plan's entry when concatenation node `n` is the first slice of a later one.
    pub(crate) fn prefix(&self, n: NodeId) -> Option<&'p CatPrefix> {
        self.prefixes.iter().find(|p| p.node == n)
    }

    /// Concatenation node `n`, the first slice of `whole`'s result, is reached: its operands
    /// not yet copied into `whole`, each with its offset and length along the dim.
    pub(crate) fn fill(
        &mut self,
        g: &Graph,
        n: NodeId,
        whole: ValueId,
    ) -> Vec<(ValueId, i64, i64)> {
        let (_, slices) = operand_slices(g, n);
        let done = self.filled.entry(whole).or_insert(0);
        let left = slices.get(*done..).map(<[_]>::to_vec).unwrap_or_default();
        *done = (*done).max(slices.len());
        left
    }

    /// Region `region`'s kernel is launched next; `honored`: it was generated with the
    /// plan's placements and writes them (a kernel generated otherwise writes contiguously).
    pub(crate) fn begin(&mut self, region: usize, honored: bool) {
        let cats = self.placements.iter().map(|p| (p.producer, p.value));
        let chains = self.view_writes.iter().map(|w| (w.producer, w.value));
        self.current = cats
            .chain(chains)
            .filter(|&(p, _)| honored && p == region)
            .map(|(_, v)| v)
            .collect();
    }

    pub(crate) fn end(&mut self) {
        self.current.clear();
    }

    /// Where output `v` of the kernel being launched is stored, when not in a tensor of its
    /// own; recorded as written.
    pub(crate) fn output(&mut self, v: ValueId) -> Option<Stored> {
        if !self.current.contains(&v) {
            return None;
        }
        self.written.insert(v);
        if let Some(w) = self.view_writes.iter().find(|w| w.value == v) {
            return Some(Stored::Views(w.result));
        }
        self.placements
            .iter()
            .find(|p| p.value == v)
            .cloned()
            .map(Stored::Cat)
    }

    /// Whether view node `n` belongs to a chain its producer's kernel wrote through: its
    /// result is the tensor the kernel wrote, and the node is not emitted.
    pub(crate) fn absorbed(&self, n: NodeId) -> bool {
        self.view_writes
            .iter()
            .any(|w| self.written.contains(&w.value) && w.nodes.contains(&n))
    }

    /// Whether the result `v` must be allocated now (the first time).
    pub(crate) fn allocate(&mut self, v: ValueId) -> bool {
        self.allocated.insert(v)
    }

    /// For concatenation node `n`, when some operand was written in place or an earlier
    /// concatenation of its chain allocated its result: the operands left to copy, each
    /// with the dim, its offset and its length there (`None`: neither, so PyTorch's `cat`
    /// computes it).
    pub(crate) fn copies(&self, g: &Graph, n: NodeId) -> Option<Vec<(ValueId, usize, i64, i64)>> {
        let cat = g.node(n).outputs[0];
        let placed = |v: ValueId| {
            self.written.contains(&v)
                && self.placements.iter().any(|p| p.cat == cat && p.value == v)
        };
        let (dim, slices) = operand_slices(g, n);
        // the leading operands an earlier concatenation of its chain copied in
        let filled = self.filled.get(&cat).copied();
        if filled.is_none() && !slices.iter().any(|&(v, ..)| placed(v)) {
            return None;
        }
        let left = (slices.into_iter().enumerate())
            .filter(|&(i, (v, ..))| i >= filled.unwrap_or(0) && !placed(v));
        Some(
            left.map(|(_, (v, offset, len))| (v, dim, offset, len))
                .collect(),
        )
    }
}

/// Where a kernel output is stored when not in a tensor of its own.
pub(crate) enum Stored {
    /// Its slice of a concatenation's result.
    Cat(Placement),
    /// The result of the chain of views that reads it (this value).
    Views(ValueId),
}

/// The Python expression of a slice of `buf` along `dim`.
pub(crate) fn slice(buf: &str, dim: usize, offset: i64, len: i64) -> String {
    format!("{buf}.narrow({dim}, {offset}, {len})")
}
