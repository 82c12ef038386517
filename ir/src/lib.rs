//! drtc's typed tensor IR: dtypes, the op set, graphs, a builder, the text format and the
//! verifier. Knows nothing of Triton or CP-SAT; of Python only what every layer shares: the
//! op table's torch spellings and the PyTorch emitter (`pytorch/`).

pub mod attr;
mod builder;
pub mod dtype;
mod graph;
pub mod interval;
pub mod op;
pub mod pytorch;
pub mod range;
pub mod text;
mod types;
mod well_formed;

pub use attr::{Attr, AttrDef, AttrKey, AttrKind, Attrs};
pub use builder::{BuildError, GraphBuilder};
pub use dtype::DType;
pub use graph::{Graph, InputKind, Node, NodeId, Value, ValueDef, ValueId};
pub use op::{Arity, Category, Kind, Op, OpDef, Pool};
pub use text::{parse, ParseError};
pub use types::{Shape, TensorType};
pub use well_formed::{verify, VerifyError};
