//! `drtc eval`: a kernel model over a benchmark. Every task's samples are judged as
//! `drtc compile --backend llm` judges candidates (static checks, the verifier's
//! verification in isolated workers, timing on a GPU), but without the template: the model
//! is what is measured. In region mode sample j of a task is the stitch of every region's
//! sample j (its best verified turn), verified as a whole program.

use super::compile::{prompt_mode, region_tasks, strip_code, write_scratch};
use super::metrics::{SampleResult, TaskResult};
use super::search::{evaluate, search_tasks, Task};
use super::LlmContext;
use crate::driver::compile::CompileOptions;
use crate::driver::load::LoadedProgram;
use crate::driver::stitch::stitched_module;
use drtc_backends::guard::GuardMode;
use drtc_llm::{CandidateRecord, PromptMode, Status};
use indicatif::ProgressBar;
use std::time::Instant;

/// The best verified record of `sample` (fastest when timed, else the earliest turn).
fn best_of_sample(records: &[CandidateRecord], sample: usize) -> Option<&CandidateRecord> {
    records
        .iter()
        .filter(|r| r.sample == Some(sample) && r.status == Status::Verified)
        .min_by(|a, b| {
            let ta = a.time_ms.unwrap_or(f64::INFINITY);
            let tb = b.time_ms.unwrap_or(f64::INFINITY);
            ta.partial_cmp(&tb)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.turn.cmp(&b.turn))
        })
}

/// The last reason a sample failed with.
fn last_reason(records: &[CandidateRecord], sample: usize) -> String {
    records
        .iter()
        .rev()
        .find(|r| r.sample == Some(sample))
        .and_then(|r| r.reason.clone())
        .unwrap_or_else(|| "no candidate".into())
}

fn ops_of(prog: &LoadedProgram) -> Vec<String> {
    let mut ops: Vec<String> = prog
        .graph
        .body()
        .iter()
        .map(|&n| prog.graph.node(n).op.name().to_string())
        .collect();
    ops.sort();
    ops.dedup();
    ops
}

/// Evaluates the model on one program.
pub fn eval_program(
    cx: &LlmContext,
    prog: &mut LoadedProgram,
    opts: &CompileOptions,
    bar: &ProgressBar,
) -> TaskResult {
    let start = Instant::now();
    let mut result = TaskResult {
        task: prog.name.clone(),
        ops: ops_of(prog),
        samples: vec![],
        error: None,
        prompt_tokens: 0,
        completion_tokens: 0,
        request_ms: 0.0,
        wall_ms: 0.0,
        candidates: vec![],
    };
    let outcome = match cx.settings.mode {
        PromptMode::Whole => eval_whole(cx, prog),
        PromptMode::Regions => eval_regions(cx, prog, opts, bar),
    };
    match outcome {
        Ok((samples, records)) => fill(&mut result, samples, records),
        Err(e) => result.error = Some(e),
    }
    result.wall_ms = start.elapsed().as_secs_f64() * 1e3;
    result
}

type Judged = (Vec<SampleResult>, Vec<CandidateRecord>);

fn eval_whole(cx: &LlmContext, prog: &LoadedProgram) -> Result<Judged, String> {
    let reference_src = prog
        .reference_source
        .clone()
        .ok_or_else(|| "no PyTorch reference to verify against".to_string())?;
    judge_whole(
        cx,
        reference_src,
        prompt_mode(PromptMode::Whole, &prog.form),
    )
}

/// Whole mode on a KernelBench source that drtc's frontend could not lower: the model is
/// still judged (against PyTorch running the source itself); `note` says why there are no
/// ops for the per-op table.
pub fn eval_unlowered(cx: &LlmContext, name: &str, source: &str, note: &str) -> TaskResult {
    let start = Instant::now();
    let mut result = TaskResult {
        task: name.to_string(),
        ops: vec![],
        samples: vec![],
        error: None,
        prompt_tokens: 0,
        completion_tokens: 0,
        request_ms: 0.0,
        wall_ms: 0.0,
        candidates: vec![],
    };
    let mode = if source.contains("class Model") {
        PromptMode::Whole
    } else {
        PromptMode::Regions
    };
    match judge_whole(cx, source.to_string(), mode) {
        Ok((samples, records)) => fill(&mut result, samples, records),
        Err(e) => result.error = Some(e),
    }
    result.candidates.push(serde_json::json!({"note": note}));
    result.wall_ms = start.elapsed().as_secs_f64() * 1e3;
    result
}

