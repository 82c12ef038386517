//! The op set: one table of facts per op (see `table.rs`), and the machinery to query it.
//!
//! Adding an op = one line in `table.rs` (name, kind, arity, attributes, inference, FLOP
//! rule, PyTorch spellings) + a test in `tests.rs`; a pointwise op adds its entry in
//! `pointwise.rs` (Triton expression, domain, constant folding) and its range rule in
//! `range/rules.rs`.

pub mod aten;
pub mod domain;
pub mod example;
mod flops;
mod infer;
pub mod kind;
pub mod pointwise;
mod table;
#[cfg(test)]
mod tests;
pub mod torch;

pub use flops::FlopFn;
pub use infer::{
    broadcast_shapes, conv_out_size, einsum_subscripts, normalize_dim, pad_amounts, pool_out_size,
    EinsumSubscripts, InferFn,
};
pub use kind::{Kind, Pool};
pub use table::Op;

use crate::attr::{AttrDef, Attrs};
use crate::{Attr, TensorType};
use std::fmt;

/// The largest dimension size inference accepts: far beyond any real tensor, small enough
/// that shape arithmetic on it cannot overflow `i64`.
pub const MAX_DIM: i64 = 1 << 40;

/// What kind of computation an op is; drives fusion and code generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// Elementwise with broadcasting.
    Pointwise,
    /// Reduces or scans along dimensions (sum, softmax, cumsum, losses).
    Reduction,
    /// Normalizations (batch/layer/group/instance/rms norm): reductions plus pointwise.
    Normalization,
    /// Sliding windows (pooling).
    Window,
    /// Matrix products (matmul, bmm, linear, einsum, attention).
    Contraction,
    /// Ops called through a library (cuDNN convolutions).
    Library,
    /// Data movement without arithmetic (reshape, transpose, cat, triu).
    Layout,
    /// Tensor creation (constants).
    Creation,
}

impl Category {
    pub fn name(self) -> &'static str {
        match self {
            Category::Pointwise => "pointwise",
            Category::Reduction => "reduction",
            Category::Normalization => "normalization",
            Category::Window => "window",
            Category::Contraction => "contraction",
            Category::Library => "library",
            Category::Layout => "layout",
            Category::Creation => "creation",
        }
    }
}

/// How many inputs an op takes. Optional inputs are trailing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    Exact(usize),
    Range(usize, usize),
    AtLeast(usize),
}

impl Arity {
    pub fn accepts(self, n: usize) -> bool {
        match self {
            Arity::Exact(k) => n == k,
            Arity::Range(lo, hi) => (lo..=hi).contains(&n),
            Arity::AtLeast(lo) => n >= lo,
        }
    }
}

impl fmt::Display for Arity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arity::Exact(k) => write!(f, "{k}"),
            Arity::Range(lo, hi) => write!(f, "{lo} to {hi}"),
            Arity::AtLeast(lo) => write!(f, "at least {lo}"),
        }
    }
}

/// The facts about one op.
pub struct OpDef {
    /// Name in the text format.
    pub name: &'static str,
    /// The kind (`kind.rs`); `category` is the one it refines.
    pub kind: Kind,
    pub category: Category,
    pub arity: Arity,
    /// Declared attributes, in printing order.
    pub attrs: &'static [AttrDef],
    /// Result types from input types and (normalized) attributes.
    pub infer: InferFn,
    /// FLOP count, with the DRTriton generator's conventions.
    pub flops: FlopFn,
    /// How PyTorch spells it (`torch.rs`).
    pub torch: torch::Torch,
    /// A pointwise op's further facts (`pointwise.rs`); `None` for the other ops.
    pub pointwise: Option<&'static pointwise::PointwiseDef>,
}

impl OpDef {
    /// The declaration of attribute `name`.
    pub fn attr(&self, name: &str) -> Option<&'static AttrDef> {
        self.attrs.iter().find(|a| a.name == name)
    }
}

/// Typed, erroring access to a node's normalized attributes, for inference rules.
#[derive(Clone, Copy)]
pub struct AttrView<'a>(pub &'a Attrs);

