//! `parse`, `compile` and `decompose`: programs given as source text, lowered natively.

use crate::errors::{self, CompileError};
use crate::json::to_py;
use crate::sizes::sized;
use crate::verifier::{device_kind, ModuleChecks};
use drtc::driver::compile::{compile_graph, CompileOptions};
use drtc::driver::decompose::{run_pipeline, subproblem_records};
use drtc::driver::frontend::{Frontend, FrontendUsed};
use drtc::driver::load::{load_source, module_form, LoadedProgram};
use drtc::driver::retry_ladder::{climb, Checks};
use drtc::verifier::DeviceKind;
use drtc_backends::stitch::ModuleForm;
use drtc_backends::triton::Precision;
use drtc_frontends::{lower, Lowered, Signature};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Lowers `src` or raises `FrontendError` with the CLI's caret message.
pub fn lower_source(py: Python<'_>, src: &str, name: &str) -> PyResult<Lowered> {
    lower(src).map_err(|e| errors::frontend(py, &e, name, src))
}

/// The frontend named by Python's `frontend=` argument (the CLI's `--frontend`).
fn frontend_arg(frontend: &str) -> PyResult<Frontend> {
    match frontend {
        "auto" => Ok(Frontend::Auto),
        "native" => Ok(Frontend::Native),
        "export" => Ok(Frontend::Export),
        other => Err(PyValueError::new_err(format!(
            "frontend must be \"auto\", \"native\" or \"export\", not {other:?}"
        ))),
    }
}

/// Reads `src` with `frontend`: natively with the caret `FrontendError` of [`lower_source`],
/// else through the driver's loader (torch.export in drtc's Python environment).
fn load(py: Python<'_>, src: &str, name: &str, frontend: Frontend) -> PyResult<LoadedProgram> {
    let native = match frontend {
        Frontend::Export => None,
        Frontend::Native | Frontend::Auto => Some(lower_source(py, src, name)),
    };
    if let Some(Ok(lowered)) = native {
        return Ok(LoadedProgram {
            name: name.to_string(),
            line: None,
            form: module_form(lowered.format, src, &[]),
            graph: lowered.graph,
            reference_source: Some(src.to_string()),
            frontend: FrontendUsed::Native,
            library_calls: vec![],
            state_updates: vec![],
            notes: vec![],
        });
    }
    match native {
        // refused natively: with `auto`, torch.export; when it fails too, the native
        // error (with its span and kind)
        Some(Err(native)) if frontend == Frontend::Auto => py
            .detach(|| load_source(src, name, Frontend::Export))
            .map_err(|_| native),
        Some(Err(native)) => Err(native),
        _ => py
            .detach(|| load_source(src, name, frontend))
            .map_err(|e| errors::FrontendError::new_err(e.message)),
    }
}

fn form_name(form: &ModuleForm) -> &'static str {
    match form {
        ModuleForm::KernelBench { .. } => "kernelbench",
        ModuleForm::Seed => "seed",
    }
}

/// A lowered program: its IR text, signature, format, ops and FLOPs.
#[pyclass(frozen, module = "drtc")]
pub struct Program {
    /// The typed IR in drtc's text format (what `drtc parse` prints).
    #[pyo3(get)]
    ir: String,
    /// "kernelbench" (a `Model` class) or "seed" (`fused_operator`).
    #[pyo3(get)]
    format: &'static str,
    /// The op of every node, in program order.
    #[pyo3(get)]
    ops: Vec<&'static str>,
    /// Total FLOPs (ops.md's conventions).
    #[pyo3(get)]
    flops: u64,
    signature: String,
}

#[pymethods]
impl Program {
    /// Inputs, parameters and outputs as `drtc parse --signature` prints them:
    /// `{"inputs": [{"shape", "dtype"}...], "params": {name: ...}, "outputs": [...]}`.
    #[getter]
    fn signature<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("json")?
            .call_method1("loads", (self.signature.as_str(),))
    }

    fn __repr__(&self) -> String {
        format!(
            "<drtc.Program {} with {} ops, {} FLOPs>",
            self.format,
            self.ops.len(),
            self.flops
        )
    }

    fn __str__(&self) -> String {
        self.ir.clone()
    }
}

