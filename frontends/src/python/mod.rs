//! The Python frontend: KernelBench and seed-format programs to typed IR, natively (no
//! Python interpreter needed). Lexer -> parser -> symbolic interpreter that evaluates the
//! module constants, `get_inputs`, `Model.__init__`, and lowers `forward` into IR ops.

mod args;
pub mod ast;
mod builtins;
mod emitter;
mod error;
mod formats;
mod indexing;
mod interp;
mod layers;
pub mod lexer;
mod members;
mod operators;
pub mod parser;
mod paths;
mod signature;
mod spelling;
mod value;

pub use error::{FrontendError, Span};
pub use formats::{lower, lower_with_input_types, split_programs, Format, Lowered, SourceProgram};
pub use parser::parse;
pub use signature::{Signature, TensorSig};
