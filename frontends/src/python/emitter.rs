//! The emitter: the graph being built and the facts needed to add to it. Adds IR nodes
//! (with the frontend's range checks), makes weak scalar constants, reads parameters and
//! (values, indices) pairs, checks tensor types. It knows nothing of Python statements:
//! the evaluator (`interp.rs`) drives it, and every spelling section lowers through it.

use super::error::{FrontendError, Span};
use super::members::Layer;
use super::value::{PairVal, Val};
use drtc_ir::{Attr, DType, GraphBuilder, Op, TensorType, ValueId};
use std::collections::HashMap;

/// What the interpreter is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// `get_inputs()` / `get_init_inputs()` / module constants.
    Inputs,
    /// `Model.__init__`.
    Init,
    /// `forward` / `fused_operator`: building the graph.
    Forward,
}

/// Largest magnitude accepted for a dimension or an integer attribute: small enough that
/// the IR's size formulas (products of two such values, plus a few terms) stay in i64.
pub const MAX_DIM: i64 = 1 << 30;
/// Largest element count of one tensor.
const MAX_NUMEL: u64 = 1 << 50;

/// The graph under construction and the state that lowering reads.
pub struct Emitter {
    pub builder: GraphBuilder,
    pub phase: Phase,
    /// `nn.*` layers made while `__init__` ran, by [`super::value::LayerId`].
    pub layers: Vec<Layer>,
    /// Forward phase: graph inputs of parameters and buffers, by state_dict name.
    pub params: HashMap<String, ValueId>,
    /// Types of parameters and buffers, by state_dict name (for reads during `__init__`).
    pub param_types: HashMap<String, TensorType>,
    /// Init phase: tensors made by `nn.Parameter(...)`, registered when assigned to `self`.
    pub new_params: Vec<ValueId>,
}

type R<T> = Result<T, FrontendError>;

impl Emitter {
    pub fn new() -> Emitter {
        Emitter {
            builder: GraphBuilder::new("scratch"),
            phase: Phase::Inputs,
            layers: vec![],
            params: HashMap::new(),
            param_types: HashMap::new(),
            new_params: vec![],
        }
    }

