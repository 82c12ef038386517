//! Test-time search on a GPU. For each kernel region with several reasonable candidates,
//! generate the module with each, verify and time it, keep the fastest verified one, and
//! cache the choice on disk so the next compilation of the same region skips the search.
//!
//! Two scopes (`--search quick|full`):
//! - `quick` (the default on a GPU) races only the implementations of large GEMM regions
//!   (at least [`QUICK_MIN_FLOP`]): the library call (cuBLAS through PyTorch, epilogue
//!   fused in one Triton kernel) against drtc's Triton template at the precision the
//!   policy admits, in its heuristic configuration (in 64 x 64 tiles where the heuristic
//!   ones would leave most of the GPU idle: `small_tiles_config`); then, when the module replays CUDA
//!   graphs, the replay against the eager forward (`graph_race.rs`; both go through
//!   `search_context.rs`); and, when the `transposed-convs` rewrite changed the program, the
//!   searched module against the program as written, searched too (`rewrite_race.rs`).
//!   Reduction regions of rows longer than one tile and at least
//!   [`QUICK_MIN_ELEMENTS`] race their heuristic configuration against cooperative rows
//!   (`triton/reduction/coop.rs`). A region neither of whose candidates verifies keeps the
//!   heuristic choice (the compile step's retries handle it).
//! - `full` tries every region's launch configurations too, and for GEMM regions each
//!   implementation with each configuration. A GEMM region none of whose candidates
//!   verifies is computed with PyTorch (reported).
//!
//! The cache key names the region's contents and shapes, the device, the Triton version
//! and the precision policy; an entry whose recorded device, version or policy differs is
//! ignored. Regions are searched one after another, earlier regions' choices fixed: each
//! candidate is an edit of the lowering plan chosen so far (`plan/edit.rs`: "region 3:
//! library call"), emitted as a module; the winner's edit is kept. A region's candidates
//! are verified and timed at once, as many as the pool has workers (the device gate
//! still times one at a time).

use crate::driver::compile::{CompileOptions, Compiled};
use crate::driver::graph_race::race_graphs;
use crate::driver::rewrite_race::{self, Cached};
use crate::driver::search_context::{bench_modules, read_record, write_record, Timed};
pub use crate::driver::search_context::{SearchContext, SearchScope};
use crate::verifier::BenchReport;
use drtc_backends::attention_choice::{attention_precisions, region_attention};
use drtc_backends::conv_choice::{conv_precisions, region_conv};
use drtc_backends::layout::{LayoutChoice, LayoutPlan};
use drtc_backends::plan::{LoweringPlan, PlanError};
use drtc_backends::stitch::{emit_module, CodegenOptions, ModuleForm};
use drtc_backends::triton::{
    attention_variants, coop_config, reduction_kernel, reduction_shape, too_few_tiles,
    AttentionImpl, ConvImpl, GemmImpl, LaunchConfig, PhaseLaunch,
};
use drtc_backends::variants::{gemm_variants, region_key, region_variants};
use drtc_ir::Graph;
use drtc_passes::fuse::FusionPlan;
use std::path::Path;

/// Smallest GEMM region (2·M·N·K floating-point operations) the quick scope races: below
/// it the two implementations differ by microseconds, less than the timing's noise.
pub const QUICK_MIN_FLOP: f64 = 1e9;

/// Smallest reduction region (rows x columns) whose cooperative rows the quick scope races:
/// 64 MB of fp32, tens of microseconds at the H200's copy bandwidth.
pub const QUICK_MIN_ELEMENTS: u64 = 1 << 24;

/// Searches `compiled`'s regions and emits its module from the lowering plan with the
/// fastest verified choices (`opts`: the options it was compiled with); when the
/// `transposed-convs` rewrite changed the program, the program as written is searched too
/// and the faster verified module kept (`rewrite_race.rs`).
pub fn search_compiled(
    compiled: &mut Compiled,
    form: &ModuleForm,
    opts: &CompileOptions,
    cx: &SearchContext,
) -> SearchOutcome {
    let mut outcome = search_module(compiled, form, opts.codegen(), cx);
    if !compiled.races_rewrite(opts) {
        return outcome;
    }
    let cached = rewrite_race::cached(compiled, cx);
    if let Cached::Choice {
        as_written: false,
        why,
    } = &cached
    {
        outcome.cache_hits += 1;
        outcome
            .log
            .push(rewrite_race::line(false, &format!("cached: {why}")));
        return outcome;
    }
    let mut written = match compiled.as_written(form, opts) {
        Some(Ok(w)) => w,
        Some(Err(e)) => {
            let why = format!("the program as written did not compile: {e}");
            outcome.log.push(rewrite_race::line(false, &why));
            return outcome;
        }
        None => return outcome,
    };
    let other = search_module(&mut written, form, opts.codegen(), cx);
    outcome.timed += other.timed;
    outcome.cache_hits += other.cache_hits;
    let logs = other.log.iter().map(|l| format!("as written: {l}"));
    outcome.log.extend(logs);
    let line = match cached {
        Cached::Choice { why, .. } => {
            outcome.cache_hits += 1;
            *compiled = written;
            rewrite_race::line(true, &format!("cached: {why}"))
        }
        Cached::Race => {
            outcome.timed += 2;
            rewrite_race::decide(compiled, written, cx)
        }
    };
    if !compiled.transposed_convs {
        outcome.plan = other.plan; // the program as written won
    }
    outcome.log.push(line);
    outcome
}

