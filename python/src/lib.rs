//! `drtc._native`: drtc's compiler and runtime as a Python extension module (pyo3, abi3).
//! The Python package `drtc` (python/drtc/) re-exports it and adds the verl reward.
//!
//! Errors keep the CLI's words: a program that does not parse raises `FrontendError` with
//! the same caret rendering `drtc parse` prints (and its byte span as `.span`); wrong
//! argument types raise `TypeError` naming the expected type (pyo3's extraction).

mod errors;
mod json;
mod program;
mod prompt;
mod sizes;
mod synth;
mod verify;

use pyo3::prelude::*;

/// drtc: PyTorch programs to verified Triton kernels (native part).
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(program::parse, m)?)?;
    m.add_function(wrap_pyfunction!(program::compile, m)?)?;
    m.add_function(wrap_pyfunction!(program::decompose, m)?)?;
    m.add_function(wrap_pyfunction!(synth::synth, m)?)?;
    m.add_function(wrap_pyfunction!(verify::verify, m)?)?;
    m.add_function(wrap_pyfunction!(verify::bench, m)?)?;
    m.add_function(wrap_pyfunction!(verify::list_devices, m)?)?;
    m.add_function(wrap_pyfunction!(prompt::extract_code, m)?)?;
    m.add_function(wrap_pyfunction!(prompt::render_prompt, m)?)?;
    m.add_function(wrap_pyfunction!(program::dataset, m)?)?;
    m.add_class::<program::Program>()?;
    m.add_class::<program::Compiled>()?;
    m.add_class::<verify::Verifier>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
