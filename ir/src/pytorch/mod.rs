//! The PyTorch emitter, below both the frontends (synthesized programs) and the backends
//! (reference programs, library calls in stitched modules): IR nodes as `torch` calls and
//! graphs as seed-format programs, with one set of literal rules.

mod call;
mod literal;
mod names;
mod seed_format;

pub use call::{assign_targets, torch_expr};
pub use literal::{int_if_whole, literal, py, torch_dtype};
pub use names::{py_ident, PyNames};
pub use seed_format::{emit_seed_program, random_input};

/// How the emitted Python is spelled where two conventions exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// drtc's reference programs: every argument explicit (optional inputs as `None`, all
    /// reduced dims listed, pooling strides resolved), `torch.amax`,
    /// `torch.linalg.vector_norm`.
    Reference,
    /// The DRTriton seed format of synthesized programs: one dim as an int, absent optional
    /// inputs left out, `torch.max(...).values`, `torch.norm`, `.float()`, single-quoted
    /// strings.
    Seed,
}
