//! E-graph rewriting with egg: the language over drtc's ops ([`lang`]), an analysis that
//! types every e-class and folds constants ([`types_and_constants`]), a cost model of bytes
//! moved and FLOPs ([`cost`]), rules as data grouped by topic ([`rules`]), and the
//! `canonicalize` and `simplify` passes. Rules keep every type exactly (checked when a
//! right-hand side is built), and a rewritten program is kept only if the cost model says
//! it is strictly cheaper.

pub mod canonicalize;
pub mod convert;
pub mod cost;
pub mod coverage;
pub mod dag;
pub mod engine;
pub mod lang;
pub mod planned;
pub mod rule;
pub mod rules;
pub mod simplify;
pub mod types_and_constants;

pub use cost::{graph_cost, op_cost, Cost};
pub use engine::{rewrite_graph, rewrite_graph_within, Accept, Budget, RewriteSummary};
pub use planned::{planned_cost, Planned};
pub use rule::Rule;
