//! Values of the symbolic interpreter: Python numbers and containers, tensors (IR values),
//! and references to the things a program names (torch functions, layers, the model).

use super::ast::{ClassDef, FunctionDef};
use drtc_ir::{DType, TensorType, ValueId};
use std::rc::Rc;

/// Index of a layer (an `nn.*` module instance) in the interpreter.
pub type LayerId = usize;
/// Index of a user object (an instance of a class defined in the program).
pub type ObjectId = usize;

/// A value during symbolic execution.
#[derive(Debug, Clone)]
pub enum Val {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Rc<str>),
    Tuple(Rc<Vec<Val>>),
    List(Rc<Vec<Val>>),
    Ellipsis,
    /// A `slice(lo, hi, step)` produced by `a:b:c` in a subscript.
    Slice(Option<i64>, Option<i64>, Option<i64>),
    /// A tensor: a value of the graph being built in the current phase.
    Tensor(ValueId),
    DType(DType),
    /// `x.device`, `torch.device(...)`: accepted and ignored.
    Device,
    /// A dotted name from an import (`torch`, `torch.nn.functional.relu`, `math.sqrt`).
    Path(Rc<str>),
    /// A Python builtin (`len`, `float`, `super` ...).
    Builtin(&'static str),
    Function(Rc<FunctionDef>),
    Class(Rc<ClassDef>),
    Object(ObjectId),
    Layer(LayerId),
    /// A parameter or buffer by its state_dict name; read as a tensor.
    Param(Rc<str>),
    /// `recv.name` where `recv` is a tensor or another value with methods.
    Method(Box<Val>, Rc<str>),
    /// `super()`: only `super().__init__(...)` is meaningful.
    Super,
    /// The (values, indices) pair of `torch.max(x, dim)` and friends, built on demand.
    Pair(Rc<PairVal>),
    /// A tensor that only existed while `__init__` ran (not a parameter or buffer).
    InitTensor(TensorType),
}

/// A lazily built (values, indices) result: `op_values`/`op_indices` applied to `input`.
#[derive(Debug, Clone)]
pub struct PairVal {
    pub input: ValueId,
    /// The function that made it, for messages (`torch.max`).
    pub what: String,
    pub values: Option<(drtc_ir::Op, Vec<(&'static str, drtc_ir::Attr)>)>,
    pub indices: Option<(drtc_ir::Op, Vec<(&'static str, drtc_ir::Attr)>)>,
}

impl Val {
    /// The Python type name, for messages.
    pub fn type_name(&self) -> String {
        match self {
            Val::None => "None".into(),
            Val::Bool(_) => "bool".into(),
            Val::Int(_) => "int".into(),
            Val::Float(_) => "float".into(),
            Val::Str(_) => "str".into(),
            Val::Tuple(_) => "tuple".into(),
            Val::List(_) => "list".into(),
            Val::Ellipsis => "ellipsis".into(),
            Val::Slice(..) => "slice".into(),
            Val::Tensor(_) | Val::Param(_) | Val::InitTensor(_) => "Tensor".into(),
            Val::DType(_) => "torch.dtype".into(),
            Val::Device => "torch.device".into(),
            Val::Path(p) => format!("`{p}`"),
            Val::Builtin(b) => format!("builtin `{b}`"),
            Val::Function(f) => format!("function `{}`", f.name),
            Val::Class(c) => format!("class `{}`", c.name),
            Val::Object(_) => "object".into(),
            Val::Layer(_) => "nn.Module".into(),
            Val::Method(_, m) => format!("method `{m}`"),
            Val::Super => "super".into(),
            Val::Pair(p) => format!("result of `{}`", p.what),
        }
    }

    /// A Python number or bool as f64.
    pub fn as_number(&self) -> Option<f64> {
        match self {
            Val::Bool(b) => Some(*b as i64 as f64),
            Val::Int(i) => Some(*i as f64),
            Val::Float(x) => Some(*x),
            _ => None,
        }
    }

    pub fn is_number(&self) -> bool {
        matches!(self, Val::Bool(_) | Val::Int(_) | Val::Float(_))
    }

    /// Items of a tuple or list.
    pub fn items(&self) -> Option<&[Val]> {
        match self {
            Val::Tuple(v) | Val::List(v) => Some(v),
            _ => None,
        }
    }

    pub fn tuple(items: Vec<Val>) -> Val {
        Val::Tuple(Rc::new(items))
    }

    pub fn list(items: Vec<Val>) -> Val {
        Val::List(Rc::new(items))
    }
}
