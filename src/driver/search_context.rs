//! Where and how a GPU search runs (`search.rs`, `graph_race.rs`): its scope, the
//! reference and the worker pool candidates are verified and timed with, the scratch and
//! cache directories, what a cached choice must have been recorded under, and the one
//! step both searches take: write a candidate module, verify and time it.

use crate::verifier::{BenchReport, BenchRequest, DrtcHome, PythonEnv, VerifyRequest, WorkerPool};
use drtc_backends::triton::Precision;
use drtc_backends::variants::fnv1a;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// How much `--search` tries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchScope {
    /// GEMM implementations of large regions, and CUDA graphs against the eager forward.
    Quick,
    /// Every region's launch configurations, GEMM implementations with each, and graphs.
    Full,
}

impl SearchScope {
    pub fn name(self) -> &'static str {
        match self {
            SearchScope::Quick => "quick",
            SearchScope::Full => "full",
        }
    }
}

/// Workers per GPU of a compile that searches: a quick search's region races up to three
/// implementations (library, template, library in NCHW), verified side by side and timed
/// one at a time (`bench/results/compile_latency_level3_h100_59810c6.md`: one after
/// another, each took 1.5-8.5 s, most of it its kernels' compile).
pub const SEARCH_WORKERS_PER_GPU: usize = 3;

/// Where and how to search.
pub struct SearchContext<'a> {
    /// How much is tried.
    pub scope: SearchScope,
    pub pool: &'a WorkerPool,
    /// The reference program (what candidates are verified and timed against).
    pub reference: &'a Path,
    /// Scratch directory for candidate modules.
    pub work: PathBuf,
    /// Cache directory (one JSON file per region key).
    pub cache: PathBuf,
    /// Device name, part of the cache key (e.g. "NVIDIA H200").
    pub device: String,
    /// Triton version of the workers, part of the cache key.
    pub triton: String,
    /// The verifier's value rule (`rel_norm` or `allclose_1e-4`) of the policy.
    pub rule: String,
    /// Every module verified and timed here, by its source: the driver's final check of
    /// the module the search kept is the same request on the same text (see
    /// [`SearchContext::benched`]).
    benched: Benched,
}

/// Modules verified and timed, by their source text (exact match only).
#[derive(Default)]
struct Benched(Mutex<Vec<(String, BenchReport)>>);

impl Benched {
    fn record(&self, source: &str, report: BenchReport) {
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        all.push((source.to_string(), report));
    }

    /// The latest report of a module with exactly this text.
    fn find(&self, source: &str) -> Option<BenchReport> {
        let all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        all.iter()
            .rev()
            .find(|(s, _)| s == source)
            .map(|(_, b)| b.clone())
    }
}

impl<'a> SearchContext<'a> {
    /// A context under the drtc home (scratch and cache directories), naming the first GPU
    /// and the workers' Triton version for the cache key.
    pub fn in_home(
        pool: &'a WorkerPool,
        home: &DrtcHome,
        reference: &'a Path,
        rule: &str,
        scope: SearchScope,
    ) -> Result<Self, String> {
        let device = match crate::verifier::devices::scan() {
            crate::verifier::DeviceScan::Gpus(g) if !g.is_empty() => g[0].name.clone(),
            _ => "cuda".into(),
        };
        Ok(SearchContext {
            scope,
            pool,
            reference,
            work: home.dir("compile").map_err(|e| e.to_string())?,
            cache: home.dir("search").map_err(|e| e.to_string())?,
            device,
            triton: triton_version(home),
            rule: rule.to_string(),
            benched: Benched::default(),
        })
    }
}

impl SearchContext<'_> {
    /// The report of a module with exactly this source that this search verified and
    /// timed: the request the driver's final check would send (same reference text, value
    /// rule and defaults), so the check can be this one and not a second run.
    pub fn benched(&self, source: &str) -> Option<BenchReport> {
        self.benched.find(source)
    }

    /// What a cached choice must have been recorded under to be reused: device, Triton
    /// version, precision policy and scope.
    pub fn id(&self, precision: Precision) -> String {
        format!(
            "{}|triton {}|{}|{}",
            self.device,
            self.triton,
            precision.name(),
            self.scope.name()
        )
    }
}

/// The Triton version of the worker environment (part of the search cache key).
fn triton_version(home: &DrtcHome) -> String {
    PythonEnv::locate(home)
        .ok()
        .and_then(|p| p.installed_versions(&["triton"]).ok())
        .and_then(|v| v.into_iter().next().and_then(|(_, ver)| ver))
        .unwrap_or_else(|| "unknown".into())
}

