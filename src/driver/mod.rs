//! The driver: the compile pipeline from a loaded program to a generated module, and the
//! source rewrites around it (module constants overridden with `--set`).

pub mod compile;
pub mod constants;
pub mod decompose;
pub mod export;
pub mod export_script;
pub mod export_server;
pub mod frontend;
pub mod graph_race;
pub mod input_types;
pub mod llm;
pub mod load;
pub mod module_cache;
pub mod ops;
pub mod retry_ladder;
pub mod rewrite_race;
pub mod roofline;
pub mod search;
pub mod search_context;
pub mod shrink;
pub mod stitch;
pub mod synth;
