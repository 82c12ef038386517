//! The shared prompt templates and answer parsing of the LLM backend (`drtc_llm`), so that
//! datasets, the reward and the backend read and write model text the same way.

use crate::json::to_py;
use drtc_llm::{extract_code as extract, render, Extract, PromptMode, PromptTarget};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::path::PathBuf;

/// The code of a model's answer: the last (or first) fenced Python block, `<think>`
/// sections removed. `None` when the answer holds no code.
#[pyfunction]
#[pyo3(signature = (answer, which = "last"))]
pub fn extract_code(answer: &str, which: &str) -> PyResult<Option<String>> {
    let which = match which {
        "last" => Extract::Last,
        "first" => Extract::First,
        other => {
            return Err(PyValueError::new_err(format!(
                "which must be \"last\" or \"first\", not {other:?}"
            )))
        }
    };
    Ok(extract(answer, which))
}

/// The chat messages (`[{"role", "content"}, ...]`) asking a model for a kernel of
/// `program`: mode "regions" (a seed program -> `triton_fused_operator`) or "whole" (a
/// KernelBench `Model` -> `ModelNew`). `template` replaces the user-message template.
#[pyfunction]
#[pyo3(signature = (program, mode = "regions", *, gpu = "NVIDIA H200", dtype = "float32", template = None))]
pub fn render_prompt<'py>(
    py: Python<'py>,
    program: &str,
    mode: &str,
    gpu: &str,
    dtype: &str,
    template: Option<PathBuf>,
) -> PyResult<Bound<'py, PyAny>> {
    let mode = match mode {
        "regions" => PromptMode::Regions,
        "whole" => PromptMode::Whole,
        other => {
            return Err(PyValueError::new_err(format!(
                "mode must be \"regions\" or \"whole\", not {other:?}"
            )))
        }
    };
    let target = PromptTarget::new(gpu, dtype);
    let messages = render(mode, program, &target, template.as_deref())
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    to_py(py, &messages)
}