/// Where a candidate module is written: named after the process, the reference (one per
/// program, even when a suite compiles several programs at once in one process) and the
/// candidate's tag, so concurrent searches never overwrite each other's candidates.
fn candidate_path(work: &Path, reference: &Path, tag: &str) -> PathBuf {
    let program = reference.file_stem().unwrap_or_default().to_string_lossy();
    work.join(format!("search_{}_{program}_{tag}.py", std::process::id()))
}

/// One candidate's timing: its median and the reference's, timed interleaved with it in
/// the same exclusive pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timed {
    pub ms: f64,
    pub reference_ms: f64,
}

impl Timed {
    /// The candidate's time over the reference's from the same pass: what candidates are
    /// compared by. Candidates are timed in separate passes, and the H200 runs moved
    /// every side of a task together by up to 10-20% between runs (eager, torch.compile
    /// and drtc alike; `bench/results/level2_gemm_h200_606b060_tf32_vs_compile.md` against
    /// an earlier run of the same code), which the ratio cancels.
    pub fn relative(&self) -> f64 {
        if self.reference_ms > 0.0 {
            self.ms / self.reference_ms
        } else {
            self.ms
        }
    }

    pub fn describe(&self) -> String {
        format!("{:.4} ms, {:.3} of the reference", self.ms, self.relative())
    }
}

/// Why a candidate has no time to compare: not verified, failed or not timed. A check
/// that ran out of GPU memory (beside other work on the device, after the pool's retry
/// alone) says nothing about the candidate's speed or correctness, so a race with such a
/// candidate is not decided by the others (`search.rs`, `graph_race.rs`).
#[derive(Clone, Debug, PartialEq)]
pub struct Untimed {
    pub why: String,
    pub out_of_memory: bool,
}

impl Untimed {
    fn new(why: String) -> Untimed {
        Untimed {
            why,
            out_of_memory: false,
        }
    }
}

impl std::fmt::Display for Untimed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.why)
    }
}

/// The cache file of a race between a module and another form of it (`kind`: "graphs",
/// "transposed"): named after the module's text and `cx_id` ([`SearchContext::id`]).
pub fn race_file(cx: &SearchContext, kind: &str, cx_id: &str, source: &str) -> PathBuf {
    let key = fnv1a(format!("{cx_id}|{source}").as_bytes());
    cx.cache.join(format!("{kind}_{key:016x}.json"))
}

/// The choice recorded in `file` under `cx_id`; one recorded under another device, Triton
/// version, policy or scope is not reused.
pub fn read_record(file: &Path, cx_id: &str) -> Option<Value> {
    let text = std::fs::read_to_string(file).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    (v["context"].as_str()? == cx_id).then_some(v)
}

/// Records a decided choice (`fields`, an object) in `file` under `cx_id`.
pub fn write_record(file: &Path, cx_id: &str, mut fields: Value) {
    fields["context"] = Value::from(cx_id);
    let _ = std::fs::write(file, fields.to_string());
}

/// Which of two whole modules to keep, and why, from their verified times (`Err`: why one
/// does not count), each named for the log: `true` keeps the first (a tie too). `None` when
/// neither counts, or when one ran out of GPU memory (its check says nothing about it: the
/// race is undecided and not cached). Compared relative to the reference timed in the same
/// pass ([`Timed::relative`]).
pub fn keep_first(
    (first_name, first): (&str, &Result<Timed, Untimed>),
    (second_name, second): (&str, &Result<Timed, Untimed>),
) -> Option<(bool, String)> {
    if [first, second]
        .iter()
        .any(|r| r.as_ref().is_err_and(|u| u.out_of_memory))
    {
        return None;
    }
    Some(match (first, second) {
        (Ok(a), Ok(b)) if a.relative() <= b.relative() => (
            true,
            format!(
                "measured: {first_name} {}, {second_name} {}",
                a.describe(),
                b.describe()
            ),
        ),
        (Ok(a), Ok(b)) => (
            false,
            format!(
                "measured: {second_name} {}, {first_name} {}",
                b.describe(),
                a.describe()
            ),
        ),
        (Err(e), Ok(b)) => (
            false,
            format!(
                "the {first_name} does not count ({e}); {second_name} {}",
                b.describe()
            ),
        ),
        (Ok(a), Err(e)) => (
            true,
            format!(
                "{first_name} {}; the {second_name} does not count ({e})",
                a.describe()
            ),
        ),
        (Err(_), Err(_)) => return None,
    })
}