fn fill(result: &mut TaskResult, samples: Vec<SampleResult>, records: Vec<CandidateRecord>) {
    result.samples = samples;
    result.prompt_tokens = records.iter().map(|r| r.prompt_tokens).sum();
    result.completion_tokens = records.iter().map(|r| r.completion_tokens).sum();
    result.request_ms = records
        .iter()
        .filter(|r| !r.cached)
        .filter_map(|r| r.latency_ms)
        .sum();
    result.candidates = records
        .into_iter()
        .map(|r| serde_json::to_value(strip_code(r)).unwrap_or_default())
        .collect();
}

fn judge_whole(
    cx: &LlmContext,
    reference_src: String,
    prompt_mode: PromptMode,
) -> Result<Judged, String> {
    let reference = write_scratch(cx, "reference", &reference_src)?;
    let library_ops = cx
        .checker
        .declared_library_ops(&reference_src)
        .map_err(|e| e.to_string())?;
    let task = Task {
        label: "whole".into(),
        reference: reference.clone(),
        program: reference_src,
        prompt_mode,
        library_ops,
        baseline_ms: None,
    };
    let found = search_tasks(cx, std::slice::from_ref(&task), &ProgressBar::hidden());
    let _ = std::fs::remove_file(&reference);
    let records = found?.remove(0);
    let samples = (0..cx.settings.samples)
        .map(|j| match best_of_sample(&records, j) {
            Some(r) => SampleResult {
                sample: j,
                verified: true,
                // a verified sample's reason: why it was not timed, if it was not
                reason: r.reason.clone(),
                time_ms: r.time_ms,
                eager_ms: r.reference_ms,
                compile_ms: r.compile_ms,
            },
            None => SampleResult {
                sample: j,
                verified: false,
                reason: Some(last_reason(&records, j)),
                time_ms: None,
                eager_ms: None,
                compile_ms: None,
            },
        })
        .collect();
    Ok((samples, records))
}

fn eval_regions(
    cx: &LlmContext,
    prog: &mut LoadedProgram,
    opts: &CompileOptions,
    bar: &ProgressBar,
) -> Result<Judged, String> {
    let reference_src = prog
        .reference_source
        .clone()
        .ok_or_else(|| "no PyTorch reference to verify against".to_string())?;
    let (tasks, mut pieces, _) = region_tasks(cx, prog, opts)?;
    let found = search_tasks(cx, &tasks, &ProgressBar::hidden());
    for t in &tasks {
        let _ = std::fs::remove_file(&t.reference);
    }
    let found = found?;
    let reference = write_scratch(cx, "reference", &reference_src)?;
    let mut samples = vec![];
    for j in 0..cx.settings.samples {
        bar.set_message(format!("{}: stitching sample {j}", prog.name));
        let mut missing = None;
        for (i, records) in found.iter().enumerate() {
            match best_of_sample(records, j) {
                Some(r) => pieces[i].module = r.code.clone().unwrap_or_default(),
                None => {
                    missing = Some(format!("region {i}: {}", last_reason(records, j)));
                    break;
                }
            }
        }
        let s = match missing {
            Some(reason) => SampleResult {
                sample: j,
                verified: false,
                reason: Some(reason),
                time_ms: None,
                eager_ms: None,
                compile_ms: None,
            },
            None => {
                let e = evaluate(
                    cx,
                    &reference,
                    &stitched_module(prog, &pieces, GuardMode::Error, None),
                    false,
                    None,
                );
                SampleResult {
                    sample: j,
                    verified: e.verified,
                    reason: (!e.verified).then(|| format!("stitched: {}", e.reasons.join("; "))),
                    time_ms: e.time_ms,
                    eager_ms: e.reference_ms,
                    compile_ms: e.compiled_ms,
                }
            }
        };
        samples.push(s);
    }
    let _ = std::fs::remove_file(&reference);
    Ok((samples, found.into_iter().flatten().collect()))
}
