//! Frontends: turn source programs into drtc IR. `python` reads KernelBench files and
//! DRTriton seed programs natively, without running Python; `export` imports the ATen
//! graphs torch.export gives for whole models (the helper runs in drtc's Python).

pub mod export;
pub mod python;

pub use python::{
    lower, lower_with_input_types, split_programs, Format, FrontendError, Lowered, Signature,
    SourceProgram,
};