/// Verifies and times one candidate module against the reference: its median time and the
/// reference's, or why it does not count (not verified, failed, not timed).
pub fn bench_module(cx: &SearchContext, source: &str, tag: &str) -> Result<Timed, Untimed> {
    let path = candidate_path(&cx.work, cx.reference, tag);
    std::fs::write(&path, source).map_err(|e| Untimed::new(format!("not written: {e}")))?;
    let mut verify = VerifyRequest::generated(cx.reference, &path);
    verify.rule = Some(cx.rule.clone());
    let result = match cx.pool.bench(&BenchRequest::new(verify)) {
        Ok(b) if b.verify.verified => match b.timing.clone() {
            Some(t) => {
                cx.benched.record(source, b);
                Ok(Timed {
                    ms: t.candidate.median_ms,
                    reference_ms: t.reference.median_ms,
                })
            }
            None => Err(Untimed {
                why: format!(
                    "verified, not timed: {}",
                    b.timing_error.clone().unwrap_or_default()
                ),
                out_of_memory: b.ran_out_of_memory(),
            }),
        },
        Ok(b) => Err(Untimed {
            why: format!("not verified: {}", b.verify.reasons().join("; ")),
            out_of_memory: b.ran_out_of_memory(),
        }),
        Err(e) => Err(Untimed::new(format!("failed: {e}"))),
    };
    let _ = std::fs::remove_file(&path);
    result
}

/// [`bench_module`] of every `(source, tag)` at once, one thread each: the pool's workers
/// verify and compile them side by side (as many as it has), and each timing still runs
/// alone on the GPU (the device gate's exclusive pass). Each result with its wall seconds
/// (waiting for a worker and for the timing pass included), in the order given.
pub fn bench_modules(
    cx: &SearchContext,
    modules: &[(&str, String)],
) -> Vec<(Result<Timed, Untimed>, f64)> {
    std::thread::scope(|s| {
        let runs: Vec<_> = modules
            .iter()
            .map(|(source, tag)| {
                s.spawn(move || {
                    let started = std::time::Instant::now();
                    let r = bench_module(cx, source, tag);
                    (r, started.elapsed().as_secs_f64())
                })
            })
            .collect();
        runs.into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    (Err(Untimed::new("failed: the check panicked".into())), 0.0)
                })
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_compare_relative_to_their_own_reference() {
        let slow_pass = Timed {
            ms: 1.1,
            reference_ms: 2.4,
        };
        let fast_pass = Timed {
            ms: 1.0,
            reference_ms: 2.0,
        };
        assert!(slow_pass.relative() < fast_pass.relative());
        assert_eq!(slow_pass.describe(), "1.1000 ms, 0.458 of the reference");
        // no reference time: the candidate's own
        let alone = Timed {
            ms: 1.5,
            reference_ms: 0.0,
        };
        assert_eq!(alone.relative(), 1.5);
    }

    fn report(message: &str) -> BenchReport {
        BenchReport {
            verify: crate::verifier::VerifyReport::worker_failure(
                crate::verifier::Check::Other,
                message.into(),
                String::new(),
            ),
            timing: None,
            timing_error: None,
            timing_seconds: None,
        }
    }

    #[test]
    fn a_benched_module_is_found_by_its_exact_text_only() {
        let benched = Benched::default();
        benched.record("def f(): return 1\n", report("first"));
        benched.record("def f(): return 2\n", report("second"));
        benched.record("def f(): return 1\n", report("again"));
        let found = |s: &str| benched.find(s).map(|b| b.verify.reasons().join(";"));
        // the latest run of the same text
        assert!(found("def f(): return 1\n").unwrap().contains("again"));
        assert!(found("def f(): return 2\n").unwrap().contains("second"));
        // one character off is another module
        assert_eq!(found("def f(): return 1"), None);
        assert_eq!(found("def f(): return 3\n"), None);
    }

    #[test]
    fn concurrent_programs_write_their_candidates_apart() {
        let work = Path::new("/tmp/w");
        let a = candidate_path(work, Path::new("/tmp/s/29_Matmul_ref.py"), "0_1");
        let b = candidate_path(work, Path::new("/tmp/s/51_Gemm_ref.py"), "0_1");
        assert_ne!(a, b);
        assert_ne!(
            a,
            candidate_path(work, Path::new("/tmp/s/29_Matmul_ref.py"), "0_0")
        );
        assert!(a.starts_with(work));
    }
}
