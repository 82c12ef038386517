//! The Triton backend: code generation per region kind from templates written for drtc.

mod attention;
mod contraction;
mod conv;
mod conv_phase;
mod conv_products;
mod epilogue;
mod expr;
mod kernel;
mod pointwise;
pub mod precision;
mod reduction;
mod relayout;
mod statements;
pub mod store_map;
mod tap_norm;
pub mod ty;
mod window;

pub use attention::{
    attention_config, attention_kernel, attention_shape, attention_variants, AttentionImpl,
    AttentionShape,
};
pub use contraction::{
    contraction_config, contraction_kernel, contraction_variants, gemm_shape, small_tiles_config,
    template_tiles, too_few_tiles, DotMode, GemmShape, TileMoments, FEW_TILES,
};
pub use conv::{
    conv_config, conv_kernel, conv_shape, ConvImpl, ConvShape, PhaseLaunch, MAX_K as CONV_MAX_K,
};
/// What the backend does with one node. The templates' limits are stated once, in the
/// planner's crate below this one (`drtc_passes::fuse::support`), which reads them for its
/// region kinds too.
pub use drtc_passes::fuse::{supports, Support};
pub use kernel::{LaunchConfig, Placements, TritonKernel};
pub use pointwise::{
    pointwise_config, pointwise_kernel, pointwise_kernel_in_order, pointwise_variants,
};
pub use precision::{
    candidates, choose, predicted_error, DotPrecision, GemmCandidate, GemmChoice, GemmImpl,
    Precision,
};
pub use reduction::{
    batch_stats_names, coop_config, long_rows_split_config, reduction_config, reduction_kernel,
    reduction_shape, reduction_variants, BatchStats, GivenMoments, RegionCode, Scratch,
};
pub use relayout::{channels_last_call, CHANNELS_LAST_HELPER};
pub use store_map::{StoreMap, ViewStep};
pub use tap_norm::TapNorm;
pub use window::{window_config, window_kernel};
