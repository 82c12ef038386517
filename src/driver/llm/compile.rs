//! `drtc compile --backend llm`: one program through the LLM search. Region mode splits
//! the program into subproblems (`decompose`), asks for a kernel per subproblem, chooses
//! one candidate per subproblem (the template's kernel is always one), stitches the
//! choices and verifies the stitched module; whole mode asks for the whole program. The
//! result is never worse than the template backend's: the plain template module is
//! verified too and kept unless the LLM's result verifies and (on a GPU) is faster, or the
//! template module fails where the LLM's result verifies.

use super::search::{choose, evaluate, search_tasks, template_record, Evaluation, Task};
use super::{parallel_map, LlmContext};
use crate::driver::compile::{compile_graph, CompileOptions, CLEANUP_PIPELINE};
use crate::driver::load::LoadedProgram;
use crate::driver::stitch::{stitched_module, this_drtc, Piece};
use crate::verifier::DeviceKind;
use drtc_backends::guard::GuardMode;
use drtc_backends::stitch::ModuleForm;
use drtc_backends::torch::emit_seed_program;
use drtc_llm::{CandidateRecord, Origin, PromptMode};
use drtc_passes::decompose::{decompose, subproblem_graph, value_name};
use drtc_passes::{ManagerOptions, PassManager};
use indicatif::ProgressBar;
use serde_json::{json, Value};
use std::path::Path;

/// What the LLM backend made of one program.
pub struct LlmCompiled {
    /// The module written (the template's, or the LLM search's).
    pub source: String,
    /// `template`, `llm` (whole mode) or `stitched` (region mode).
    pub chosen: &'static str,
    pub verification: Evaluation,
    /// The template module's own verification.
    pub template: Evaluation,
    /// Every candidate (their code dropped).
    pub candidates: Vec<CandidateRecord>,
    pub regions: Vec<Value>,
    pub notes: Vec<String>,
}

impl LlmCompiled {
    pub fn report(&self, cx: &LlmContext) -> Value {
        let tokens = |f: fn(&CandidateRecord) -> u64| self.candidates.iter().map(f).sum::<u64>();
        let s = cx.settings;
        let eval_json = |e: &Evaluation| {
            json!({
                "verified": e.verified,
                "reasons": e.reasons,
                "time_ms": e.time_ms,
                "eager_ms": e.reference_ms,
                "speedup": match (e.reference_ms, e.time_ms) {
                    (Some(r), Some(t)) if t > 0.0 => Some(r / t),
                    _ => None,
                },
            })
        };
        json!({
            "backend": "llm",
            "url": cx.client.options().url,
            "model": cx.client.options().model,
            "mode": match s.mode { PromptMode::Regions => "regions", PromptMode::Whole => "whole" },
            "samples": s.samples,
            "turns": s.turns,
            "strict": s.strict,
            "sampling": s.sampling,
            "device": cx.device().name(),
            "chosen": self.chosen,
            "verification": eval_json(&self.verification),
            "template": eval_json(&self.template),
            "regions": self.regions,
            "candidates": self.candidates,
            "prompt_tokens": tokens(|c| c.prompt_tokens),
            "completion_tokens": tokens(|c| c.completion_tokens),
            "request_ms": self.candidates.iter().filter(|c| !c.cached).filter_map(|c| c.latency_ms).sum::<f64>(),
            "notes": self.notes,
        })
    }
}

