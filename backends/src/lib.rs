//! Backends: turn regions of drtc IR into code (Triton templates, PyTorch calls) and
//! stitch them into one runnable module.

pub mod attention_choice;
mod chosen_templates;
pub mod conv_choice;
mod gemm_moments;
pub mod graphs;
pub mod guard;
mod in_place;
pub mod layout;
pub mod module_paths;
mod options;
pub mod plan;
mod region;
pub mod state;
pub mod stitch;
pub mod torch;
pub mod triton;
pub mod variants;
