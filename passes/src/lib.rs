//! drtc's passes over the IR and the framework that runs them: the [`Pass`] trait (rewrites)
//! and the [`Analysis`] trait (steps that only report: fusion planning, decomposition), pass
//! options and the [`registry`] (the one list of each), pipelines as strings
//! ([`Pipeline`]) and the compiler's own ([`presets`]), and the [`PassManager`] (verify-each, IR capture, timing).

mod analysis;
pub mod conv_bias;
pub mod cse;
pub mod dce;
pub mod decompose;
pub mod egraph;
mod error;
pub mod expand_einsum;
pub mod expand_losses;
pub mod fuse;
mod insert;
mod manager;
pub mod options;
mod pass;
mod pipeline;
pub mod presets;
pub mod registry;
pub mod reverse_scans;
mod step;
pub mod transposed_convs;

pub use analysis::{Analysis, AnalysisInfo};
pub use error::{PassError, PipelineError};
pub use manager::{IrDump, ManagerOptions, PassEvent, PassManager, PassReport, PassRun};
pub use options::{OptionDef, OptionKind, OptionValue, PassOptions};
pub use pass::{Changed, Pass, PassContext, PassInfo};
pub use pipeline::{Pipeline, PipelineEntry, PipelineOption};
pub use step::Step;