pub(super) fn write_scratch(
    cx: &LlmContext,
    stem: &str,
    text: &str,
) -> Result<std::path::PathBuf, String> {
    let path = cx.scratch(stem);
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// Runs the template backend's cleanup on `g` (what `compile_graph` runs first), so that
/// region boundaries match the template compile.
pub fn cleanup(g: &mut drtc_ir::Graph) -> Result<(), String> {
    let opts = ManagerOptions {
        verify_each: true,
        print_ir_after: vec![],
    };
    let pm = PassManager::parse(&drtc_passes::presets::source(CLEANUP_PIPELINE), opts)
        .map_err(|e| e.to_string())?;
    pm.run(g).map_err(|e| e.to_string())?;
    g.compact();
    Ok(())
}

pub(super) fn strip_code(mut c: CandidateRecord) -> CandidateRecord {
    c.code = None;
    c
}

/// The prompt mode of a program in `mode`: whole mode on a seed program asks for its
/// `triton_fused_operator`, as region mode does.
pub(super) fn prompt_mode(mode: PromptMode, form: &ModuleForm) -> PromptMode {
    match (mode, form) {
        (PromptMode::Whole, ModuleForm::KernelBench { .. }) => PromptMode::Whole,
        _ => PromptMode::Regions,
    }
}

/// The LLM backend on one loaded program.
pub fn compile_with_llm(
    cx: &LlmContext,
    prog: &mut LoadedProgram,
    opts: &CompileOptions,
    bar: &ProgressBar,
) -> Result<LlmCompiled, String> {
    let reference_src = prog
        .reference_source
        .clone()
        .ok_or_else(|| format!("{}: no PyTorch reference to verify against", prog.name))?;
    let reference = write_scratch(cx, "reference", &reference_src)?;
    bar.set_message("template module");
    let template = compile_graph(prog.graph.clone(), &prog.form, opts)?;
    let template_src = template.module.source.clone();
    let template_eval = evaluate(cx, &reference, &template_src, false, None);
    let result = match cx.settings.mode {
        PromptMode::Whole => whole(
            cx,
            prog,
            &reference,
            &reference_src,
            template_src,
            template_eval,
            bar,
        ),
        PromptMode::Regions => {
            regions(cx, prog, opts, &reference, template_src, template_eval, bar)
        }
    };
    let _ = std::fs::remove_file(&reference);
    result
}

fn whole(
    cx: &LlmContext,
    prog: &LoadedProgram,
    reference: &Path,
    reference_src: &str,
    template_src: String,
    template_eval: Evaluation,
    bar: &ProgressBar,
) -> Result<LlmCompiled, String> {
    let library_ops = cx
        .checker
        .declared_library_ops(reference_src)
        .map_err(|e| e.to_string())?;
    let task = Task {
        label: "whole".into(),
        reference: reference.to_path_buf(),
        program: reference_src.to_string(),
        prompt_mode: prompt_mode(PromptMode::Whole, &prog.form),
        library_ops,
        baseline_ms: template_eval.time_ms,
    };
    let mut records = vec![template_record("whole", &template_src, &template_eval)];
    records.extend(search_tasks(cx, std::slice::from_ref(&task), bar)?.remove(0));
    let mut notes = vec![];
    let pick = choose(&mut records, cx.device());
    if cx.device() == DeviceKind::Cpu {
        notes.push(
            "on CPU candidates are verified, not timed: the template is kept unless it failed"
                .into(),
        );
    }
    let (source, chosen, verification) = match pick {
        Some(i) if records[i].origin == Origin::Llm => {
            let code = records[i].code.clone().unwrap_or_default();
            let e = Evaluation {
                verified: true,
                reasons: vec![],
                time_ms: records[i].time_ms,
                reference_ms: records[i].reference_ms,
                compiled_ms: None,
                seconds: records[i].check_s,
                retried_alone: records[i].retried_alone.clone(),
            };
            (code, "llm", e)
        }
        _ => (template_src, "template", template_eval.clone()),
    };
    Ok(LlmCompiled {
        source,
        chosen,
        verification,
        template: template_eval,
        candidates: records.into_iter().map(strip_code).collect(),
        regions: vec![],
        notes,
    })
}

/// Region tasks, their template modules as stitching pieces, and their report entries.
pub type RegionSetup = (Vec<Task>, Vec<Piece>, Vec<Value>);

/// The regions of a program (after cleanup, which `prog.graph` keeps) as tasks, with
/// their template kernel modules as stitching pieces, and their report entries.
pub fn region_tasks(
    cx: &LlmContext,
    prog: &mut LoadedProgram,
    opts: &CompileOptions,
) -> Result<RegionSetup, String> {
    cleanup(&mut prog.graph)?;
    let g = &prog.graph;
    let d = decompose(g, cx.settings.max_region_ops);
    let names =
        |vs: &[drtc_ir::ValueId]| -> Vec<String> { vs.iter().map(|&v| value_name(g, v)).collect() };
    let mut tasks = vec![];
    let mut pieces = vec![];
    let mut region_json = vec![];
    for (i, sp) in d.subproblems.iter().enumerate() {
        let sub = subproblem_graph(g, sp, &format!("subproblem_{i}"));
        let seed = emit_seed_program(&sub);
        let module = compile_graph(sub, &ModuleForm::Seed, opts)?.module.source;
        let library_ops = cx
            .checker
            .declared_library_ops(&seed)
            .map_err(|e| e.to_string())?;
        let path = write_scratch(cx, &format!("region{i}"), &seed)?;
        let ops: Vec<&str> = sp.nodes.iter().map(|&n| g.node(n).op.name()).collect();
        region_json.push(json!({
            "index": i, "ops": ops, "reads": names(&sp.inputs), "writes": names(&sp.outputs),
        }));
        tasks.push(Task {
            label: format!("region {i}"),
            reference: path,
            program: seed,
            prompt_mode: PromptMode::Regions,
            library_ops,
            baseline_ms: None,
        });
        pieces.push(Piece {
            index: i,
            reads: names(&sp.inputs),
            writes: names(&sp.outputs),
            module,
        });
    }
    Ok((tasks, pieces, region_json))
}

fn regions(
    cx: &LlmContext,
    prog: &mut LoadedProgram,
    opts: &CompileOptions,
    reference: &Path,
    template_src: String,
    template_eval: Evaluation,
    bar: &ProgressBar,
) -> Result<LlmCompiled, String> {
    let (mut tasks, mut pieces, mut region_json) = region_tasks(cx, prog, opts)?;

    bar.set_message(format!("verifying {} template region kernels", tasks.len()));
    let indices: Vec<usize> = (0..tasks.len()).collect();
    let template_evals = parallel_map(cx.pool.size(), &indices, |&i| {
        evaluate(cx, &tasks[i].reference, &pieces[i].module, false, None)
    });
    for (t, e) in tasks.iter_mut().zip(&template_evals) {
        t.baseline_ms = e.time_ms;
    }
    let found = search_tasks(cx, &tasks, bar);
    let found = match found {
        Ok(f) => f,
        Err(e) => {
            for t in &tasks {
                let _ = std::fs::remove_file(&t.reference);
            }
            return Err(e);
        }
    };
    let mut all = vec![];
    let mut any_llm = false;
    for (i, llm) in found.into_iter().enumerate() {
        let mut records = vec![template_record(
            &tasks[i].label,
            &pieces[i].module,
            &template_evals[i],
        )];
        records.extend(llm);
        match choose(&mut records, cx.device()) {
            Some(k) => {
                if records[k].origin == Origin::Llm {
                    any_llm = true;
                    pieces[i].module = records[k].code.clone().unwrap_or_default();
                }
                region_json[i]["chosen"] = json!({"origin": records[k].origin, "sample": records[k].sample, "turn": records[k].turn});
            }
            None => region_json[i]["chosen"] = Value::Null,
        }
        all.extend(records.into_iter().map(strip_code));
    }
    for t in &tasks {
        let _ = std::fs::remove_file(&t.reference);
    }
    let mut notes = vec![];
    if cx.device() == DeviceKind::Cpu {
        notes.push(
            "on CPU candidates are verified, not timed: each region keeps its template kernel \
             unless that failed"
                .into(),
        );
    }
    let unsolved: Vec<usize> = region_json
        .iter()
        .enumerate()
        .filter(|(_, r)| r["chosen"].is_null())
        .map(|(i, _)| i)
        .collect();
    let mut out = LlmCompiled {
        source: template_src.clone(),
        chosen: "template",
        verification: template_eval.clone(),
        template: template_eval.clone(),
        candidates: all,
        regions: region_json,
        notes,
    };
    if !any_llm {
        out.notes
            .push("every region kept its template kernel: the template module is written".into());
        return Ok(out);
    }
    if !unsolved.is_empty() {
        out.notes.push(format!("regions without a verified candidate: {unsolved:?}; stitched with their template kernels"));
    }
    bar.set_message("verifying the stitched module");
    let stitched = stitched_module(prog, &pieces, GuardMode::Recompile, this_drtc());
    let e = evaluate(cx, reference, &stitched, false, None);
    let better = e.verified
        && (!template_eval.verified
            || match (cx.device(), e.time_ms, template_eval.time_ms) {
                (DeviceKind::Cuda, Some(s), Some(t)) => s < t,
                _ => false,
            });
    if better {
        out.source = stitched;
        out.chosen = "stitched";
        out.verification = e;
    } else {
        out.notes.push(format!(
            "the stitched module was {}; the template module is written",
            if e.verified {
                "verified but not faster".to_string()
            } else {
                format!("not verified ({})", e.reasons.join("; "))
            }
        ));
    }
    Ok(out)
}
