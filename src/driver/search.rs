//! Test-time search over launch configurations: for each kernel region with several
//! reasonable configurations, generate the module with each, verify and time it on the
//! GPU, keep the fastest verified one, and cache the choice on disk by (region contents,
//! shapes, device) so the next compilation of the same region skips the search.
//! Regions are searched one after another, each with the earlier regions' choices fixed.

use crate::runtime::{BenchRequest, VerifyRequest, WorkerPool};
use drtc_backends::stitch::{generate_module, CodegenOptions, ModuleForm};
use drtc_backends::triton::LaunchConfig;
use drtc_backends::variants::{region_key, region_variants};
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
}

/// What the search chose and did.
#[derive(Debug, Default)]
pub struct SearchOutcome {
    pub configs: HashMap<usize, LaunchConfig>,
    /// One line per region: chosen configuration, timings, or cache hit.
    pub log: Vec<String>,
    pub timed: usize,
    pub cache_hits: usize,
}

fn cached(cache: &Path, key: &str, variants: &[LaunchConfig]) -> Option<LaunchConfig> {
    let text = std::fs::read_to_string(cache.join(format!("{key}.json"))).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let want = v["config"].as_str()?;
    variants.iter().find(|c| c.describe() == want).cloned()
}

/// Searches every kernel region of `plan`.
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
    for (i, region) in plan.regions.iter().enumerate() {
        let variants = region_variants(g, region);
        if variants.len() < 2 {
            continue;
        }
        let key = region_key(g, region, &cx.device);
        if let Some(c) = cached(&cx.cache, &key, &variants) {
            out.log.push(format!("region {i}: cached {}", c.describe()));
            out.configs.insert(i, c);
            out.cache_hits += 1;
            continue;
        }
        let mut best: Option<(f64, LaunchConfig)> = None;
        let mut tried = vec![];
        for (k, v) in variants.iter().enumerate() {
            let mut opts = base.clone();
            opts.configs = out.configs.clone();
            opts.configs.insert(i, v.clone());
            let module = generate_module(g, plan, form, &opts);
            let path = cx
                .work
                .join(format!("search_{}_{i}_{k}.py", std::process::id()));
            if std::fs::write(&path, &module.source).is_err() {
                continue;
            }
            let req = BenchRequest::new(VerifyRequest::new(cx.reference, &path));
            out.timed += 1;
            match cx.pool.bench(&req) {
                Ok(b) if b.verify.verified => {
                    if let Some(t) = b.timing {
                        let ms = t.candidate.median_ms;
                        tried.push(format!("{} {ms:.4} ms", v.describe()));
                        if best.as_ref().is_none_or(|(m, _)| ms < *m) {
                            best = Some((ms, v.clone()));
                        }
                    }
                }
                Ok(b) => tried.push(format!(
                    "{} not verified: {}",
                    v.describe(),
                    b.verify.reasons().join("; ")
                )),
                Err(e) => tried.push(format!("{} failed: {e}", v.describe())),
            }
            let _ = std::fs::remove_file(&path);
        }
        match best {
            Some((ms, c)) => {
                let record =
                    serde_json::json!({"config": c.describe(), "median_ms": ms, "tried": tried});
                let _ = std::fs::write(cx.cache.join(format!("{key}.json")), record.to_string());
                out.log.push(format!(
                    "region {i}: chose {} ({ms:.4} ms) among [{}]",
                    c.describe(),
                    tried.join(", ")
                ));
                out.configs.insert(i, c);
            }
            None => out.log.push(format!(
                "region {i}: no variant verified; heuristic kept [{}]",
                tried.join(", ")
            )),
        }
    }
    out
}
