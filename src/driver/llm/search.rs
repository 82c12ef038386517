//! Candidates for a set of tasks (regions, or whole programs): `samples` answers per task,
//! each checked statically and then verified (on a GPU: verified and timed) in the
//! verifier's workers; up to `turns - 1` feedback rounds per sample for answers that failed
//! or were slower than the template; and the choice of one candidate per task.

use super::{parallel_map, LlmContext};
use crate::verifier::{BenchRequest, DeviceKind, VerifyRequest};
use drtc_llm::{
    render, render_refine, CandidateRecord, ChatMessage, CheckSeconds, Completion, LlmError,
    Origin, PromptMode, StaticVerdict, Status,
};
use indicatif::ProgressBar;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// One thing to write a kernel for.
#[derive(Clone, Debug)]
pub struct Task {
    /// `region N` or `whole`.
    pub label: String,
    /// The reference program file the verifier compares against.
    pub reference: PathBuf,
    /// The program the prompt shows.
    pub program: String,
    /// Which prompt (and entry point) the task takes.
    pub prompt_mode: PromptMode,
    /// Library ops strict mode allows (what the reference itself calls).
    pub library_ops: Vec<String>,
    /// The template's time (GPU): slower verified answers get speed feedback.
    pub baseline_ms: Option<f64>,
}

/// The verifier's verdict on one module.
#[derive(Clone, Debug, Default)]
pub struct Evaluation {
    pub verified: bool,
    pub reasons: Vec<String>,
    pub time_ms: Option<f64>,
    pub reference_ms: Option<f64>,
    pub compiled_ms: Option<f64>,
    /// Where the check's time went (None when it never reached a worker).
    pub seconds: Option<CheckSeconds>,
    /// The first attempt's reasons when it was run again alone after running out of
    /// memory beside other workers.
    pub retried_alone: Option<Vec<String>>,
}

impl Evaluation {
    fn failed(reason: String) -> Self {
        Evaluation {
            reasons: vec![reason],
            ..Default::default()
        }
    }
}

/// Verifies `module` against `reference` (on CUDA also times it, and a module whose timed
/// outputs are wrong is not verified).
pub fn evaluate(
    cx: &LlmContext,
    reference: &Path,
    module: &str,
    strict: bool,
    library_ops: Option<&[String]>,
) -> Evaluation {
    let path = cx.scratch("candidate");
    if let Err(e) = std::fs::write(&path, module) {
        return Evaluation::failed(format!("cannot write {}: {e}", path.display()));
    }
    let req = VerifyRequest {
        reference: reference.to_path_buf(),
        candidate: path.clone(),
        trials: cx.settings.trials,
        seed: 0,
        strict,
        library_ops: library_ops.map(<[String]>::to_vec),
        rule: cx.settings.rule.clone(),
        // seeds drawn from the answer itself: a rerun (the answer cache, --offline) sees
        // the same figures, and no answer can know its inputs before it is written
        seed_salt: Some(crate::verifier::content_hash(module.as_bytes())),
        trusted: false,
    };
    let started = std::time::Instant::now();
    let seconds = |phases: Option<&crate::verifier::Phases>,
                   timing: Option<crate::verifier::TimingSeconds>| {
        let p = phases.cloned().unwrap_or_default();
        let t = timing.unwrap_or_default();
        Some(CheckSeconds {
            wall_s: started.elapsed().as_secs_f64(),
            verify_s: p.total_s,
            load_s: p.load_s,
            trials_s: p.trials_s,
            truth_s: p.truth_s,
            redrawn_s: p.redrawn_s,
            jit_s: p.jit_s,
            first_trial_s: p.first_trial_s,
            prepare_s: p.prepare_s,
            verify_queue_s: t.prepare_queue_s,
            worker_queue_s: t.worker_queue_s,
            timing_queue_s: t.queue_s,
            timing_s: t.exclusive_s,
            timing_report_s: t.report_s,
        })
    };
    let eval = match cx.device() {
        DeviceKind::Cpu => match cx.pool.verify(&req) {
            Ok(r) => Evaluation {
                verified: r.verified,
                reasons: r.reasons(),
                seconds: seconds(r.phases.as_ref(), None),
                retried_alone: r.retried_alone.clone(),
                ..Default::default()
            },
            Err(e) => Evaluation::failed(e.to_string()),
        },
        DeviceKind::Cuda => match cx.pool.bench(&BenchRequest {
            verify: req,
            compile_modes: BenchRequest::default_mode_if(cx.settings.compile_baseline),
            torch_precision: None,
            compile_budget_s: None,
        }) {
            Ok(b) => {
                let mut reasons = b.verify.reasons();
                let mut verified = b.verify.verified;
                if let Some(t) = &b.timing {
                    if !t.timed_outputs_ok {
                        verified = false;
                        reasons.extend(t.timed_outputs_failures.iter().cloned());
                    }
                }
                if let (true, Some(e)) = (verified && b.timing.is_none(), &b.timing_error) {
                    reasons.push(format!("not timed: {e}"));
                }
                Evaluation {
                    verified,
                    reasons,
                    time_ms: b.timing.as_ref().map(|t| t.candidate.median_ms),
                    reference_ms: b.timing.as_ref().map(|t| t.reference.median_ms),
                    compiled_ms: b
                        .timing
                        .as_ref()
                        .and_then(|t| t.compiled.as_ref().map(|c| c.median_ms)),
                    seconds: seconds(b.verify.phases.as_ref(), b.timing_seconds),
                    retried_alone: b.verify.retried_alone.clone(),
                }
            }
            Err(e) => Evaluation::failed(e.to_string()),
        },
    };
    let _ = std::fs::remove_file(&path);
    eval
}

