//! Test-time search on a GPU. For each kernel region with several reasonable candidates,
//! generate the module with each, verify and time it, keep the fastest verified one, and
//! cache the choice on disk so the next compilation of the same region skips the search.
//! Candidates are launch configurations, and for GEMM regions implementations too: the
//! library call (cuBLAS through PyTorch, epilogue fused in one Triton kernel) against
//! drtc's Triton template at the precision the policy admits, with each configuration.
//! A GEMM region none of whose candidates verifies is computed with PyTorch (reported).
//! The cache key names the region's contents and shapes, the device, the Triton version
//! and the precision policy; an entry whose recorded device, version or policy differs is
//! ignored. Regions are searched one after another, earlier regions' choices fixed.

use crate::driver::compile::Compiled;
use crate::runtime::{BenchRequest, DrtcHome, PythonEnv, VerifyRequest, WorkerPool};
use drtc_backends::stitch::{generate_module, CodegenOptions, ModuleForm};
use drtc_backends::triton::{GemmImpl, LaunchConfig, Precision};
use drtc_backends::variants::{gemm_variants, region_key, region_variants};
use drtc_ir::Graph;
use drtc_passes::fuse::FusionPlan;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Where and how to search.
pub struct SearchContext<'a> {
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
}

impl<'a> SearchContext<'a> {
    /// A context under the drtc home (scratch and cache directories), naming the first GPU
    /// and the workers' Triton version for the cache key.
    pub fn in_home(
        pool: &'a WorkerPool,
        home: &DrtcHome,
        reference: &'a Path,
        rule: &str,
    ) -> Result<Self, String> {
        let device = match crate::runtime::devices::scan() {
            crate::runtime::DeviceScan::Gpus(g) if !g.is_empty() => g[0].name.clone(),
            _ => "cuda".into(),
        };
        Ok(SearchContext {
            pool,
            reference,
            work: home.dir("compile").map_err(|e| e.to_string())?,
            cache: home.dir("search").map_err(|e| e.to_string())?,
            device,
            triton: triton_version(home),
            rule: rule.to_string(),
        })
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

/// Searches `compiled`'s regions and regenerates its module with the fastest verified
/// choices (`base`: the options the module was generated with).
pub fn search_compiled(
    compiled: &mut Compiled,
    form: &ModuleForm,
    base: CodegenOptions,
    cx: &SearchContext,
) -> SearchOutcome {
    let outcome = search(&compiled.graph, &compiled.plan, form, &base, cx);
    let chosen = CodegenOptions {
        configs: outcome.configs.clone(),
        gemm: outcome.gemm.clone(),
        ..base
    };
    compiled.module = generate_module(&compiled.graph, &compiled.plan, form, &chosen);
    outcome
}

/// What the search chose and did.
#[derive(Debug, Default)]
pub struct SearchOutcome {
    pub configs: HashMap<usize, LaunchConfig>,
    /// GEMM implementations chosen, with the reason.
    pub gemm: HashMap<usize, (GemmImpl, String)>,
    /// One line per region: chosen candidate, timings, or cache hit.
    pub log: Vec<String>,
    pub timed: usize,
    pub cache_hits: usize,
}

/// One candidate of a region.
#[derive(Clone, Debug, PartialEq)]
struct Candidate {
    imp: Option<GemmImpl>,
    config: Option<LaunchConfig>,
}

impl Candidate {
    fn describe(&self) -> String {
        match (&self.imp, &self.config) {
            (Some(i), Some(c)) => format!("{i} {}", c.describe()),
            (Some(i), None) => i.describe(),
            (None, Some(c)) => c.describe(),
            (None, None) => "default".into(),
        }
    }
}

fn candidates(g: &Graph, plan: &FusionPlan, i: usize, policy: Precision) -> Vec<Candidate> {
    let region = &plan.regions[i];
    let gemm = gemm_variants(g, region, policy);
    if !gemm.is_empty() {
        return gemm
            .into_iter()
            .map(|(imp, config)| Candidate {
                imp: Some(imp),
                config,
            })
            .collect();
    }
    region_variants(g, region)
        .into_iter()
        .map(|c| Candidate {
            imp: None,
            config: Some(c),
        })
        .collect()
}

/// The cached candidate for `key`, when it was recorded for this device, Triton version
/// and policy and is still among the candidates.
fn cached(cache: &Path, key: &str, cx_id: &str, cands: &[Candidate]) -> Option<Candidate> {
    let text = std::fs::read_to_string(cache.join(format!("{key}.json"))).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    if v["context"].as_str()? != cx_id {
        return None;
    }
    let want = v["choice"].as_str()?;
    cands.iter().find(|c| c.describe() == want).cloned()
}

/// Searches every kernel region of `plan` (the policy is `base.precision`).
pub fn search(
    g: &Graph,
    plan: &FusionPlan,
    form: &ModuleForm,
    base: &CodegenOptions,
    cx: &SearchContext,
) -> SearchOutcome {
    let mut out = SearchOutcome::default();
    let _ = std::fs::create_dir_all(&cx.cache);
    let _ = std::fs::create_dir_all(&cx.work);
    let cx_id = format!(
        "{}|triton {}|{}",
        cx.device,
        cx.triton,
        base.precision.name()
    );
    for (i, region) in plan.regions.iter().enumerate() {
        let cands = candidates(g, plan, i, base.precision);
        let is_gemm = cands.iter().any(|c| c.imp.is_some());
        if cands.len() < 2 {
            continue;
        }
        let key = region_key(g, region, &cx_id);
        if let Some(c) = cached(&cx.cache, &key, &cx_id, &cands) {
            out.log.push(format!("region {i}: cached {}", c.describe()));
            apply(&mut out, i, &c, "cached search result");
            out.cache_hits += 1;
            continue;
        }
        let mut best: Option<(f64, Candidate)> = None;
        let mut tried = vec![];
        for (k, cand) in cands.iter().enumerate() {
            let mut opts = base.clone();
            opts.configs = out.configs.clone();
            opts.gemm = out.gemm.clone();
            let mut trial = SearchOutcome::default();
            apply(&mut trial, i, cand, "search candidate");
            opts.configs.extend(trial.configs);
            opts.gemm.extend(trial.gemm);
            let module = generate_module(g, plan, form, &opts);
            let path = cx
                .work
                .join(format!("search_{}_{i}_{k}.py", std::process::id()));
            if std::fs::write(&path, &module.source).is_err() {
                continue;
            }
            let mut verify = VerifyRequest::new(cx.reference, &path);
            verify.rule = Some(cx.rule.clone());
            let req = BenchRequest::new(verify);
            out.timed += 1;
            match cx.pool.bench(&req) {
                Ok(b) if b.verify.verified => {
                    if let Some(t) = b.timing {
                        let ms = t.candidate.median_ms;
                        tried.push(format!("{} {ms:.4} ms", cand.describe()));
                        if best.as_ref().is_none_or(|(m, _)| ms < *m) {
                            best = Some((ms, cand.clone()));
                        }
                    }
                }
                Ok(b) => tried.push(format!(
                    "{} not verified: {}",
                    cand.describe(),
                    b.verify.reasons().join("; ")
                )),
                Err(e) => tried.push(format!("{} failed: {e}", cand.describe())),
            }
            let _ = std::fs::remove_file(&path);
        }
        match best {
            Some((ms, c)) => {
                let record = serde_json::json!({
                    "context": cx_id, "choice": c.describe(), "median_ms": ms, "tried": tried,
                });
                let _ = std::fs::write(cx.cache.join(format!("{key}.json")), record.to_string());
                out.log.push(format!(
                    "region {i}: chose {} ({ms:.4} ms) among [{}]",
                    c.describe(),
                    tried.join(", ")
                ));
                let why = format!("search: fastest verified of {} ({ms:.4} ms)", cands.len());
                apply(&mut out, i, &c, &why);
            }
            None if is_gemm => {
                out.log.push(format!(
                    "region {i}: no implementation verified, computed with PyTorch [{}]",
                    tried.join(", ")
                ));
                out.gemm.insert(
                    i,
                    (
                        GemmImpl::PyTorch,
                        format!(
                            "every implementation failed verification ({}); computed with PyTorch",
                            tried.join("; ")
                        ),
                    ),
                );
            }
            None => out.log.push(format!(
                "region {i}: no variant verified; heuristic kept [{}]",
                tried.join(", ")
            )),
        }
    }
    out
}

fn apply(out: &mut SearchOutcome, i: usize, c: &Candidate, why: &str) {
    if let Some(cfg) = &c.config {
        out.configs.insert(i, cfg.clone());
    }
    if let Some(imp) = c.imp {
        out.gemm.insert(i, (imp, why.to_string()));
    }
}
