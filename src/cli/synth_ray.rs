//! `drtc synth --ray`: the run split into its chunks, each a shard that a CPU actor of a
//! Ray cluster runs with this drtc binary (`drtc synth ... --shard K`). A program depends
//! only on the run's seed and options, its index and its round, and the replacement rounds
//! run per chunk, so the shards' programs are exactly those of a local run; they are
//! written in index order as soon as every earlier chunk is in.

use super::error::{DriverError, DriverResult};
use super::pool::runtime_error;
use super::synth::{checked_options, print_summary, SynthArgs};
use clap::ValueEnum;
use drtc::driver::synth::RunStats;
use drtc::verifier::ray::bridge::{Bridge, BridgeStart};
use drtc::verifier::{DeviceKind, DrtcHome, PythonEnv, RayConfig, RayTarget};
use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long one shard may run.
const SHARD_TIMEOUT: Duration = Duration::from_secs(6 * 3600);

fn name<T: ValueEnum>(v: &T) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

/// The command line of shard `k`: this run's options, one thread, that chunk only.
fn shard_argv(exe: &str, a: &SynthArgs, k: usize) -> Vec<String> {
    let mut v: Vec<String> = vec![exe.into(), "synth".into()];
    let mut opt = |k: &str, val: String| {
        v.push(format!("--{k}"));
        v.push(val);
    };
    if let Some(n) = a.ops {
        opt("ops", n.to_string());
    }
    if let Some(l) = a.level {
        opt("level", l.to_string());
    }
    opt("count", a.count.to_string());
    opt("seed", a.seed.to_string());
    opt("flops", a.flops.clone());
    if let Some(m) = a.max_elements {
        opt("max-elements", m.to_string());
    }
    opt("jobs", "1".into());
    opt("validate", name(&a.validate));
    opt("trials", a.trials.to_string());
    opt("run-max-elements", a.run_max_elements.clone());
    opt("run-max-flops", a.run_max_flops.clone());
    opt("selection", name(&a.selection));
    opt("op-set", a.op_set.clone());
    opt("diversity", name(&a.diversity));
    opt("time-limit", a.time_limit.to_string());
    opt("retries", a.retries.to_string());
    opt("chunk", a.chunk.to_string());
    opt("shard", k.to_string());
    opt("output", "-".into());
    v.push("--quiet".into());
    v
}

/// What one shard sent back: its records (JSON lines) and its totals.
struct Shard {
    records: Vec<String>,
    stats: RunStats,
}

fn parse_shard(stdout: &str) -> Result<Shard, String> {
    let mut records = vec![];
    let mut stats = None;
    for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("a line that is not JSON: {e}"))?;
        match v.get("shard_stats") {
            Some(s) => {
                stats = Some(
                    serde_json::from_value(s.clone()).map_err(|e| format!("its totals: {e}"))?,
                )
            }
            None => records.push(line.to_string()),
        }
    }
    let stats = stats.ok_or("no totals: the shard did not finish")?;
    Ok(Shard { records, stats })
}