impl<'a> AttrView<'a> {
    fn get(&self, name: &str) -> Result<&'a Attr, String> {
        self.0
            .get(name)
            .ok_or_else(|| format!("missing attribute `{name}`"))
    }
    pub fn int(&self, name: &str) -> Result<i64, String> {
        self.get(name)?
            .as_int()
            .ok_or_else(|| format!("attribute `{name}` must be an int"))
    }
    pub fn float(&self, name: &str) -> Result<f64, String> {
        self.get(name)?
            .as_float()
            .ok_or_else(|| format!("attribute `{name}` must be a number"))
    }
    pub fn bool(&self, name: &str) -> Result<bool, String> {
        self.get(name)?
            .as_bool()
            .ok_or_else(|| format!("attribute `{name}` must be a bool"))
    }
    pub fn str(&self, name: &str) -> Result<&'a str, String> {
        self.get(name)?
            .as_str()
            .ok_or_else(|| format!("attribute `{name}` must be a string"))
    }
    pub fn ints(&self, name: &str) -> Result<&'a [i64], String> {
        self.get(name)?
            .as_ints()
            .ok_or_else(|| format!("attribute `{name}` must be a list of ints"))
    }
    pub fn opt_ints(&self, name: &str) -> Result<Option<&'a [i64]>, String> {
        let a = self.get(name)?;
        if a.is_none() {
            Ok(None)
        } else {
            self.ints(name).map(Some)
        }
    }
    pub fn opt_int(&self, name: &str) -> Result<Option<i64>, String> {
        let a = self.get(name)?;
        if a.is_none() {
            Ok(None)
        } else {
            self.int(name).map(Some)
        }
    }
    pub fn opt_float(&self, name: &str) -> Result<Option<f64>, String> {
        let a = self.get(name)?;
        if a.is_none() {
            Ok(None)
        } else {
            self.float(name).map(Some)
        }
    }
    pub fn dtype(&self, name: &str) -> Result<crate::DType, String> {
        match self.get(name)? {
            Attr::DType(d) => Ok(*d),
            _ => Err(format!("attribute `{name}` must be a dtype")),
        }
    }
}

/// Why attributes could not be normalized.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrError {
    Unknown {
        name: String,
        valid: Vec<&'static str>,
    },
    Missing(&'static str),
    WrongKind {
        name: &'static str,
        expected: &'static str,
        found: Attr,
    },
}

impl fmt::Display for AttrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrError::Unknown { name, valid } if valid.is_empty() => {
                write!(
                    f,
                    "unknown attribute `{name}` (this op takes no attributes)"
                )
            }
            AttrError::Unknown { name, valid } => {
                write!(
                    f,
                    "unknown attribute `{name}` (valid: {})",
                    valid.join(", ")
                )
            }
            AttrError::Missing(name) => write!(f, "missing required attribute `{name}`"),
            AttrError::WrongKind {
                name,
                expected,
                found,
            } => write!(f, "attribute `{name}` must be {expected}, found `{found}`"),
        }
    }
}

