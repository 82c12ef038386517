//! `drtc._native`: drtc's compiler and runtime as a Python extension module (pyo3, abi3).
//! The Python package `drtc` (python/drtc/) re-exports it and adds the verl reward.
//!
//! Errors keep the CLI's words: a program that does not parse raises `FrontendError` with
//! the same caret rendering `drtc parse` prints (and its byte span as `.span`); wrong
//! argument types raise `TypeError` naming the expected type (pyo3's extraction).

mod compiler;
mod errors;
mod json;
mod prompt;
mod sizes;
mod synth;
mod verifier;

use pyo3::prelude::*;

/// drtc: PyTorch programs to verified Triton kernels (native part).
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(compiler::parse, m)?)?;
    m.add_function(wrap_pyfunction!(compiler::compile, m)?)?;
    m.add_function(wrap_pyfunction!(compiler::decompose, m)?)?;
    m.add_function(wrap_pyfunction!(synth::synth, m)?)?;
    m.add_function(wrap_pyfunction!(verifier::verify, m)?)?;
    m.add_function(wrap_pyfunction!(verifier::bench, m)?)?;
    m.add_function(wrap_pyfunction!(verifier::list_devices, m)?)?;
    m.add_function(wrap_pyfunction!(prompt::extract_code, m)?)?;
    m.add_function(wrap_pyfunction!(prompt::render_prompt, m)?)?;
    m.add_function(wrap_pyfunction!(compiler::dataset, m)?)?;
    m.add_class::<compiler::Program>()?;
    m.add_class::<compiler::Compiled>()?;
    m.add_class::<verifier::Verifier>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
