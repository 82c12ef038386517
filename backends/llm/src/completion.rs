//! What one chat-completions request asks for (`Sampling`, part of the cache key) and
//! what one of its answers is (`Completion`): shared by the client and the cache.

use serde::{Deserialize, Serialize};

/// Sampling parameters (part of the cache key).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    pub temperature: f64,
    pub top_p: f64,
    pub max_tokens: u32,
    /// Base seed; repeated requests use `seed + sample index`.
    pub seed: Option<u64>,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            temperature: 0.7,
            top_p: 0.95,
            max_tokens: 8192,
            seed: Some(0),
        }
    }
}

/// One answer: its text, and what it cost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    pub content: String,
    pub finish_reason: Option<String>,
    /// The request's prompt tokens, counted on its first choice only (sums stay exact).
    pub prompt_tokens: u64,
    /// This choice's share of the request's completion tokens.
    pub completion_tokens: u64,
    /// Wall time of the request that produced it (all its attempts).
    pub latency_ms: f64,
    /// Attempts the request took (1 when it succeeded at once).
    pub attempts: u32,
    /// Read from the cache, not requested now.
    #[serde(default, skip_serializing)]
    pub cached: bool,
}