/// The template candidate of a task, as a report record.
pub fn template_record(label: &str, module: &str, eval: &Evaluation) -> CandidateRecord {
    let mut r = CandidateRecord::new(label, Origin::Template);
    r.status = if eval.verified {
        Status::Verified
    } else {
        Status::Rejected
    };
    r.reason = (!eval.reasons.is_empty()).then(|| eval.reasons.join("; "));
    r.time_ms = eval.time_ms;
    r.reference_ms = eval.reference_ms;
    r.compile_ms = eval.compiled_ms;
    r.check_s = eval.seconds;
    r.retried_alone = eval.retried_alone.clone();
    r.code = Some(module.to_string());
    r
}

/// An answer waiting to be judged (taken once by a worker thread).
type Job = std::sync::Mutex<Option<(usize, Result<Completion, LlmError>)>>;

/// One sample's conversation across turns.
struct Chain {
    task: usize,
    sample: usize,
    messages: Vec<ChatMessage>,
}

/// What became of one answer, and the feedback for its next round, if it gets one.
struct Outcome {
    record: CandidateRecord,
    feedback: Option<String>,
    answer: String,
}

const NO_CODE_FEEDBACK: &str = "Your answer contained no ```python code block, so there was \
nothing to run. Answer with the complete module in one ```python block.";

fn record_from(task: &Task, chain: &Chain, turn: u32, c: &Completion) -> CandidateRecord {
    let mut r = CandidateRecord::new(task.label.clone(), Origin::Llm);
    r.sample = Some(chain.sample);
    r.turn = turn;
    r.latency_ms = Some(c.latency_ms);
    r.prompt_tokens = c.prompt_tokens;
    r.completion_tokens = c.completion_tokens;
    r.cached = c.cached;
    r
}

