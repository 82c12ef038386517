//! The spelling table: how PyTorch's functions, tensor methods and operators map onto IR
//! ops. `torch.relu(x)`, `F.relu(x)`, `x.relu()` and `nn.ReLU()(x)` all end here as
//! `relu`; arguments are bound by PyTorch's parameter names and defaults, Python numbers
//! become weakly-typed constants, and what the op set cannot express is an error that says so.

use super::args::{Args, Bound};
use super::ast::{BinOp, CmpOp};
use super::error::{FrontendError, Span};
use super::interp::{Interp, Phase};
use super::layers;
use super::value::{PairVal, Val};
use drtc_ir::{Attr, DType, Op, TensorType, ValueId};
use std::rc::Rc;

type R<T> = Result<T, FrontendError>;

/// The value of `path` when it names a constant (`torch.float32`, `math.pi`), else the path.
pub fn path_attr(path: &str) -> Val {
    if let Some(name) = path.strip_prefix("torch.") {
        if let Some(d) = torch_dtype(name) {
            return Val::DType(d);
        }
    }
    match path {
        "math.pi" | "torch.pi" => Val::Float(std::f64::consts::PI),
        "math.e" | "torch.e" => Val::Float(std::f64::consts::E),
        "math.inf" | "torch.inf" => Val::Float(f64::INFINITY),
        "math.nan" | "torch.nan" => Val::Float(f64::NAN),
        _ => Val::Path(path.into()),
    }
}

fn torch_dtype(name: &str) -> Option<DType> {
    Some(match name {
        "float32" | "float" => DType::F32,
        "float64" | "double" => DType::F64,
        "float16" | "half" => DType::F16,
        "bfloat16" => DType::BF16,
        "int32" | "int" => DType::I32,
        "int64" | "long" => DType::I64,
        "bool" => DType::Bool,
        _ => return None,
    })
}

/// Shortens a dotted path to the table's key: `torch.nn.functional.relu` -> `F.relu`.
pub fn canonical(path: &str) -> String {
    for (long, short) in [
        ("torch.nn.functional.", "F."),
        ("torch.nn.modules.", "nn."),
        ("torch.nn.", "nn."),
        ("torch.Tensor.", "Tensor."),
        ("torch.", "torch."),
    ] {
        if let Some(rest) = path.strip_prefix(long) {
            // `nn.modules.conv.Conv2d` -> `nn.Conv2d`
            let rest = if short == "nn." {
                rest.rsplit('.').next().unwrap_or(rest)
            } else {
                rest
            };
            return format!("{short}{rest}");
        }
    }
    path.to_string()
}

/// Calls a dotted name (`torch.relu(...)`, `nn.Conv2d(...)`, `math.sqrt(...)`).
pub fn call_path(interp: &mut Interp, path: &str, args: Args, span: &Span) -> R<Val> {
    let key = canonical(path);
    if let Some(f) = key.strip_prefix("math.") {
        return math(f, &args, span);
    }
    match key.as_str() {
        "nn.Module.__init__" => return Ok(Val::None),
        "nn.Parameter" | "nn.parameter.Parameter" => {
            let b = args.bind("nn.Parameter", &["data", "requires_grad"])?;
            let data = b.required("data")?.clone();
            let t = interp.tensor(&data, &b.span_of("data"))?;
            if interp.phase != Phase::Init {
                return Err(FrontendError::unsupported(
                    "nn.Parameter can only be created in __init__",
                    span.clone(),
                ));
            }
            interp.new_params.push(t);
            return Ok(Val::Tensor(t));
        }
        "torch.device" => return Ok(Val::Device),
        "torch.Size" => {
            let b = args.bind("torch.Size", &["sizes"])?;
            return Ok(Val::tuple(
                b.ints("sizes")?
                    .unwrap_or_default()
                    .into_iter()
                    .map(Val::Int)
                    .collect(),
            ));
        }
        _ => {}
    }
    if let Some(kind) = key.strip_prefix("nn.") {
        return layers::construct(interp, kind, args, span);
    }
    if key.starts_with("torch.") || key.starts_with("F.") || key.starts_with("Tensor.") {
        return call_function(interp, &key, args, span);
    }
    Err(FrontendError::unsupported(
        format!("`{path}` is not supported (not a torch, torch.nn or math function drtc knows)"),
        span.clone(),
    ))
}

fn math(f: &str, args: &Args, span: &Span) -> R<Val> {
    let nums: Vec<f64> = args
        .pos
        .iter()
        .map(|(v, s)| {
            v.as_number().ok_or_else(|| {
                FrontendError::lowering(
                    format!("`math.{f}` needs numbers, got {}", v.type_name()),
                    s.clone(),
                )
            })
        })
        .collect::<R<_>>()?;
    let one = || -> R<f64> {
        if nums.len() == 1 && args.kw.is_empty() {
            Ok(nums[0])
        } else {
            Err(FrontendError::lowering(
                format!("`math.{f}` takes one number"),
                span.clone(),
            ))
        }
    };
    let x = match f {
        "sqrt" => one()?.sqrt(),
        "exp" => one()?.exp(),
        "log" if nums.len() == 2 => nums[0].ln() / nums[1].ln(),
        "log" => one()?.ln(),
        "log2" => one()?.log2(),
        "log10" => one()?.log10(),
        "tanh" => one()?.tanh(),
        "cos" => one()?.cos(),
        "sin" => one()?.sin(),
        "erf" => {
            return Err(FrontendError::unsupported(
                "`math.erf` is not supported",
                span.clone(),
            ))
        }
        "fabs" => one()?.abs(),
        "pow" if nums.len() == 2 => nums[0].powf(nums[1]),
        "floor" | "ceil" => {
            let v = one()?;
            let r = if f == "floor" { v.floor() } else { v.ceil() };
            if !r.is_finite() || r.abs() > 9.0e18 {
                return Err(FrontendError::lowering(
                    format!("`math.{f}` of {v}"),
                    span.clone(),
                ));
            }
            return Ok(Val::Int(r as i64));
        }
        _ => {
            return Err(FrontendError::unsupported(
                format!("`math.{f}` is not supported"),
                span.clone(),
            ))
        }
    };
    if x.is_nan() && !nums.iter().any(|n| n.is_nan()) {
        // Python raises ValueError here
        return Err(FrontendError::lowering(
            format!("`math.{f}`: math domain error"),
            span.clone(),
        ));
    }
    Ok(Val::Float(x))
}

/// `x.name(...)`.
pub fn call_method(interp: &mut Interp, t: ValueId, name: &str, args: Args, span: &Span) -> R<Val> {
    let recv_span = args.span.clone();
    call_function(
        interp,
        &format!("Tensor.{name}"),
        args.with_receiver(Val::Tensor(t), recv_span),
        span,
    )
}

/// `x.name` for a tensor `x`.
pub fn tensor_attr(interp: &mut Interp, t: ValueId, name: &str, span: &Span) -> R<Val> {
    let ty = interp.ty(t).clone();
    Ok(match name {
        "shape" => Val::tuple(ty.shape.iter().map(|&d| Val::Int(d)).collect()),
        "dtype" => Val::DType(ty.dtype),
        "device" => Val::Device,
        "ndim" => Val::Int(ty.rank() as i64),
        "data" => Val::Tensor(t),
        "is_cuda" | "requires_grad" => Val::Bool(false),
        "T" => {
            if ty.rank() < 2 {
                Val::Tensor(t)
            } else if ty.rank() == 2 {
                Val::Tensor(interp.emit(
                    Op::Transpose,
                    &[t],
                    vec![("dim0", Attr::Int(0)), ("dim1", Attr::Int(1))],
                    span,
                )?)
            } else {
                let dims: Vec<i64> = (0..ty.rank() as i64).rev().collect();
                Val::Tensor(interp.emit(
                    Op::Permute,
                    &[t],
                    vec![("dims", Attr::Ints(dims))],
                    span,
                )?)
            }
        }
        "mT" => Val::Tensor(interp.emit(
            Op::Transpose,
            &[t],
            vec![("dim0", Attr::Int(-2)), ("dim1", Attr::Int(-1))],
            span,
        )?),
        _ => Val::Method(Box::new(Val::Tensor(t)), name.into()),
    })
}

// ---------------------------------------------------------------- operators

fn bin_op(op: BinOp) -> Option<Op> {
    Some(match op {
        BinOp::Add => Op::Add,
        BinOp::Sub => Op::Sub,
        BinOp::Mul => Op::Mul,
        BinOp::Div => Op::Div,
        BinOp::Pow => Op::Pow,
        BinOp::MatMul => Op::Matmul,
        BinOp::FloorDiv | BinOp::Mod => return None,
    })
}

