//! drtc-cpsat: a CP-SAT binding without C++ headers or a build-time OR-Tools.
//!
//! The OR-Tools wheel (`ortools==9.15.6755`) ships `libortools.so.9`, which exports a C API
//! taking serialized protobufs. This crate loads it at run time (`library`), encodes the
//! messages it needs with hand-written prost structs (`proto`), and offers a typed
//! model-building API (`model`) and typed solving (`solve`).

mod error;
mod library;
mod model;
pub mod proto;
mod solve;

pub use error::CpSatError;
pub use library::{CpSat, ORTOOLS_VERSION};
pub use model::{BoolVar, CpModel, Ct, Domain, DomainReduction, IntVar, LinearExpr, VarSelection};
pub use solve::{Branching, Solution, SolveParams, Status};
