//! drtc's passes over the IR and the framework that runs them: the [`Pass`] trait, pass
//! options and the [`registry`] (the one list of passes), pipelines as strings
//! ([`Pipeline`]), and the [`PassManager`] (verify-each, IR capture, timing).

pub mod cse;
pub mod dce;
pub mod decompose;
pub mod egraph;
mod error;
pub mod fuse;
mod manager;
pub mod options;
mod pass;
mod pipeline;
pub mod registry;

pub use error::{PassError, PipelineError};
pub use manager::{IrDump, ManagerOptions, PassEvent, PassManager, PassReport, PassRun};
pub use options::{OptionDef, OptionKind, OptionValue, PassOptions};
pub use pass::{Changed, Pass, PassContext, PassInfo};
pub use pipeline::{Pipeline, PipelineEntry, PipelineOption};