/// [`search_compiled`] of one compiled program: its regions, then its CUDA graphs.
fn search_module(
    compiled: &mut Compiled,
    form: &ModuleForm,
    base: CodegenOptions,
    cx: &SearchContext,
) -> SearchOutcome {
    let start = LoweringPlan::new(&compiled.graph, &compiled.plan, &base);
    let mut outcome = search(&compiled.graph, &compiled.plan, form, start, cx);
    compiled.module = compiled.emit(&outcome.plan, form);
    let gp = (&compiled.graph, &compiled.plan);
    if let Some(line) = race_graphs(gp, &mut compiled.module, form, cx) {
        outcome.timed += line.timed;
        outcome.cache_hits += line.cache_hit as usize;
        outcome.log.push(line.log);
    }
    outcome
}

/// What the search chose and did.
#[derive(Debug)]
pub struct SearchOutcome {
    /// The lowering plan with the chosen candidates' edits (and, when a race chose the
    /// library call in the reference's layout over a channels-last module's candidates,
    /// every convolution in NCHW).
    pub plan: LoweringPlan,
    /// One line per region: chosen candidate, timings, or cache hit.
    pub log: Vec<String>,
    pub timed: usize,
    pub cache_hits: usize,
}

/// One candidate of a region.
#[derive(Clone, Debug, Default, PartialEq)]
struct Candidate {
    imp: Option<GemmImpl>,
    config: Option<LaunchConfig>,
    conv: Option<ConvImpl>,
    attention: Option<AttentionImpl>,
    /// The whole module in this layout (a convolution's library call in NCHW, raced
    /// against the template where the module runs it channels-last).
    layout: Option<LayoutChoice>,
}

impl Candidate {
    fn describe(&self) -> String {
        if let Some(a) = &self.attention {
            return match &self.config {
                Some(c) => format!("{a} {}", c.describe()),
                None => a.describe(),
            };
        }
        if let Some(c) = &self.conv {
            return match self.layout {
                Some(l) => format!("{c} layout={}", l.name()),
                None => c.describe(),
            };
        }
        match (&self.imp, &self.config) {
            (Some(i), Some(c)) => format!("{i} {}", c.describe()),
            (Some(i), None) => i.describe(),
            (None, Some(c)) => c.describe(),
            (None, None) => "default".into(),
        }
    }
}

