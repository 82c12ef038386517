//! `drtc compile`: a PyTorch program (or an IR file) to a verified module of Triton kernels.

use super::{DriverError, DriverResult};
use drtc::driver::compile::{compile_graph, CompileOptions, Compiled};
use drtc::driver::constants::ConstantOverride;
use clap::{Args, ValueEnum};
use drtc_backends::stitch::ModuleForm;
use drtc_backends::triton::Precision;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PrecisionArg {
    /// TensorFloat-32 products for fp32 matmuls (within the verification tolerance).
    Tf32,
    /// Full fp32 products.
    Ieee,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DeviceArg {
    /// Triton's CPU interpreter: correctness only.
    Cpu,
    /// A CUDA GPU: verification and timing.
    Cuda,
}

/// Compile a program into one module of fused Triton kernels.
#[derive(Args, Debug)]
#[command(
    long_about = "Reads a PyTorch program (a KernelBench file defining `Model`, a seed-format \
program or `.jsonl` of them, or a `.drt` IR file), fuses it into regions, generates a Triton \
kernel per region from drtc's templates (convolutions stay with cuDNN; ops without a template \
are computed with PyTorch and listed in the report), stitches them into one module and, \
unless --no-verify, verifies it against PyTorch on fresh random inputs (under Triton's \
interpreter on CPU, on the GPU when there is one).\n\nExample:\n  drtc compile \
model.py -o model_triton.py --device cpu --set batch_size=2"
)]
pub struct CompileArgs {
    /// The program: `model.py` (KernelBench or seed format), `programs.jsonl`, or `graph.drt`.
    pub file: PathBuf,
    /// Where to write the generated module (JSON lines for `.jsonl` input).
    #[arg(short, long)]
    pub output: PathBuf,
    /// The device to verify (and time) on; default: cuda when a GPU is present, else cpu.
    #[arg(long, value_enum)]
    pub device: Option<DeviceArg>,
    /// Write the module without verifying it.
    #[arg(long)]
    pub no_verify: bool,
    /// Write a JSON report (regions, kernels, fallbacks, verification, timing) here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Override a module-level constant of the program, e.g. `--set batch_size=2` (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<ConstantOverride>,
    /// For `.jsonl` input: compile only this line (1-based).
    #[arg(long)]
    pub line: Option<usize>,
    /// Precision of fp32 matrix products.
    #[arg(long, value_enum, default_value = "tf32")]
    pub precision: PrecisionArg,
    /// Most ops fused into one kernel.
    #[arg(long, default_value_t = 64)]
    pub max_ops: usize,
}

/// The region summary of a compiled program, for reports.
pub fn region_json(c: &Compiled) -> serde_json::Value {
    let regions: Vec<serde_json::Value> = c
        .module
        .regions
        .iter()
        .map(|r| {
            json!({
                "index": r.index,
                "kind": r.kind.name(),
                "ops": r.ops,
                "kernel": r.kernel.as_ref().map(|(n, cfg)| json!({"name": n, "config": cfg.describe()})),
                "pytorch_fallback": r.fallback,
            })
        })
        .collect();
    json!({
        "regions": regions,
        "kernels": c.module.kernel_count(),
        "fallback_ops": c.module.fallback_ops(),
        "fusion_log": c.plan.log,
        "compile_ms": c.elapsed.as_secs_f64() * 1e3,
    })
}

pub fn run(args: CompileArgs) -> DriverResult<ExitCode> {
    let ext = args.file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let opts = CompileOptions {
        precision: match args.precision {
            PrecisionArg::Tf32 => Precision::Tf32,
            PrecisionArg::Ieee => Precision::Ieee,
        },
        interpret: args.device != Some(DeviceArg::Cuda),
        fuse: drtc_passes::fuse::FuseOptions {
            max_ops: args.max_ops,
        },
    };
    let (graph, form) = match ext {
        "drt" => (super::ir_file::load(&args.file)?.graph, ModuleForm::Seed),
        _ => {
            return Err(DriverError::Reported(format!(
                "{}: unsupported input (expected .py, .jsonl or .drt)",
                args.file.display()
            )))
        }
    };
    let compiled = compile_graph(graph, &form, &opts).map_err(DriverError::Reported)?;
    std::fs::write(&args.output, &compiled.module.source).map_err(|source| DriverError::Write {
        path: args.output.display().to_string(),
        source,
    })?;
    let fallbacks = compiled.module.fallback_ops();
    eprintln!(
        "wrote {} ({} kernels, {} regions{}) in {:.1} ms",
        args.output.display(),
        compiled.module.kernel_count(),
        compiled.module.regions.len(),
        if fallbacks.is_empty() {
            String::new()
        } else {
            format!("; computed with PyTorch: {}", fallbacks.join(", "))
        },
        compiled.elapsed.as_secs_f64() * 1e3
    );
    if let Some(path) = &args.report {
        let report = region_json(&compiled);
        std::fs::write(path, serde_json::to_string_pretty(&report).unwrap()).map_err(|source| {
            DriverError::Write {
                path: path.display().to_string(),
                source,
            }
        })?;
    }
    Ok(ExitCode::SUCCESS)
}
