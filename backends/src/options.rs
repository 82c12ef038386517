//! The options of code generation: what the caller asks of a whole module. Per-region
//! decisions (implementations, launch configurations, layout, partners) are the lowering
//! plan's (`plan/`), computed from these once.

use crate::graphs::GraphMode;
use crate::guard::GuardOptions;
use crate::layout::LayoutChoice;
use crate::triton::Precision;

/// Options of code generation.
#[derive(Clone, Debug, Default)]
pub struct CodegenOptions {
    pub precision: Precision,
    /// Generating for Triton's CPU interpreter (bf16 dots are done in fp32 there).
    pub interpret: bool,
    /// The module's input guards (what it does with inputs it was not compiled for).
    pub guard: GuardOptions,
    /// The layout rule of convolution regions (`--layout`).
    pub layout: LayoutChoice,
    /// Whether the entry point captures and replays CUDA graphs (`graphs.rs`).
    pub graphs: GraphMode,
}
