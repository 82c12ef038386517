//! The retry ladder: what a compiled module that failed verification is compiled into next,
//! in one order that `drtc compile`, `drtc suite` and Python's `drtc.compile` share. Each
//! rung is an edit of the lowering plan or of the compile options, taken only where it
//! applies and only while the last verification failed; the caller says how a module is
//! written and checked ([`Checks`]), the ladder decides what is tried and records it
//! ([`Retry`]: the report's `retries`, the same keys everywhere).

use crate::driver::compile::{CompileOptions, Compiled};
use crate::driver::graph_race::race_graphs;
use crate::driver::search::{search_compiled, SearchContext};
use drtc_backends::layout::LayoutChoice;
use drtc_backends::stitch::{GeneratedModule, ModuleForm};
use drtc_backends::triton::GemmImpl;
use serde::Serialize;

/// One rung of the ladder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rung {
    /// Every convolution in the reference's layout (NCHW), when the module has
    /// channels-last ones.
    Layout,
    /// The program compiled again without the e-graph rewrites and with its transposed
    /// convolutions as written, when those rewrites changed it (in the layout the policy
    /// picks): a convolution's forward algorithm in cuDNN may be TF32 where the reference's
    /// transposed one is full fp32 (`transposed_convs.rs` in the passes).
    Rewrites,
    /// Every GEMM region through the library call (the reference's own computation, the
    /// epilogue fused), when the module has GEMM regions.
    GemmLibrary,
    /// Every GEMM region computed with PyTorch, after the library call failed too.
    GemmPytorch,
}

/// The order. The layout first, keeping the rewrites: on the H200 every measured fallback
/// of a rewritten channels-last module was the layout's (cuDNN's channels-last TF32
/// algorithms against the fp32 rule; `bench/results/conv_*` tables), and dropping the
/// rewrites for it lost their gains. Then the rewrites, with the layout rule back; then
/// the layout again on that module; the GEMM regions last (library, then PyTorch).
pub const LADDER: [Rung; 5] = [
    Rung::Layout,
    Rung::Rewrites,
    Rung::Layout,
    Rung::GemmLibrary,
    Rung::GemmPytorch,
];

/// A verification's answer, as the ladder reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub verified: bool,
    /// Why not (empty when verified).
    pub reasons: Vec<String>,
    /// Whether another module may verify where this one did not (false for a timeout
    /// or a task out of time: the ladder stops).
    pub retryable: bool,
}

impl Verdict {
    /// Whether the ladder climbs from here: not verified, and another module may do
    /// better (callers build what only the rungs need, such as a search context, after
    /// asking this).
    pub fn failed(&self) -> bool {
        !self.verified && self.retryable
    }
}

/// What one rung did: an entry of the report's `retries`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Retry {
    pub rung: Rung,
    /// The reasons of the verification that failed before it.
    pub after: Vec<String>,
    /// One line for a reader.
    pub note: String,
    /// Whether the module it made verified.
    pub verified: bool,
    /// The search's log for the module it made (its graphs raced, or the whole program
    /// searched again), when the caller searches.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub search: Vec<String>,
}

/// How the caller writes and checks a module.
pub trait Checks {
    /// The caller's own report of one check (the ladder keeps the last).
    type Report;
    /// Writes `module` where the reference's checker reads candidates and checks it.
    fn check(&mut self, module: &GeneratedModule) -> Result<(Verdict, Self::Report), String>;
}

/// The ladder's outcome: the last verification and every rung taken.
pub struct Climbed<R> {
    pub verdict: Verdict,
    pub report: R,
    pub retries: Vec<Retry>,
}

/// Climbs [`LADDER`] from a module that got `first`: `compiled` ends as the last module
/// checked and `opts` as the options that made it. `search`, when given, races the
/// graphs of a module in the reference layout and searches a program compiled again.
pub fn climb<C: Checks>(
    compiled: &mut Compiled,
    form: &ModuleForm,
    opts: &mut CompileOptions,
    first: (Verdict, C::Report),
    checks: &mut C,
    search: Option<&SearchContext>,
) -> Result<Climbed<C::Report>, String> {
    let original = opts.clone();
    let (mut verdict, mut report) = first;
    let mut retries = vec![];
    for rung in LADDER {
        if !verdict.failed() {
            break;
        }
        let why = verdict.reasons.join("; ");
        let Some((note, search_log)) = step(rung, &why, compiled, form, opts, &original, search)?
        else {
            continue;
        };
        let (again, r) = checks.check(&compiled.module)?;
        retries.push(Retry {
            rung,
            after: verdict.reasons.clone(),
            note: format!("{note}: {}", outcome(&again)),
            verified: again.verified,
            search: search_log,
        });
        verdict = again;
        report = r;
    }
    Ok(Climbed {
        verdict,
        report,
        retries,
    })
}

