//! Fusion planning: partitions a graph into regions that each become one kernel.
//!
//! Three questions are kept apart: may two regions merge (`legality`), which merge first
//! (`score`: bytes of memory traffic saved), and the greedy decision (`decide`, over the
//! greedy merge of `merge.rs` that decomposition shares), which logs every merge and every
//! rejection with its reason. Each region records its iteration and reduction space;
//! `plan_check` checks a plan's invariants. `fuse` is an analysis (`fuse_pass.rs`): it
//! reports the plan and leaves the graph unchanged.

mod classify;
mod decide;
mod fuse_pass;
mod legality;
pub(crate) mod merge;
mod plan_check;
mod region;
mod score;
mod support;

pub use classify::{classify, is_inlined_constant, reduce_space, ReduceSpace};
pub use decide::{plan_fusion, FuseOptions};
pub use fuse_pass::{FuseAnalysis, INFO};
pub use legality::{
    check_reduction, check_region, combine, creates_cycle, pointwise_domain, region_inputs,
    region_outputs, space_of, Space,
};
pub use plan_check::PlanError;
pub use region::{FusionPlan, Region, RegionKind};
pub use score::bytes_saved;
pub use support::{supports, Support};