pub fn run(args: &SynthArgs, target: &RayTarget) -> DriverResult<ExitCode> {
    let o = &checked_options(args)?;
    let home = DrtcHome::from_env();
    let python = PythonEnv::locate(&home).map_err(runtime_error)?;
    let script = drtc::verifier::worker::install_script(&home).map_err(runtime_error)?;
    let worker_dir = script.parent().unwrap_or(&script).to_path_buf();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let t0 = Instant::now();
    let bridge = Bridge::start(
        &python,
        &home,
        &BridgeStart {
            config: &RayConfig::new(target.clone()),
            device: DeviceKind::Cpu,
            actors: args.jobs,
            local_cpus: args.jobs.unwrap_or(cores).max(1),
            threads: Some(1),
            worker_dir: &worker_dir,
            startup_timeout: Duration::from_secs(180),
        },
    )
    .map_err(runtime_error)?;
    let actors = bridge.actors();
    let shards = args.count.div_ceil(args.chunk.max(1));
    eprintln!(
        "synth on Ray: {shards} chunk{} of {} over {actors} CPU actor{} on a {} (ready in {:.1} s)",
        if shards == 1 { "" } else { "s" },
        args.chunk,
        if actors == 1 { "" } else { "s" },
        bridge.cluster(),
        t0.elapsed().as_secs_f64()
    );
    let exe = std::env::current_exe()
        .map_err(|e| DriverError::Failed(format!("cannot find drtc's own binary: {e}")))?
        .display()
        .to_string();
    let env = vec![
        ("DRTC_HOME".to_string(), home.root.display().to_string()),
        (
            "DRTC_PYTHON".to_string(),
            python.python.display().to_string(),
        ),
    ];
    let file = std::fs::File::create(&args.output).map_err(|source| DriverError::Write {
        path: args.output.display().to_string(),
        source,
    })?;
    let mut w = std::io::BufWriter::new(file);
    let mut stats = RunStats::default();
    let mut distinct = HashSet::new();
    let mut failures: Vec<String> = vec![];
    let next = AtomicUsize::new(0);
    let mut write_error = None;
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(usize, Result<Shard, String>)>();
        for actor in 0..actors.min(shards) {
            let (tx, next, bridge, env, exe) = (tx.clone(), &next, &bridge, &env, &exe);
            scope.spawn(move || loop {
                let k = next.fetch_add(1, Ordering::SeqCst);
                if k >= shards {
                    break;
                }
                let argv = shard_argv(exe, args, k);
                let r = bridge
                    .run_command(actor, &argv, env, SHARD_TIMEOUT)
                    .map_err(|e| e.to_string())
                    .and_then(|out| match out.status {
                        Some(0) => parse_shard(&out.stdout),
                        status => Err(format!("exited with {status:?}; stderr:\n{}", out.stderr)),
                    });
                if tx.send((k, r)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        // chunks are written in index order: each waits for the ones before it
        let mut waiting: BTreeMap<usize, Shard> = BTreeMap::new();
        let mut written = 0usize;
        for (k, r) in rx {
            match r {
                Ok(shard) => {
                    waiting.insert(k, shard);
                }
                Err(e) => {
                    failures.push(format!("chunk {k}: {e}"));
                    waiting.insert(
                        k,
                        Shard {
                            records: vec![],
                            stats: RunStats::default(),
                        },
                    );
                }
            }
            while let Some(shard) = waiting.remove(&written) {
                for line in &shard.records {
                    if let Some(h) = serde_json::from_str::<serde_json::Value>(line)
                        .ok()
                        .and_then(|v| v["hash"].as_str().map(str::to_string))
                    {
                        distinct.insert(h);
                    }
                    if write_error.is_none() {
                        write_error = writeln!(w, "{line}").err();
                    }
                }
                if write_error.is_none() {
                    write_error = w.flush().err();
                }
                stats.merge(shard.stats);
                written += 1;
                if !args.quiet {
                    let secs = t0.elapsed().as_secs_f64();
                    eprintln!(
                        "synth: {}/{} programs written ({written}/{shards} chunks), {secs:.0}s, \
                         {:.2} programs/s",
                        stats.kept,
                        args.count,
                        stats.kept as f64 / secs.max(1e-9)
                    );
                }
            }
        }
    });
    if let Some(source) = write_error {
        return Err(DriverError::Write {
            path: args.output.display().to_string(),
            source,
        });
    }
    let secs = t0.elapsed().as_secs_f64();
    match bridge.summary() {
        Ok(s) => eprint!("{}", s.render()),
        Err(e) => eprintln!("warning: no Ray summary: {e}"),
    }
    for f in &failures {
        eprintln!("error: {f}");
    }
    print_summary(args, o, &stats, distinct.len(), secs)
}