/// Checks and verifies one answer.
fn judge(
    cx: &LlmContext,
    task: &Task,
    chain: &Chain,
    turn: u32,
    answer: Result<Completion, LlmError>,
) -> Outcome {
    let c = match answer {
        Ok(c) => c,
        Err(e) => {
            let mut r = CandidateRecord::new(task.label.clone(), Origin::Llm);
            r.sample = Some(chain.sample);
            r.turn = turn;
            r.reason = Some(e.to_string());
            return Outcome {
                record: r,
                feedback: None,
                answer: String::new(),
            };
        }
    };
    let mut r = record_from(task, chain, turn, &c);
    let s = cx.settings;
    let verdict = cx.checker.check_answer(
        &c.content,
        s.extract,
        task.prompt_mode,
        s.strict,
        &task.library_ops,
    );
    let feedback = match verdict {
        Err(e) => {
            r.reason = Some(e.to_string());
            None
        }
        Ok(StaticVerdict::NoCode) => {
            r.status = Status::NoCode;
            r.reason = Some(match c.finish_reason.as_deref() {
                Some("length") => "no python code block (the answer hit max_tokens)".into(),
                _ => "no python code block".into(),
            });
            Some(NO_CODE_FEEDBACK.to_string())
        }
        Ok(StaticVerdict::Rejected { code, reason }) => {
            r.status = Status::Rejected;
            r.reason = Some(format!("static check: {reason}"));
            r.code = Some(code);
            Some(format!("A static check rejected it: {reason}"))
        }
        Ok(StaticVerdict::Pass(code)) => {
            let ops = s.strict.then_some(task.library_ops.as_slice());
            let e = evaluate(cx, &task.reference, &code, s.strict, ops);
            r.code = Some(code);
            r.time_ms = e.time_ms;
            r.reference_ms = e.reference_ms;
            r.compile_ms = e.compiled_ms;
            r.check_s = e.seconds;
            r.retried_alone = e.retried_alone.clone();
            if e.verified {
                r.status = Status::Verified;
                // verified but not timed: why (on a GPU every verified answer is timed)
                r.reason = (!e.reasons.is_empty()).then(|| e.reasons.join("; "));
                match (e.time_ms, task.baseline_ms) {
                    (Some(t), Some(b)) if t > b => Some(format!(
                        "It is correct, but it takes {t:.4} ms where the best kernel so far \
                         takes {b:.4} ms. Make it faster while keeping it correct."
                    )),
                    _ => None,
                }
            } else {
                r.status = Status::Rejected;
                r.reason = Some(e.reasons.join("; "));
                let lines: Vec<&str> = e.reasons.iter().map(String::as_str).take(8).collect();
                Some(format!("The verifier rejected it:\n{}", lines.join("\n")))
            }
        }
    };
    Outcome {
        record: r,
        feedback,
        answer: c.content,
    }
}

/// Every LLM candidate of every task, over `samples` x `turns`; records in the order made.
/// Fails only on a configuration error (a prompt template that does not render).
pub fn search_tasks(
    cx: &LlmContext,
    tasks: &[Task],
    bar: &ProgressBar,
) -> Result<Vec<Vec<CandidateRecord>>, String> {
    let s = cx.settings;
    let requests = rayon::ThreadPoolBuilder::new()
        .num_threads(s.concurrency.max(1))
        .build()
        .map_err(|e| e.to_string())?;
    let mut out: Vec<Vec<CandidateRecord>> = vec![vec![]; tasks.len()];
    let mut chains: Vec<Chain> = vec![];
    for (i, t) in tasks.iter().enumerate() {
        let messages = render(t.prompt_mode, &t.program, &s.target, s.prompt.as_deref())
            .map_err(|e| e.to_string())?;
        for sample in 0..s.samples {
            chains.push(Chain {
                task: i,
                sample,
                messages: messages.clone(),
            });
        }
    }
    bar.inc_length((chains.len() * s.turns.max(1) as usize) as u64);
    for turn in 0..s.turns.max(1) {
        if chains.is_empty() {
            break;
        }
        bar.set_message(format!("turn {turn}: asking for {} answers", chains.len()));
        // turn 0: one request per task for all its samples; later: one per chain
        let answers: Vec<Result<Completion, LlmError>> = if turn == 0 {
            let per_task: Vec<Vec<Result<Completion, LlmError>>> = requests.install(|| {
                (0..tasks.len())
                    .into_par_iter()
                    .map(|i| {
                        let first = chains.iter().find(|c| c.task == i);
                        match first {
                            Some(c) => cx.client.samples(&c.messages, &s.sampling, s.samples),
                            None => vec![],
                        }
                    })
                    .collect()
            });
            per_task.into_iter().flatten().collect()
        } else {
            requests.install(|| {
                chains
                    .par_iter()
                    .map(|c| {
                        let mut v = cx
                            .client
                            .sample_range(&c.messages, &s.sampling, c.sample, 1);
                        v.pop().unwrap_or(Err(LlmError::Offline))
                    })
                    .collect()
            })
        };
        bar.set_message(format!("turn {turn}: checking {} answers", answers.len()));
        let jobs: Vec<(usize, Result<Completion, LlmError>)> =
            answers.into_iter().enumerate().collect();
        let jobs: Vec<Job> = jobs
            .into_iter()
            .map(|j| std::sync::Mutex::new(Some(j)))
            .collect();
        let outcomes: Vec<(usize, Outcome)> = parallel_map(cx.pool.size(), &jobs, |slot| {
            let (k, answer) = slot
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
                .expect("each answer is judged once");
            let chain = &chains[k];
            let o = judge(cx, &tasks[chain.task], chain, turn, answer);
            bar.inc(1);
            (k, o)
        });
        let mut next = vec![];
        for (k, o) in outcomes {
            let mut chain = std::mem::replace(
                &mut chains[k],
                Chain {
                    task: 0,
                    sample: 0,
                    messages: vec![],
                },
            );
            out[chain.task].push(o.record.clone());
            if let (Some(feedback), true) = (o.feedback, turn + 1 < s.turns) {
                let candidate = o
                    .record
                    .code
                    .clone()
                    .unwrap_or_else(|| "(no python code block was found)".into());
                let refine = render_refine(&feedback, &candidate, s.refine_prompt.as_deref())
                    .map_err(|e| e.to_string())?;
                chain.messages.push(ChatMessage::assistant(o.answer));
                chain.messages.push(refine);
                next.push(chain);
            } else {
                // this chain ends: its remaining turns will not run
                bar.inc((s.turns - turn - 1) as u64);
            }
        }
        chains = next;
    }
    Ok(out)
}