/// Lowers a PyTorch program (KernelBench `Model` or seed `fused_operator` format) to IR.
/// `frontend` is the CLI's `--frontend` with its default: "auto" (the native parser when
/// it accepts the program, torch.export otherwise), "native" or "export". `set` and
/// `shrink` are the CLI's `--set NAME=VALUE` (a dict; a `str` value is Python source, any
/// other value its `repr`) and `--shrink` (the size caps for CPU checking).
#[pyfunction]
#[pyo3(signature = (src, *, name = "<program>", frontend = "auto", set = None, shrink = false))]
pub fn parse(
    py: Python<'_>,
    src: &str,
    name: &str,
    frontend: &str,
    set: Option<Bound<'_, PyDict>>,
    shrink: bool,
) -> PyResult<Program> {
    let (src, _) = sized(src, set.as_ref(), shrink)?;
    let loaded = load(py, &src, name, frontend_arg(frontend)?)?;
    let g = &loaded.graph;
    Ok(Program {
        ir: drtc_ir::text::print(g),
        format: form_name(&loaded.form),
        ops: g.body().iter().map(|&n| g.node(n).op.name()).collect(),
        flops: g.flops(),
        signature: Signature::of(g).to_json(),
    })
}

/// A generated module and its report.
#[pyclass(frozen, module = "drtc")]
pub struct Compiled {
    /// The generated Python module (`ModelNew` or `triton_fused_operator`).
    #[pyo3(get)]
    source: String,
    /// The IR after the cleanup (and `simplify`) passes.
    #[pyo3(get)]
    ir: String,
    report: String,
}

#[pymethods]
impl Compiled {
    /// Regions, kernels, fallback ops, fusion log, compile time (and `verification` when
    /// compiled with `verify=True`): what `drtc compile --report` writes.
    #[getter]
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("json")?
            .call_method1("loads", (self.report.as_str(),))
    }

    fn __repr__(&self) -> String {
        format!("<drtc.Compiled module of {} bytes>", self.source.len())
    }
}

fn precision(name: &str) -> PyResult<Precision> {
    match name {
        "fp32" => Ok(Precision::Fp32),
        "tf32" => Ok(Precision::Tf32),
        "ieee" => Ok(Precision::Ieee),
        other => Err(PyValueError::new_err(format!(
            "precision must be \"fp32\", \"tf32\" or \"ieee\", not {other:?}"
        ))),
    }
}

/// Compiles a program into one module of fused Triton kernels.
///
/// `device` decides the code ("cpu": for Triton's interpreter; "cuda"; default: cuda when
/// a GPU is present). With `verify=True` the module is verified against `src` on that
/// device and the report gets a `verification` entry (the runtime's full report).
/// `simplify` (default true, as `drtc compile`) runs the e-graph rewrites before fusion.
/// `set` and `shrink` as in [`parse`]; the report's `overrides` lists what they set.
#[pyfunction]
#[pyo3(signature = (src, *, precision = "fp32", backend = "triton", device = None, max_ops = 64, simplify = true, verify = false, name = "<program>", frontend = "auto", set = None, shrink = false))]
#[allow(clippy::too_many_arguments)]
pub fn compile(
    py: Python<'_>,
    src: &str,
    precision: &str,
    backend: &str,
    device: Option<&str>,
    max_ops: usize,
    simplify: bool,
    verify: bool,
    name: &str,
    frontend: &str,
    set: Option<Bound<'_, PyDict>>,
    shrink: bool,
) -> PyResult<Compiled> {
    let frontend = frontend_arg(frontend)?;
    let (sized_src, overrides) = sized(src, set.as_ref(), shrink)?;
    let src = sized_src.as_str();
    if backend != "triton" {
        return Err(PyValueError::new_err(format!(
            "backend must be \"triton\" (drtc's templates), not {backend:?}"
        )));
    }
    if max_ops == 0 {
        return Err(PyValueError::new_err("max_ops must be at least 1"));
    }
    let device = device_kind(device)?;
    let opts = CompileOptions {
        precision: self::precision(precision)?,
        interpret: device == DeviceKind::Cpu,
        fuse: drtc_passes::fuse::FuseOptions { max_ops },
        simplify,
        // the module's guards compile other input shapes again through `$DRTC_BIN` or
        // `drtc` on PATH (this process is Python, not drtc)
        guard: drtc_backends::guard::GuardOptions {
            mode: drtc_backends::guard::GuardMode::Recompile,
            drtc_bin: None,
            compile_args: vec![],
            reference_source: Some(src.to_string()),
        },
        layout: Default::default(),
        // CUDA graphs where the cost rule says they pay (as `drtc compile`'s default)
        graphs: drtc_backends::graphs::GraphMode::Auto,
        keep_transposed: false,
    };
    let loaded = load(py, src, name, frontend)?;
    let form = loaded.form;
    let mut compiled = py
        .detach(|| compile_graph(loaded.graph, &form, &opts))
        .map_err(CompileError::new_err)?;
    let mut report = compiled.report_json();
    report["overrides"] = serde_json::json!(overrides);
    if verify {
        // the retry ladder `drtc compile` climbs, checked the way it checks
        let mut checks = ModuleChecks::new(device, src, opts.precision)?;
        let mut popts = opts.clone();
        let climbed = py.detach(|| {
            let first = checks.check(&compiled.module)?;
            climb(&mut compiled, &form, &mut popts, first, &mut checks, None)
        });
        let climbed = climbed.map_err(|e| match checks.error.take() {
            Some(r) => errors::runtime(r),
            None => CompileError::new_err(e),
        })?;
        report = compiled.report_json();
        report["overrides"] = serde_json::json!(overrides);
        if !climbed.retries.is_empty() {
            report["retries"] = serde_json::json!(climbed.retries);
        }
        let v = climbed.report;
        report["verification"] =
            serde_json::to_value(&v).map_err(|e| PyValueError::new_err(e.to_string()))?;
        // the CLI's report keys: the one-line summary and the reasons too
        report["verification"]["summary"] = serde_json::json!(v.summary());
        report["verification"]["reasons"] = serde_json::json!(v.reasons());
    }
    Ok(Compiled {
        source: compiled.module.source.clone(),
        ir: drtc_ir::text::print(&compiled.graph),
        report: report.to_string(),
    })
}

