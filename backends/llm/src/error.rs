//! Errors of the LLM backend: the server (named by URL and status), the cache, checks.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("cannot reach the LLM server at {url}: {detail}")]
    Unreachable { url: String, detail: String },
    #[error("the LLM server at {url} answered HTTP {status}{}: {body}", hint(*status))]
    Status {
        url: String,
        status: u16,
        body: String,
    },
    #[error("the LLM server at {url} has no model `{model}` (it serves: {available})")]
    UnknownModel {
        url: String,
        model: String,
        available: String,
    },
    #[error("the LLM server at {url} gave an answer drtc cannot read: {detail}")]
    BadResponse { url: String, detail: String },
    #[error("no cached answer for this request (--offline uses only the cache)")]
    Offline,
    #[error("LLM response cache `{path}`: {detail}")]
    Cache { path: PathBuf, detail: String },
}

fn hint(status: u16) -> &'static str {
    match status {
        401 | 403 => " (the API key was refused: set DRTC_LLM_API_KEY or OPENAI_API_KEY)",
        404 => " (check --llm-url: it is the base URL, e.g. http://127.0.0.1:8000/v1)",
        429 => " (rate limited; retries were exhausted)",
        _ => "",
    }
}

impl LlmError {
    /// Worth retrying: rate limits, server errors, timeouts and dropped connections.
    pub fn is_transient(&self) -> bool {
        match self {
            LlmError::Status { status, .. } => *status == 429 || *status >= 500,
            LlmError::Unreachable { .. } => true,
            LlmError::UnknownModel { .. }
            | LlmError::BadResponse { .. }
            | LlmError::Offline
            | LlmError::Cache { .. } => false,
        }
    }
}

/// The static checker could not run (not a verdict on the candidate).
#[derive(Debug, thiserror::Error)]
#[error("static checker ({python}): {detail}")]
pub struct CheckerError {
    pub python: PathBuf,
    pub detail: String,
}
