//! Frontends: turn source programs into drtc IR. `python` reads KernelBench files and
//! DRTriton seed programs natively, without running Python.

pub mod python;
pub mod synth;

pub use python::{
    lower, lower_with_input_types, split_programs, Format, FrontendError, Lowered, Signature,
    SourceProgram,
};
