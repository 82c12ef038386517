//! The PyTorch emitter lives in `drtc_ir::pytorch` (shared with the synthesizer); the
//! backends use its reference dialect.

use drtc_ir::pytorch::Dialect;
use drtc_ir::{Attrs, Op, TensorType};

pub use drtc_ir::pytorch::{
    assign_targets, emit_seed_program, py, py_ident, random_input, torch_dtype,
};

/// The reference-dialect expression computing `op(args) {attrs}` (see
/// [`drtc_ir::pytorch::torch_expr`]).
pub fn torch_expr(
    op: Op,
    attrs: &Attrs,
    args: &[String],
    inputs: &[&TensorType],
    device: &str,
) -> String {
    drtc_ir::pytorch::torch_expr(op, attrs, args, inputs, device, Dialect::Reference)
}
