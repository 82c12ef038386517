//! ATen contractions, convolutions, pooling, normalizations, reductions and layout ops as
//! IR ops (see `aten.rs`).

use super::args::{dim_size, dims_attr, dtype_arg, one, op1, slices, Arg, Call, Mapped};
use drtc_ir::{Attr, GraphBuilder, Op, ValueId};

/// The IR form of `aten.<name>.<overload>` if it is one of this file's targets.
pub(super) fn map(b: &mut GraphBuilder, name: &str, overload: &str, c: &Call) -> Mapped {
    use Op as O;
    match (name, overload) {
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
            // `path` (opt_einsum's contraction order, recorded when it is installed)
            // orders the pairwise products, not the value: the einsum's own lowering
            // chooses its order
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
        ("constant_pad_nd", "default") => {
            let x = c.tensor(0, "self")?;
            one(op1(
                b,
                O::Pad,
                &[x],
                vec![
                    ("pad", Attr::Ints(c.ints(1, "pad")?)),
                    ("value", Attr::Float(c.float_or(2, "value", 0.0)?)),
                ],
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
