//! The torch.export frontend: a Python helper (`helper.py`, run in drtc's Python
//! environment by the driver) exports a program with `torch.export.export(strict=False)`
//! and writes its ATen graph as JSON (`schema.rs`); `import.rs` turns that JSON into IR,
//! mapping each ATen op to IR ops (`aten.rs`) or, when none fits, to one opaque
//! `Op::Aten` call that PyTorch executes (`opaque.rs`). Every node is built with the IR
//! builder (attributes checked, types inferred) and its inferred types must equal the
//! export metadata; errors (`error.rs`) point at the Python source line of the node.

mod args;
mod aten;
mod error;
mod import;
mod map_pointwise;
mod map_structured;
mod opaque;
mod schema;

pub use error::ExportError;
pub use import::{import, Imported, LibraryCall, StateUpdate};
pub use schema::ExportFile;

/// The helper program, embedded (the driver writes it to drtc's cache and runs it).
pub const HELPER: &str = include_str!("helper.py");

/// The export server (`server.py`): the helper's `main` in forked children of one warm
/// Python process, reached over a Unix socket (`drtc::driver::export_server`).
pub const SERVER: &str = include_str!("server.py");
