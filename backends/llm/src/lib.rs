//! drtc's LLM backend: prompts as data (`prompt`), code extraction from answers
//! (`extract`), an OpenAI-compatible chat-completions client (`client`) with an on-disk
//! response cache (`cache`), static checks of candidates (`check`) and the report's
//! candidate records (`candidate`). The search over candidates, which needs the runtime,
//! lives in the `drtc` package (`src/driver/llm/`).

pub mod cache;
pub mod candidate;
pub mod check;
pub mod client;
pub mod completion;
pub mod error;
pub mod extract;
pub mod prompt;

pub use cache::ResponseCache;
pub use candidate::{CandidateRecord, CheckSeconds, Origin, Status};
pub use check::{StaticChecker, StaticVerdict};
pub use client::{api_key_from_env, Client, ClientOptions, Completion, Preflight, Sampling};
pub use error::{CheckerError, LlmError};
pub use extract::{extract_code, Extract};
pub use prompt::{render, render_refine, ChatMessage, PromptError, PromptMode, PromptTarget};
