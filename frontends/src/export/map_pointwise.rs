//! ATen pointwise ops, identities (clone, alias, dtype-only `_to_copy`, `copy`), creation and
//! dropout as IR ops (see `aten.rs`).

use super::args::{
    binary, dtype_arg, full, one, op1, operand, operand_scalar, unary, Arg, Call, Mapped, Scalar,
};
use drtc_ir::{Attr, DType, GraphBuilder, Op};

/// The IR form of `aten.<name>.<overload>` if it is one of this file's targets.
pub(super) fn map(b: &mut GraphBuilder, name: &str, overload: &str, c: &Call) -> Mapped {
    use Op as O;
    match (name, overload) {
        // ---- identities (values, not storage)
        ("clone" | "alias" | "contiguous" | "detach" | "lift_fresh_copy", _) => {
            Some(vec![Some(c.tensor(0, "self")?)])
        }
        ("_to_copy" | "to", _) => {
            let x = c.tensor(0, "self")?;
            let only_dtype = c.kwargs.keys().all(|k| {
                matches!(
                    k.as_str(),
                    "dtype"
                        | "layout"
                        | "device"
                        | "memory_format"
                        | "non_blocking"
                        | "copy"
                        | "pin_memory"
                )
            }) && c.args.len() == 1;
            if !only_dtype {
                return None;
            }
            match dtype_arg(c, 99, "dtype")? {
                Some(d) if d != b.ty(x).dtype => {
                    one(op1(b, O::Cast, &[x], vec![("dtype", Attr::DType(d))]))
                }
                _ => Some(vec![Some(x)]),
            }
        }
        // `copy(self, src)`: src cast to self's dtype and broadcast to its shape (the
        // functional form of `self.copy_(src)` and of an assignment to a buffer)
        ("copy", "default") => {
            let x = c.tensor(0, "self")?;
            let src = c.tensor(1, "src")?;
            let (want, have) = (b.ty(x).clone(), b.ty(src).clone());
            let v = if have.dtype != want.dtype {
                op1(b, O::Cast, &[src], vec![("dtype", Attr::DType(want.dtype))])?
            } else {
                src
            };
            if have.shape == want.shape {
                return Some(vec![Some(v)]);
            }
            one(op1(
                b,
                O::Expand,
                &[v],
                vec![("shape", Attr::Ints(want.shape))],
            ))
        }
        // ---- pointwise unary
        ("relu", _) => unary(b, c, O::Relu),
        ("sigmoid", _) => unary(b, c, O::Sigmoid),
        ("tanh", _) => unary(b, c, O::Tanh),
        ("exp", _) => unary(b, c, O::Exp),
        ("exp2", _) => unary(b, c, O::Exp2),
        ("log", _) => unary(b, c, O::Log),
        ("sqrt", _) => unary(b, c, O::Sqrt),
        ("rsqrt", _) => unary(b, c, O::Rsqrt),
        ("neg", _) => unary(b, c, O::Neg),
        ("abs", _) => unary(b, c, O::Abs),
        ("erf", _) => unary(b, c, O::Erf),
        ("reciprocal", _) => unary(b, c, O::Reciprocal),
        ("sin", _) => unary(b, c, O::Sin),
        ("cos", _) => unary(b, c, O::Cos),
        ("sign", _) => unary(b, c, O::Sign),
        ("silu", _) => unary(b, c, O::Silu),
        ("mish", _) => unary(b, c, O::Mish),
        ("selu", _) => unary(b, c, O::Selu),
        ("hardswish", _) => unary(b, c, O::Hardswish),
        ("hardsigmoid", _) => unary(b, c, O::Hardsigmoid),
        ("log_sigmoid", "default") => unary(b, c, O::Logsigmoid),
        ("gelu", "default") => {
            let x = c.tensor(0, "self")?;
            let approx = match c.get(1, "approximate") {
                None => "none".to_string(),
                Some(Arg::Str(s)) => s.clone(),
                Some(_) => return None,
            };
            one(op1(
                b,
                O::Gelu,
                &[x],
                vec![("approximate", Attr::Str(approx))],
            ))
        }
        ("leaky_relu", "default") => {
            let x = c.tensor(0, "self")?;
            let s = c.float_or(1, "negative_slope", 0.01)?;
            one(op1(
                b,
                O::LeakyRelu,
                &[x],
                vec![("negative_slope", Attr::Float(s))],
            ))
        }
        ("elu", "default") => {
            let x = c.tensor(0, "self")?;
            let alpha = c.float_or(1, "alpha", 1.0)?;
            if c.float_or(2, "scale", 1.0)? != 1.0 || c.float_or(3, "input_scale", 1.0)? != 1.0 {
                return None;
            }
            one(op1(b, O::Elu, &[x], vec![("alpha", Attr::Float(alpha))]))
        }
        ("hardtanh", "default") => {
            let x = c.tensor(0, "self")?;
            let lo = c.float_or(1, "min_val", -1.0)?;
            let hi = c.float_or(2, "max_val", 1.0)?;
            one(op1(
                b,
                O::Hardtanh,
                &[x],
                vec![("min_val", Attr::Float(lo)), ("max_val", Attr::Float(hi))],
            ))
        }
        ("softplus", "default") => {
            let x = c.tensor(0, "self")?;
            let beta = c.float_or(1, "beta", 1.0)?;
            let th = c.float_or(2, "threshold", 20.0)?;
            one(op1(
                b,
                O::Softplus,
                &[x],
                vec![("beta", Attr::Float(beta)), ("threshold", Attr::Float(th))],
            ))
        }
        ("clamp", "default") | ("clamp_min", "default") | ("clamp_max", "default") => {
            let x = c.tensor(0, "self")?;
            let bound = |i: usize, n: &str| match c.get(i, n) {
                None | Some(Arg::None) => Some(Attr::None),
                Some(a) => a.float().map(Attr::Float),
            };
            let (lo, hi) = match name {
                "clamp" => (bound(1, "min")?, bound(2, "max")?),
                "clamp_min" => (bound(1, "min")?, Attr::None),
                _ => (Attr::None, bound(1, "max")?),
            };
            one(op1(b, O::Clamp, &[x], vec![("min", lo), ("max", hi)]))
        }
        // ---- pointwise binary
        ("add", "Tensor" | "Scalar") => binary(b, c, O::Add, true),
        ("sub", "Tensor" | "Scalar") => binary(b, c, O::Sub, true),
        ("mul", "Tensor" | "Scalar") => binary(b, c, O::Mul, false),
        ("div", "Tensor" | "Scalar") => binary(b, c, O::Div, false),
        ("rsub", "Scalar" | "Tensor") => {
            // other - alpha * self
            let x = c.tensor(0, "self")?;
            let y = operand(b, c, 1, "other", Some(x))?;
            let a = c.float_or(2, "alpha", 1.0)?;
            let x = if a != 1.0 {
                let k = operand_scalar(b, a, x);
                op1(b, O::Mul, &[x, k], vec![])?
            } else {
                x
            };
            one(op1(b, O::Sub, &[y, x], vec![]))
        }
        ("maximum", _) => binary(b, c, O::Maximum, false),
        ("minimum", _) => binary(b, c, O::Minimum, false),
        ("pow", "Tensor_Scalar" | "Tensor_Tensor") => binary(b, c, O::Pow, false),
        // `~mask`: the logical not of a bool tensor, `mask == False` (of integers it is
        // the bitwise complement, which has no IR form)
        ("bitwise_not", "default") => {
            let x = c.tensor(0, "self")?;
            if b.ty(x).dtype != DType::Bool {
                return None;
            }
            let f = b.constant(0.0, DType::Bool);
            one(op1(b, O::Eq, &[x, f], vec![]))
        }
        ("eq", _) => binary(b, c, O::Eq, false),
        ("ne", _) => binary(b, c, O::Ne, false),
        ("lt", _) => binary(b, c, O::Lt, false),
        ("le", _) => binary(b, c, O::Le, false),
        ("gt", _) => binary(b, c, O::Gt, false),
        ("ge", _) => binary(b, c, O::Ge, false),
        ("where", "self" | "ScalarOther" | "ScalarSelf" | "Scalar") => {
            let cond = c.tensor(0, "condition")?;
            let like = c.tensor(1, "self").or(c.tensor(2, "other"));
            let x = operand(b, c, 1, "self", like)?;
            let y = operand(b, c, 2, "other", Some(x))?;
            one(op1(b, O::Where, &[cond, x, y], vec![]))
        }
        ("masked_fill", "Scalar" | "Tensor") => {
            let x = c.tensor(0, "self")?;
            let mask = c.tensor(1, "mask")?;
            let v = operand(b, c, 2, "value", Some(x))?;
            let v = if b.ty(v).dtype != b.ty(x).dtype {
                let d = b.ty(x).dtype;
                op1(b, O::Cast, &[v], vec![("dtype", Attr::DType(d))])?
            } else {
                v
            };
            one(op1(b, O::Where, &[mask, v, x], vec![]))
        }
        ("lerp", "Tensor" | "Scalar") => {
            let x = c.tensor(0, "self")?;
            let e = c.tensor(1, "end")?;
            let w = operand(b, c, 2, "weight", Some(x))?;
            one(op1(b, O::Lerp, &[x, e, w], vec![]))
        }
        // ---- creation
        ("full", "default") => {
            let shape = c.ints(0, "size")?;
            let v = match c.scalar(1, "fill_value")? {
                Scalar::Int(v) => v as f64,
                Scalar::Float(v) => v,
                Scalar::Bool(v) => f64::from(u8::from(v)),
            };
            let d = dtype_arg(c, 99, "dtype")?.unwrap_or(match c.get(1, "fill_value")? {
                Arg::Int(_) => DType::I64,
                Arg::Bool(_) => DType::Bool,
                _ => DType::F32,
            });
            one(full(b, shape, v, d))
        }
        ("zeros" | "ones", "default") => {
            let shape = c.ints(0, "size")?;
            let d = dtype_arg(c, 99, "dtype")?.unwrap_or(DType::F32);
            one(full(b, shape, if name == "ones" { 1.0 } else { 0.0 }, d))
        }
        ("scalar_tensor", "default") => {
            let v = c.get(0, "s")?.float()?;
            let d = dtype_arg(c, 99, "dtype")?.unwrap_or(DType::F32);
            one(full(b, vec![], v, d))
        }
        ("zeros_like" | "ones_like" | "full_like", "default") => {
            let x = c.tensor(0, "self")?;
            let v = match name {
                "zeros_like" => 0.0,
                "ones_like" => 1.0,
                _ => c.get(1, "fill_value")?.float()?,
            };
            let d = dtype_arg(c, 99, "dtype")?.unwrap_or(b.ty(x).dtype);
            let shape = b.ty(x).shape.to_vec();
            one(full(b, shape, v, d))
        }
        ("dropout", "default") => {
            let x = c.tensor(0, "input")?;
            let p = c.float_or(1, "p", 0.5)?;
            let train = c.bool_or(2, "train", false)?;
            one(op1(
                b,
                O::Dropout,
                &[x],
                vec![("p", Attr::Float(p)), ("training", Attr::Bool(train))],
            ))
        }
        _ => None,
    }
}