fn outcome(v: &Verdict) -> &'static str {
    if v.verified {
        "verified"
    } else {
        "still fails"
    }
}

/// Makes the module of `rung` into `compiled` (and `opts`); its note and search log, or
/// None where the rung does not apply.
fn step(
    rung: Rung,
    why: &str,
    compiled: &mut Compiled,
    form: &ModuleForm,
    opts: &mut CompileOptions,
    original: &CompileOptions,
    search: Option<&SearchContext>,
) -> Result<Option<(String, Vec<String>)>, String> {
    let mut log = vec![];
    let note = match rung {
        Rung::Layout => {
            if !compiled.module.channels_last {
                return Ok(None);
            }
            compiled.module = compiled.nchw_module(form, opts);
            opts.layout = LayoutChoice::Nchw;
            if let Some(cx) = search {
                // the reference layout's module has its own launch count: race its graphs
                let gp = (&compiled.graph, &compiled.plan);
                if let Some(race) = race_graphs(gp, &mut compiled.module, form, cx) {
                    log.push(race.log);
                }
            }
            "layout: the channels-last module failed verification; every convolution \
             region fell back to the reference layout (nchw)"
                .to_string()
        }
        Rung::Rewrites => {
            let again = CompileOptions {
                layout: original.layout,
                ..opts.clone()
            };
            let Some(plain) = compiled.without_rewrites(form, &again) else {
                return Ok(None);
            };
            *compiled = plain.map_err(|e| format!("compiling again without the rewrites: {e}"))?;
            *opts = CompileOptions {
                simplify: false,
                keep_transposed: true,
                ..again
            };
            if let Some(cx) = search {
                log = search_compiled(compiled, form, opts, cx).log;
            }
            "rewrites: the module the rewrites changed (the e-graph's; transposed convolutions \
             computed as convolutions) failed verification; compiled again without them"
                .to_string()
        }
        Rung::GemmLibrary | Rung::GemmPytorch => {
            let imp = match rung {
                Rung::GemmLibrary => GemmImpl::Library,
                _ => GemmImpl::PyTorch,
            };
            let previous: Vec<(usize, GemmImpl)> = compiled
                .module
                .regions
                .iter()
                .filter_map(|r| r.gemm.as_ref().map(|g| (r.index, g.imp)))
                .collect();
            if previous.is_empty() || previous.iter().all(|&(_, p)| p == imp) {
                return Ok(None);
            }
            let mut lowering = compiled.lowering(opts);
            let gp = (&compiled.graph, &compiled.plan);
            for &(index, prev) in &previous {
                let prev = prev.describe();
                let reason = match imp {
                    GemmImpl::PyTorch => format!(
                        "every implementation failed verification ({prev}, library); \
                         computed with PyTorch"
                    ),
                    _ => format!("{prev} failed verification ({why}); library call instead"),
                };
                lowering
                    .set_gemm(gp, index, imp, &reason)
                    .map_err(|e| format!("internal error: {e}"))?;
            }
            compiled.module = compiled.emit(&lowering, form);
            format!(
                "gemm: the GEMM regions failed verification; every one computed by {}",
                match imp {
                    GemmImpl::PyTorch => "PyTorch",
                    _ => "the library call",
                }
            )
        }
    };
    Ok(Some((note, log)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::compile::compile_graph;
    use drtc_ir::text;

    /// A checker that fails the first `fails` modules it sees, recording their sources.
    struct Failing {
        fails: usize,
        seen: Vec<String>,
    }

    impl Checks for Failing {
        type Report = usize;
        fn check(&mut self, m: &GeneratedModule) -> Result<(Verdict, usize), String> {
            self.seen.push(m.source.clone());
            let verified = self.seen.len() > self.fails;
            let reasons = if verified {
                vec![]
            } else {
                vec!["mismatch".into()]
            };
            Ok((
                Verdict {
                    verified,
                    reasons,
                    retryable: true,
                },
                self.seen.len(),
            ))
        }
    }

    fn failed() -> Verdict {
        Verdict {
            verified: false,
            reasons: vec!["first".into()],
            retryable: true,
        }
    }

    fn compiled(src: &str) -> (Compiled, CompileOptions) {
        let opts = CompileOptions {
            simplify: true,
            interpret: true,
            ..Default::default()
        };
        let c = compile_graph(text::parse(src).unwrap(), &ModuleForm::Seed, &opts).unwrap();
        (c, opts)
    }

    /// The ladder climbed from a failed first module with a checker that fails the next
    /// `fails` modules.
    fn climb_failing(
        c: &mut Compiled,
        opts: &mut CompileOptions,
        fails: usize,
    ) -> (Climbed<usize>, Failing) {
        let mut checks = Failing {
            fails,
            seen: vec![],
        };
        let out = climb(c, &ModuleForm::Seed, opts, (failed(), 0), &mut checks, None).unwrap();
        (out, checks)
    }

    const REWRITTEN_GEMM: &str = "graph @g(%x: f32[64, 64], %w: f32[64, 64]) {\n  %0 = matmul(%x, %w) : f32[64, 64]\n  %1 = sigmoid(%0) : f32[64, 64]\n  %2 = mul(%0, %1) : f32[64, 64]\n  return %2\n}\n";

    #[test]
    fn rungs_that_apply_are_taken_in_order_until_one_verifies() {
        let (mut c, mut opts) = compiled(REWRITTEN_GEMM);
        assert!(c.rewritten.is_some(), "silu: the rewrites changed it");
        let (out, checks) = climb_failing(&mut c, &mut opts, 2);
        let rungs: Vec<Rung> = out.retries.iter().map(|r| r.rung).collect();
        // no convolution: no layout rung; the rewrites, then the GEMM library call
        assert_eq!(
            rungs,
            [Rung::Rewrites, Rung::GemmLibrary, Rung::GemmPytorch]
        );
        assert_eq!(out.retries[0].after, ["first"]);
        assert_eq!(out.retries[1].after, ["mismatch"]);
        assert!(out.verdict.verified);
        assert_eq!(out.report, 3);
        assert!(!opts.simplify, "the options that made the module");
        assert!(
            out.retries[2].note.ends_with("PyTorch: verified"),
            "{:?}",
            out.retries
        );
        assert!(
            checks.seen[2].contains("torch.matmul"),
            "{}",
            checks.seen[2]
        );
    }

    const STRIDE_ONE_TRANSPOSED: &str = "graph @t(%x: f32[1, 2, 3, 4, 4], %w: param f32[2, 3, 2, 2, 2]) {\n  %0 = conv_transpose3d(%x, %w) {stride = [1, 1, 1], padding = [0, 0, 0], output_padding = [0, 0, 0], groups = 1, dilation = [1, 1, 1]} : f32[1, 3, 4, 5, 5]\n  return %0\n}\n";

    #[test]
    fn the_rewrites_rung_takes_transposed_convolutions_back() {
        // the epilogue computes the transposed convolution as a convolution; the module
        // fails (cuDNN's forward algorithm in TF32 against a full-fp32 reference, say):
        // compiled again, the convolution is transposed as written
        let (mut c, mut opts) = compiled(STRIDE_ONE_TRANSPOSED);
        assert!(c.rewritten.is_some(), "transposed-convs changed it");
        assert!(c.module.source.contains("functional.conv3d("));
        let (out, checks) = climb_failing(&mut c, &mut opts, 0);
        let rungs: Vec<Rung> = out.retries.iter().map(|r| r.rung).collect();
        // 3 output channels: NCHW already, no layout rung
        assert_eq!(rungs, [Rung::Rewrites], "{:?}", out.retries);
        assert!(out.verdict.verified);
        assert!(opts.keep_transposed, "the options that made the module");
        assert!(
            checks.seen[0].contains("functional.conv_transpose3d("),
            "{}",
            checks.seen[0]
        );
    }

    #[test]
    fn a_verified_or_timed_out_module_climbs_nothing() {
        for first in [
            Verdict {
                verified: true,
                reasons: vec![],
                retryable: true,
            },
            Verdict {
                verified: false,
                reasons: vec!["timeout".into()],
                retryable: false,
            },
        ] {
            let (mut c, mut opts) = compiled(REWRITTEN_GEMM);
            let mut checks = Failing {
                fails: 0,
                seen: vec![],
            };
            let out = climb(
                &mut c,
                &ModuleForm::Seed,
                &mut opts,
                (first.clone(), 0),
                &mut checks,
                None,
            )
            .unwrap();
            assert!(out.retries.is_empty());
            assert_eq!(out.verdict, first);
            assert!(checks.seen.is_empty());
        }
    }

    #[test]
    fn the_retry_record_has_the_same_keys_everywhere() {
        let r = Retry {
            rung: Rung::GemmLibrary,
            after: vec!["x".into()],
            note: "n".into(),
            verified: true,
            search: vec![],
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"rung":"gemm_library","after":["x"],"note":"n","verified":true}"#
        );
    }
}
