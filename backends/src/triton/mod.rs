//! The Triton backend: code generation per region kind from templates written for drtc.

mod expr;
mod kernel;
mod pointwise;
mod program;
mod reduction;
pub mod ty;

pub use kernel::{LaunchConfig, TritonKernel};
pub use pointwise::{pointwise_config, pointwise_kernel, pointwise_variants};
pub use reduction::{reduction_config, reduction_kernel, reduction_variants, BatchStats};
