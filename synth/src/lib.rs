//! The CP-SAT program synthesizer (the CSP-DAG generator of synth.md): makes valid,
//! diverse, difficulty-controlled PyTorch programs in the seed format, as training data
//! and as test programs for the compiler.
//!
//! Pipeline: `select` picks op sequences, `structure` samples wiring, ranks and structural
//! choices, `csp` encodes sizes and parameters as a CP-SAT model, `build` turns a solution
//! into a verified IR graph, `emit` writes it as seed-format Python, `validate` runs the
//! programs in PyTorch, `report` summarizes a set of programs.

pub mod build;
pub mod catalog;
pub mod csp;
pub mod emit;
pub mod generate;
pub mod options;
pub mod report;
pub mod select;
pub mod soundness;
pub mod structure;
pub mod validate;

pub use catalog::{family, Family, LIST_A, LIST_B};
pub use emit::{emit_seed, EmitError};
pub use generate::{
    diversity_probe, flop_floor, has_flops, synthesize, synthesize_indices, FailReason, FlopFloor,
    Outcome, SolveStats, SynthProgram,
};
pub use options::{Diversity, Selection, SynthOptions};
pub use validate::{
    choose, default_python, interval_proof, total_elements, validate, Device, Method,
    ValidateError, Validator, Verdict,
};