fn candidates(
    (g, plan): (&Graph, &FusionPlan),
    lowering: &LoweringPlan,
    i: usize,
    scope: SearchScope,
) -> Vec<Candidate> {
    let region = &plan.regions[i];
    let policy = lowering.options.precision;
    // a convolution the small-reduction template covers: the library call against the
    // template at each precision the policy admits (both scopes)
    if let Some(conv) = region_conv(g, plan, i) {
        if (conv.flops() as f64) < QUICK_MIN_FLOP {
            return vec![];
        }
        // a transposed convolution of several phases: one launch and a launch per phase
        let launches: &[PhaseLaunch] = if conv.transposed && conv.stride.iter().any(|&s| s > 1) {
            &[PhaseLaunch::One, PhaseLaunch::Each]
        } else {
            &[PhaseLaunch::One]
        };
        let imps = std::iter::once(ConvImpl::Library).chain(
            conv_precisions(policy, &conv).into_iter().flat_map(|dot| {
                launches
                    .iter()
                    .map(move |&phases| ConvImpl::Triton { dot, phases })
            }),
        );
        return imps
            .map(|c| Candidate {
                conv: Some(c),
                ..Default::default()
            })
            .collect();
    }
    // an attention the template covers: PyTorch's fused attention against the template
    // at each precision the policy admits (both scopes)
    if let Some(attention) = region_attention(g, plan, i) {
        if (attention.flops() as f64) < QUICK_MIN_FLOP {
            return vec![];
        }
        // quick: the template in its heuristic configuration; full: every variant
        let configs: Vec<Option<LaunchConfig>> = match scope {
            SearchScope::Quick => vec![None],
            SearchScope::Full => attention_variants(&attention)
                .into_iter()
                .map(Some)
                .collect(),
        };
        let mut out = vec![Candidate {
            attention: Some(AttentionImpl::Library),
            ..Default::default()
        }];
        for dot in attention_precisions(policy) {
            for config in &configs {
                out.push(Candidate {
                    attention: Some(AttentionImpl::Triton { dot }),
                    config: config.clone(),
                    ..Default::default()
                });
            }
        }
        return out;
    }
    // a reduction region of long rows: its heuristic configuration against cooperative
    // rows (the full scope has both among its variants)
    if scope == SearchScope::Quick {
        if let Some(coop) = quick_coop(g, region) {
            return [None, Some(coop)]
                .into_iter()
                .map(|config| Candidate {
                    config,
                    ..Default::default()
                })
                .collect();
        }
    }
    // a GEMM region: the plan's shape
    let shape = lowering.regions[i].implementation.gemm().map(|p| &p.shape);
    let gemm = shape.map_or(vec![], |s| gemm_variants(s, policy));
    if scope == SearchScope::Quick {
        let large = shape.is_some_and(|s| s.flops() as f64 >= QUICK_MIN_FLOP);
        if !large {
            return vec![];
        }
        // the template in its heuristic configuration (in its 64 x 64 tiles where the
        // heuristic ones would starve the GPU), and the library call
        let mut quick: Vec<Candidate> = vec![];
        for (imp, config) in gemm {
            let starved = |dot| shape.is_some_and(|s| too_few_tiles(s, dot));
            let config = match imp {
                GemmImpl::Triton { dot } if starved(dot) => config,
                GemmImpl::Triton { .. }
                | GemmImpl::Library
                | GemmImpl::PaddedLibrary
                | GemmImpl::PyTorch => None,
            };
            let c = Candidate {
                imp: Some(imp),
                config,
                ..Default::default()
            };
            if !quick.contains(&c) {
                quick.push(c);
            }
        }
        return quick;
    }
    if !gemm.is_empty() {
        return gemm
            .into_iter()
            .map(|(imp, config)| Candidate {
                imp: Some(imp),
                config,
                ..Default::default()
            })
            .collect();
    }
    region_variants(g, region)
        .into_iter()
        .map(|c| Candidate {
            imp: None,
            config: Some(c),
            ..Default::default()
        })
        .collect()
}

/// The cooperative configuration of a reduction region in the row strategy whose rows are
/// longer than one tile, with at least [`QUICK_MIN_ELEMENTS`] elements, where the template
/// takes it: its kernel generated with the configuration is the cooperative one (not, for
/// scans, arg-reductions and the other forms `coop.rs` declines, the row strategy).
fn quick_coop(g: &Graph, region: &drtc_passes::fuse::Region) -> Option<LaunchConfig> {
    if region.kind != drtc_passes::fuse::RegionKind::Reduction {
        return None;
    }
    let space = region.reduction.as_ref()?;
    let (rows, cols, split) = reduction_shape(space);
    if split || rows * cols < QUICK_MIN_ELEMENTS {
        return None;
    }
    let config = coop_config(cols)?;
    let code = reduction_kernel(
        g,
        "drtc_coop_probe",
        (&region.nodes, &region.outputs),
        space,
        Some(config.clone()),
        None,
        None,
        &vec![None; region.outputs.len()],
    )?;
    let cooperative =
        |k: &drtc_backends::triton::TritonKernel| k.config.blocks.iter().any(|b| b.0 == "COOP");
    code.kernels.iter().any(cooperative).then_some(config)
}

/// The cache key of region `i`'s race. A convolution's race weighs its consumers'
/// kernels and the module's layout (the NCHW candidate), so its key names the whole
/// program, not the region: two programs with the same convolution and other consumers
/// chose differently on the H200 (level-2 73 the template, 85 the NCHW library call),
/// and one shared key gave 85 the template's choice. It names the region too (its own
/// key and its index): a program's convolutions of one kind once shared a key, and
/// level-3 25's dense convolution took its grouped one's cached choice unraced (a module
/// 1.39x the reference's time, `bench/results/level3_fire_shuffle_h100_4de99e1_default_vs_modes.md`).
fn search_key(g: &Graph, plan: &FusionPlan, i: usize, cx_id: &str) -> String {
    let region = &plan.regions[i];
    let own = region_key(g, region, cx_id);
    if region_conv(g, plan, i).is_none() {
        return own;
    }
    let mut whole = region.clone();
    whole.nodes = plan
        .regions
        .iter()
        .flat_map(|r| r.nodes.iter().copied())
        .collect();
    whole.outputs = g.outputs().to_vec();
    region_key(g, &whole, &format!("{cx_id}|conv-program|region {i} {own}"))
}

/// For a convolution region the module runs channels-last (where cuDNN's channels-last
/// algorithms may fail the fp32 rule): the library call with the whole module in the
/// reference's layout, raced with the other candidates.
fn nchw_library(g: &Graph, plan: &FusionPlan, i: usize, layout: &LayoutPlan) -> Option<Candidate> {
    let conv = region_conv(g, plan, i)?;
    layout.convs.contains(&conv.node).then_some(Candidate {
        conv: Some(ConvImpl::Library),
        layout: Some(LayoutChoice::Nchw),
        ..Default::default()
    })
}

