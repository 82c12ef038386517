//! The options of code generation, shared by the stitcher and the per-region generators
//! (`region.rs`, `gemm_choice.rs`, `gemm_moments.rs`).

use crate::graphs::GraphMode;
use crate::guard::GuardOptions;
use crate::layout::LayoutChoice;
use crate::triton::{ConvImpl, GemmImpl, LaunchConfig, Precision};
use std::collections::HashMap;

/// Options of code generation.
#[derive(Clone, Debug, Default)]
pub struct CodegenOptions {
    pub precision: Precision,
    /// Generating for Triton's CPU interpreter (bf16 dots are done in fp32 there).
    pub interpret: bool,
    /// Launch configurations to use instead of the heuristic, by region index.
    pub configs: HashMap<usize, LaunchConfig>,
    /// The module's input guards (what it does with inputs it was not compiled for).
    pub guard: GuardOptions,
    /// GEMM implementations to use instead of the policy's choice, by region index (from
    /// search), with the reason reported.
    pub gemm: HashMap<usize, (GemmImpl, String)>,
    /// Convolution implementations instead of the library call, by region index (from
    /// search), with the reason reported (`conv_choice.rs`).
    pub conv: HashMap<usize, (ConvImpl, String)>,
    /// The layout of convolution regions (`--layout`).
    pub layout: LayoutChoice,
    /// Whether the entry point captures and replays CUDA graphs (`graphs.rs`).
    pub graphs: GraphMode,
}