impl Op {
    /// Looks an op up by its text-format name.
    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.iter().copied().find(|op| op.name() == name)
    }

    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// The op a PyTorch call lowers to, by canonical path (`F.relu`, `Tensor.amax`).
    pub fn from_torch(call: &str) -> Option<Op> {
        Op::ALL
            .iter()
            .copied()
            .find(|op| op.def().torch.calls.contains(&call))
    }

    /// The op and parameter-free module a `torch.nn` class name (`LeakyReLU`) stands for.
    pub fn from_nn_module(name: &str) -> Option<(Op, &'static torch::Module)> {
        Op::ALL.iter().find_map(|&op| {
            op.def()
                .torch
                .modules
                .iter()
                .find(|m| m.name == name)
                .map(|m| (op, m))
        })
    }

    /// The table's default of attribute `name`, for spellings that compute with it.
    ///
    /// # Panics
    /// When the op declares no attribute `name` with a default: a spelling asking for one
    /// contradicts the table, which the frontend's tests exercise for every spelling.
    pub fn default_of(self, name: &str) -> Attr {
        self.def()
            .attr(name)
            .and_then(|a| a.default.value())
            .unwrap_or_else(|| panic!("`{self}` declares no default for `{name}`"))
    }

    pub fn category(self) -> Category {
        self.def().category
    }

    /// A pointwise op's further facts (`pointwise.rs`).
    pub fn pointwise(self) -> Option<&'static pointwise::PointwiseDef> {
        self.def().pointwise
    }

    /// The op's kind: its category refined (`kind.rs`).
    pub fn kind(self) -> Kind {
        self.def().kind
    }

    /// Whether this application draws random numbers, so two equal-looking applications
    /// differ and must not be merged (`dropout` in training with p > 0, attention with
    /// `dropout_p > 0`). `attrs` must be normalized; unreadable attributes count as random.
    pub fn is_random(self, attrs: &Attrs) -> bool {
        let a = AttrView(attrs);
        match self.kind() {
            // opaque calls may draw random numbers (`aten.randn`) or depend on state:
            // never merge two of them
            Kind::Opaque => true,
            // the kinds whose ops may drop out at random: dropout itself, attention with
            // `dropout_p`
            Kind::Pointwise => {
                self == Op::Dropout
                    && a.bool("training").unwrap_or(true)
                    && a.float("p").map_or(true, |p| p > 0.0)
            }
            Kind::Composite => {
                self == Op::Attention && a.float("dropout_p").map_or(true, |p| p > 0.0)
            }
            // deterministic
            Kind::Creation
            | Kind::Reduce
            | Kind::Scan
            | Kind::Loss
            | Kind::Norm
            | Kind::Window(..)
            | Kind::Product
            | Kind::Conv { .. }
            | Kind::View
            | Kind::Copy => false,
        }
    }

    /// Checks `attrs` against the declarations and fills in defaults, collecting every error.
    pub fn normalize_attrs(self, attrs: &Attrs) -> Result<Attrs, Vec<AttrError>> {
        let def = self.def();
        let mut out = Attrs::new();
        let mut errors = Vec::new();
        for name in attrs.keys() {
            if !def.attrs.iter().any(|a| a.name == name) {
                errors.push(AttrError::Unknown {
                    name: name.clone(),
                    valid: def.attrs.iter().map(|a| a.name).collect(),
                });
            }
        }
        for a in def.attrs {
            match attrs.get(a.name) {
                Some(v) if a.kind.accepts(v) => {
                    // numbers declared as floats are stored as floats
                    let v = match (a.kind, v) {
                        (crate::AttrKind::Float | crate::AttrKind::OptFloat, Attr::Int(i)) => {
                            Attr::Float(*i as f64)
                        }
                        _ => v.clone(),
                    };
                    out.insert(a.name.to_string(), v);
                }
                Some(v) => errors.push(AttrError::WrongKind {
                    name: a.name,
                    expected: a.kind.describe(),
                    found: v.clone(),
                }),
                None => match a.default.value() {
                    Some(v) => {
                        out.insert(a.name.to_string(), v);
                    }
                    None => errors.push(AttrError::Missing(a.name)),
                },
            }
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors)
        }
    }

    /// Infers result types. `attrs` must be normalized.
    pub fn infer(self, inputs: &[&TensorType], attrs: &Attrs) -> Result<Vec<TensorType>, String> {
        let def = self.def();
        if !def.arity.accepts(inputs.len()) {
            return Err(format!(
                "`{}` takes {} inputs, got {}",
                def.name,
                def.arity,
                inputs.len()
            ));
        }
        for (i, t) in inputs.iter().enumerate() {
            if let Some(d) = t.shape.iter().find(|&&d| !(0..=MAX_DIM).contains(&d)) {
                return Err(format!(
                    "input {i} has an invalid dimension {d} (sizes lie in 0..=2^40)"
                ));
            }
        }
        (def.infer)(inputs, AttrView(attrs))
    }

    /// FLOPs of one application with these input and output types.
    pub fn flops(self, inputs: &[&TensorType], outputs: &[TensorType], attrs: &Attrs) -> u64 {
        (self.def().flops)(inputs, outputs, AttrView(attrs))
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
