//! The options `compile --backend llm` and `eval` share: the server, sampling, search and
//! checks, and the setup they need (client with cache, static checker, worker pool).

use super::error::{DriverError, DriverResult};
use super::pool::runtime_error;
use clap::{Args, ValueEnum};
use drtc::driver::llm::LlmSettings;
use drtc::verifier::{DeviceKind, DrtcHome, PoolOptions, PythonEnv, WorkerPool};
use drtc_llm::{
    Client, ClientOptions, Extract, Preflight, PromptMode, PromptTarget, ResponseCache, Sampling,
    StaticChecker,
};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// One kernel per fused region (subproblems, as `drtc decompose` writes them).
    Regions,
    /// The whole program at once (`ModelNew`, KernelBench's convention).
    Whole,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExtractArg {
    First,
    Last,
}

#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "LLM backend (compile --backend llm, eval)")]
pub struct LlmArgs {
    /// Base URL of an OpenAI-compatible server (vLLM, SGLang, OpenAI), e.g.
    /// http://127.0.0.1:8000/v1. The API key comes from DRTC_LLM_API_KEY, else
    /// OPENAI_API_KEY, else none.
    #[arg(long, value_name = "URL")]
    pub llm_url: Option<String>,
    /// The model name the server serves.
    #[arg(long, value_name = "NAME")]
    pub llm_model: Option<String>,
    /// Candidates per region (whole mode: per program).
    #[arg(long, default_value_t = 4, value_parser = at_least_one)]
    pub samples: usize,
    /// Rounds per candidate: the first answer, then feedback rounds with the verifier's
    /// (or the timer's) findings.
    #[arg(long, default_value_t = 1)]
    pub turns: u32,
    /// What the model is asked to write.
    #[arg(long, value_enum, default_value = "regions")]
    pub mode: ModeArg,
    /// Strict checks for model-written candidates (the default): no PyTorch compute
    /// outside the region's library ops (conv, matmul), no try/except, no extra streams.
    #[arg(long, conflicts_with = "no_strict")]
    pub strict: bool,
    /// Turn the strict checks off.
    #[arg(long)]
    pub no_strict: bool,
    #[arg(long, default_value_t = 0.7)]
    pub temperature: f64,
    #[arg(long, default_value_t = 0.95)]
    pub top_p: f64,
    #[arg(long, default_value_t = 8192)]
    pub max_tokens: u32,
    /// Base sampling seed (sample i of a repeated request uses seed + i).
    #[arg(long, default_value_t = 0)]
    pub llm_seed: u64,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    /// Answers verified at once: on a GPU, verification workers per GPU (default 1; each
    /// answer still runs in its own sandboxed process, and timing passes run one at a time
    /// per GPU); on CPU, workers (default: half the cores). `drtc eval` judges as many
    /// tasks at once as keep them busy (--jobs over --samples, rounded up).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Seconds to wait for one answer.
    #[arg(long, default_value_t = 600)]
    pub request_timeout: u64,
    /// Seconds to wait for a connection.
    #[arg(long, default_value_t = 10)]
    pub connect_timeout: u64,
    /// Retries of a request after HTTP 429/5xx, a timeout or a dropped connection
    /// (exponential backoff from --backoff-ms).
    #[arg(long, default_value_t = 4)]
    pub retries: u32,
    #[arg(long, default_value_t = 500)]
    pub backoff_ms: u64,
    /// Replace the user prompt template (`data/prompts/region.md` or `whole.md`); it may use
    /// {{program}}, {{gpu}}, {{dtype}}, {{precision_rule}}, {{example}}.
    #[arg(long, value_name = "FILE")]
    pub prompt: Option<PathBuf>,
    /// Replace the feedback template (`data/prompts/refine.md`: {{feedback}}, {{candidate}}).
    #[arg(long, value_name = "FILE")]
    pub refine_prompt: Option<PathBuf>,
    /// Which python block of an answer is the candidate.
    #[arg(long, value_enum, default_value = "last")]
    pub extract: ExtractArg,
    /// Use only cached answers; send no request.
    #[arg(long)]
    pub offline: bool,
    /// The GPU the prompt names (default: the GPU found, else NVIDIA H200).
    #[arg(long)]
    pub target_gpu: Option<String>,
    /// Most ops in one region (region mode).
    #[arg(long, default_value_t = 8, value_parser = at_least_one)]
    pub max_region_ops: usize,
    /// Verification trials per candidate (at least 5).
    #[arg(long, default_value_t = 5, value_parser = super::trials_arg::trials)]
    pub trials: u32,
    /// Seconds before a hanging candidate is killed (its worker is replaced).
    #[arg(long, default_value_t = 300)]
    pub candidate_timeout: u64,
}

/// A count that must be at least 1 (`--max-ops 0` would make nothing).
pub fn at_least_one(s: &str) -> Result<usize, String> {
    let n: usize = s
        .parse()
        .map_err(|e| format!("`{s}` is not a count ({e})"))?;
    if n == 0 {
        return Err("must be at least 1".into());
    }
    Ok(n)
}

