//! `drtc bench-pair REFERENCE CANDIDATE`: verifies a candidate, then times it against its
//! reference (and optionally `torch.compile`) with semantics.md's protocol, on CUDA only.

use super::baseline_arg::{compile_modes, BaselineArg, TorchPrecisionArg};
use super::error::{DriverError, DriverResult};
use super::pair_args::{prepare, PairArgs};
use super::pool::runtime_error;
use clap::Args;
use drtc::verifier::{devices, BenchRequest, DeviceKind, DeviceScan};
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(
    about = "Verify, then time a candidate against its reference on a CUDA GPU",
    long_about = concat!(
        "Verifies the candidate as `drtc verify` does and, when it is verified, times it against the eager reference (and torch.compile with --baseline: its default mode, max-autotune, max-autotune-no-cudagraphs, reduce-overhead or all-modes) with CUDA events, L2 flushed, interleaved on the same inputs, and prints the medians and the speedup. Needs a CUDA GPU: on the CPU interpreter speed means nothing (use `drtc verify --device cpu`).\n\nExample:\n  drtc bench-pair model.py model_triton.py --baseline compile",
        exit_status_help!()
    )
)]
pub struct BenchPairArgs {
    #[command(flatten)]
    pub pair: PairArgs,
    /// Also time `torch.compile` (default mode) of the reference in the same run (the same
    /// as `--baseline compile`).
    #[arg(long)]
    pub compile_baseline: bool,
    /// torch.compile of the reference to time too, interleaved with eager and the
    /// candidate on the same inputs: `compile` (default mode), `max-autotune`,
    /// `max-autotune-no-cudagraphs`, `reduce-overhead` or `all-modes` (repeat the option or
    /// separate values with commas).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub baseline: Vec<BaselineArg>,
    /// Seconds each torch.compile mode may spend on its first call, which compiles
    /// (default: unbounded); a mode still compiling then is reported over budget, not timed.
    #[arg(long, value_name = "SECONDS")]
    pub compile_budget: Option<u64>,
    /// `torch.set_float32_matmul_precision` for the reference and torch.compile while they
    /// are timed (default: PyTorch's own default). Verification always uses the default.
    #[arg(long, value_enum)]
    pub torch_precision: Option<TorchPrecisionArg>,
}

pub fn run(args: BenchPairArgs) -> DriverResult<ExitCode> {
    if let DeviceScan::None { reason } = devices::scan() {
        return Err(DriverError::Reported(format!(
            "bench-pair needs a CUDA GPU ({reason}). On CPU, kernels run under Triton's \
             interpreter, whose speed means nothing; use `drtc verify --device cpu` to check \
             correctness"
        )));
    }
    let (verify, pool, _sized) = prepare(&args.pair, DeviceKind::Cuda)?;
    let report = pool
        .bench(&BenchRequest {
            verify,
            compile_modes: {
                let mut asked = args.baseline.clone();
                if args.compile_baseline {
                    asked.push(BaselineArg::Compile);
                }
                compile_modes(&asked)
            },
            torch_precision: args.torch_precision.map(|p| p.name().to_string()),
            compile_budget_s: args.compile_budget.map(|s| s as f64),
        })
        .map_err(runtime_error)?;
    let ok = report.verify.verified && report.timing.as_ref().is_some_and(|t| t.timed_outputs_ok);
    if args.pair.json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| DriverError::Reported(e.to_string()))?;
        println!("{text}");
        return Ok(if report.verify.verified {
            super::exit::verified(ok)
        } else {
            super::exit::of_report(&report.verify)
        });
    }
    if !report.verify.verified {
        let reasons = report.verify.reasons();
        println!("not verified, not timed: {} check(s) failed", reasons.len());
        for r in reasons {
            println!("  {r}");
        }
        return Ok(super::exit::of_report(&report.verify));
    }
    println!("{}", report.verify.summary());
    let Some(t) = &report.timing else {
        println!(
            "timing failed: {}",
            report.timing_error.as_deref().unwrap_or("no timing report")
        );
        return Ok(ExitCode::from(super::exit::DRTC_FAILED));
    };
    for line in t.render() {
        println!("{line}");
    }
    Ok(super::exit::verified(ok))
}