/// The cached candidate for `key`, when it was recorded for this device, Triton version
/// and policy and is still among the candidates.
fn cached(cache: &Path, key: &str, cx_id: &str, cands: &[Candidate]) -> Option<Candidate> {
    let v = read_record(&cache.join(format!("{key}.json")), cx_id)?;
    let want = v["choice"].as_str()?;
    cands.iter().find(|c| c.describe() == want).cloned()
}

/// Searches every kernel region of `plan`, editing `base` (the policy is its
/// precision).
pub fn search(
    g: &Graph,
    plan: &FusionPlan,
    form: &ModuleForm,
    base: LoweringPlan,
    cx: &SearchContext,
) -> SearchOutcome {
    let policy = base.options.precision;
    let mut out = SearchOutcome {
        plan: base,
        log: vec![],
        timed: 0,
        cache_hits: 0,
    };
    let _ = std::fs::create_dir_all(&cx.cache);
    let _ = std::fs::create_dir_all(&cx.work);
    let cx_id = cx.id(policy);
    let gp = (g, plan);
    // (region, whether a candidate failed verification) of every region raced or cached
    let raced: Vec<(usize, bool)> = (0..plan.regions.len())
        .filter_map(|i| race(&mut out, gp, form, cx, (&cx_id, i), true).map(|f| (i, f)))
        .collect();
    // a race where a candidate failed verification may have failed for a later region's
    // sake (every module of the race holds that region's heuristic choice: level-3 17's
    // first convolution chose the NCHW library call because the second's channels-last
    // library call failed the fp32 rule in all of them): raced once more, uncached, once
    // a later region was decided
    let last = raced.last().map(|&(i, _)| i);
    for &(i, failed) in &raced {
        if failed && Some(i) != last {
            out.log
                .push(format!("region {i}: raced again after the later regions"));
            race(&mut out, gp, form, cx, (&cx_id, i), false);
        }
    }
    out
}

/// Races region `i`'s candidates (its cached choice instead, with `use_cache`), applies
/// the fastest verified one to `out.plan` and records it; `None` when the region has no
/// race (fewer than two candidates), else whether a candidate failed verification.
fn race(
    out: &mut SearchOutcome,
    gp: (&Graph, &FusionPlan),
    form: &ModuleForm,
    cx: &SearchContext,
    (cx_id, i): (&str, usize),
    use_cache: bool,
) -> Option<bool> {
    let (g, plan) = gp;
    let mut cands = candidates(gp, &out.plan, i, cx.scope);
    if !cands.is_empty() {
        cands.extend(nchw_library(g, plan, i, &out.plan.layout));
    }
    let is_gemm = cands.iter().any(|c| c.imp.is_some());
    if cands.len() < 2 {
        return None;
    }
    let key = search_key(g, plan, i, cx_id);
    let hit = use_cache
        .then(|| cached(&cx.cache, &key, cx_id, &cands))
        .flatten();
    if let Some(c) = hit {
        match apply(&mut out.plan, gp, i, &c, "cached search result") {
            Ok(()) => out.log.push(format!("region {i}: cached {}", c.describe())),
            Err(e) => out.log.push(format!(
                "region {i}: cached {} not applied: {e}",
                c.describe()
            )),
        }
        out.cache_hits += 1;
        return Some(false);
    }
    // every candidate's module first, then all verified and timed at once
    // (`bench_modules`)
    let modules: Vec<Result<String, String>> = cands
        .iter()
        .map(|cand| {
            let mut trial = out.plan.clone();
            apply(&mut trial, gp, i, cand, "search candidate")
                .map(|()| emit_module(g, plan, &trial, form).source)
                .map_err(|e| e.to_string())
        })
        .collect();
    let emitted: Vec<(&str, String)> = modules
        .iter()
        .enumerate()
        .filter_map(|(k, m)| m.as_ref().ok().map(|m| (m.as_str(), format!("{i}_{k}"))))
        .collect();
    let mut benched = bench_modules(cx, &emitted).into_iter();
    let mut best: Option<(Timed, Candidate)> = None;
    let mut failed = false;
    // a candidate whose check ran out of GPU memory (`Untimed::out_of_memory`)
    let mut short = false;
    let mut tried = vec![];
    for (cand, module) in cands.iter().zip(&modules) {
        let module = match module {
            Ok(m) => m,
            Err(e) => {
                tried.push(format!("{} {e}", cand.describe()));
                continue;
            }
        };
        let Some((benched, secs)) = benched.next() else {
            continue;
        };
        out.timed += 1;
        // what each candidate's verification and timing cost, in the search's log (its
        // wall time includes waiting for a worker and for the GPU's timing pass)
        let mut spent = format!("checked in {secs:.1} s");
        if let Some(b) = cx.benched(module) {
            spent += &phase_split(&b);
        }
        match benched {
            Ok(t) => {
                tried.push(format!("{} {}, {spent}", cand.describe(), t.describe()));
                if best
                    .as_ref()
                    .is_none_or(|(b, _)| t.relative() < b.relative())
                {
                    best = Some((t, cand.clone()));
                }
            }
            Err(why) => {
                failed = true;
                short |= why.out_of_memory;
                tried.push(format!("{} {why} ({spent})", cand.describe()));
            }
        }
    }
    match best {
        Some((t, _)) if undecided(&t, short) => out.log.push(format!(
            "region {i}: undecided, heuristic kept (a candidate ran out of GPU memory, and \
             none verified was faster than the reference) [{}]",
            tried.join("; ")
        )),
        Some((t, c)) => {
            if !short {
                let record = serde_json::json!({
                    "choice": c.describe(), "median_ms": t.ms,
                    "relative": t.relative(), "tried": tried,
                });
                write_record(&cx.cache.join(format!("{key}.json")), cx_id, record);
            }
            out.log.push(format!(
                "region {i}: chose {} ({}) among [{}]",
                c.describe(),
                t.describe(),
                tried.join("; ")
            ));
            let why = format!(
                "search: fastest verified of {} relative to the reference ({})",
                cands.len(),
                t.describe()
            );
            if let Err(e) = apply(&mut out.plan, gp, i, &c, &why) {
                out.log
                    .push(format!("region {i}: {} not applied: {e}", c.describe()));
            }
        }
        None if is_gemm && cx.scope == SearchScope::Full => {
            out.log.push(format!(
                "region {i}: no implementation verified, computed with PyTorch [{}]",
                tried.join(", ")
            ));
            let why = format!(
                "every implementation failed verification ({}); computed with PyTorch",
                tried.join("; ")
            );
            if let Err(e) = out.plan.set_gemm(gp, i, GemmImpl::PyTorch, &why) {
                out.log
                    .push(format!("region {i}: pytorch not applied: {e}"));
            }
        }
        None => out.log.push(format!(
            "region {i}: no variant verified; heuristic kept [{}]",
            tried.join(", ")
        )),
    }
    Some(failed)
}

