//! The host side of concatenations and chains of views stored by their producers: their
//! results allocated the first time a kernel output is stored in them, the operands no
//! kernel wrote copied into their slices, and the concatenations that are views of a later
//! one's result (`plan/concat.rs`, `plan/cat_prefix.rs`, `plan/view_chain.rs`; what was done
//! so far is `in_place.rs`).

use super::Host;
use crate::in_place::slice;
use crate::layout::memory_format;
use crate::torch::torch_dtype;
use drtc_ir::{NodeId, ValueId};
use std::fmt::Write;

impl Host<'_> {
    /// Allocates the tensor `result` (a concatenation's result, a chain of views' result)
    /// the first time a kernel output is stored in it.
    pub(super) fn alloc_result(&mut self, result: ValueId, channels_last: bool) {
        if self.in_place.allocate(result) {
            let (name, t) = (self.name(result), self.g.ty(result));
            let (dtype, device) = (torch_dtype(t.dtype), &self.device);
            let format = if channels_last {
                format!(", memory_format={}", memory_format(t.rank()))
            } else {
                String::new()
            };
            writeln!(
                self.body,
                "    {name} = torch.empty({:?}, dtype={dtype}, device={device}{format})",
                t.shape
            )
            .unwrap();
        }
    }

    /// A concatenation some of whose operands were written in place: the others are
    /// copied into their slices. `false` when none was (PyTorch's `cat` then).
    pub(super) fn cat_in_place(&mut self, n: NodeId) -> bool {
        if let Some(p) = self.in_place.prefix(n) {
            // the first slice of a later concatenation's result (`plan/cat_prefix.rs`): its
            // operands not copied there yet are, and the result is a view
            self.alloc_result(p.whole, p.channels_last);
            let buf = self.name(p.whole);
            for (v, offset, len) in self.in_place.fill(self.g, n, p.whole) {
                let (view, src) = (slice(&buf, p.dim, offset, len), self.name(v));
                writeln!(self.body, "    {view}.copy_({src})").unwrap();
                self.launches += 1;
            }
            let name = self.name(self.g.node(n).outputs[0]);
            writeln!(self.body, "    {name} = {}", slice(&buf, p.dim, 0, p.len)).unwrap();
            return true;
        }
        let Some(copies) = self.in_place.copies(self.g, n) else {
            return false;
        };
        let buf = self.name(self.g.node(n).outputs[0]);
        for (v, dim, offset, len) in copies {
            let (view, src) = (slice(&buf, dim, offset, len), self.name(v));
            writeln!(self.body, "    {view}.copy_({src})").unwrap();
            self.launches += 1;
        }
        true
    }
}
