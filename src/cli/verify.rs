//! `drtc verify REFERENCE CANDIDATE`: checks a candidate against its PyTorch reference in
//! an isolated worker (semantics.md's rules) and exits 0 only when it is verified.

use super::error::{DriverError, DriverResult};
use super::pair_args::{prepare, DeviceArg, PairArgs};
use super::pool::runtime_error;
use clap::Args;
use drtc::verifier::DeviceKind;
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(
    about = "Verify a candidate against its PyTorch reference (exit 0 only when verified)",
    long_about = concat!(
        "Runs the reference and the candidate on --trials sets of fresh random inputs (at least 5) and checks every output with semantics.md's rules: count, types, shapes, dtypes, devices, NaN/Inf, values (--rule), aliasing, inputs left unchanged, module state, and with --strict which PyTorch calls the candidate makes. The candidate runs in a sandboxed process of its own; the reference and the comparison stay in drtc's worker.\n\nThe reference is a KernelBench file (`Model`, `get_inputs`, `get_init_inputs`), a seed program (`fused_operator`) or a line of a seed `.jsonl` (--line); the candidate defines `ModelNew` or `triton_fused_operator`. --rule defaults to `allclose-1e-4`, the rule of `drtc compile`'s default precision policy (fp32).\n\nExample:\n  drtc verify model.py model_triton.py --device cpu",
        exit_status_help!()
    )
)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub pair: PairArgs,
    /// Where to run (default: cuda when a GPU is present, else cpu).
    #[arg(long, value_enum)]
    pub device: Option<DeviceArg>,
}

pub fn run(args: VerifyArgs) -> DriverResult<ExitCode> {
    let device = match args.device {
        Some(DeviceArg::Cpu) => DeviceKind::Cpu,
        Some(DeviceArg::Cuda) => DeviceKind::Cuda,
        None => DeviceKind::detect(),
    };
    let (req, pool, _sized) = prepare(&args.pair, device)?;
    let report = pool.verify(&req).map_err(runtime_error)?;
    if args.pair.json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| DriverError::Reported(e.to_string()))?;
        println!("{text}");
    } else if report.verified {
        println!("{}", report.summary());
    } else {
        let reasons = report.reasons();
        println!("not verified: {} check(s) failed", reasons.len());
        for r in reasons {
            println!("  {r}");
        }
        if let Some(line) = report.memory.as_ref().and_then(|m| m.line()) {
            println!("{line}");
        }
    }
    if !args.pair.json {
        if let Some(line) = report.isolation_line() {
            println!("{line}");
        }
    }
    if super::exit::reference_broken(&report) {
        eprintln!("error: the reference itself failed, so nothing was verified: fix the reference");
    }
    Ok(super::exit::of_report(&report))
}