/// Splits a program into subproblems of at most `max_ops` ops along fusion-legal cuts;
/// one dict per subproblem, as `drtc decompose` writes them (`pytorch`, `difficulty`,
/// `reads`, `writes`, `ops`, ...). `passes` runs a pipeline first (e.g. "canonicalize,dce");
/// `set` and `shrink` as in [`parse`].
#[pyfunction]
#[pyo3(signature = (src, max_ops = 8, *, passes = None, name = "<program>", set = None, shrink = false))]
pub fn decompose<'py>(
    py: Python<'py>,
    src: &str,
    max_ops: usize,
    passes: Option<&str>,
    name: &str,
    set: Option<Bound<'py, PyDict>>,
    shrink: bool,
) -> PyResult<Bound<'py, PyAny>> {
    if max_ops == 0 {
        return Err(PyValueError::new_err("max_ops must be at least 1"));
    }
    let (src, _) = sized(src, set.as_ref(), shrink)?;
    let mut lowered = lower_source(py, &src, name)?;
    run_pipeline(&mut lowered.graph, passes).map_err(CompileError::new_err)?;
    let records = subproblem_records(&lowered.graph, name, None, max_ops);
    to_py(py, &records)
}

/// Writes a verl training set, as `drtc dataset INPUT -o OUTPUT` does; returns
/// `{"written": [[path, rows], ...], "skipped": [[source, reason], ...], "duplicates": n}`.
#[pyfunction]
#[pyo3(signature = (input, output, *, mode = "regions", max_ops = 8, gpu = "NVIDIA H200", dtype = None, template = None, data_source = "drtc", test_fraction = 0.0))]
#[allow(clippy::too_many_arguments)]
pub fn dataset<'py>(
    py: Python<'py>,
    input: std::path::PathBuf,
    output: std::path::PathBuf,
    mode: &str,
    max_ops: usize,
    gpu: &str,
    dtype: Option<String>,
    template: Option<std::path::PathBuf>,
    data_source: &str,
    test_fraction: f64,
) -> PyResult<Bound<'py, PyAny>> {
    use drtc::dataset::{build, input_files, write_all, DatasetMode, DatasetOptions};
    let mode = match mode {
        "regions" => DatasetMode::Regions,
        "whole" => DatasetMode::Whole,
        other => {
            return Err(PyValueError::new_err(format!(
                "mode must be \"regions\" or \"whole\", not {other:?}"
            )))
        }
    };
    if !(0.0..1.0).contains(&test_fraction) {
        return Err(PyValueError::new_err("test_fraction must be in [0, 1)"));
    }
    if max_ops == 0 {
        return Err(PyValueError::new_err("max_ops must be at least 1"));
    }
    let options = DatasetOptions {
        mode,
        max_ops,
        gpu: gpu.to_string(),
        dtype,
        template,
        data_source: data_source.to_string(),
        test_fraction,
        ..DatasetOptions::default()
    };
    let (written, skipped, duplicates) = py
        .detach(|| {
            let files = input_files(&input)?;
            let d = build(&files, &options);
            if d.rows.is_empty() {
                return Err(format!(
                    "no task could be made from `{}` ({} programs skipped)",
                    input.display(),
                    d.skipped.len()
                ));
            }
            let written = write_all(&d, &output)?;
            Ok((written, d.skipped, d.duplicates))
        })
        .map_err(CompileError::new_err)?;
    to_py(
        py,
        &serde_json::json!({"written": written, "skipped": skipped, "duplicates": duplicates}),
    )
}
