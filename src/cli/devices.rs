//! `drtc devices`: lists CUDA GPUs through the driver API (no torch import), or says that
//! there is none and CPU mode applies.

use super::error::{DriverError, DriverResult};
use clap::Args;
use drtc::verifier::{devices, DeviceScan};
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(
    about = "List CUDA GPUs (or say that CPU mode applies)",
    long_about = concat!(
        "Lists the CUDA GPUs the driver API reports (name, memory, compute capability), without importing torch, or says why there is none; then every command that verifies runs under Triton's CPU interpreter (correctness only, no timing).\n\nExample:\n  drtc devices --json",
        exit_status_help!()
    )
)]
pub struct DevicesArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: DevicesArgs) -> DriverResult<ExitCode> {
    let scan = devices::scan();
    if args.json {
        let text = serde_json::to_string_pretty(&scan)
            .map_err(|e| DriverError::Reported(e.to_string()))?;
        println!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    match scan {
        DeviceScan::Gpus(gpus) => {
            for g in gpus {
                println!(
                    "GPU {}: {}, {:.1} GiB, {} SMs, compute capability {}.{}",
                    g.ordinal,
                    g.name,
                    g.total_memory_bytes as f64 / (1u64 << 30) as f64,
                    g.sm_count,
                    g.compute_capability.0,
                    g.compute_capability.1
                );
            }
        }
        DeviceScan::None { reason } => {
            println!(
                "no GPU: {reason}. CPU mode applies: candidates run under Triton's interpreter \
                 (correctness only, no timing)."
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
