//! `drtc bench-pair REFERENCE CANDIDATE`: verifies a candidate, then times it against its
//! reference (and optionally `torch.compile`) with semantics.md's protocol, on CUDA only.

use super::verify::{prepare, runtime_error, PairArgs};
use super::{DriverError, DriverResult};
use clap::Args;
use drtc::runtime::{devices, BenchRequest, DeviceKind, DeviceScan, TimingStats};
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
    let ok = report.verify.verified
        && report
            .timing
            .as_ref()
            .is_some_and(|t| t.timed_outputs_ok);
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
    let line = |name: &str, s: &TimingStats| {
        println!(
            "{name:<10} median {:>9.4} ms  (p10 {:.4}, p90 {:.4}, stdev {:.4}, n={}, wall {:.4} ms)",
            s.median_ms, s.p10_ms, s.p90_ms, s.stdev_ms, s.samples, s.wall_median_ms
        )
    };
    line("reference", &t.reference);
    line("candidate", &t.candidate);
    if let Some(c) = &t.compiled {
        line("compiled", c);
    }
    println!("speedup vs eager: {:.3}x", t.speedup());
    if let Some(s) = t.speedup_vs_compiled() {
        println!("speedup vs torch.compile: {s:.3}x");
    }
    if !t.timed_outputs_ok {
        println!(
            "timed outputs FAILED the checks: {}",
            t.timed_outputs_failures.join("; ")
        );
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