impl LlmArgs {
    /// The LLM options given on the command line in `matches` (`--samples`, ...): with the
    /// template backend they would do nothing, so `compile` refuses them.
    pub fn given(matches: &clap::ArgMatches) -> Vec<String> {
        let cmd = Self::augment_args(clap::Command::new("llm"));
        cmd.get_arguments()
            .filter(|a| {
                matches.try_get_raw(a.get_id().as_str()).is_ok()
                    && matches.value_source(a.get_id().as_str())
                        == Some(clap::parser::ValueSource::CommandLine)
            })
            .map(|a| format!("--{}", a.get_long().unwrap_or(a.get_id().as_str())))
            .collect()
    }
}

/// What a run with the LLM needs.
pub struct LlmSetup {
    pub client: Client,
    pub checker: StaticChecker,
    pub pool: WorkerPool,
    pub settings: LlmSettings,
    pub work: PathBuf,
}

impl LlmArgs {
    fn client(&self, home: &DrtcHome) -> DriverResult<Client> {
        let (Some(url), Some(model)) = (&self.llm_url, &self.llm_model) else {
            return Err(DriverError::Reported(
                "the LLM backend needs --llm-url URL and --llm-model NAME".into(),
            ));
        };
        let mut o = ClientOptions::new(url.clone(), model.clone());
        o.connect_timeout = Duration::from_secs(self.connect_timeout.max(1));
        o.read_timeout = Duration::from_secs(self.request_timeout.max(1));
        o.retries = self.retries;
        o.backoff = Duration::from_millis(self.backoff_ms);
        o.offline = self.offline;
        let cache = ResponseCache::new(home.dir("llm").map_err(runtime_error)?);
        Ok(Client::new(o, Some(cache)))
    }

    /// Checks the server (unless --offline): reachable, key accepted, model served.
    pub fn preflight(&self) -> DriverResult<()> {
        if self.offline {
            return Ok(());
        }
        let home = DrtcHome::from_env();
        let client = self.client(&home)?;
        match client.preflight() {
            Ok(Preflight::ModelListed) => Ok(()),
            Ok(Preflight::NoModelList) => {
                eprintln!(
                    "note: {} has no model list; the model name is checked by the first request",
                    client.options().url
                );
                Ok(())
            }
            Err(e) => Err(DriverError::Reported(e.to_string())),
        }
    }

    /// Builds the client, checker, pool and settings.
    pub fn setup(
        &self,
        device: DeviceKind,
        dtype: &str,
        ray: Option<drtc::verifier::RayConfig>,
        ray_actors: Option<usize>,
    ) -> DriverResult<LlmSetup> {
        if self.samples == 0 || self.turns == 0 {
            return Err(DriverError::Reported(
                "--samples and --turns must be at least 1".into(),
            ));
        }
        let home = DrtcHome::from_env();
        let client = self.client(&home)?;
        let python = PythonEnv::locate(&home).map_err(runtime_error)?;
        let work = home.dir("llm-work").map_err(runtime_error)?;
        let checker = StaticChecker::new(python.python.clone(), &work)
            .map_err(|e| DriverError::Reported(e.to_string()))?;
        let mut options = PoolOptions::new(device);
        options.request_timeout = Duration::from_secs(self.candidate_timeout.max(1));
        options.bench_timeout = Duration::from_secs(self.candidate_timeout.max(600));
        options.ray = ray;
        match (self.jobs, device) {
            (Some(j), DeviceKind::Cuda) => options.workers_per_gpu = j.max(1),
            (Some(j), DeviceKind::Cpu) => options.workers = Some(j.max(1)),
            (None, _) => {}
        }
        if ray_actors.is_some() {
            options.workers = ray_actors;
        }
        let pool = super::pool::worker_pool(python, &home, options)?;
        let gpu =
            self.target_gpu
                .clone()
                .unwrap_or_else(|| match drtc::verifier::devices::scan() {
                    drtc::verifier::DeviceScan::Gpus(g) if !g.is_empty() => g[0].name.clone(),
                    _ => "NVIDIA H200".into(),
                });
        let settings = LlmSettings {
            mode: match self.mode {
                ModeArg::Regions => PromptMode::Regions,
                ModeArg::Whole => PromptMode::Whole,
            },
            samples: self.samples,
            turns: self.turns,
            strict: !self.no_strict,
            extract: match self.extract {
                ExtractArg::First => Extract::First,
                ExtractArg::Last => Extract::Last,
            },
            sampling: Sampling {
                temperature: self.temperature,
                top_p: self.top_p,
                max_tokens: self.max_tokens,
                seed: Some(self.llm_seed),
            },
            prompt: self.prompt.clone(),
            refine_prompt: self.refine_prompt.clone(),
            target: PromptTarget::new(gpu, dtype),
            concurrency: self.concurrency.max(1),
            max_region_ops: self.max_region_ops.max(1),
            trials: self.trials.max(drtc::verifier::checks::MIN_TRIALS),
            compile_baseline: false,
            rule: None,
        };
        Ok(LlmSetup {
            client,
            checker,
            pool,
            settings,
            work,
        })
    }
}

/// The element type a prompt names for a program: its first floating input's.
pub fn program_dtype(g: &drtc_ir::Graph) -> String {
    g.inputs()
        .iter()
        .map(|&v| g.ty(v).dtype)
        .find(|d| d.is_float())
        .map_or("float32".to_string(), |d| {
            drtc_backends::torch::torch_dtype(d)
                .trim_start_matches("torch.")
                .to_string()
        })
}
