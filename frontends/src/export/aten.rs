//! ATen ops as IR ops: one arm per ATen target the export frontend maps (pointwise ops,
//! identities and creation in `map_pointwise.rs`, the rest in `map_structured.rs`). `map`
//! returns `None` when the target (or this use of it: an unusual overload argument) has no
//! IR form; the importer then emits one opaque `Op::Aten` call, so nothing PyTorch can run
//! is refused. Mapped results that are not computed (a max-pool's indices, a layer norm's
//! saved statistics) are `None`; the importer falls back to the opaque call when one of
//! those is used.

pub use super::args::{Arg, Call, Mapped};
use drtc_ir::GraphBuilder;

/// `target` with these arguments as IR, if it has an IR form.
pub fn map(b: &mut GraphBuilder, target: &str, c: &Call) -> Mapped {
    let t = target.strip_prefix("aten.")?;
    let (name, overload) = t.rsplit_once('.').unwrap_or((t, "default"));
    super::map_pointwise::map(b, name, overload, c)
        .or_else(|| super::map_structured::map(b, name, overload, c))
}