/// Marks and returns the chosen candidate: on a GPU the fastest verified one (the first
/// listed wins ties, and a verified but untimed one only when none was timed); on CPU
/// the template when it verified, else the first verified candidate.
pub fn choose(records: &mut [CandidateRecord], device: DeviceKind) -> Option<usize> {
    let verified: Vec<usize> = (0..records.len())
        .filter(|&i| records[i].status == Status::Verified)
        .collect();
    let pick = match device {
        DeviceKind::Cuda => verified
            .iter()
            .copied()
            .filter(|&i| records[i].time_ms.is_some())
            .min_by(|&a, &b| {
                let (ta, tb) = (records[a].time_ms, records[b].time_ms);
                ta.partial_cmp(&tb)
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(a.cmp(&b))
            })
            .or_else(|| verified.first().copied()),
        DeviceKind::Cpu => verified
            .iter()
            .copied()
            .find(|&i| records[i].origin == Origin::Template)
            .or_else(|| verified.first().copied()),
    };
    if let Some(i) = pick {
        records[i].chosen = true;
    }
    pick
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(origin: Origin, status: Status, time: Option<f64>) -> CandidateRecord {
        let mut r = CandidateRecord::new("region 0", origin);
        r.status = status;
        r.time_ms = time;
        r
    }

    #[test]
    fn gpu_picks_the_fastest_verified_never_a_faster_rejected_one() {
        let mut v = vec![
            rec(Origin::Template, Status::Verified, Some(2.0)),
            rec(Origin::Llm, Status::Rejected, Some(0.1)),
            rec(Origin::Llm, Status::Verified, Some(1.5)),
            rec(Origin::Llm, Status::Verified, None),
            rec(Origin::Llm, Status::NoCode, None),
        ];
        assert_eq!(choose(&mut v, DeviceKind::Cuda), Some(2));
        assert_eq!(v.iter().filter(|r| r.chosen).count(), 1);
        // ties go to the earlier (the template)
        let mut t = vec![
            rec(Origin::Template, Status::Verified, Some(1.0)),
            rec(Origin::Llm, Status::Verified, Some(1.0)),
        ];
        assert_eq!(choose(&mut t, DeviceKind::Cuda), Some(0));
    }

    #[test]
    fn cpu_keeps_the_template_unless_it_failed() {
        let mut v = vec![
            rec(Origin::Template, Status::Verified, None),
            rec(Origin::Llm, Status::Verified, None),
        ];
        assert_eq!(choose(&mut v, DeviceKind::Cpu), Some(0));
        let mut f = vec![
            rec(Origin::Template, Status::Rejected, None),
            rec(Origin::Llm, Status::Error, None),
            rec(Origin::Llm, Status::Verified, None),
        ];
        assert_eq!(choose(&mut f, DeviceKind::Cpu), Some(2));
        let mut none = vec![
            rec(Origin::Template, Status::Rejected, None),
            rec(Origin::Llm, Status::Rejected, None),
        ];
        assert_eq!(choose(&mut none, DeviceKind::Cpu), None);
        assert!(none.iter().all(|r| !r.chosen));
    }
}
