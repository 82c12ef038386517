//! drtc's LLM backend: prompts as data (`prompt`), code extraction from answers
//! (`extract`), and the pieces that ask an OpenAI-compatible server for Triton kernels.

pub mod extract;
pub mod prompt;

pub use extract::{extract_code, Extract};
pub use prompt::{render, render_refine, ChatMessage, PromptError, PromptMode, PromptTarget};
