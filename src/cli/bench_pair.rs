//! `drtc bench-pair REFERENCE CANDIDATE`: verifies a candidate, then times it against its
//! reference (and optionally `torch.compile`) with semantics.md's protocol, on CUDA only.

use super::verify::{prepare, runtime_error, PairArgs};
use super::{DriverError, DriverResult};
use clap::Args;
use drtc::runtime::{devices, BenchRequest, DeviceKind, DeviceScan};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct BenchPairArgs {
    #[command(flatten)]
    pub pair: PairArgs,
    /// Also time `torch.compile` (default mode) of the reference in the same run.
    #[arg(long)]
    pub compile_baseline: bool,
}

pub fn run(args: BenchPairArgs) -> DriverResult<ExitCode> {
    if let DeviceScan::None { reason } = devices::scan() {
        return Err(DriverError::Reported(format!(
            "bench-pair needs a CUDA GPU ({reason}). On CPU, kernels run under Triton's \
             interpreter, whose speed means nothing; use `drtc verify --device cpu` to check \
             correctness"
        )));
    }
    let (verify, pool) = prepare(&args.pair, DeviceKind::Cuda)?;
    let report = pool
        .bench(&BenchRequest {
            verify,
            compile_baseline: args.compile_baseline,
        })
        .map_err(runtime_error)?;
    let ok = report.verify.verified && report.timing.as_ref().is_some_and(|t| t.timed_outputs_ok);
    if args.pair.json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| DriverError::Reported(e.to_string()))?;
        println!("{text}");
        return Ok(if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    if !report.verify.verified {
        let reasons = report.verify.reasons();
        println!("not verified, not timed: {} check(s) failed", reasons.len());
        for r in reasons {
            println!("  {r}");
        }
        return Ok(ExitCode::FAILURE);
    }
    println!("{}", report.verify.summary());
    let Some(t) = &report.timing else {
        println!(
            "timing failed: {}",
            report.timing_error.as_deref().unwrap_or("no timing report")
        );
        return Ok(ExitCode::FAILURE);
    };
    for line in t.render() {
        println!("{line}");
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