/// Two operands as tensors; a Python number becomes a constant typed after its partner.
pub fn operands(interp: &mut Interp, a: &Val, b: &Val, span: &Span) -> R<(ValueId, ValueId)> {
    let ta = match a {
        Val::Tensor(t) => Some(*t),
        _ => None,
    };
    let tb = match b {
        Val::Tensor(t) => Some(*t),
        _ => None,
    };
    match (ta, tb) {
        (Some(x), Some(y)) => Ok((x, y)),
        (Some(x), None) => {
            let like = interp.ty(x).dtype;
            Ok((x, interp.scalar_const(b, Some(like), span)?))
        }
        (None, Some(y)) => {
            let like = interp.ty(y).dtype;
            Ok((interp.scalar_const(a, Some(like), span)?, y))
        }
        (None, None) => {
            let x = interp.scalar_const(a, None, span)?;
            let like = interp.ty(x).dtype;
            Ok((x, interp.scalar_const(b, Some(like), span)?))
        }
    }
}

/// `a op b` where at least one side is a tensor.
pub fn tensor_binary(interp: &mut Interp, op: BinOp, a: &Val, b: &Val, span: &Span) -> R<Val> {
    let Some(ir) = bin_op(op) else {
        return Err(FrontendError::unsupported(
            format!("the operator {op:?} on tensors is not in drtc's op set"),
            span.clone(),
        ));
    };
    if ir == Op::Matmul && (!matches!(a, Val::Tensor(_)) || !matches!(b, Val::Tensor(_))) {
        return Err(FrontendError::lowering(
            "`@` needs two tensors",
            span.clone(),
        ));
    }
    let (x, y) = operands(interp, a, b, span)?;
    Ok(Val::Tensor(interp.emit(ir, &[x, y], vec![], span)?))
}

/// `a < b` and friends where at least one side is a tensor.
pub fn tensor_compare(interp: &mut Interp, op: CmpOp, a: &Val, b: &Val, span: &Span) -> R<Val> {
    let ir = match op {
        CmpOp::Eq => Op::Eq,
        CmpOp::Ne => Op::Ne,
        CmpOp::Lt => Op::Lt,
        CmpOp::Le => Op::Le,
        CmpOp::Gt => Op::Gt,
        CmpOp::Ge => Op::Ge,
        _ => {
            return Err(FrontendError::unsupported(
                format!("{op:?} on tensors is not supported"),
                span.clone(),
            ))
        }
    };
    let (x, y) = operands(interp, a, b, span)?;
    Ok(Val::Tensor(interp.emit(ir, &[x, y], vec![], span)?))
}

// ---------------------------------------------------------------- helpers

fn tensor_arg(interp: &mut Interp, b: &Bound, name: &str) -> R<ValueId> {
    let v = b.required(name)?.clone();
    interp.tensor(&v, &b.span_of(name))
}

fn opt_tensor_arg(interp: &mut Interp, b: &Bound, name: &str) -> R<Option<ValueId>> {
    match b.opt(name).cloned() {
        None => Ok(None),
        Some(v) => interp.tensor(&v, &b.span_of(name)).map(Some),
    }
}

/// A tensor, or a Python number turned into a constant typed like `like`.
fn tensor_or_scalar(interp: &mut Interp, b: &Bound, name: &str, like: ValueId) -> R<ValueId> {
    let v = b.required(name)?.clone();
    let v = interp.read(v, &b.span_of(name))?;
    match v {
        Val::Tensor(t) => Ok(t),
        other => {
            let d = interp.ty(like).dtype;
            interp.scalar_const(&other, Some(d), &b.span_of(name))
        }
    }
}

fn dtype_arg(b: &Bound, name: &str) -> R<Option<DType>> {
    match b.opt(name) {
        None => Ok(None),
        Some(Val::DType(d)) => Ok(Some(*d)),
        Some(v) => Err(FrontendError::lowering(
            format!(
                "`{}`: `{name}` must be a dtype, got {}",
                b.func,
                v.type_name()
            ),
            b.span_of(name),
        )),
    }
}

fn cast(interp: &mut Interp, t: ValueId, dtype: DType, span: &Span) -> R<ValueId> {
    if interp.ty(t).dtype == dtype {
        return Ok(t);
    }
    interp.emit(Op::Cast, &[t], vec![("dtype", Attr::DType(dtype))], span)
}

/// The `dtype=` argument of reductions and softmax: the input is cast first.
fn with_dtype(interp: &mut Interp, b: &Bound, t: ValueId) -> R<ValueId> {
    match dtype_arg(b, "dtype")? {
        Some(d) => cast(interp, t, d, &b.span),
        None => Ok(t),
    }
}

/// `dim` of a reduction: none (all dims), an int or a tuple of ints.
fn dims_attr(b: &Bound, name: &str) -> R<Attr> {
    match b.ints(name)? {
        None => Ok(Attr::None),
        Some(v) if v.is_empty() => Ok(Attr::None),
        Some(v) => Ok(Attr::Ints(v)),
    }
}

