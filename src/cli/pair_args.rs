//! What `drtc verify` and `drtc bench-pair` share: the reference and candidate options, and
//! the request and one-worker pool built from them.

use super::error::{DriverError, DriverResult};
use super::pool::{runtime_error, worker_pool};
use clap::{Args, ValueEnum};
use drtc::verifier::{
    program_file, DeviceKind, DrtcHome, PoolOptions, PythonEnv, VerifyRequest, WorkerPool,
};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DeviceArg {
    /// CPU tensors under Triton's interpreter (correctness only).
    Cpu,
    /// A CUDA GPU.
    Cuda,
}

/// The verifier's value rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RuleArg {
    /// `norm(ref - out) / (1e-6 + norm(ref)) < 1e-3`.
    RelNorm,
    /// The relative norm and `allclose(atol=rtol=1e-4)`, the reference in full fp32.
    #[value(name = "allclose-1e-4")]
    Allclose1e4,
}

/// Options shared by `verify` and `bench-pair`.
#[derive(Args, Debug)]
pub struct PairArgs {
    /// The reference: a KernelBench file (`Model`), a seed program (`fused_operator`), or a
    /// seed `.jsonl` file with `--line`.
    pub reference: PathBuf,
    /// The candidate: defines `ModelNew` (KernelBench) or `triton_fused_operator` (seed).
    pub candidate: PathBuf,
    /// Line of a `.jsonl` reference (1-based).
    #[arg(long)]
    pub line: Option<usize>,
    /// Trials on fresh random inputs (at least 5: fewer are refused).
    #[arg(long, default_value_t = 5, value_parser = super::trials_arg::trials)]
    pub trials: u32,
    /// Base seed for parameters and trial inputs.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Strict mode: the candidate may call PyTorch only for allocation, views and library
    /// ops (conv, matmul).
    #[arg(long)]
    pub strict: bool,
    /// Library ops strict mode allows, comma-separated (default: conv and matmul families).
    #[arg(long, value_delimiter = ',')]
    pub library_ops: Option<Vec<String>>,
    /// Value rule for floats: allclose(atol=rtol=1e-4) against a full-fp32 reference, with
    /// the float64 truth rule (the fp32 precision policy, the default), or the relative
    /// norm (1e-3) alone.
    #[arg(long, value_enum, default_value = "allclose-1e-4")]
    pub rule: RuleArg,
    /// Seconds before a hanging candidate is killed.
    #[arg(long, default_value_t = 300)]
    pub timeout: u64,
    /// Print the full report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Override a module-level constant of the reference, e.g. `--set batch_size=2`
    /// (repeatable), as for `drtc compile`: its inputs and init inputs change with it, so
    /// the candidate must handle those shapes.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<drtc::driver::constants::ConstantOverride>,
    /// Cap the reference's size constants by name, as `drtc compile --shrink` does (says
    /// what it set on stderr); explicit --set values win.
    #[arg(long)]
    pub shrink: bool,
}

/// The reference written with its constants overridden (`--set`, `--shrink`), removed
/// when the command is done with it.
pub struct SizedReference(Option<PathBuf>);

impl Drop for SizedReference {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Builds the request and a pool of one worker for `device`; keep the returned
/// [`SizedReference`] until the request is answered.
pub fn prepare(
    pair: &PairArgs,
    device: DeviceKind,
) -> DriverResult<(VerifyRequest, WorkerPool, SizedReference)> {
    let home = DrtcHome::from_env();
    let mut reference =
        program_file::resolve(&pair.reference, pair.line, &home).map_err(runtime_error)?;
    let mut sized = SizedReference(None);
    if pair.shrink || !pair.set.is_empty() {
        // the reference with its constants overridden, next to drtc's other programs
        let text = super::files::read_file(&reference)?;
        let ov = super::overrides::overrides(&reference, &text, &pair.set, pair.shrink);
        super::overrides::say_overrides(&ov, &pair.set);
        let changed = drtc::driver::constants::apply_overrides(&text, &ov).map_err(|missing| {
            DriverError::Reported(format!(
                "--set names no module-level constant of `{}`: {}",
                pair.reference.display(),
                missing.join(", ")
            ))
        })?;
        let dir = home.dir("programs").map_err(runtime_error)?;
        let stem = reference
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("reference");
        let out = dir.join(format!("{stem}-set-{}.py", std::process::id()));
        std::fs::write(&out, changed).map_err(|source| DriverError::Write {
            path: out.display().to_string(),
            source,
        })?;
        sized = SizedReference(Some(out.clone()));
        reference = out;
    }
    let candidate = program_file::resolve(&pair.candidate, None, &home).map_err(runtime_error)?;
    let python = PythonEnv::locate(&home).map_err(runtime_error)?;
    let mut options = PoolOptions::new(device);
    options.workers = Some(1);
    options.one_request = true;
    options.request_timeout = Duration::from_secs(pair.timeout);
    options.bench_timeout = Duration::from_secs(pair.timeout.max(600));
    let pool = worker_pool(python, &home, options)?;
    let req = VerifyRequest {
        reference,
        candidate,
        trials: pair.trials,
        seed: pair.seed,
        strict: pair.strict,
        library_ops: pair.library_ops.clone(),
        rule: Some(
            match pair.rule {
                RuleArg::RelNorm => "rel_norm",
                RuleArg::Allclose1e4 => "allclose_1e-4",
            }
            .to_string(),
        ),
        seed_salt: None,
        trusted: false,
    };
    Ok((req, pool, sized))
}
