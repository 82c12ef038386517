//! The `fuse` pass: partitions a graph into regions that each become one kernel.
//!
//! Three questions are kept apart: may two regions merge (`legality`), which merge first
//! (`score`: bytes of memory traffic saved), and the greedy decision (`decide`), which
//! logs every merge and every rejection with its reason.

mod classify;
mod decide;
mod legality;
mod pass;
mod region;
mod score;

pub use classify::{classify, is_inlined_constant, reduce_space, ReduceSpace};
pub use decide::{plan_fusion, FuseOptions};
pub use legality::{
    check_reduction, check_region, combine, creates_cycle, pointwise_domain, region_inputs,
    region_outputs, space_of, Space,
};
pub use pass::{FusePass, INFO};
pub use region::{FusionPlan, Region, RegionKind};
pub use score::bytes_saved;
