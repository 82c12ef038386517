//! The PyTorch emitter: IR nodes as torch calls, graphs as seed-format programs.

mod call;
mod seed;

pub use call::{assign_targets, py, torch_dtype, torch_expr};
pub use seed::{emit_seed_program, py_ident, random_input};
