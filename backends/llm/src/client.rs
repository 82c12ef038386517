//! An OpenAI chat-completions client (`POST {url}/chat/completions`, `GET {url}/models`) as
//! vLLM, SGLang and OpenAI serve it: `n` samples per request, or repeated requests with
//! distinct seeds when the server returns fewer choices; timeouts; retries with
//! exponential backoff on 429, 5xx and dropped connections; usage and latency recorded.

use crate::cache::ResponseCache;
pub use crate::completion::{Completion, Sampling};
use crate::error::LlmError;
use crate::prompt::ChatMessage;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// Base URL, e.g. `http://127.0.0.1:8000/v1` or `https://api.openai.com/v1`.
    pub url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub connect_timeout: Duration,
    /// Longest wait for an answer to one request.
    pub read_timeout: Duration,
    /// Retries of a transient failure (429, 5xx, timeout, dropped connection).
    pub retries: u32,
    /// First backoff; doubled each retry (a `Retry-After` header wins, up to 60 s).
    pub backoff: Duration,
    /// Use only the cache; never send a request.
    pub offline: bool,
}

impl ClientOptions {
    pub fn new(url: impl Into<String>, model: impl Into<String>) -> Self {
        ClientOptions {
            url: url.into().trim_end_matches('/').to_string(),
            model: model.into(),
            api_key: api_key_from_env(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(600),
            retries: 4,
            backoff: Duration::from_millis(500),
            offline: false,
        }
    }
}

/// `DRTC_LLM_API_KEY`, else `OPENAI_API_KEY`, else none (local servers need none).
pub fn api_key_from_env() -> Option<String> {
    ["DRTC_LLM_API_KEY", "OPENAI_API_KEY"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .find(|v| !v.trim().is_empty())
}

/// What `GET /models` said.
#[derive(Clone, Debug, PartialEq)]
pub enum Preflight {
    /// The model is served.
    ModelListed,
    /// The server has no model list (404/405): the first request will tell.
    NoModelList,
}

pub struct Client {
    options: ClientOptions,
    agent: ureq::Agent,
    cache: Option<ResponseCache>,
}

impl Client {
    pub fn new(options: ClientOptions, cache: Option<ResponseCache>) -> Self {
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(options.connect_timeout)
            .timeout_read(options.read_timeout)
            .timeout_write(options.connect_timeout)
            .build();
        Client {
            options,
            agent,
            cache,
        }
    }

    pub fn options(&self) -> &ClientOptions {
        &self.options
    }

    fn endpoint(&self, path: &str) -> String {
        format!("{}/{path}", self.options.url)
    }

    fn authorized(&self, req: ureq::Request) -> ureq::Request {
        match &self.options.api_key {
            Some(k) => req.set("Authorization", &format!("Bearer {k}")),
            None => req,
        }
    }

    fn transport(&self, url: &str, e: ureq::Transport) -> LlmError {
        LlmError::Unreachable {
            url: url.to_string(),
            detail: e.to_string(),
        }
    }

    /// Checks the server, the key and the model before any work: `GET {url}/models`.
    /// A server without that endpoint (404/405) is tolerated.
    pub fn preflight(&self) -> Result<Preflight, LlmError> {
        let url = self.endpoint("models");
        let resp = match self.authorized(self.agent.get(&url)).call() {
            Ok(r) => r,
            Err(ureq::Error::Status(404 | 405, _)) => return Ok(Preflight::NoModelList),
            Err(ureq::Error::Status(status, r)) => {
                return Err(LlmError::Status {
                    url,
                    status,
                    body: body_excerpt(r),
                })
            }
            Err(ureq::Error::Transport(t)) => return Err(self.transport(&url, t)),
        };
        let v: Value = resp.into_json().map_err(|e| LlmError::BadResponse {
            url: url.clone(),
            detail: e.to_string(),
        })?;
        let ids: Vec<&str> = v["data"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["id"].as_str())
            .collect();
        if ids.is_empty() || ids.contains(&self.options.model.as_str()) {
            Ok(Preflight::ModelListed)
        } else {
            Err(LlmError::UnknownModel {
                url: self.options.url.clone(),
                model: self.options.model.clone(),
                available: ids.join(", "),
            })
        }
    }

    /// One request for `n` choices, retried on transient failures.
    fn request(
        &self,
        messages: &[ChatMessage],
        sampling: &Sampling,
        n: usize,
        seed: Option<u64>,
    ) -> Result<Vec<Completion>, LlmError> {
        let url = self.endpoint("chat/completions");
        let mut body = json!({
            "model": self.options.model,
            "messages": messages,
            "n": n,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "max_tokens": sampling.max_tokens,
        });
        if let Some(s) = seed {
            body["seed"] = json!(s);
        }
        let start = Instant::now();
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let result = self
                .authorized(self.agent.post(&url))
                .set("Content-Type", "application/json")
                .send_json(&body);
            let (err, retry_after) = match result {
                Ok(resp) => {
                    let v: Value = resp.into_json().map_err(|e| LlmError::BadResponse {
                        url: url.clone(),
                        detail: e.to_string(),
                    })?;
                    let latency_ms = start.elapsed().as_secs_f64() * 1e3;
                    return parse_choices(&url, &v, latency_ms, attempt);
                }
                Err(ureq::Error::Status(status, r)) => {
                    let retry_after = r
                        .header("Retry-After")
                        .and_then(|s| s.trim().parse::<f64>().ok())
                        .map(|s| Duration::from_secs_f64(s.clamp(0.0, 60.0)));
                    let err = LlmError::Status {
                        url: url.clone(),
                        status,
                        body: body_excerpt(r),
                    };
                    (err, retry_after)
                }
                Err(ureq::Error::Transport(t)) => (self.transport(&url, t), None),
            };
            if !err.is_transient() || attempt > self.options.retries {
                return Err(err);
            }
            let backoff = self.options.backoff * 2u32.saturating_pow(attempt - 1);
            std::thread::sleep(retry_after.unwrap_or(backoff));
        }
    }

    /// `n` answers to `messages`: cached ones first, the rest in one request for that many
    /// choices; when the server returns fewer (it ignores `n`), one request per missing
    /// sample with seed `seed + index`. Each sample succeeds or fails on its own.
    pub fn samples(
        &self,
        messages: &[ChatMessage],
        sampling: &Sampling,
        n: usize,
    ) -> Vec<Result<Completion, LlmError>> {
        self.sample_range(messages, sampling, 0, n)
    }

    /// Samples `first..first + n` of `messages` (cache keys and seeds by sample index), as
    /// [`Client::samples`] does.
    pub fn sample_range(
        &self,
        messages: &[ChatMessage],
        sampling: &Sampling,
        first: usize,
        n: usize,
    ) -> Vec<Result<Completion, LlmError>> {
        let model = &self.options.model;
        let keys: Vec<String> = (first..first + n)
            .map(|i| ResponseCache::key(messages, model, sampling, i))
            .collect();
        let mut out: Vec<Option<Result<Completion, LlmError>>> = keys
            .iter()
            .map(|k| {
                self.cache
                    .as_ref()
                    .and_then(|c| c.get(k))
                    .map(Ok)
                    .or_else(|| self.options.offline.then_some(Err(LlmError::Offline)))
            })
            .collect();
        let missing: Vec<usize> = (0..n).filter(|&i| out[i].is_none()).collect();
        if missing.is_empty() {
            return out.into_iter().flatten().collect();
        }
        let first_seed = sampling.seed.map(|s| s + (first + missing[0]) as u64);
        let mut pending = missing.clone();
        match self.request(messages, sampling, missing.len(), first_seed) {
            Ok(choices) => {
                for (slot, c) in missing.iter().zip(choices) {
                    out[*slot] = Some(Ok(c));
                    pending.retain(|i| i != slot);
                }
            }
            Err(e) => {
                // the whole request failed: every missing sample fails with it, unless the
                // error was about `n` itself; then single requests below get a chance
                if !matches!(e, LlmError::Status { status: 400, .. }) || missing.len() == 1 {
                    let text = e.to_string();
                    out[missing[0]] = Some(Err(e));
                    for &i in &missing[1..] {
                        out[i] = Some(Err(LlmError::BadResponse {
                            url: self.options.url.clone(),
                            detail: format!("same request failed: {text}"),
                        }));
                    }
                    pending.clear();
                }
            }
        }
        for i in pending {
            let seed = sampling.seed.map(|s| s + (first + i) as u64);
            out[i] = Some(self.request(messages, sampling, 1, seed).and_then(|mut v| {
                if v.is_empty() {
                    Err(LlmError::BadResponse {
                        url: self.options.url.clone(),
                        detail: "no choices".into(),
                    })
                } else {
                    Ok(v.swap_remove(0))
                }
            }));
        }
        for (i, r) in out.iter().enumerate() {
            if let (Some(Ok(c)), Some(cache)) = (r, &self.cache) {
                if !c.cached {
                    if let Err(e) = cache.put(&keys[i], c) {
                        eprintln!("warning: {e}");
                    }
                }
            }
        }
        out.into_iter().flatten().collect()
    }
}

fn body_excerpt(r: ureq::Response) -> String {
    let text = r.into_string().unwrap_or_default();
    let text = text.trim();
    if text.chars().count() > 300 {
        format!("{}...", text.chars().take(300).collect::<String>())
    } else {
        text.to_string()
    }
}

fn parse_choices(
    url: &str,
    v: &Value,
    latency_ms: f64,
    attempts: u32,
) -> Result<Vec<Completion>, LlmError> {
    let bad = |detail: &str| LlmError::BadResponse {
        url: url.to_string(),
        detail: detail.to_string(),
    };
    let choices = v["choices"].as_array().ok_or_else(|| bad("no `choices`"))?;
    if choices.is_empty() {
        return Err(bad("empty `choices`"));
    }
    let prompt_tokens = v["usage"]["prompt_tokens"].as_u64().unwrap_or(0);
    let total = v["usage"]["completion_tokens"].as_u64().unwrap_or(0);
    let k = choices.len() as u64;
    let mut sorted: Vec<&Value> = choices.iter().collect();
    sorted.sort_by_key(|c| c["index"].as_u64().unwrap_or(0));
    Ok(sorted
        .into_iter()
        .enumerate()
        .map(|(i, c)| Completion {
            content: c["message"]["content"].as_str().unwrap_or("").to_string(),
            finish_reason: c["finish_reason"].as_str().map(str::to_string),
            prompt_tokens: if i == 0 { prompt_tokens } else { 0 },
            completion_tokens: total / k + u64::from(i == 0) * (total % k),
            latency_ms,
            attempts,
            cached: false,
        })
        .collect())
}