fn unary(interp: &mut Interp, b: &Bound, op: Op, attrs: Vec<(&'static str, Attr)>) -> R<Val> {
    let x = tensor_arg(interp, b, "input")?;
    Ok(Val::Tensor(interp.emit(op, &[x], attrs, &b.span)?))
}

fn random_error(name: &str, span: &Span) -> FrontendError {
    FrontendError::random(
        format!("`{name}` draws random numbers inside forward, so the output is not a function of the inputs; drtc cannot compile or verify it"),
        span.clone(),
    )
}

/// A shape given as `*size` or as one sequence (`torch.rand(2, 3)`, `torch.rand((2, 3))`).
fn size_arg(b: &Bound, name: &str) -> R<Vec<i64>> {
    let v = b.required(name)?.clone();
    let items = v
        .items()
        .map(|i| i.to_vec())
        .unwrap_or_else(|| vec![v.clone()]);
    let items = if items.len() == 1 && items[0].items().is_some() {
        items[0].items().unwrap_or(&[]).to_vec()
    } else {
        items
    };
    items
        .iter()
        .map(|x| match x {
            Val::Int(i) => Ok(*i),
            other => Err(FrontendError::lowering(
                format!(
                    "`{}`: sizes must be ints, got {}",
                    b.func,
                    other.type_name()
                ),
                b.span_of(name),
            )),
        })
        .collect()
}

/// A new tensor from a creation function: random or uninitialized data is only allowed
/// while preparing inputs or parameters; in forward, constant fills become `full`.
fn create(
    interp: &mut Interp,
    name: &str,
    ty: TensorType,
    fill: Option<f64>,
    span: &Span,
) -> R<Val> {
    let ty = interp.check_type(ty, span)?;
    match (interp.phase, fill) {
        (Phase::Forward, Some(v)) => Ok(Val::Tensor(interp.emit(
            Op::Full,
            &[],
            vec![
                ("shape", Attr::Ints(ty.shape.clone())),
                ("value", Attr::Float(v)),
                ("dtype", Attr::DType(ty.dtype)),
            ],
            span,
        )?)),
        (Phase::Forward, None) if name.contains("empty") => Err(FrontendError::unsupported(
            format!("`{name}` makes uninitialized memory; drtc needs defined values"),
            span.clone(),
        )),
        (Phase::Forward, None) => Err(random_error(name, span)),
        _ => Ok(Val::Tensor(interp.scratch_tensor(ty, span)?)),
    }
}

/// The shape and dtype of `torch.tensor(data)`.
fn literal_type(v: &Val, span: &Span) -> R<(Vec<i64>, DType, Option<f64>)> {
    match v {
        Val::Bool(b) => Ok((vec![], DType::Bool, Some(*b as i64 as f64))),
        Val::Int(i) => Ok((vec![], DType::I64, Some(*i as f64))),
        Val::Float(x) => Ok((vec![], DType::F32, Some(*x))),
        Val::Tuple(items) | Val::List(items) => {
            let mut inner: Option<(Vec<i64>, DType, Option<f64>)> = None;
            for it in items.iter() {
                let (s, d, f) = literal_type(it, span)?;
                inner = Some(match inner {
                    None => (s, d, f),
                    Some((s0, d0, f0)) => {
                        if s0 != s {
                            return Err(FrontendError::lowering(
                                "ragged nested sequence in torch.tensor",
                                span.clone(),
                            ));
                        }
                        (
                            s0,
                            drtc_ir::dtype::promote_types(d0, d),
                            if f0 == f { f0 } else { None },
                        )
                    }
                });
            }
            let (mut s, d, f) = inner.unwrap_or((vec![], DType::F32, Some(0.0)));
            s.insert(0, items.len() as i64);
            Ok((s, d, f))
        }
        other => Err(FrontendError::unsupported(
            format!("torch.tensor of {}", other.type_name()),
            span.clone(),
        )),
    }
}

/// Binds the arguments of a call to a `Tensor.*` / `torch.*` / `F.*` function.
fn bind(args: &Args, key: &str, params: &[&'static str]) -> R<Bound> {
    args.bind(key, params)
}

// ---------------------------------------------------------------- the table

/// Lowers a call of `key` (`torch.X`, `F.X` or `Tensor.X` with the receiver first).
pub fn call_function(interp: &mut Interp, key: &str, args: Args, span: &Span) -> R<Val> {
    let (ns, name) = key.split_once('.').unwrap_or(("", key));
    let a = &args;
    // pointwise unary ops without attributes
    let simple_unary = match (ns, name) {
        (_, "relu" | "relu_") => Some(Op::Relu),
        (_, "sigmoid" | "sigmoid_") => Some(Op::Sigmoid),
        (_, "tanh" | "tanh_") => Some(Op::Tanh),
        ("F", "silu") => Some(Op::Silu),
        ("torch" | "F", "selu") => Some(Op::Selu),
        ("F", "hardsigmoid") => Some(Op::Hardsigmoid),
        ("F", "hardswish") => Some(Op::Hardswish),
        ("F", "softsign") => Some(Op::Softsign),
        ("F", "logsigmoid") => Some(Op::Logsigmoid),
        ("F", "mish") => Some(Op::Mish),
        ("torch" | "Tensor", "abs" | "absolute") => Some(Op::Abs),
        ("torch" | "Tensor", "neg" | "negative") => Some(Op::Neg),
        ("torch" | "Tensor", "sign") => Some(Op::Sign),
        ("torch" | "Tensor", "cos") => Some(Op::Cos),
        ("torch" | "Tensor", "sin") => Some(Op::Sin),
        ("torch" | "Tensor", "exp") => Some(Op::Exp),
        ("torch" | "Tensor", "exp2") => Some(Op::Exp2),
        ("torch" | "Tensor", "log") => Some(Op::Log),
        ("torch" | "Tensor", "sqrt") => Some(Op::Sqrt),
        ("torch" | "Tensor", "rsqrt") => Some(Op::Rsqrt),
        ("torch" | "Tensor", "erf") | ("torch.special", "erf") => Some(Op::Erf),
        ("torch" | "Tensor", "reciprocal") => Some(Op::Reciprocal),
        _ => None,
    };
    if let Some(op) = simple_unary {
        let b = bind(a, key, &["input", "inplace"])?;
        return unary(interp, &b, op, vec![]);
    }
    match (ns, name) {
        // ---- pointwise with attributes
        ("F", "leaky_relu") => {
            let b = bind(a, key, &["input", "negative_slope", "inplace"])?;
            let s = b.float("negative_slope", 0.01)?;
            unary(
                interp,
                &b,
                Op::LeakyRelu,
                vec![("negative_slope", Attr::Float(s))],
            )
        }
        ("F", "gelu") => {
            let b = bind(a, key, &["input", "approximate"])?;
            let ap = b.str("approximate", "none")?;
            if ap != "none" && ap != "tanh" {
                return Err(FrontendError::lowering(
                    format!("gelu's approximate must be 'none' or 'tanh', got {ap:?}"),
                    b.span_of("approximate"),
                ));
            }
            unary(interp, &b, Op::Gelu, vec![("approximate", Attr::Str(ap))])
        }
        ("F", "softplus") => {
            let b = bind(a, key, &["input", "beta", "threshold"])?;
            let (beta, th) = (b.float("beta", 1.0)?, b.float("threshold", 20.0)?);
            unary(
                interp,
                &b,
                Op::Softplus,
                vec![("beta", Attr::Float(beta)), ("threshold", Attr::Float(th))],
            )
        }
        ("F", "elu") => {
            let b = bind(a, key, &["input", "alpha", "inplace"])?;
            let alpha = b.float("alpha", 1.0)?;
            unary(interp, &b, Op::Elu, vec![("alpha", Attr::Float(alpha))])
        }
        ("F", "hardtanh") => {
            let b = bind(a, key, &["input", "min_val", "max_val", "inplace"])?;
            let (lo, hi) = (b.float("min_val", -1.0)?, b.float("max_val", 1.0)?);
            unary(
                interp,
                &b,
                Op::Hardtanh,
                vec![("min_val", Attr::Float(lo)), ("max_val", Attr::Float(hi))],
            )
        }
        ("F", "relu6") => {
            let b = bind(a, key, &["input", "inplace"])?;
            unary(
                interp,
                &b,
                Op::Hardtanh,
                vec![("min_val", Attr::Float(0.0)), ("max_val", Attr::Float(6.0))],
            )
        }
        ("torch" | "Tensor", "clamp" | "clip" | "clamp_") => {
            let b = bind(a, key, &["input", "min", "max"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let lo = b.opt("min").cloned();
            let hi = b.opt("max").cloned();
            if lo.is_none() && hi.is_none() {
                return Err(FrontendError::lowering(
                    "clamp needs at least one of `min` and `max`",
                    b.span.clone(),
                ));
            }
            let is_tensor = |v: &Option<Val>| matches!(v, Some(Val::Tensor(_) | Val::Param(_)));
            if is_tensor(&lo) || is_tensor(&hi) {
                let mut cur = x;
                if let Some(l) = lo {
                    let l = interp.read(l, &b.span)?;
                    let (p, q) = operands(interp, &Val::Tensor(cur), &l, &b.span)?;
                    cur = interp.emit(Op::Maximum, &[p, q], vec![], &b.span)?;
                }
                if let Some(h) = hi {
                    let h = interp.read(h, &b.span)?;
                    let (p, q) = operands(interp, &Val::Tensor(cur), &h, &b.span)?;
                    cur = interp.emit(Op::Minimum, &[p, q], vec![], &b.span)?;
                }
                return Ok(Val::Tensor(cur));
            }
            let attr = |v: Option<f64>| v.map_or(Attr::None, Attr::Float);
            let (l, h) = (b.opt_float("min")?, b.opt_float("max")?);
            Ok(Val::Tensor(interp.emit(
                Op::Clamp,
                &[x],
                vec![("min", attr(l)), ("max", attr(h))],
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "clamp_min") => {
            let b = bind(a, key, &["input", "min"])?;
            let m = b.float("min", 0.0)?;
            unary(interp, &b, Op::Clamp, vec![("min", Attr::Float(m))])
        }
        ("torch" | "Tensor", "square") => {
            let b = bind(a, key, &["input"])?;
            let x = tensor_arg(interp, &b, "input")?;
            Ok(Val::Tensor(interp.emit(
                Op::Mul,
                &[x, x],
                vec![],
                &b.span,
            )?))
        }
        ("F", "dropout" | "dropout1d" | "dropout2d" | "dropout3d" | "alpha_dropout") => {
            let b = bind(a, key, &["input", "p", "training", "inplace"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let p = b.float("p", 0.5)?;
            if !(0.0..=1.0).contains(&p) {
                return Err(FrontendError::lowering(
                    format!("dropout probability has to be between 0 and 1, but got {p}"),
                    b.span_of("p"),
                ));
            }
            if p > 0.0 && b.bool("training", true)? && interp.phase == Phase::Forward {
                return Err(random_error(&format!("{key}(p={p})"), span));
            }
            Ok(Val::Tensor(x))
        }
        (
            "torch",
            "bernoulli" | "normal" | "multinomial" | "poisson" | "rand_like" | "randn_like"
            | "randint_like",
        ) if interp.phase == Phase::Forward => Err(random_error(key, span)),

        // ---- binary
        ("torch" | "Tensor", "add" | "sub" | "subtract" | "add_" | "sub_") => {
            let b = bind(a, key, &["input", "other", "alpha"])?;
            let x = b.required("input")?.clone();
            let mut y = b.required("other")?.clone();
            if let Some(alpha) = b.opt("alpha").cloned() {
                y = interp.binary(BinOp::Mul, y, alpha, span)?;
            }
            let op = if name.starts_with("add") {
                BinOp::Add
            } else {
                BinOp::Sub
            };
            interp.binary(op, x, y, span)
        }
        ("torch" | "Tensor", "mul" | "multiply" | "mul_") => {
            let b = bind(a, key, &["input", "other"])?;
            interp.binary(
                BinOp::Mul,
                b.required("input")?.clone(),
                b.required("other")?.clone(),
                span,
            )
        }
        ("torch" | "Tensor", "div" | "divide" | "true_divide" | "div_") => {
            let b = bind(a, key, &["input", "other", "rounding_mode"])?;
            if b.opt("rounding_mode").is_some() {
                return Err(FrontendError::unsupported(
                    "division with a rounding_mode is not in drtc's op set",
                    b.span_of("rounding_mode"),
                ));
            }
            interp.binary(
                BinOp::Div,
                b.required("input")?.clone(),
                b.required("other")?.clone(),
                span,
            )
        }
        ("torch" | "Tensor", "pow") => {
            let b = bind(a, key, &["input", "exponent"])?;
            interp.binary(
                BinOp::Pow,
                b.required("input")?.clone(),
                b.required("exponent")?.clone(),
                span,
            )
        }
        ("torch" | "Tensor", "maximum" | "minimum" | "fmax" | "fmin") => {
            let b = bind(a, key, &["input", "other"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let y = tensor_arg(interp, &b, "other")?;
            let op = if name.ends_with("max") || name == "maximum" {
                Op::Maximum
            } else {
                Op::Minimum
            };
            Ok(Val::Tensor(interp.emit(op, &[x, y], vec![], &b.span)?))
        }
        ("torch" | "Tensor", "lerp") => {
            let b = bind(a, key, &["input", "end", "weight"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let e = tensor_arg(interp, &b, "end")?;
            let w = tensor_or_scalar(interp, &b, "weight", x)?;
            Ok(Val::Tensor(interp.emit(
                Op::Lerp,
                &[x, e, w],
                vec![],
                &b.span,
            )?))
        }
        (
            "torch" | "Tensor",
            "eq" | "ne" | "lt" | "le" | "gt" | "ge" | "greater" | "less" | "greater_equal"
            | "less_equal" | "not_equal",
        ) => {
            let b = bind(a, key, &["input", "other"])?;
            let op = match name {
                "eq" => CmpOp::Eq,
                "ne" | "not_equal" => CmpOp::Ne,
                "lt" | "less" => CmpOp::Lt,
                "le" | "less_equal" => CmpOp::Le,
                "gt" | "greater" => CmpOp::Gt,
                _ => CmpOp::Ge,
            };
            let x = b.required("input")?.clone();
            let x = interp.read(x, span)?;
            let y = b.required("other")?.clone();
            let y = interp.read(y, span)?;
            tensor_compare(interp, op, &x, &y, span)
        }
        ("torch" | "Tensor", "where") => {
            let b = bind(a, key, &["condition", "input", "other"])?;
            let c = tensor_arg(interp, &b, "condition")?;
            let x = b.required("input")?.clone();
            let x = interp.read(x, span)?;
            let y = b.required("other")?.clone();
            let y = interp.read(y, span)?;
            let (p, q) = operands(interp, &x, &y, span)?;
            Ok(Val::Tensor(interp.emit(
                Op::Where,
                &[c, p, q],
                vec![],
                &b.span,
            )?))
        }

        // ---- along a dim
        ("torch" | "F" | "Tensor", "softmax" | "log_softmax") => {
            let b = bind(a, key, &["input", "dim", "_stacklevel", "dtype"])?;
            let Some(dim) = b.opt_int("dim")? else {
                return Err(FrontendError::unsupported(
                    format!(
                        "`{key}` without `dim` (implicit dim choice) is not supported; pass dim="
                    ),
                    b.span.clone(),
                ));
            };
            let x = tensor_arg(interp, &b, "input")?;
            let x = with_dtype(interp, &b, x)?;
            let op = if name == "softmax" {
                Op::Softmax
            } else {
                Op::LogSoftmax
            };
            Ok(Val::Tensor(interp.emit(
                op,
                &[x],
                vec![("dim", Attr::Int(dim))],
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "cumsum" | "cumprod") => {
            let b = bind(a, key, &["input", "dim", "dtype"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let x = with_dtype(interp, &b, x)?;
            let dim = b.req_int("dim")?;
            let op = if name == "cumsum" {
                Op::Cumsum
            } else {
                Op::Cumprod
            };
            Ok(Val::Tensor(interp.emit(
                op,
                &[x],
                vec![("dim", Attr::Int(dim))],
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "cummax" | "cummin") => {
            let b = bind(a, key, &["input", "dim"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let dim = b.req_int("dim")?;
            let op = if name == "cummax" {
                Op::Cummax
            } else {
                Op::Cummin
            };
            Ok(Val::Pair(Rc::new(PairVal {
                input: x,
                what: key.to_string(),
                values: Some((op, vec![("dim", Attr::Int(dim))])),
                indices: None,
            })))
        }

        // ---- reductions
        ("torch" | "Tensor", "sum" | "mean" | "nansum") => {
            let b = bind(a, key, &["input", "dim", "keepdim", "dtype"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let x = with_dtype(interp, &b, x)?;
            let op = if name == "mean" { Op::Mean } else { Op::Sum };
            if name == "nansum" {
                return Err(FrontendError::unsupported(
                    "nansum is not in drtc's op set",
                    span.clone(),
                ));
            }
            let attrs = vec![
                ("dim", dims_attr(&b, "dim")?),
                ("keepdim", Attr::Bool(b.bool("keepdim", false)?)),
            ];
            Ok(Val::Tensor(interp.emit(op, &[x], attrs, &b.span)?))
        }
        ("torch" | "Tensor", "prod") => {
            let b = bind(a, key, &["input", "dim", "keepdim", "dtype"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let x = with_dtype(interp, &b, x)?;
            let dim = match b.opt_int("dim")? {
                Some(d) => Attr::Ints(vec![d]),
                None => Attr::None,
            };
            let attrs = vec![
                ("dim", dim),
                ("keepdim", Attr::Bool(b.bool("keepdim", false)?)),
            ];
            Ok(Val::Tensor(interp.emit(Op::Prod, &[x], attrs, &b.span)?))
        }
        ("torch" | "Tensor", "amax" | "amin") => {
            let b = bind(a, key, &["input", "dim", "keepdim"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let op = if name == "amax" { Op::Max } else { Op::Min };
            let attrs = vec![
                ("dim", dims_attr(&b, "dim")?),
                ("keepdim", Attr::Bool(b.bool("keepdim", false)?)),
            ];
            Ok(Val::Tensor(interp.emit(op, &[x], attrs, &b.span)?))
        }
        ("torch" | "Tensor", "max" | "min") => {
            let b = bind(a, key, &["input", "dim", "keepdim", "other"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let (vop, iop, ewise) = if name == "max" {
                (Op::Max, Op::Argmax, Op::Maximum)
            } else {
                (Op::Min, Op::Argmin, Op::Minimum)
            };
            let second = match b.get("dim").cloned() {
                Some(v) => Some(interp.read(v, span)?),
                None => None,
            };
            match (second, b.opt("other").cloned()) {
                (Some(Val::Tensor(y)), None) | (None, Some(Val::Tensor(y))) => {
                    Ok(Val::Tensor(interp.emit(ewise, &[x, y], vec![], &b.span)?))
                }
                (Some(Val::Int(d)), None) => {
                    let keep = b.bool("keepdim", false)?;
                    Ok(Val::Pair(Rc::new(PairVal {
                        input: x,
                        what: format!("{key}(dim={d})"),
                        values: Some((
                            vop,
                            vec![("dim", Attr::Ints(vec![d])), ("keepdim", Attr::Bool(keep))],
                        )),
                        indices: Some((
                            iop,
                            vec![("dim", Attr::Int(d)), ("keepdim", Attr::Bool(keep))],
                        )),
                    })))
                }
                (None, None) => Ok(Val::Tensor(interp.emit(vop, &[x], vec![], &b.span)?)),
                (Some(v), _) | (None, Some(v)) => Err(FrontendError::lowering(
                    format!(
                        "`{key}`: second argument must be a dim (int) or a tensor, got {}",
                        v.type_name()
                    ),
                    b.span.clone(),
                )),
            }
        }
        ("torch" | "Tensor", "argmax" | "argmin") => {
            let b = bind(a, key, &["input", "dim", "keepdim"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let op = if name == "argmax" {
                Op::Argmax
            } else {
                Op::Argmin
            };
            let dim = b.opt_int("dim")?.map_or(Attr::None, Attr::Int);
            Ok(Val::Tensor(interp.emit(
                op,
                &[x],
                vec![
                    ("dim", dim),
                    ("keepdim", Attr::Bool(b.bool("keepdim", false)?)),
                ],
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "var" | "std") => {
            let b = bind(
                a,
                key,
                &["input", "dim", "unbiased", "keepdim", "correction"],
            )?;
            let x = tensor_arg(interp, &b, "input")?;
            let correction = match (b.opt("unbiased"), b.opt_float("correction")?) {
                (Some(_), Some(_)) => {
                    return Err(FrontendError::lowering(
                        "give `unbiased` or `correction`, not both",
                        b.span.clone(),
                    ))
                }
                (Some(_), None) => {
                    if b.bool("unbiased", true)? {
                        1.0
                    } else {
                        0.0
                    }
                }
                (None, Some(c)) => c,
                (None, None) => 1.0,
            };
            let op = if name == "var" { Op::Var } else { Op::Std };
            let attrs = vec![
                ("dim", dims_attr(&b, "dim")?),
                ("correction", Attr::Float(correction)),
                ("keepdim", Attr::Bool(b.bool("keepdim", false)?)),
            ];
            Ok(Val::Tensor(interp.emit(op, &[x], attrs, &b.span)?))
        }
        ("torch" | "Tensor", "norm") | ("torch.linalg", "vector_norm" | "norm") => {
            let pname = if ns == "torch.linalg" { "ord" } else { "p" };
            let b = bind(a, key, &["input", pname, "dim", "keepdim", "dtype"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let x = with_dtype(interp, &b, x)?;
            let p = match b.opt(pname) {
                None => 2.0,
                Some(Val::Str(s)) if &**s == "fro" => 2.0,
                Some(Val::Str(s)) => {
                    return Err(FrontendError::unsupported(
                        format!("the {s:?} norm is not in drtc's op set"),
                        b.span_of(pname),
                    ))
                }
                Some(v) => v.as_number().ok_or_else(|| {
                    FrontendError::lowering("norm order must be a number", b.span_of(pname))
                })?,
            };
            if ns == "torch.linalg"
                && name == "norm"
                && b.opt("dim").is_none()
                && interp.ty(x).rank() == 2
                && b.opt(pname).is_some()
            {
                return Err(FrontendError::unsupported(
                    "matrix norms of torch.linalg.norm are not supported",
                    span.clone(),
                ));
            }
            let attrs = vec![
                ("p", Attr::Float(p)),
                ("dim", dims_attr(&b, "dim")?),
                ("keepdim", Attr::Bool(b.bool("keepdim", false)?)),
            ];
            Ok(Val::Tensor(interp.emit(Op::Norm, &[x], attrs, &b.span)?))
        }
        ("F", "normalize") => {
            let b = bind(a, key, &["input", "p", "dim", "eps"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let p = b.float("p", 2.0)?;
            let dim = b.int("dim", 1)?;
            let eps = b.float("eps", 1e-12)?;
            let n = interp.emit(
                Op::Norm,
                &[x],
                vec![
                    ("p", Attr::Float(p)),
                    ("dim", Attr::Ints(vec![dim])),
                    ("keepdim", Attr::Bool(true)),
                ],
                &b.span,
            )?;
            let n = interp.emit(Op::Clamp, &[n], vec![("min", Attr::Float(eps))], &b.span)?;
            Ok(Val::Tensor(interp.emit(
                Op::Div,
                &[x, n],
                vec![],
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "logsumexp") => {
            let b = bind(a, key, &["input", "dim", "keepdim"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let dims = b
                .ints("dim")?
                .ok_or_else(|| FrontendError::lowering("logsumexp needs `dim`", b.span.clone()))?;
            Ok(Val::Tensor(interp.emit(
                Op::Logsumexp,
                &[x],
                vec![
                    ("dim", Attr::Ints(dims)),
                    ("keepdim", Attr::Bool(b.bool("keepdim", false)?)),
                ],
                &b.span,
            )?))
        }

        // ---- losses
        ("F", "mse_loss" | "l1_loss_unused") => {
            let b = bind(
                a,
                key,
                &["input", "target", "size_average", "reduce", "reduction"],
            )?;
            loss2(interp, &b, Op::MseLoss, vec![])
        }
        ("F", "smooth_l1_loss") => {
            let b = bind(
                a,
                key,
                &[
                    "input",
                    "target",
                    "size_average",
                    "reduce",
                    "reduction",
                    "beta",
                ],
            )?;
            let beta = b.float("beta", 1.0)?;
            loss2(
                interp,
                &b,
                Op::SmoothL1Loss,
                vec![("beta", Attr::Float(beta))],
            )
        }
        ("F", "huber_loss") => {
            let b = bind(a, key, &["input", "target", "reduction", "delta"])?;
            let delta = b.float("delta", 1.0)?;
            let l = loss2(
                interp,
                &b,
                Op::SmoothL1Loss,
                vec![("beta", Attr::Float(delta))],
            )?;
            if delta == 1.0 {
                return Ok(l);
            }
            interp.binary(BinOp::Mul, l, Val::Float(delta), span)
        }
        ("F", "kl_div") => {
            let b = bind(
                a,
                key,
                &[
                    "input",
                    "target",
                    "size_average",
                    "reduce",
                    "reduction",
                    "log_target",
                ],
            )?;
            let lt = b.bool("log_target", false)?;
            loss2(interp, &b, Op::KlDiv, vec![("log_target", Attr::Bool(lt))])
        }
        ("F", "cross_entropy") => {
            let b = bind(
                a,
                key,
                &[
                    "input",
                    "target",
                    "weight",
                    "size_average",
                    "ignore_index",
                    "reduce",
                    "reduction",
                    "label_smoothing",
                ],
            )?;
            if b.opt("weight").is_some() {
                return Err(FrontendError::unsupported(
                    "cross_entropy with class weights is not in drtc's op set",
                    b.span_of("weight"),
                ));
            }
            if b.float("label_smoothing", 0.0)? != 0.0 {
                return Err(FrontendError::unsupported(
                    "cross_entropy with label_smoothing is not in drtc's op set",
                    b.span_of("label_smoothing"),
                ));
            }
            if b.int("ignore_index", -100)? != -100 {
                return Err(FrontendError::unsupported(
                    "cross_entropy with a custom ignore_index is not in drtc's op set",
                    b.span_of("ignore_index"),
                ));
            }
            loss2(interp, &b, Op::CrossEntropy, vec![])
        }
        ("F", "triplet_margin_loss") => {
            let b = bind(
                a,
                key,
                &[
                    "anchor",
                    "positive",
                    "negative",
                    "margin",
                    "p",
                    "eps",
                    "swap",
                    "size_average",
                    "reduce",
                    "reduction",
                ],
            )?;
            legacy_reduction(&b)?;
            let x = tensor_arg(interp, &b, "anchor")?;
            let y = tensor_arg(interp, &b, "positive")?;
            let z = tensor_arg(interp, &b, "negative")?;
            let attrs = vec![
                ("margin", Attr::Float(b.float("margin", 1.0)?)),
                ("p", Attr::Float(b.float("p", 2.0)?)),
                ("eps", Attr::Float(b.float("eps", 1e-6)?)),
                ("swap", Attr::Bool(b.bool("swap", false)?)),
                ("reduction", Attr::Str(b.str("reduction", "mean")?)),
            ];
            Ok(Val::Tensor(interp.emit(
                Op::TripletMarginLoss,
                &[x, y, z],
                attrs,
                &b.span,
            )?))
        }

        // ---- contractions
        ("torch" | "Tensor", "matmul" | "mm") => {
            let b = bind(a, key, &["input", "other"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let y = tensor_arg(interp, &b, "other")?;
            if name == "mm" && (interp.ty(x).rank() != 2 || interp.ty(y).rank() != 2) {
                return Err(FrontendError::lowering(
                    "mm needs two matrices",
                    b.span.clone(),
                ));
            }
            Ok(Val::Tensor(interp.emit(
                Op::Matmul,
                &[x, y],
                vec![],
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "bmm") => {
            let b = bind(a, key, &["input", "mat2"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let y = tensor_arg(interp, &b, "mat2")?;
            Ok(Val::Tensor(interp.emit(
                Op::Bmm,
                &[x, y],
                vec![],
                &b.span,
            )?))
        }
        ("F", "linear") => {
            let b = bind(a, key, &["input", "weight", "bias"])?;
            let mut ins = vec![
                tensor_arg(interp, &b, "input")?,
                tensor_arg(interp, &b, "weight")?,
            ];
            if let Some(bias) = opt_tensor_arg(interp, &b, "bias")? {
                ins.push(bias);
            }
            Ok(Val::Tensor(interp.emit(
                Op::Linear,
                &ins,
                vec![],
                &b.span,
            )?))
        }
        ("torch", "einsum") => {
            let b = bind(a, key, &["equation", "*operands"])?;
            let eq = match b.required("equation")? {
                Val::Str(s) => s.to_string(),
                v => {
                    return Err(FrontendError::lowering(
                        format!("einsum's equation must be a string, got {}", v.type_name()),
                        b.span_of("equation"),
                    ))
                }
            };
            let mut ops = b.required("operands")?.items().unwrap_or(&[]).to_vec();
            if ops.len() == 1 && ops[0].items().is_some() {
                ops = ops[0].items().unwrap_or(&[]).to_vec();
            }
            let mut ins = vec![];
            for o in &ops {
                ins.push(interp.tensor(o, &b.span_of("operands"))?);
            }
            if ins.is_empty() {
                return Err(FrontendError::lowering(
                    "einsum needs operands",
                    b.span.clone(),
                ));
            }
            Ok(Val::Tensor(interp.emit(
                Op::Einsum,
                &ins,
                vec![("equation", Attr::Str(eq))],
                &b.span,
            )?))
        }
        ("F", "scaled_dot_product_attention") => {
            let b = bind(
                a,
                key,
                &[
                    "query",
                    "key",
                    "value",
                    "attn_mask",
                    "dropout_p",
                    "is_causal",
                    "scale",
                    "enable_gqa",
                ],
            )?;
            let mut ins = vec![
                tensor_arg(interp, &b, "query")?,
                tensor_arg(interp, &b, "key")?,
                tensor_arg(interp, &b, "value")?,
            ];
            if let Some(m) = opt_tensor_arg(interp, &b, "attn_mask")? {
                ins.push(m);
            }
            let p = b.float("dropout_p", 0.0)?;
            if p > 0.0 && interp.phase == Phase::Forward {
                return Err(random_error(&format!("{key}(dropout_p={p})"), span));
            }
            if b.bool("enable_gqa", false)? {
                return Err(FrontendError::unsupported(
                    "grouped-query attention (enable_gqa) is not supported",
                    b.span_of("enable_gqa"),
                ));
            }
            let scale = b.opt_float("scale")?.map_or(Attr::None, Attr::Float);
            let attrs = vec![
                ("dropout_p", Attr::Float(p)),
                ("is_causal", Attr::Bool(b.bool("is_causal", false)?)),
                ("scale", scale),
            ];
            Ok(Val::Tensor(interp.emit(
                Op::Attention,
                &ins,
                attrs,
                &b.span,
            )?))
        }

        // ---- convolution, pooling, normalization
        ("F", "conv1d" | "conv2d" | "conv3d") => {
            let n = spatial(name);
            let b = bind(
                a,
                key,
                &[
                    "input", "weight", "bias", "stride", "padding", "dilation", "groups",
                ],
            )?;
            let op = [Op::Conv1d, Op::Conv2d, Op::Conv3d][n - 1];
            conv(interp, &b, op, n, false)
        }
        ("F", "conv_transpose1d" | "conv_transpose2d" | "conv_transpose3d") => {
            let n = spatial(name);
            let b = bind(
                a,
                key,
                &[
                    "input",
                    "weight",
                    "bias",
                    "stride",
                    "padding",
                    "output_padding",
                    "groups",
                    "dilation",
                ],
            )?;
            let op = [
                Op::ConvTranspose1d,
                Op::ConvTranspose2d,
                Op::ConvTranspose3d,
            ][n - 1];
            conv(interp, &b, op, n, true)
        }
        ("F", "max_pool1d" | "max_pool2d" | "max_pool3d") => {
            let n = spatial(name);
            let b = bind(
                a,
                key,
                &[
                    "input",
                    "kernel_size",
                    "stride",
                    "padding",
                    "dilation",
                    "ceil_mode",
                    "return_indices",
                ],
            )?;
            if b.bool("return_indices", false)? {
                return Err(FrontendError::unsupported(
                    "max pooling with return_indices=True is not in drtc's op set",
                    b.span_of("return_indices"),
                ));
            }
            let x = tensor_arg(interp, &b, "input")?;
            let attrs = vec![
                ("kernel_size", Attr::Ints(b.req_ints_n("kernel_size", n)?)),
                ("stride", pool_stride(&b, n)?),
                ("padding", Attr::Ints(b.ints_n("padding", n, 0)?)),
                ("dilation", Attr::Ints(b.ints_n("dilation", n, 1)?)),
                ("ceil_mode", Attr::Bool(b.bool("ceil_mode", false)?)),
            ];
            let op = [Op::MaxPool1d, Op::MaxPool2d, Op::MaxPool3d][n - 1];
            Ok(Val::Tensor(interp.emit(op, &[x], attrs, &b.span)?))
        }
        ("F", "avg_pool1d" | "avg_pool2d" | "avg_pool3d") => {
            let n = spatial(name);
            let b = bind(
                a,
                key,
                &[
                    "input",
                    "kernel_size",
                    "stride",
                    "padding",
                    "ceil_mode",
                    "count_include_pad",
                    "divisor_override",
                ],
            )?;
            let x = tensor_arg(interp, &b, "input")?;
            let mut attrs = vec![
                ("kernel_size", Attr::Ints(b.req_ints_n("kernel_size", n)?)),
                ("stride", pool_stride(&b, n)?),
                ("padding", Attr::Ints(b.ints_n("padding", n, 0)?)),
                ("ceil_mode", Attr::Bool(b.bool("ceil_mode", false)?)),
                (
                    "count_include_pad",
                    Attr::Bool(b.bool("count_include_pad", true)?),
                ),
            ];
            match (n, b.opt_int("divisor_override")?) {
                (1, Some(_)) => {
                    return Err(FrontendError::lowering(
                        "avg_pool1d has no divisor_override",
                        b.span_of("divisor_override"),
                    ))
                }
                (1, None) => {}
                (_, d) => attrs.push(("divisor_override", d.map_or(Attr::None, Attr::Int))),
            }
            let op = [Op::AvgPool1d, Op::AvgPool2d, Op::AvgPool3d][n - 1];
            Ok(Val::Tensor(interp.emit(op, &[x], attrs, &b.span)?))
        }
        ("F", "adaptive_avg_pool1d" | "adaptive_avg_pool2d" | "adaptive_avg_pool3d") => {
            let n = spatial(name);
            let b = bind(a, key, &["input", "output_size"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let shape = interp.ty(x).shape.clone();
            // `None` entries keep the input's size
            let out = match b.required("output_size")? {
                Val::Tuple(items) | Val::List(items) if items.len() == n => items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| match v {
                        Val::Int(k) => Ok(*k),
                        Val::None if shape.len() >= n => Ok(shape[shape.len() - n + i]),
                        _ => Err(FrontendError::lowering(
                            "output_size entries must be ints or None",
                            b.span_of("output_size"),
                        )),
                    })
                    .collect::<R<Vec<i64>>>()?,
                _ => b.req_ints_n("output_size", n)?,
            };
            let op = [
                Op::AdaptiveAvgPool1d,
                Op::AdaptiveAvgPool2d,
                Op::AdaptiveAvgPool3d,
            ][n - 1];
            Ok(Val::Tensor(interp.emit(
                op,
                &[x],
                vec![("output_size", Attr::Ints(out))],
                &b.span,
            )?))
        }
        ("F", "batch_norm") => {
            let b = bind(
                a,
                key,
                &[
                    "input",
                    "running_mean",
                    "running_var",
                    "weight",
                    "bias",
                    "training",
                    "momentum",
                    "eps",
                ],
            )?;
            if !b.bool("training", false)? {
                return Err(FrontendError::unsupported(
                    "batch_norm in eval mode (training=False) normalizes with running statistics, which drtc's op set does not model; pass training=True",
                    b.span_of("training"),
                ));
            }
            let x = tensor_arg(interp, &b, "input")?;
            let ins = affine_inputs(interp, &b, x)?;
            let attrs = vec![
                ("training", Attr::Bool(true)),
                ("momentum", Attr::Float(b.float("momentum", 0.1)?)),
                ("eps", Attr::Float(b.float("eps", 1e-5)?)),
            ];
            Ok(Val::Tensor(interp.emit(
                Op::BatchNorm,
                &ins,
                attrs,
                &b.span,
            )?))
        }
        ("F", "instance_norm") => {
            let b = bind(
                a,
                key,
                &[
                    "input",
                    "running_mean",
                    "running_var",
                    "weight",
                    "bias",
                    "use_input_stats",
                    "momentum",
                    "eps",
                ],
            )?;
            if !b.bool("use_input_stats", true)? {
                return Err(FrontendError::unsupported(
                    "instance_norm with use_input_stats=False is not in drtc's op set",
                    b.span_of("use_input_stats"),
                ));
            }
            let x = tensor_arg(interp, &b, "input")?;
            let ins = affine_inputs(interp, &b, x)?;
            Ok(Val::Tensor(interp.emit(
                Op::InstanceNorm,
                &ins,
                vec![("eps", Attr::Float(b.float("eps", 1e-5)?))],
                &b.span,
            )?))
        }
        ("F", "layer_norm") => {
            let b = bind(
                a,
                key,
                &["input", "normalized_shape", "weight", "bias", "eps"],
            )?;
            let x = tensor_arg(interp, &b, "input")?;
            let ns = b.as_ints("normalized_shape", b.required("normalized_shape")?)?;
            let ins = affine_inputs(interp, &b, x)?;
            Ok(Val::Tensor(interp.emit(
                Op::LayerNorm,
                &ins,
                vec![
                    ("normalized_shape", Attr::Ints(ns)),
                    ("eps", Attr::Float(b.float("eps", 1e-5)?)),
                ],
                &b.span,
            )?))
        }
        ("F", "group_norm") => {
            let b = bind(a, key, &["input", "num_groups", "weight", "bias", "eps"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let g = b.req_int("num_groups")?;
            let ins = affine_inputs(interp, &b, x)?;
            Ok(Val::Tensor(interp.emit(
                Op::GroupNorm,
                &ins,
                vec![
                    ("num_groups", Attr::Int(g)),
                    ("eps", Attr::Float(b.float("eps", 1e-5)?)),
                ],
                &b.span,
            )?))
        }
        ("F", "rms_norm") => {
            let b = bind(a, key, &["input", "normalized_shape", "weight", "eps"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let ns = b.as_ints("normalized_shape", b.required("normalized_shape")?)?;
            let mut ins = vec![x];
            if let Some(w) = opt_tensor_arg(interp, &b, "weight")? {
                ins.push(w);
            }
            let eps = b.opt_float("eps")?.map_or(Attr::None, Attr::Float);
            Ok(Val::Tensor(interp.emit(
                Op::RmsNorm,
                &ins,
                vec![("normalized_shape", Attr::Ints(ns)), ("eps", eps)],
                &b.span,
            )?))
        }

        // ---- layout
        ("torch" | "Tensor", "transpose" | "swapaxes" | "swapdims") => {
            let b = bind(a, key, &["input", "dim0", "dim1"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let (d0, d1) = (b.req_int("dim0")?, b.req_int("dim1")?);
            Ok(Val::Tensor(interp.emit(
                Op::Transpose,
                &[x],
                vec![("dim0", Attr::Int(d0)), ("dim1", Attr::Int(d1))],
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "t") => {
            let b = bind(a, key, &["input"])?;
            let x = tensor_arg(interp, &b, "input")?;
            if interp.ty(x).rank() > 2 {
                return Err(FrontendError::lowering(
                    "t() expects a tensor with <= 2 dimensions",
                    b.span.clone(),
                ));
            }
            if interp.ty(x).rank() < 2 {
                return Ok(Val::Tensor(x));
            }
            Ok(Val::Tensor(interp.emit(
                Op::Transpose,
                &[x],
                vec![("dim0", Attr::Int(0)), ("dim1", Attr::Int(1))],
                &b.span,
            )?))
        }
        ("torch", "permute") | ("Tensor", "permute") => {
            let b = bind(a, key, &["input", "*dims"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let dims = size_arg(&b, "dims")?;
            Ok(Val::Tensor(interp.emit(
                Op::Permute,
                &[x],
                vec![("dims", Attr::Ints(dims))],
                &b.span,
            )?))
        }
        ("Tensor", "view" | "reshape") | ("torch", "reshape") => {
            let b = bind(a, key, &["input", "*shape"])?;
            let x = tensor_arg(interp, &b, "input")?;
            if let Some(Val::DType(_)) = b.required("shape")?.items().and_then(|i| i.first()) {
                return Err(FrontendError::unsupported(
                    "view(dtype) reinterprets bits; not supported",
                    b.span.clone(),
                ));
            }
            let shape = size_arg(&b, "shape")?;
            Ok(Val::Tensor(interp.emit(
                Op::Reshape,
                &[x],
                vec![("shape", Attr::Ints(shape))],
                &b.span,
            )?))
        }
        ("Tensor", "view_as" | "reshape_as" | "expand_as") => {
            let b = bind(a, key, &["input", "other"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let o = tensor_arg(interp, &b, "other")?;
            let shape = interp.ty(o).shape.clone();
            let op = if name == "expand_as" {
                Op::Expand
            } else {
                Op::Reshape
            };
            Ok(Val::Tensor(interp.emit(
                op,
                &[x],
                vec![("shape", Attr::Ints(shape))],
                &b.span,
            )?))
        }
        ("Tensor", "expand") | ("torch", "broadcast_to") => {
            let b = bind(a, key, &["input", "*size"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let shape = size_arg(&b, "size")?;
            Ok(Val::Tensor(interp.emit(
                Op::Expand,
                &[x],
                vec![("shape", Attr::Ints(shape))],
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "flatten") => {
            let b = bind(a, key, &["input", "start_dim", "end_dim"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let attrs = vec![
                ("start_dim", Attr::Int(b.int("start_dim", 0)?)),
                ("end_dim", Attr::Int(b.int("end_dim", -1)?)),
            ];
            Ok(Val::Tensor(interp.emit(
                Op::Flatten,
                &[x],
                attrs,
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "squeeze") => {
            let b = bind(a, key, &["input", "dim"])?;
            let x = tensor_arg(interp, &b, "input")?;
            Ok(Val::Tensor(interp.emit(
                Op::Squeeze,
                &[x],
                vec![("dim", dims_attr(&b, "dim")?)],
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "unsqueeze") => {
            let b = bind(a, key, &["input", "dim"])?;
            let x = tensor_arg(interp, &b, "input")?;
            Ok(Val::Tensor(interp.emit(
                Op::Unsqueeze,
                &[x],
                vec![("dim", Attr::Int(b.req_int("dim")?))],
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "narrow") => {
            let b = bind(a, key, &["input", "dim", "start", "length"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let attrs = vec![
                ("dim", Attr::Int(b.req_int("dim")?)),
                ("start", Attr::Int(b.req_int("start")?)),
                ("length", Attr::Int(b.req_int("length")?)),
            ];
            Ok(Val::Tensor(interp.emit(
                Op::Narrow,
                &[x],
                attrs,
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "select") => {
            let b = bind(a, key, &["input", "dim", "index"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let attrs = vec![
                ("dim", Attr::Int(b.req_int("dim")?)),
                ("index", Attr::Int(b.req_int("index")?)),
            ];
            Ok(Val::Tensor(interp.emit(
                Op::Select,
                &[x],
                attrs,
                &b.span,
            )?))
        }
        ("torch", "flip") | ("Tensor", "flip") => {
            let b = bind(a, key, &["input", "*dims"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let dims = size_arg(&b, "dims")?;
            Ok(Val::Tensor(interp.emit(
                Op::Flip,
                &[x],
                vec![("dims", Attr::Ints(dims))],
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "diag" | "triu" | "tril") => {
            let b = bind(a, key, &["input", "diagonal"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let op = match name {
                "diag" => Op::Diag,
                "triu" => Op::Triu,
                _ => Op::Tril,
            };
            Ok(Val::Tensor(interp.emit(
                op,
                &[x],
                vec![("diagonal", Attr::Int(b.int("diagonal", 0)?))],
                &b.span,
            )?))
        }
        ("torch", "cat" | "concat" | "concatenate" | "stack") => {
            let b = bind(a, key, &["tensors", "dim"])?;
            let list = b.required("tensors")?.clone();
            let items = list
                .items()
                .ok_or_else(|| {
                    FrontendError::lowering(
                        format!("`{key}` needs a sequence of tensors"),
                        b.span_of("tensors"),
                    )
                })?
                .to_vec();
            let mut ins = vec![];
            for it in &items {
                ins.push(interp.tensor(it, &b.span_of("tensors"))?);
            }
            if ins.is_empty() {
                return Err(FrontendError::lowering(
                    format!("`{key}` needs a non-empty list of tensors"),
                    b.span.clone(),
                ));
            }
            let op = if name == "stack" { Op::Stack } else { Op::Cat };
            Ok(Val::Tensor(interp.emit(
                op,
                &ins,
                vec![("dim", Attr::Int(b.int("dim", 0)?))],
                &b.span,
            )?))
        }
        ("Tensor", "contiguous" | "clone" | "detach" | "cpu" | "cuda" | "requires_grad_")
        | ("torch", "clone" | "detach") => {
            let x = a.pos.first().map(|(v, _)| v.clone()).unwrap_or(Val::None);
            Ok(Val::Tensor(interp.tensor(&x, span)?))
        }
        ("Tensor", "float" | "double" | "half" | "bfloat16" | "long" | "int" | "bool") => {
            let b = bind(a, key, &["input", "memory_format"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let d = torch_dtype(name).unwrap_or(DType::F32);
            Ok(Val::Tensor(cast(interp, x, d, span)?))
        }
        ("Tensor", "to" | "type") => {
            let b = bind(
                a,
                key,
                &["input", "dtype", "non_blocking", "copy", "device"],
            )?;
            let x = tensor_arg(interp, &b, "input")?;
            let target = match b.opt("dtype").cloned() {
                Some(Val::DType(d)) => Some(d),
                Some(Val::Tensor(o)) => Some(interp.ty(o).dtype),
                Some(Val::Device | Val::Str(_)) | None => None,
                Some(v) => {
                    return Err(FrontendError::unsupported(
                        format!("`.to({})` is not supported", v.type_name()),
                        span.clone(),
                    ))
                }
            };
            Ok(Val::Tensor(match target {
                Some(d) => cast(interp, x, d, span)?,
                None => x,
            }))
        }
        ("Tensor", "type_as") => {
            let b = bind(a, key, &["input", "other"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let o = tensor_arg(interp, &b, "other")?;
            let d = interp.ty(o).dtype;
            Ok(Val::Tensor(cast(interp, x, d, span)?))
        }
        ("Tensor", "size") => {
            let b = bind(a, key, &["input", "dim"])?;
            let x = tensor_arg(interp, &b, "input")?;
            let shape = interp.ty(x).shape.clone();
            match b.opt_int("dim")? {
                None => Ok(Val::tuple(shape.into_iter().map(Val::Int).collect())),
                Some(d) => {
                    let k = drtc_ir::op::normalize_dim(d, shape.len())
                        .map_err(|m| FrontendError::lowering(m, b.span_of("dim")))?;
                    shape.get(k).map(|&s| Val::Int(s)).ok_or_else(|| {
                        FrontendError::lowering("size() of a 0-d tensor", b.span.clone())
                    })
                }
            }
        }
        ("Tensor", "dim" | "ndimension") => {
            let b = bind(a, key, &["input"])?;
            let x = tensor_arg(interp, &b, "input")?;
            Ok(Val::Int(interp.ty(x).rank() as i64))
        }
        ("Tensor", "numel" | "nelement") | ("torch", "numel") => {
            let b = bind(a, key, &["input"])?;
            let x = tensor_arg(interp, &b, "input")?;
            Ok(Val::Int(interp.ty(x).numel() as i64))
        }

        // ---- creation
        ("torch", "rand" | "randn" | "zeros" | "ones" | "empty") => {
            let b = bind(
                a,
                key,
                &[
                    "*size",
                    "dtype",
                    "device",
                    "requires_grad",
                    "layout",
                    "generator",
                    "pin_memory",
                ],
            )?;
            let shape = size_arg(&b, "size")?;
            let dtype = dtype_arg(&b, "dtype")?.unwrap_or(DType::F32);
            let fill = match name {
                "zeros" => Some(0.0),
                "ones" => Some(1.0),
                _ => None,
            };
            if matches!(name, "rand" | "randn") && !dtype.is_float() {
                return Err(FrontendError::lowering(
                    format!("`{key}` needs a floating-point dtype"),
                    b.span_of("dtype"),
                ));
            }
            create(interp, key, TensorType::new(dtype, shape), fill, span)
        }
        ("torch", "full") => {
            let b = bind(
                a,
                key,
                &["size", "fill_value", "dtype", "device", "requires_grad"],
            )?;
            let shape = size_arg(&b, "size")?;
            let v = b.required("fill_value")?.clone();
            let value = v.as_number().ok_or_else(|| {
                FrontendError::lowering("fill_value must be a number", b.span_of("fill_value"))
            })?;
            let dtype = dtype_arg(&b, "dtype")?.unwrap_or(match v {
                Val::Float(_) => DType::F32,
                Val::Bool(_) => DType::Bool,
                _ => DType::I64,
            });
            create(
                interp,
                key,
                TensorType::new(dtype, shape),
                Some(value),
                span,
            )
        }
        ("torch", "randint") => {
            let b = bind(
                a,
                key,
                &[
                    "low",
                    "high",
                    "size",
                    "dtype",
                    "device",
                    "generator",
                    "requires_grad",
                ],
            )?;
            // randint(high, size) or randint(low, high, size)
            let size_name = if b.get("size").is_some() {
                "size"
            } else {
                "high"
            };
            let shape = size_arg(&b, size_name)?;
            let dtype = dtype_arg(&b, "dtype")?.unwrap_or(DType::I64);
            create(interp, key, TensorType::new(dtype, shape), None, span)
        }
        (
            "torch",
            "zeros_like" | "ones_like" | "empty_like" | "full_like" | "rand_like" | "randn_like",
        ) => {
            let params: &[&'static str] = if name == "full_like" {
                &[
                    "input",
                    "fill_value",
                    "dtype",
                    "device",
                    "requires_grad",
                    "memory_format",
                    "layout",
                ]
            } else {
                &[
                    "input",
                    "dtype",
                    "device",
                    "requires_grad",
                    "memory_format",
                    "layout",
                ]
            };
            let b = bind(a, key, params)?;
            let x = tensor_arg(interp, &b, "input")?;
            let mut ty = interp.ty(x).clone();
            if let Some(d) = dtype_arg(&b, "dtype")? {
                ty.dtype = d;
            }
            let fill = match name {
                "zeros_like" => Some(0.0),
                "ones_like" => Some(1.0),
                "full_like" => Some(b.float("fill_value", 0.0)?),
                _ => None,
            };
            create(interp, key, ty, fill, span)
        }
        ("torch", "tensor" | "as_tensor") => {
            let b = bind(a, key, &["data", "dtype", "device", "requires_grad"])?;
            let data = b.required("data")?.clone();
            if let Val::Tensor(t) = data {
                return Ok(Val::Tensor(t));
            }
            let (shape, d, fill) = literal_type(&data, &b.span_of("data"))?;
            let dtype = dtype_arg(&b, "dtype")?.unwrap_or(d);
            match (interp.phase, fill) {
                (Phase::Forward, None) => Err(FrontendError::unsupported(
                    "a torch.tensor constant with differing values is not supported (only uniform constants become `full`)",
                    span.clone(),
                )),
                _ => create(interp, key, TensorType::new(dtype, shape), fill.or(Some(0.0)), span),
            }
        }
        (
            "torch",
            "randperm" | "bernoulli" | "normal" | "multinomial" | "poisson" | "randint_like"
            | "manual_seed",
        ) => {
            if interp.phase == Phase::Forward {
                return Err(random_error(key, span));
            }
            Err(FrontendError::unsupported(
                format!("`{key}` is not supported"),
                span.clone(),
            ))
        }
        _ => Err(FrontendError::unsupported(
            format!(
                "`{}` is not in drtc's spelling table (no IR op for it)",
                display_key(key)
            ),
            span.clone(),
        )),
    }
}

fn display_key(key: &str) -> String {
    match key.strip_prefix("Tensor.") {
        Some(m) => format!("Tensor.{m}()"),
        None => key.to_string(),
    }
}

fn spatial(name: &str) -> usize {
    match name.chars().rev().nth(1) {
        Some('1') => 1,
        Some('3') => 3,
        _ => 2,
    }
}

fn pool_stride(b: &Bound, n: usize) -> R<Attr> {
    match b.opt("stride") {
        None => Ok(Attr::None),
        Some(v) if v.items().is_some_and(|i| i.is_empty()) => Ok(Attr::None),
        Some(v) => Ok(Attr::Ints(b.as_ints_n("stride", v, n)?)),
    }
}

/// The legacy `size_average` / `reduce` arguments of losses: only their defaults.
fn legacy_reduction(b: &Bound) -> R<()> {
    for n in ["size_average", "reduce"] {
        if b.opt(n).is_some() {
            return Err(FrontendError::unsupported(
                format!("the deprecated `{n}` argument is not supported; use reduction="),
                b.span_of(n),
            ));
        }
    }
    Ok(())
}

fn loss2(interp: &mut Interp, b: &Bound, op: Op, mut attrs: Vec<(&'static str, Attr)>) -> R<Val> {
    legacy_reduction(b)?;
    let x = tensor_arg(interp, b, "input")?;
    let y = tensor_arg(interp, b, "target")?;
    attrs.push(("reduction", Attr::Str(b.str("reduction", "mean")?)));
    Ok(Val::Tensor(interp.emit(op, &[x, y], attrs, &b.span)?))
}

/// `[x, weight?, bias?]` for normalizations; a bias without a weight is not expressible.
fn affine_inputs(interp: &mut Interp, b: &Bound, x: ValueId) -> R<Vec<ValueId>> {
    let w = opt_tensor_arg(interp, b, "weight")?;
    let bias = opt_tensor_arg(interp, b, "bias")?;
    match (w, bias) {
        (None, Some(_)) => Err(FrontendError::unsupported(
            "a normalization with a bias but no weight is not in drtc's op set",
            b.span_of("bias"),
        )),
        (w, bias) => Ok(std::iter::once(x).chain(w).chain(bias).collect()),
    }
}

fn conv(interp: &mut Interp, b: &Bound, op: Op, n: usize, transposed: bool) -> R<Val> {
    let x = tensor_arg(interp, b, "input")?;
    let w = tensor_arg(interp, b, "weight")?;
    let mut ins = vec![x, w];
    if let Some(bias) = opt_tensor_arg(interp, b, "bias")? {
        ins.push(bias);
    }
    let padding = match b.opt("padding") {
        Some(Val::Str(s)) if &**s == "valid" => vec![0; n],
        Some(Val::Str(s)) => {
            return Err(FrontendError::unsupported(
                format!("padding={s:?} is not supported; give the padding as numbers"),
                b.span_of("padding"),
            ))
        }
        _ => b.ints_n("padding", n, 0)?,
    };
    let mut attrs = vec![
        ("stride", Attr::Ints(b.ints_n("stride", n, 1)?)),
        ("padding", Attr::Ints(padding)),
    ];
    if transposed {
        attrs.push((
            "output_padding",
            Attr::Ints(b.ints_n("output_padding", n, 0)?),
        ));
    }
    attrs.push(("dilation", Attr::Ints(b.ints_n("dilation", n, 1)?)));
    attrs.push(("groups", Attr::Int(b.int("groups", 1)?)));
    Ok(Val::Tensor(interp.emit(op, &ins, attrs, &b.span)?))
}
