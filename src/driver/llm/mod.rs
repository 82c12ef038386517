//! The LLM backend's search (DRTriton's recipe): a language model writes candidates for
//! each fused region (or the whole program), every candidate is checked statically and
//! then verified (and on a GPU timed) by the verifier in its isolated workers, failed or
//! slow ones are sent back with the verifier's or timer's feedback, and the fastest
//! verified candidate per region is stitched. The template kernel is always a candidate.
//! `eval` runs the same machinery over a benchmark to measure a kernel model.

pub mod compile;
pub mod eval;
pub mod metrics;
pub mod search;

use crate::verifier::{DeviceKind, WorkerPool};
use drtc_llm::{Client, Extract, PromptMode, PromptTarget, Sampling, StaticChecker};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What the search does (the CLI's LLM options).
#[derive(Clone, Debug)]
pub struct LlmSettings {
    pub mode: PromptMode,
    /// Candidates per region (or per program in whole mode).
    pub samples: usize,
    /// Rounds per sample: the first answer, then feedback rounds.
    pub turns: u32,
    /// Strict checks (no PyTorch compute outside declared library ops, no try/except, no
    /// streams) for model-written candidates.
    pub strict: bool,
    pub extract: Extract,
    pub sampling: Sampling,
    /// Replaces the user template of `mode` (`data/prompts/region.md` / `whole.md`).
    pub prompt: Option<PathBuf>,
    /// Replaces `data/prompts/refine.md`.
    pub refine_prompt: Option<PathBuf>,
    pub target: PromptTarget,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Most ops in one region (region mode).
    pub max_region_ops: usize,
    /// Verification trials per candidate.
    pub trials: u32,
    /// Time the eager reference against torch.compile too (GPU only).
    /// The verifier's value rule (`rel_norm`, or `allclose_1e-4` under the fp32 policy);
    /// `None` is the relative-norm rule.
    pub rule: Option<String>,
    pub compile_baseline: bool,
}

/// Everything a search needs: the server, the checks, the verifier and a scratch folder.
pub struct LlmContext<'a> {
    pub client: &'a Client,
    pub checker: &'a StaticChecker,
    pub pool: &'a WorkerPool,
    pub settings: &'a LlmSettings,
    /// Scratch files (references, candidate modules).
    pub work: PathBuf,
    next_file: AtomicUsize,
}

impl<'a> LlmContext<'a> {
    pub fn new(
        client: &'a Client,
        checker: &'a StaticChecker,
        pool: &'a WorkerPool,
        settings: &'a LlmSettings,
        work: PathBuf,
    ) -> Self {
        LlmContext {
            client,
            checker,
            pool,
            settings,
            work,
            next_file: AtomicUsize::new(0),
        }
    }

    pub fn device(&self) -> DeviceKind {
        self.pool.device()
    }

    /// A fresh scratch path `work/llm_<pid>_<n>_<stem>.py`.
    pub fn scratch(&self, stem: &str) -> PathBuf {
        let n = self.next_file.fetch_add(1, Ordering::Relaxed);
        self.work
            .join(format!("llm_{}_{n}_{stem}.py", std::process::id()))
    }
}

/// Runs `f` over `items` on up to `threads` threads; results in order.
pub fn parallel_map<T: Sync, R: Send>(
    threads: usize,
    items: &[T],
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<R>>> =
        items.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, items.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
            });
        }
    });
    slots
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .expect("every item was run")
        })
        .collect()
}
