//! `--ray`: run the verifier's checks on a Ray cluster's actors (eval, suite).

use clap::Args;
use drtc::verifier::{RayConfig, RayTarget, WorkerPool};

#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Ray cluster")]
pub struct RayArgs {
    /// Verify (and time) on a Ray cluster instead of local workers: `local` starts a
    /// cluster of drtc's own on this machine for the run and stops it after; `auto` joins
    /// the cluster RAY_ADDRESS or a running local head names, else starts a local one;
    /// anything else is a cluster address (`ray://HOST:10001`, `HOST:6379`). There drtc
    /// places one verification actor per GPU of the cluster (--device cuda), or CPU actors
    /// under Triton's interpreter (--device cpu: `suite` starts --jobs of them, `eval` one
    /// per CPU of the cluster), each running drtc's own worker, so every verdict, seed and
    /// report is the one a local run gives, and rows stream into the same files (--resume
    /// works).
    /// An actor that dies or hangs is replaced and its request retried once on the
    /// replacement, then recorded as failed with both reasons; Ctrl-C stops the actors.
    /// The run ends with each actor's throughput and the failures by reason. Needs `ray`
    /// in drtc's Python (`drtc setup` installs it) and on the cluster.
    #[arg(long, value_name = "auto|local|ADDRESS")]
    pub ray: Option<RayTarget>,
    /// With --ray: at most this many actors, so at most this many of the cluster's GPUs
    /// (--device cuda) or CPUs (--device cpu) are taken (default: suite's --jobs on CPU,
    /// else every GPU or CPU of the cluster).
    #[arg(long, value_name = "N", requires = "ray", value_parser = clap::value_parser!(u64).range(1..))]
    pub ray_actors: Option<u64>,
}

impl RayArgs {
    /// The pool's Ray setting (`None`: local workers).
    pub fn config(&self) -> Option<RayConfig> {
        self.ray.clone().map(RayConfig::new)
    }

    /// The actors asked for with --ray-actors.
    pub fn actors(&self) -> Option<usize> {
        self.ray_actors.map(|n| n as usize)
    }
}

/// Prints the Ray job's summary (per-actor throughput, replacements, failures) on stderr;
/// nothing for a local pool.
pub fn print_summary(pool: &WorkerPool) {
    match pool.ray_summary() {
        None => {}
        Some(Ok(s)) => eprint!("{}", s.render()),
        Some(Err(e)) => eprintln!("warning: no Ray summary: {e}"),
    }
}
