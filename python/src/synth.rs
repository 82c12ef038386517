//! `synth`: new valid programs from CP-SAT, as `drtc synth` makes them.

use crate::errors::SynthError;
use crate::json::to_py;
use drtc::driver::synth::{record, run_synthesis, RunSpec, SynthSettings, ValidateMode};
use drtc_cpsat::CpSat;
use drtc_synth::{Diversity, Selection};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Synthesizes `count` seed-format programs of `ops` ops (or of difficulty `level` 0..4),
/// reproducibly from `seed`. Returns one dict per program, as `drtc synth` writes them
/// (`pytorch`, `ops`, `flops`, `difficulty`, shapes, `validation`, ...). `validate`
/// ("auto", "meta", "cpu" or "cuda", as `drtc synth --validate`) proves each program valid
/// and finite and replaces those that fail.
#[pyfunction]
#[pyo3(signature = (ops = None, count = 1, seed = 0, *, level = None, flops = "2^34..2^35", op_set = "a", validate = None, trials = 5, retries = 5, selection = "uniform", time_limit = 1.0, max_elements = None))]
#[allow(clippy::too_many_arguments)]
pub fn synth<'py>(
    py: Python<'py>,
    ops: Option<usize>,
    count: usize,
    seed: u64,
    level: Option<u8>,
    flops: &str,
    op_set: &str,
    validate: Option<&str>,
    trials: usize,
    retries: usize,
    selection: &str,
    time_limit: f64,
    max_elements: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let selection = match selection {
        "uniform" => Selection::Uniform,
        "coverage" => Selection::Coverage,
        other => {
            return Err(PyValueError::new_err(format!(
                "selection must be \"uniform\" or \"coverage\", not {other:?}"
            )))
        }
    };
    let validate = match validate {
        None | Some("none") => ValidateMode::None,
        Some("auto") => ValidateMode::Auto,
        Some("meta") => ValidateMode::Meta,
        Some("cpu") => ValidateMode::Cpu,
        Some("cuda") => ValidateMode::Cuda,
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "validate must be None, \"auto\", \"meta\", \"cpu\" or \"cuda\", not {other:?}"
            )))
        }
    };
    let settings = SynthSettings {
        ops,
        level,
        flops: flops.to_string(),
        max_elements,
        op_set: op_set.to_string(),
        selection,
        diversity: Diversity::Both,
        time_limit,
    };
    let o = settings.options().map_err(SynthError::new_err)?;
    let spec = RunSpec {
        trials,
        retries,
        ..RunSpec::new(count, seed, validate)
    };
    let programs = py
        .detach(|| {
            let cp = CpSat::load().map_err(|e| e.to_string())?;
            run_synthesis(&cp, &o, spec, &indicatif::ProgressBar::hidden())
        })
        .map_err(SynthError::new_err)?;
    let records: Vec<serde_json::Value> = programs.0.iter().map(|p| record(p, seed)).collect();
    to_py(py, &records)
}