/// Whether a race with a candidate short of GPU memory (`short`) leaves the region to its
/// heuristic: its fastest verified candidate `best` still replaces the heuristic when it
/// is faster than the reference (a win over PyTorch whatever the unchecked candidate would
/// have timed), and not otherwise. Level-1 76's library convolution ran out of memory
/// beside other tasks, and the template, 2.65x the reference's time, won by default
/// (`bench/results/level1_modes_h100_default_vs_modes.md`). Such a race is never
/// cached.
fn undecided(best: &Timed, short: bool) -> bool {
    short && best.relative() >= 1.0
}

/// Where a benched candidate's seconds went: the worker's verification (its kernels
/// compiled ahead, the first trial, all trials), the timing session's setup, the timed
/// loops and their report.
fn phase_split(b: &BenchReport) -> String {
    let p = b.verify.phases.clone().unwrap_or_default();
    let t = b.timing_seconds.unwrap_or_default();
    format!(
        " (verification {:.1}: jit {:.1}, first trial {:.1}, trials {:.1}; timing setup {:.1}, \
         loops {:.1}, report {:.1})",
        p.total_s, p.jit_s, p.first_trial_s, p.trials_s, p.prepare_s, t.exclusive_s, t.report_s
    )
}

/// Candidate `c` of region `i` as an edit of `lowering` (`why`: the reason reported).
fn apply(
    lowering: &mut LoweringPlan,
    gp: (&Graph, &FusionPlan),
    i: usize,
    c: &Candidate,
    why: &str,
) -> Result<(), PlanError> {
    if let Some(cfg) = &c.config {
        lowering.set_config(gp, i, cfg.clone())?;
    }
    if let Some(imp) = c.imp {
        lowering.set_gemm(gp, i, imp, why)?;
    }
    if let Some(conv) = c.conv {
        lowering.set_conv(gp, i, conv, why)?;
    }
    if let Some(attention) = c.attention {
        lowering.set_attention(i, attention, why)?;
    }
    if let Some(layout) = c.layout {
        lowering.set_layout(gp, layout);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use drtc_backends::triton::Precision;
    use drtc_passes::fuse::{plan_fusion, FuseOptions};

    #[test]
    fn a_candidate_short_of_memory_leaves_a_slower_winner_undecided() {
        let t = |ms| Timed {
            ms,
            reference_ms: 10.0,
        };
        // every candidate checked: the fastest verified one decides, however slow
        assert!(!undecided(&t(26.5), false));
        // one ran out of memory: a winner slower than the reference does not decide
        assert!(undecided(&t(26.5), true));
        assert!(undecided(&t(10.0), true));
        // one faster than the reference does
        assert!(!undecided(&t(5.4), true));
    }

    fn linear(batch: usize, k: usize, n: usize) -> (Graph, FusionPlan) {
        let src = format!(
            "graph @g(%x: f32[{batch}, {k}], %w: param f32[{n}, {k}], %b: param f32[{n}]) {{\n  \
             %0 = linear(%x, %w, %b) : f32[{batch}, {n}]\n  %1 = relu(%0) : f32[{batch}, {n}]\n  \
             return %1\n}}\n"
        );
        let g = drtc_ir::text::parse(&src).unwrap();
        let plan = plan_fusion(&g, &FuseOptions::default());
        (g, plan)
    }

    /// The candidates of region `i` under `policy`'s lowering plan.
    fn cands(
        g: &Graph,
        plan: &FusionPlan,
        i: usize,
        policy: Precision,
        scope: SearchScope,
    ) -> Vec<Candidate> {
        let opts = CodegenOptions {
            precision: policy,
            ..Default::default()
        };
        let lowering = LoweringPlan::new(g, plan, &opts);
        candidates((g, plan), &lowering, i, scope)
    }

    fn contraction(plan: &FusionPlan) -> usize {
        plan.regions
            .iter()
            .position(|r| r.kind == drtc_passes::fuse::RegionKind::Contraction)
            .expect("a contraction region")
    }

    #[test]
    fn quick_races_cooperative_rows_on_large_long_row_reductions_only() {
        let norm = |rows: u64, cols: u64, op: &str| {
            let src = format!(
                "graph @g(%x: f32[{rows}, {cols}]) {{\n  \
                 %0 = {op}(%x) {{dim = 1}} : f32[{rows}, {cols}]\n  return %0\n}}\n"
            );
            let g = drtc_ir::text::parse(&src).unwrap();
            let plan = plan_fusion(&g, &FuseOptions::default());
            (g, plan)
        };
        // 4096 rows of 65535: the heuristic against 16 programs a row
        let (g, plan) = norm(4096, 65535, "softmax");
        let quick = cands(&g, &plan, 0, Precision::Fp32, SearchScope::Quick);
        assert_eq!(quick.len(), 2, "{quick:?}");
        assert!(quick[0].config.is_none());
        let coop = quick[1]
            .config
            .as_ref()
            .expect("the cooperative configuration");
        assert_eq!(coop.block("COOP"), 16);
        assert_eq!(coop.block("BLOCK_C"), 4096);
        // the full scope has it among the launch configurations
        let full = cands(&g, &plan, 0, Precision::Fp32, SearchScope::Full);
        assert!(
            full.iter().any(|c| c.config.as_ref() == Some(coop)),
            "{full:?}"
        );
        // rows of one tile, or too few elements to time: nothing to race
        let (g, plan) = norm(65536, 4000, "softmax");
        assert!(cands(&g, &plan, 0, Precision::Fp32, SearchScope::Quick).is_empty());
        let (g, plan) = norm(64, 65535, "softmax");
        assert!(cands(&g, &plan, 0, Precision::Fp32, SearchScope::Quick).is_empty());
        // a scan keeps its looped passes
        let (g, plan) = norm(4096, 65535, "cumsum");
        assert!(cands(&g, &plan, 0, Precision::Fp32, SearchScope::Quick).is_empty());
        // many rows longer than a cooperative row holds (32 x 8192): nothing in the quick
        // scope (the split lost or tied there: `long_rows_split`), the split in the full one
        let (g, plan) = norm(512, 1 << 21, "softmax");
        assert!(cands(&g, &plan, 0, Precision::Fp32, SearchScope::Quick).is_empty());
        let full = cands(&g, &plan, 0, Precision::Fp32, SearchScope::Full);
        assert!(
            full.iter()
                .any(|c| c.config.as_ref().is_some_and(|c| c.block("SPLIT") == 16)),
            "{full:?}"
        );
        // a scan's carry keeps it in one program: no split among its variants
        let (g, plan) = norm(512, 1 << 21, "cumsum");
        let full = cands(&g, &plan, 0, Precision::Fp32, SearchScope::Full);
        assert!(!full.is_empty());
        assert!(
            full.iter()
                .all(|c| c.config.as_ref().is_some_and(|c| c.block("SPLIT") == 1)),
            "{full:?}"
        );
    }

    #[test]
    fn quick_races_the_template_against_the_library_on_large_gemms_only() {
        // 2 * 1024 * 8192 * 8192 = 137 GFLOP: both implementations, heuristic config
        let (g, plan) = linear(1024, 8192, 8192);
        let i = contraction(&plan);
        for policy in [Precision::Fp32, Precision::Tf32] {
            let quick = cands(&g, &plan, i, policy, SearchScope::Quick);
            assert_eq!(quick.len(), 2, "{policy:?}: {quick:?}");
            assert!(quick.iter().all(|c| c.config.is_none()));
            assert!(matches!(quick[0].imp, Some(GemmImpl::Triton { .. })));
            assert_eq!(quick[1].imp, Some(GemmImpl::Library));
            // full also tries the template's configurations
            let full = cands(&g, &plan, i, policy, SearchScope::Full);
            assert!(full.len() > 2, "{full:?}");
        }
        // 2 * 64 * 256 * 256 = 8.4 MFLOP: below QUICK_MIN_FLOP, nothing to race
        let (g, plan) = linear(64, 256, 256);
        let i = contraction(&plan);
        assert!(cands(&g, &plan, i, Precision::Tf32, SearchScope::Quick).is_empty());
        assert!(!cands(&g, &plan, i, Precision::Tf32, SearchScope::Full).is_empty());
    }

    #[test]
    fn quick_also_races_padded_operands_when_k_or_n_is_not_aligned() {
        // K = 2949 (level-1 task 8's): rows of K are not 16-byte aligned
        let (g, plan) = linear(8205, 2949, 5921);
        let i = contraction(&plan);
        let quick = cands(&g, &plan, i, Precision::Tf32, SearchScope::Quick);
        let imps: Vec<_> = quick.iter().map(|c| c.imp).collect();
        assert_eq!(
            imps[1..],
            [Some(GemmImpl::Library), Some(GemmImpl::PaddedLibrary)],
            "{quick:?}"
        );
        // aligned K, N = 5921: padded too; both aligned: no padded candidate
        let padded = |k, n| {
            let (g, plan) = linear(8205, k, n);
            let i = contraction(&plan);
            let quick = cands(&g, &plan, i, Precision::Tf32, SearchScope::Quick);
            quick.iter().any(|c| c.imp == Some(GemmImpl::PaddedLibrary))
        };
        assert!(padded(2948, 5921));
        assert!(!padded(2948, 5920));
    }

    #[test]
    fn quick_does_not_race_a_template_that_would_starve_the_gpu() {
        // level-1 task 6: 256 x 256 x 524288 is 4 output tiles; tf32x3 passes the tf32
        // budget there, but each tile would walk all of K alone (measured 24.9 ms against
        // the library's 0.47): only the library call is left, nothing to race
        let (g, plan) = linear(256, 524288, 256);
        let i = contraction(&plan);
        let quick = cands(&g, &plan, i, Precision::Tf32, SearchScope::Quick);
        assert!(!quick.is_empty(), "the library call is still a candidate");
        assert!(
            quick
                .iter()
                .all(|c| matches!(c.imp, Some(GemmImpl::Library))),
            "{quick:?}"
        );
    }

    #[test]
    fn quick_races_64_x_64_tiles_where_the_heuristic_ones_would_starve_the_gpu() {
        // 1024 x 1024 x 1024: 64 heuristic tiles, 256 of 64 x 64, against the library
        let (g, plan) = linear(1024, 1024, 1024);
        let quick = cands(
            &g,
            &plan,
            contraction(&plan),
            Precision::Fp32,
            SearchScope::Quick,
        );
        let tiles = quick.iter().find_map(|c| match c.imp {
            Some(GemmImpl::Triton { .. }) => c.config.as_ref().map(|c| c.block("BLOCK_M")),
            _ => None,
        });
        assert_eq!((quick.len(), tiles), (2, Some(64)), "{quick:?}");
    }

    #[test]
    fn quick_does_not_race_what_the_error_model_refuses() {
        // K = 1048576: no Triton precision is admitted under fp32, only the library call
        let (g, plan) = linear(64, 1 << 20, 64);
        let i = contraction(&plan);
        let quick = cands(&g, &plan, i, Precision::Fp32, SearchScope::Quick);
        assert!(quick.len() < 2, "{quick:?}");
    }

    #[test]
    fn a_convolution_race_is_keyed_by_its_program() {
        let prog = |tail: &str| {
            let src = format!(
                "graph @g(%x: f32[64, 8, 130, 130], %w: param f32[64, 8, 3, 3]) {{\n  \
                 %0 = conv2d(%x, %w) {{stride = [1, 1], padding = [0, 0], dilation = [1, 1], groups = 1}} : f32[64, 64, 128, 128]\n  \
                 %1 = {tail}(%0) : f32[64, 64, 128, 128]\n  return %1\n}}"
            );
            let g = drtc_ir::text::parse(&src).unwrap();
            let plan = plan_fusion(&g, &FuseOptions::default());
            (g, plan)
        };
        let (ga, pa) = prog("relu");
        let (gb, pb) = prog("sigmoid");
        let i = (0..pa.regions.len())
            .find(|&i| region_conv(&ga, &pa, i).is_some())
            .expect("a convolution region the template covers");
        // the race: the library call and the template (tf32x3 under fp32)
        let quick = cands(&ga, &pa, i, Precision::Fp32, SearchScope::Quick);
        let names: Vec<String> = quick.iter().map(Candidate::describe).collect();
        assert_eq!(names, ["conv:library", "conv:triton:tf32x3"]);
        // the same convolution, another consumer: another key
        assert_ne!(search_key(&ga, &pa, i, "c"), search_key(&gb, &pb, i, "c"));
        assert_eq!(search_key(&ga, &pa, i, "c"), search_key(&ga, &pa, i, "c"));
    }

    #[test]
    fn two_convolutions_of_one_program_have_their_own_keys() {
        let src = "graph @g(%x: f32[8, 8, 34, 34], %w: param f32[8, 8, 3, 3], %v: param f32[16, 8, 1, 1]) {\n  \
                   %0 = conv2d(%x, %w) {stride = [1, 1], padding = [0, 0], dilation = [1, 1], groups = 1} : f32[8, 8, 32, 32]\n  \
                   %1 = relu(%0) : f32[8, 8, 32, 32]\n  \
                   %2 = conv2d(%1, %v) {stride = [1, 1], padding = [0, 0], dilation = [1, 1], groups = 1} : f32[8, 16, 32, 32]\n  \
                   %3 = relu(%2) : f32[8, 16, 32, 32]\n  return %3\n}";
        let g = drtc_ir::text::parse(src).unwrap();
        let plan = plan_fusion(&g, &FuseOptions::default());
        let convs: Vec<usize> = (0..plan.regions.len())
            .filter(|&i| region_conv(&g, &plan, i).is_some())
            .collect();
        assert_eq!(convs.len(), 2, "{plan:?}");
        assert_ne!(
            search_key(&g, &plan, convs[0], "c"),
            search_key(&g, &plan, convs[1], "c")
        );
    }

    #[test]
    fn a_strided_transposed_convolution_races_one_launch_against_a_launch_per_phase() {
        let src = "graph @g(%x: f32[64, 8, 128, 128], %w: param f32[8, 64, 3, 3]) {\n  \
                   %0 = conv_transpose2d(%x, %w) {stride = [2, 2], padding = [1, 1], output_padding = [1, 1], groups = 1, dilation = [1, 1]} : f32[64, 64, 256, 256]\n  \
                   %1 = relu(%0) : f32[64, 64, 256, 256]\n  return %1\n}";
        let g = drtc_ir::text::parse(src).unwrap();
        let plan = plan_fusion(&g, &FuseOptions::default());
        let i = (0..plan.regions.len())
            .find(|&i| region_conv(&g, &plan, i).is_some())
            .expect("a convolution region the template covers");
        let names: Vec<String> = cands(&g, &plan, i, Precision::Fp32, SearchScope::Quick)
            .iter()
            .map(Candidate::describe)
            .collect();
        assert_eq!(
            names,
            [
                "conv:library",
                "conv:triton:tf32x3",
                "conv:triton:tf32x3:launch-per-phase"
            ]
        );
    }

    #[test]
    fn attention_races_the_library_against_the_template_when_large() {
        let prog = |seq: i64| {
            let src = format!(
                "graph @g(%q: f32[8, 4, {seq}, 64], %k: f32[8, 4, {seq}, 64], %v: f32[8, 4, {seq}, 64]) {{\n  \
                 %0 = scaled_dot_product_attention(%q, %k, %v) : f32[8, 4, {seq}, 64]\n  return %0\n}}"
            );
            let g = drtc_ir::text::parse(&src).unwrap();
            let plan = plan_fusion(&g, &FuseOptions::default());
            (g, plan)
        };
        // 4 * 32 * 4096^2 * 64 = 137 GFLOP: PyTorch's fused attention and the template
        let (g, plan) = prog(4096);
        let i = (0..plan.regions.len())
            .find(|&i| region_attention(&g, &plan, i).is_some())
            .expect("an attention region the template covers");
        for (policy, dot) in [(Precision::Fp32, "tf32x3"), (Precision::Tf32, "tf32")] {
            let quick = cands(&g, &plan, i, policy, SearchScope::Quick);
            let names: Vec<String> = quick.iter().map(Candidate::describe).collect();
            assert_eq!(
                names,
                [
                    "attention:library".to_string(),
                    format!("attention:triton:{dot}")
                ]
            );
        }
        // the full scope races the template's launch configurations too
        let full = cands(&g, &plan, i, Precision::Fp32, SearchScope::Full);
        assert_eq!(full.len(), 5, "{full:?}");
        assert!(full[1..].iter().all(|c| c.config.is_some()));
        // a small one is not raced: the two differ by less than the timing's noise
        let (g, plan) = prog(64);
        assert!(cands(&g, &plan, 0, Precision::Fp32, SearchScope::Quick).is_empty());
    }
}
