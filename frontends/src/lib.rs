//! Frontends: turn source programs into drtc IR. `python` reads KernelBench files and
//! DRTriton seed programs natively, without running Python.

pub mod python;

pub use python::{lower, split_programs, Format, FrontendError, Lowered, Signature, SourceProgram};