    /// Adds a node; builder errors (shapes, attributes) become errors at `span`.
    pub fn emit(
        &mut self,
        op: Op,
        inputs: &[ValueId],
        attrs: Vec<(&'static str, Attr)>,
        span: &Span,
    ) -> R<ValueId> {
        Ok(self.emit_multi(op, inputs, attrs, span)?[0])
    }

    pub fn emit_multi(
        &mut self,
        op: Op,
        inputs: &[ValueId],
        attrs: Vec<(&'static str, Attr)>,
        span: &Span,
    ) -> R<Vec<ValueId>> {
        for (name, a) in &attrs {
            let bad = match a {
                Attr::Int(i) => i.abs() > MAX_DIM,
                Attr::Ints(v) => v.iter().any(|i| i.abs() > MAX_DIM),
                Attr::Float(x) => x.is_nan(),
                _ => false,
            };
            if bad {
                let why = if matches!(a, Attr::Float(_)) {
                    "NaN constants are not supported (IR attributes are compared by value, and NaN never equals itself)"
                } else {
                    "the value is out of the range drtc accepts (|x| <= 2^30)"
                };
                return Err(FrontendError::unsupported(
                    format!("`{}`: attribute `{name}` = {a}: {why}", op.name()),
                    span.clone(),
                ));
            }
        }
        if let Some((_, Attr::Ints(shape))) = attrs.iter().find(|(n, _)| *n == "shape") {
            let n = shape
                .iter()
                .filter(|&&d| d != -1)
                .fold(1u64, |n, &d| n.saturating_mul(d.unsigned_abs()));
            if n > MAX_NUMEL {
                return Err(FrontendError::unsupported(
                    format!(
                        "`{}`: shape {shape:?} has more than 2^50 elements",
                        op.name()
                    ),
                    span.clone(),
                ));
            }
        }
        if matches!(
            op.category(),
            drtc_ir::Category::Library | drtc_ir::Category::Window
        ) {
            for (name, a) in &attrs {
                let min = match *name {
                    "stride" | "dilation" | "kernel_size" | "output_size" | "groups" => 1,
                    "padding" | "output_padding" => 0,
                    _ => continue,
                };
                let values = match a {
                    Attr::Int(i) => vec![*i],
                    Attr::Ints(v) => v.clone(),
                    _ => vec![],
                };
                if let Some(v) = values.iter().find(|&&v| v < min) {
                    return Err(FrontendError::lowering(
                        format!("`{}`: `{name}` must be at least {min}, got {v}", op.name()),
                        span.clone(),
                    ));
                }
            }
        }
        let out = self.builder.op(op, inputs, attrs).map_err(|e| {
            let (drtc_ir::BuildError::Attr { op, message }
            | drtc_ir::BuildError::Infer { op, message }) = e;
            let text = if message.starts_with(op) {
                message
            } else {
                format!("{op}: {message}")
            };
            FrontendError::lowering(text, span.clone())
        })?;
        for &v in &out {
            self.check_type(self.builder.ty(v).clone(), span)?;
        }
        Ok(out)
    }

    /// Rejects types whose size would overflow later arithmetic.
    pub fn check_type(&self, ty: TensorType, span: &Span) -> R<TensorType> {
        let mut n: u64 = 1;
        for &d in &ty.shape {
            if !(0..=MAX_DIM).contains(&d) {
                return Err(FrontendError::lowering(
                    format!("invalid dimension {d} in shape {:?}", ty.shape),
                    span.clone(),
                ));
            }
            n = n.saturating_mul(d as u64);
        }
        if n > MAX_NUMEL {
            return Err(FrontendError::unsupported(
                format!("tensor of shape {:?} has more than 2^50 elements", ty.shape),
                span.clone(),
            ));
        }
        Ok(ty)
    }

    pub fn ty(&self, v: ValueId) -> &TensorType {
        self.builder.ty(v)
    }

    /// A new tensor of type `ty` outside the forward graph (inputs, `__init__`).
    pub fn scratch_tensor(&mut self, ty: TensorType, span: &Span) -> R<ValueId> {
        let ty = self.check_type(ty, span)?;
        Ok(self.builder.input("_", ty))
    }

    /// A Python number as a 0-dim constant, with the dtype PyTorch's promotion gives it
    /// next to a tensor of dtype `like` (a "weak" scalar: it never widens its partner).
    pub fn scalar_const(&mut self, v: &Val, like: Option<DType>, span: &Span) -> R<ValueId> {
        let (value, kind_dtype) = match v {
            Val::Bool(b) => (*b as i64 as f64, DType::Bool),
            Val::Int(i) => (*i as f64, DType::I64),
            Val::Float(x) => (*x, DType::F32),
            other => {
                return Err(FrontendError::lowering(
                    format!("expected a tensor or a number, got {}", other.type_name()),
                    span.clone(),
                ))
            }
        };
        if value.is_nan() {
            return Err(FrontendError::unsupported(
                "NaN constants are not supported (IR attributes are compared by value, and NaN never equals itself)",
                span.clone(),
            ));
        }
        let dtype = match like {
            Some(d) if d.kind() >= kind_dtype.kind() => d,
            _ => kind_dtype,
        };
        Ok(self.builder.constant(value, dtype))
    }

    /// A value that must be a tensor (parameters are read).
    pub fn tensor(&mut self, v: &Val, span: &Span) -> R<ValueId> {
        match v {
            Val::Tensor(t) => Ok(*t),
            Val::Param(_) | Val::Pair(_) | Val::InitTensor(_) => {
                let r = self.read(v.clone(), span)?;
                self.tensor(&r, span)
            }
            other => Err(FrontendError::lowering(
                format!("expected a tensor, got {}", other.type_name()),
                span.clone(),
            )),
        }
    }

    /// Resolves values that stand for tensors (parameters, (values, indices) pairs).
    pub fn read(&mut self, v: Val, span: &Span) -> R<Val> {
        match v {
            Val::Param(name) => match self.phase {
                Phase::Forward => self
                    .params
                    .get(&*name)
                    .map(|&id| Val::Tensor(id))
                    .ok_or_else(|| FrontendError::lowering(format!("parameter `{name}` is not defined"), span.clone())),
                _ => {
                    let ty = self.param_types.get(&*name).cloned().ok_or_else(|| {
                        FrontendError::lowering(format!("parameter `{name}` is not defined"), span.clone())
                    })?;
                    Ok(Val::Tensor(self.scratch_tensor(ty, span)?))
                }
            },
            Val::Pair(p) => Err(FrontendError::unsupported(
                format!("the result of `{}` is a (values, indices) pair: index it with [0]/.values or [1]/.indices", p.what),
                span.clone(),
            )),
            Val::InitTensor(ty) => Err(FrontendError::unsupported(
                format!("a tensor of type {ty} made in __init__ is used in forward but is neither an nn.Parameter nor a registered buffer"),
                span.clone(),
            )),
            other => Ok(other),
        }
    }

    /// Materializes one half of a (values, indices) pair.
    pub fn pair_part(&mut self, p: &PairVal, index: usize, span: &Span) -> R<Val> {
        let part = if index == 0 { &p.values } else { &p.indices };
        match part {
            Some((op, attrs)) => Ok(Val::Tensor(self.emit(
                *op,
                &[p.input],
                attrs.clone(),
                span,
            )?)),
            None => Err(FrontendError::unsupported(
                format!(
                    "the {} of `{}` are not in drtc's op set",
                    if index == 0 { "values" } else { "indices" },
                    p.what
                ),
                span.clone(),
            )),
        }
    }

    /// The items of an iterable (`*args` in calls and displays).
    pub fn iterate(&mut self, v: Val, span: &Span) -> R<Vec<Val>> {
        match v {
            Val::Tuple(items) | Val::List(items) => Ok(items.to_vec()),
            Val::Pair(p) => Ok(vec![
                self.pair_part(&p, 0, span)?,
                self.pair_part(&p, 1, span)?,
            ]),
            other => Err(FrontendError::unsupported(
                format!("cannot iterate over {}", other.type_name()),
                span.clone(),
            )),
        }
    }
}

impl Default for Emitter {
    fn default() -> Self {
        Emitter::new()
    }
}
