//! ATen ops as IR ops: one arm per ATen target the export frontend maps. `map` returns
//! `None` when the target (or this use of it: an unusual overload argument) has no IR
//! form; the importer then emits one opaque `Op::Aten` call, so nothing PyTorch can run is
//! refused. Mapped results that are not computed (a max-pool's indices, a layer norm's
//! saved statistics) are `None`; the importer falls back to the opaque call when one of
//! those is used.

use drtc_ir::{Attr, DType, GraphBuilder, Op, ValueId};
use std::collections::BTreeMap;

/// An argument of an FX node, with node references resolved to IR values.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Tensor(ValueId),
    Tensors(Vec<ValueId>),
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Ints(Vec<i64>),
    Str(String),
    DType(DType),
    /// Anything else (devices, layouts, memory formats, nested lists): only the opaque
    /// call can pass it on.
    Other,
}

impl Arg {
    fn tensor(&self) -> Option<ValueId> {
        match self {
            Arg::Tensor(v) => Some(*v),
            _ => None,
        }
    }
    fn opt_tensor(&self) -> Option<Option<ValueId>> {
        match self {
            Arg::Tensor(v) => Some(Some(*v)),
            Arg::None => Some(None),
            _ => None,
        }
    }
    fn int(&self) -> Option<i64> {
        match self {
            Arg::Int(i) => Some(*i),
            _ => None,
        }
    }
    fn float(&self) -> Option<f64> {
        match self {
            Arg::Float(x) => Some(*x),
            Arg::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
    fn bool(&self) -> Option<bool> {
        match self {
            Arg::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn ints(&self) -> Option<Vec<i64>> {
        match self {
            Arg::Ints(v) => Some(v.clone()),
            Arg::Int(i) => Some(vec![*i]),
            _ => None,
        }
    }
}

/// One call's arguments: positional, then by keyword, with schema defaults.
pub struct Call<'a> {
    pub args: &'a [Arg],
    pub kwargs: &'a BTreeMap<String, Arg>,
}

impl Call<'_> {
    /// Argument `i` (or keyword `name`), `None` when absent.
    fn get(&self, i: usize, name: &str) -> Option<&Arg> {
        self.args.get(i).or_else(|| self.kwargs.get(name))
    }
    fn tensor(&self, i: usize, name: &str) -> Option<ValueId> {
        self.get(i, name)?.tensor()
    }
    fn opt_tensor(&self, i: usize, name: &str) -> Option<Option<ValueId>> {
        match self.get(i, name) {
            None => Some(None),
            Some(a) => a.opt_tensor(),
        }
    }
    fn int_or(&self, i: usize, name: &str, default: i64) -> Option<i64> {
        match self.get(i, name) {
            None | Some(Arg::None) => Some(default),
            Some(a) => a.int(),
        }
    }
    fn float_or(&self, i: usize, name: &str, default: f64) -> Option<f64> {
        match self.get(i, name) {
            None | Some(Arg::None) => Some(default),
            Some(a) => a.float(),
        }
    }
    fn bool_or(&self, i: usize, name: &str, default: bool) -> Option<bool> {
        match self.get(i, name) {
            None | Some(Arg::None) => Some(default),
            Some(a) => a.bool(),
        }
    }
    fn ints(&self, i: usize, name: &str) -> Option<Vec<i64>> {
        self.get(i, name)?.ints()
    }
    /// Whether argument `i` is absent or `None`.
    fn absent(&self, i: usize, name: &str) -> bool {
        matches!(self.get(i, name), None | Some(Arg::None))
    }
    /// A float or int scalar argument.
    fn scalar(&self, i: usize, name: &str) -> Option<Scalar> {
        match self.get(i, name)? {
            Arg::Int(v) => Some(Scalar::Int(*v)),
            Arg::Float(v) => Some(Scalar::Float(*v)),
            Arg::Bool(v) => Some(Scalar::Bool(*v)),
            _ => None,
        }
    }
}

/// A Python number argument.
#[derive(Debug, Clone, Copy)]
enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
}

/// The mapped results (`None`: not computed), or `None` for "no IR form".
pub type Mapped = Option<Vec<Option<ValueId>>>;

fn one(v: Option<ValueId>) -> Mapped {
    v.map(|v| vec![Some(v)])
}

/// A tensor, or a scalar as a 0-dim constant whose dtype follows PyTorch's promotion
/// against `like` (a Python float with an integer tensor gives float32).
fn operand(
    b: &mut GraphBuilder,
    c: &Call,
    i: usize,
    name: &str,
    like: Option<ValueId>,
) -> Option<ValueId> {
    if let Some(t) = c.tensor(i, name) {
        return Some(t);
    }
    let like = like.map(|v| b.ty(v).dtype);
    let (value, dtype) = match c.scalar(i, name)? {
        Scalar::Int(v) => (
            v as f64,
            like.filter(|d| !d.is_float() && *d != DType::Bool)
                .unwrap_or(DType::I64),
        ),
        Scalar::Float(v) => (v, like.filter(|d| d.is_float()).unwrap_or(DType::F32)),
        Scalar::Bool(v) => (if v { 1.0 } else { 0.0 }, DType::Bool),
    };
    let dtype = match (like, dtype) {
        (Some(l), d) if l.is_float() && !d.is_float() => l,
        (_, d) => d,
    };
    Some(b.constant(value, dtype))
}

fn op1(
    b: &mut GraphBuilder,
    op: Op,
    ins: &[ValueId],
    attrs: Vec<(&'static str, Attr)>,
) -> Option<ValueId> {
    b.op1(op, ins, attrs).ok()
}

fn unary(b: &mut GraphBuilder, c: &Call, op: Op) -> Mapped {
    let x = c.tensor(0, "self")?;
    one(op1(b, op, &[x], vec![]))
}

/// `a op (alpha * b)` for `add`/`sub` with `alpha`.
fn binary(b: &mut GraphBuilder, c: &Call, op: Op, alpha: bool) -> Mapped {
    let x = operand(b, c, 0, "self", c.tensor(1, "other"))?;
    let mut y = operand(b, c, 1, "other", Some(x))?;
    if alpha {
        let a = c.float_or(2, "alpha", 1.0)?;
        if a != 1.0 {
            let k = operand_scalar(b, a, y);
            y = op1(b, Op::Mul, &[y, k], vec![])?;
        }
    }
    one(op1(b, op, &[x, y], vec![]))
}

fn operand_scalar(b: &mut GraphBuilder, v: f64, like: ValueId) -> ValueId {
    let d = b.ty(like).dtype;
    b.constant(v, if d.is_float() { d } else { DType::F32 })
}

fn dims_attr(v: Option<Vec<i64>>) -> Attr {
    match v {
        Some(d) if !d.is_empty() => Attr::Ints(d),
        _ => Attr::None,
    }
}

/// `shape` of a `full`-like call: a Full node of `dtype`.
fn full(b: &mut GraphBuilder, shape: Vec<i64>, value: f64, dtype: DType) -> Option<ValueId> {
    op1(
        b,
        Op::Full,
        &[],
        vec![
            ("shape", Attr::Ints(shape)),
            ("value", Attr::Float(value)),
            ("dtype", Attr::DType(dtype)),
        ],
    )
}

fn dtype_arg(c: &Call, i: usize, name: &str) -> Option<Option<DType>> {
    match c.get(i, name) {
        None | Some(Arg::None) => Some(None),
        Some(Arg::DType(d)) => Some(Some(*d)),
        Some(_) => None,
    }
}

/// Consecutive slices of `x` along `dim` with these sizes (`split`, `chunk`).
fn slices(b: &mut GraphBuilder, x: ValueId, dim: i64, sizes: &[i64]) -> Mapped {
    let mut out = vec![];
    let mut start = 0;
    for &s in sizes {
        let v = op1(
            b,
            Op::Slice,
            &[x],
            vec![
                ("dim", Attr::Int(dim)),
                ("start", Attr::Int(start)),
                ("end", Attr::Int(start + s)),
                ("step", Attr::Int(1)),
            ],
        )?;
        out.push(Some(v));
        start += s;
    }
    Some(out)
}

fn dim_size(b: &GraphBuilder, x: ValueId, dim: i64) -> Option<i64> {
    let t = b.ty(x);
    let r = t.rank() as i64;
    let d = if dim < 0 { dim + r } else { dim };
    (0..r).contains(&d).then(|| t.shape[d as usize])
}

/// `target` with these arguments as IR, if it has an IR form.
pub fn map(b: &mut GraphBuilder, target: &str, c: &Call) -> Mapped {
    use Op as O;
    let t = target.strip_prefix("aten.")?;
    let (name, overload) = t.rsplit_once('.').unwrap_or((t, "default"));
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
        // ---- contractions
        ("mm", _) | ("matmul", _) => {
            let (x, y) = (c.tensor(0, "self")?, c.tensor(1, "other")?);
            one(op1(b, O::Matmul, &[x, y], vec![]))
        }
        ("bmm", _) => {
            let (x, y) = (c.tensor(0, "self")?, c.tensor(1, "mat2")?);
            one(op1(b, O::Bmm, &[x, y], vec![]))
        }
        ("addmm", "default") => {
            if c.float_or(3, "beta", 1.0)? != 1.0 || c.float_or(4, "alpha", 1.0)? != 1.0 {
                return None;
            }
            let (bias, x, y) = (
                c.tensor(0, "self")?,
                c.tensor(1, "mat1")?,
                c.tensor(2, "mat2")?,
            );
            let p = op1(b, O::Matmul, &[x, y], vec![])?;
            one(op1(b, O::Add, &[p, bias], vec![]))
        }
        ("linear", "default") => {
            let (x, w) = (c.tensor(0, "input")?, c.tensor(1, "weight")?);
            let ins = match c.opt_tensor(2, "bias")? {
                Some(bias) => vec![x, w, bias],
                None => vec![x, w],
            };
            one(op1(b, O::Linear, &ins, vec![]))
        }
        ("einsum", "default") => {
            let eq = match c.get(0, "equation")? {
                Arg::Str(s) => s.clone(),
                _ => return None,
            };
            let ins = match c.get(1, "tensors")? {
                Arg::Tensors(v) => v.clone(),
                Arg::Tensor(v) => vec![*v],
                _ => return None,
            };
            if !c.absent(2, "path") {
                return None;
            }
            one(op1(b, O::Einsum, &ins, vec![("equation", Attr::Str(eq))]))
        }
        ("scaled_dot_product_attention", "default") => {
            let (q, k, v) = (
                c.tensor(0, "query")?,
                c.tensor(1, "key")?,
                c.tensor(2, "value")?,
            );
            if c.bool_or(7, "enable_gqa", false)? {
                return None;
            }
            let mut ins = vec![q, k, v];
            if let Some(m) = c.opt_tensor(3, "attn_mask")? {
                ins.push(m);
            }
            let scale = match c.get(6, "scale") {
                None | Some(Arg::None) => Attr::None,
                Some(a) => Attr::Float(a.float()?),
            };
            one(op1(
                b,
                O::Attention,
                &ins,
                vec![
                    ("dropout_p", Attr::Float(c.float_or(4, "dropout_p", 0.0)?)),
                    ("is_causal", Attr::Bool(c.bool_or(5, "is_causal", false)?)),
                    ("scale", scale),
                ],
            ))
        }
        // ---- convolutions
        ("convolution", "default") => {
            let (x, w) = (c.tensor(0, "input")?, c.tensor(1, "weight")?);
            let bias = c.opt_tensor(2, "bias")?;
            let (stride, padding, dilation) = (
                c.ints(3, "stride")?,
                c.ints(4, "padding")?,
                c.ints(5, "dilation")?,
            );
            let transposed = c.bool_or(6, "transposed", false)?;
            let output_padding = c.ints(7, "output_padding")?;
            let groups = c.int_or(8, "groups", 1)?;
            let op = match (b.ty(w).rank(), transposed) {
                (3, false) => O::Conv1d,
                (4, false) => O::Conv2d,
                (5, false) => O::Conv3d,
                (3, true) => O::ConvTranspose1d,
                (4, true) => O::ConvTranspose2d,
                (5, true) => O::ConvTranspose3d,
                _ => return None,
            };
            let mut ins = vec![x, w];
            ins.extend(bias);
            let mut attrs = vec![
                ("stride", Attr::Ints(stride)),
                ("padding", Attr::Ints(padding)),
                ("dilation", Attr::Ints(dilation)),
                ("groups", Attr::Int(groups)),
            ];
            if transposed {
                attrs.push(("output_padding", Attr::Ints(output_padding)));
            } else if output_padding.iter().any(|&p| p != 0) {
                return None;
            }
            one(op1(b, op, &ins, attrs))
        }
        // ---- windows
        (
            "max_pool1d_with_indices"
            | "max_pool2d_with_indices"
            | "max_pool3d_with_indices"
            | "max_pool1d"
            | "max_pool2d"
            | "max_pool3d",
            "default",
        ) => {
            let x = c.tensor(0, "self")?;
            let op = match name.trim_end_matches("_with_indices") {
                "max_pool1d" => O::MaxPool1d,
                "max_pool2d" => O::MaxPool2d,
                _ => O::MaxPool3d,
            };
            let n = match op {
                O::MaxPool1d => 1,
                O::MaxPool2d => 2,
                _ => 3,
            };
            let k = c.ints(1, "kernel_size")?;
            let stride = c
                .ints(2, "stride")
                .filter(|s| !s.is_empty())
                .map_or(Attr::None, Attr::Ints);
            let pad = c.ints(3, "padding").unwrap_or(vec![0; n]);
            let dil = c.ints(4, "dilation").unwrap_or(vec![1; n]);
            let ceil = c.bool_or(5, "ceil_mode", false)?;
            let y = op1(
                b,
                op,
                &[x],
                vec![
                    ("kernel_size", Attr::Ints(k)),
                    ("stride", stride),
                    ("padding", Attr::Ints(pad)),
                    ("dilation", Attr::Ints(dil)),
                    ("ceil_mode", Attr::Bool(ceil)),
                ],
            )?;
            Some(if name.ends_with("_with_indices") {
                vec![Some(y), None]
            } else {
                vec![Some(y)]
            })
        }
        ("avg_pool1d" | "avg_pool2d" | "avg_pool3d", "default") => {
            let x = c.tensor(0, "self")?;
            let (op, n) = match name {
                "avg_pool1d" => (O::AvgPool1d, 1),
                "avg_pool2d" => (O::AvgPool2d, 2),
                _ => (O::AvgPool3d, 3),
            };
            let k = c.ints(1, "kernel_size")?;
            let stride = c
                .ints(2, "stride")
                .filter(|s| !s.is_empty())
                .map_or(Attr::None, Attr::Ints);
            let pad = c.ints(3, "padding").unwrap_or(vec![0; n]);
            let mut attrs = vec![
                ("kernel_size", Attr::Ints(k)),
                ("stride", stride),
                ("padding", Attr::Ints(pad)),
                ("ceil_mode", Attr::Bool(c.bool_or(4, "ceil_mode", false)?)),
                (
                    "count_include_pad",
                    Attr::Bool(c.bool_or(5, "count_include_pad", true)?),
                ),
            ];
            let div = match c.get(6, "divisor_override") {
                None | Some(Arg::None) => Attr::None,
                Some(a) => Attr::Int(a.int()?),
            };
            if n == 1 {
                if !div.is_none() {
                    return None;
                }
            } else {
                attrs.push(("divisor_override", div));
            }
            one(op1(b, op, &[x], attrs))
        }
        (
            "adaptive_avg_pool1d"
            | "adaptive_avg_pool2d"
            | "adaptive_avg_pool3d"
            | "_adaptive_avg_pool2d"
            | "_adaptive_avg_pool3d",
            "default",
        ) => {
            let x = c.tensor(0, "self")?;
            let op = match name.trim_start_matches('_') {
                "adaptive_avg_pool1d" => O::AdaptiveAvgPool1d,
                "adaptive_avg_pool2d" => O::AdaptiveAvgPool2d,
                _ => O::AdaptiveAvgPool3d,
            };
            one(op1(
                b,
                op,
                &[x],
                vec![("output_size", Attr::Ints(c.ints(1, "output_size")?))],
            ))
        }
        // ---- normalizations
        ("_native_batch_norm_legit_functional", "default") | ("batch_norm", "default") => {
            let functional = name.starts_with('_');
            let x = c.tensor(0, "input")?;
            let (w, bias) = (c.opt_tensor(1, "weight")?, c.opt_tensor(2, "bias")?);
            let training = c.bool_or(5, "training", false)?;
            if !training || (w.is_none() && bias.is_some()) {
                return None;
            }
            let momentum = c.float_or(6, "momentum", 0.1)?;
            let eps = c.float_or(7, "eps", 1e-5)?;
            let ins: Vec<ValueId> = [Some(x), w, bias].into_iter().flatten().collect();
            let y = op1(
                b,
                O::BatchNorm,
                &ins,
                vec![
                    ("training", Attr::Bool(true)),
                    ("momentum", Attr::Float(momentum)),
                    ("eps", Attr::Float(eps)),
                ],
            )?;
            Some(if functional {
                vec![Some(y), None, None, None, None]
            } else {
                vec![Some(y)]
            })
        }
        ("native_layer_norm", "default") | ("layer_norm", "default") => {
            let x = c.tensor(0, "input")?;
            let shape = c.ints(1, "normalized_shape")?;
            let (w, bias) = (c.opt_tensor(2, "weight")?, c.opt_tensor(3, "bias")?);
            if w.is_none() && bias.is_some() {
                return None;
            }
            let eps = c.float_or(4, "eps", 1e-5)?;
            let ins: Vec<ValueId> = [Some(x), w, bias].into_iter().flatten().collect();
            let y = op1(
                b,
                O::LayerNorm,
                &ins,
                vec![
                    ("normalized_shape", Attr::Ints(shape)),
                    ("eps", Attr::Float(eps)),
                ],
            )?;
            Some(if name == "native_layer_norm" {
                vec![Some(y), None, None]
            } else {
                vec![Some(y)]
            })
        }
        ("native_group_norm", "default") => {
            let x = c.tensor(0, "input")?;
            let (w, bias) = (c.opt_tensor(1, "weight")?, c.opt_tensor(2, "bias")?);
            let groups = c.int_or(6, "group", 1)?;
            let eps = c.float_or(7, "eps", 1e-5)?;
            group_norm(b, x, w, bias, groups, eps).map(|y| vec![Some(y), None, None])
        }
        ("group_norm", "default") => {
            let x = c.tensor(0, "input")?;
            let groups = c.int_or(1, "num_groups", 1)?;
            let (w, bias) = (c.opt_tensor(2, "weight")?, c.opt_tensor(3, "bias")?);
            let eps = c.float_or(4, "eps", 1e-5)?;
            one(group_norm(b, x, w, bias, groups, eps))
        }
        // ---- reductions
        ("sum" | "mean" | "amax" | "amin", "dim_IntList" | "dim" | "default") => {
            let x = c.tensor(0, "self")?;
            if name == "sum" || name == "mean" {
                let d = if overload == "default" { 1 } else { 3 };
                if dtype_arg(c, d, "dtype")?.is_some() {
                    return None;
                }
            }
            let op = match name {
                "sum" => O::Sum,
                "mean" => O::Mean,
                "amax" => O::Max,
                _ => O::Min,
            };
            let (dims, keep) = if overload == "default" && (name == "sum" || name == "mean") {
                (None, false)
            } else {
                (c.ints(1, "dim"), c.bool_or(2, "keepdim", false)?)
            };
            one(op1(
                b,
                op,
                &[x],
                vec![("dim", dims_attr(dims)), ("keepdim", Attr::Bool(keep))],
            ))
        }
        ("max" | "min", "dim") => {
            let x = c.tensor(0, "self")?;
            let dim = c.int_or(1, "dim", 0)?;
            let keep = c.bool_or(2, "keepdim", false)?;
            let (op, arg) = if name == "max" {
                (O::Max, O::Argmax)
            } else {
                (O::Min, O::Argmin)
            };
            let v = op1(
                b,
                op,
                &[x],
                vec![
                    ("dim", Attr::Ints(vec![dim])),
                    ("keepdim", Attr::Bool(keep)),
                ],
            )?;
            let i = op1(
                b,
                arg,
                &[x],
                vec![("dim", Attr::Int(dim)), ("keepdim", Attr::Bool(keep))],
            )?;
            Some(vec![Some(v), Some(i)])
        }
        ("max" | "min", "default") => {
            let x = c.tensor(0, "self")?;
            let op = if name == "max" { O::Max } else { O::Min };
            one(op1(
                b,
                op,
                &[x],
                vec![("dim", Attr::None), ("keepdim", Attr::Bool(false))],
            ))
        }
        ("prod", "dim_int") => {
            let x = c.tensor(0, "self")?;
            if dtype_arg(c, 3, "dtype")?.is_some() {
                return None;
            }
            let dim = c.int_or(1, "dim", 0)?;
            one(op1(
                b,
                O::Prod,
                &[x],
                vec![
                    ("dim", Attr::Ints(vec![dim])),
                    ("keepdim", Attr::Bool(c.bool_or(2, "keepdim", false)?)),
                ],
            ))
        }
        ("var" | "std", "correction") => {
            let x = c.tensor(0, "self")?;
            let corr = c.float_or(2, "correction", 1.0)?;
            let op = if name == "var" { O::Var } else { O::Std };
            let dims = match c.get(1, "dim") {
                None | Some(Arg::None) => None,
                Some(a) => Some(a.ints()?),
            };
            one(op1(
                b,
                op,
                &[x],
                vec![
                    ("dim", dims_attr(dims)),
                    ("correction", Attr::Float(corr)),
                    ("keepdim", Attr::Bool(c.bool_or(3, "keepdim", false)?)),
                ],
            ))
        }
        ("argmax" | "argmin", "default") => {
            let x = c.tensor(0, "self")?;
            let dim = match c.get(1, "dim") {
                None | Some(Arg::None) => Attr::None,
                Some(a) => Attr::Int(a.int()?),
            };
            let op = if name == "argmax" {
                O::Argmax
            } else {
                O::Argmin
            };
            one(op1(
                b,
                op,
                &[x],
                vec![
                    ("dim", dim),
                    ("keepdim", Attr::Bool(c.bool_or(2, "keepdim", false)?)),
                ],
            ))
        }
        ("_softmax" | "_log_softmax", "default") | ("softmax" | "log_softmax", "int") => {
            let x = c.tensor(0, "self")?;
            let dim = c.int_or(1, "dim", -1)?;
            match c.get(
                2,
                if name.starts_with('_') {
                    "half_to_float"
                } else {
                    "dtype"
                },
            ) {
                None | Some(Arg::None) | Some(Arg::Bool(false)) => {}
                Some(_) => return None,
            }
            let op = if name.contains("log") {
                O::LogSoftmax
            } else {
                O::Softmax
            };
            one(op1(b, op, &[x], vec![("dim", Attr::Int(dim))]))
        }
        ("logsumexp", "default") => {
            let x = c.tensor(0, "self")?;
            one(op1(
                b,
                O::Logsumexp,
                &[x],
                vec![
                    ("dim", Attr::Ints(c.ints(1, "dim")?)),
                    ("keepdim", Attr::Bool(c.bool_or(2, "keepdim", false)?)),
                ],
            ))
        }
        ("cumsum" | "cumprod", "default") => {
            let x = c.tensor(0, "self")?;
            if dtype_arg(c, 2, "dtype")?.is_some() {
                return None;
            }
            let op = if name == "cumsum" {
                O::Cumsum
            } else {
                O::Cumprod
            };
            one(op1(
                b,
                op,
                &[x],
                vec![("dim", Attr::Int(c.int_or(1, "dim", 0)?))],
            ))
        }
        // ---- layout
        ("view" | "_unsafe_view" | "reshape", "default") => {
            let x = c.tensor(0, "self")?;
            one(op1(
                b,
                O::Reshape,
                &[x],
                vec![(
                    "shape",
                    Attr::Ints(c.ints(1, "size").or_else(|| c.ints(1, "shape"))?),
                )],
            ))
        }
        ("permute", "default") => {
            let x = c.tensor(0, "self")?;
            one(op1(
                b,
                O::Permute,
                &[x],
                vec![("dims", Attr::Ints(c.ints(1, "dims")?))],
            ))
        }
        ("transpose", "int") => {
            let x = c.tensor(0, "self")?;
            let (d0, d1) = (c.int_or(1, "dim0", 0)?, c.int_or(2, "dim1", 1)?);
            one(op1(
                b,
                O::Transpose,
                &[x],
                vec![("dim0", Attr::Int(d0)), ("dim1", Attr::Int(d1))],
            ))
        }
        ("t", "default") => {
            let x = c.tensor(0, "self")?;
            if b.ty(x).rank() < 2 {
                return Some(vec![Some(x)]);
            }
            one(op1(
                b,
                O::Transpose,
                &[x],
                vec![("dim0", Attr::Int(0)), ("dim1", Attr::Int(1))],
            ))
        }
        ("expand", "default") => {
            let x = c.tensor(0, "self")?;
            if c.bool_or(2, "implicit", false)? {
                return None;
            }
            one(op1(
                b,
                O::Expand,
                &[x],
                vec![("shape", Attr::Ints(c.ints(1, "size")?))],
            ))
        }
        ("unsqueeze", "default") => {
            let x = c.tensor(0, "self")?;
            one(op1(
                b,
                O::Unsqueeze,
                &[x],
                vec![("dim", Attr::Int(c.int_or(1, "dim", 0)?))],
            ))
        }
        ("squeeze", "dim" | "dims" | "default") => {
            let x = c.tensor(0, "self")?;
            let dims = if overload == "default" {
                None
            } else {
                Some(c.ints(1, "dim")?)
            };
            one(op1(
                b,
                O::Squeeze,
                &[x],
                vec![("dim", dims.map_or(Attr::None, Attr::Ints))],
            ))
        }
        ("flatten", "using_ints") => {
            let x = c.tensor(0, "self")?;
            one(op1(
                b,
                O::Flatten,
                &[x],
                vec![
                    ("start_dim", Attr::Int(c.int_or(1, "start_dim", 0)?)),
                    ("end_dim", Attr::Int(c.int_or(2, "end_dim", -1)?)),
                ],
            ))
        }
        ("slice", "Tensor") => {
            let x = c.tensor(0, "self")?;
            let dim = c.int_or(1, "dim", 0)?;
            let start = c.int_or(2, "start", 0)?;
            let end = c.int_or(3, "end", i64::MAX)?;
            let step = c.int_or(4, "step", 1)?;
            one(op1(
                b,
                O::Slice,
                &[x],
                vec![
                    ("dim", Attr::Int(dim)),
                    ("start", Attr::Int(start)),
                    ("end", Attr::Int(end)),
                    ("step", Attr::Int(step)),
                ],
            ))
        }
        ("narrow", "default") => {
            let x = c.tensor(0, "self")?;
            let (dim, start, len) = (
                c.int_or(1, "dim", 0)?,
                c.get(2, "start")?.int()?,
                c.get(3, "length")?.int()?,
            );
            one(op1(
                b,
                O::Narrow,
                &[x],
                vec![
                    ("dim", Attr::Int(dim)),
                    ("start", Attr::Int(start)),
                    ("length", Attr::Int(len)),
                ],
            ))
        }
        ("select", "int") => {
            let x = c.tensor(0, "self")?;
            one(op1(
                b,
                O::Select,
                &[x],
                vec![
                    ("dim", Attr::Int(c.int_or(1, "dim", 0)?)),
                    ("index", Attr::Int(c.get(2, "index")?.int()?)),
                ],
            ))
        }
        ("flip", "default") => {
            let x = c.tensor(0, "self")?;
            one(op1(
                b,
                O::Flip,
                &[x],
                vec![("dims", Attr::Ints(c.ints(1, "dims")?))],
            ))
        }
        ("triu" | "tril", "default") => {
            let x = c.tensor(0, "self")?;
            let op = if name == "triu" { O::Triu } else { O::Tril };
            one(op1(
                b,
                op,
                &[x],
                vec![("diagonal", Attr::Int(c.int_or(1, "diagonal", 0)?))],
            ))
        }
        ("cat" | "stack", "default") => {
            let ins = match c.get(0, "tensors")? {
                Arg::Tensors(v) => v.clone(),
                Arg::Tensor(v) => vec![*v],
                _ => return None,
            };
            let op = if name == "cat" { O::Cat } else { O::Stack };
            one(op1(
                b,
                op,
                &ins,
                vec![("dim", Attr::Int(c.int_or(1, "dim", 0)?))],
            ))
        }
        ("split", "Tensor") | ("split_with_sizes", "default") | ("chunk", "default") => {
            let x = c.tensor(0, "self")?;
            let dim = c.int_or(2, "dim", 0)?;
            let n = dim_size(b, x, dim)?;
            let sizes: Vec<i64> = match name {
                "split_with_sizes" => c.ints(1, "split_sizes")?,
                "split" => {
                    let s = c.get(1, "split_size")?.int()?.max(1);
                    (0..n).step_by(s as usize).map(|st| s.min(n - st)).collect()
                }
                _ => {
                    let k = c.get(1, "chunks")?.int()?.max(1);
                    let s = ((n + k - 1) / k).max(1);
                    (0..n).step_by(s as usize).map(|st| s.min(n - st)).collect()
                }
            };
            slices(b, x, dim, &sizes)
        }
        ("unbind", "int") => {
            let x = c.tensor(0, "self")?;
            let dim = c.int_or(1, "dim", 0)?;
            let n = dim_size(b, x, dim)?;
            (0..n)
                .map(|i| {
                    op1(
                        b,
                        O::Select,
                        &[x],
                        vec![("dim", Attr::Int(dim)), ("index", Attr::Int(i))],
                    )
                    .map(Some)
                })
                .collect()
        }
        // ---- creation
        ("full", "default") => {
            let shape = c.ints(0, "size")?;
            let v = c.get(1, "fill_value")?.float()?;
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

fn group_norm(
    b: &mut GraphBuilder,
    x: ValueId,
    w: Option<ValueId>,
    bias: Option<ValueId>,
    groups: i64,
    eps: f64,
) -> Option<ValueId> {
    if w.is_none() && bias.is_some() {
        return None;
    }
    let ins: Vec<ValueId> = [Some(x), w, bias].into_iter().flatten().collect();
    op1(
        b,
        Op::GroupNorm,
        &ins,
        vec![("num_groups", Attr::Int(groups)), ("eps", Attr::Float(eps))],
    )
}
