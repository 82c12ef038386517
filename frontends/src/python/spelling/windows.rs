//! Convolutions and sliding windows: `F.conv*`, `F.conv_transpose*`, max/avg/adaptive pooling.

use super::helpers::*;
use crate::python::args::{Args, Bound};
use crate::python::emitter::Emitter;
use crate::python::error::{FrontendError, Span};
use crate::python::value::Val;
use drtc_ir::{Attr, Op};

type R<T> = Result<T, FrontendError>;

/// Lowers `key` when it is spelled in this section; `Ok(None)` when it is not.
pub(super) fn call(em: &mut Emitter, key: &str, a: &Args, _span: &Span) -> R<Option<Val>> {
    let (ns, name) = key.split_once('.').unwrap_or(("", key));
    let v = match (ns, name) {
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
            conv(em, &b, op, n, false)
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
            conv(em, &b, op, n, true)
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
            let x = tensor_arg(em, &b, "input")?;
            let attrs = vec![
                ("kernel_size", Attr::Ints(b.req_ints_n("kernel_size", n)?)),
                ("stride", pool_stride(&b, n)?),
                ("padding", Attr::Ints(b.ints_n("padding", n, 0)?)),
                ("dilation", Attr::Ints(b.ints_n("dilation", n, 1)?)),
                ("ceil_mode", Attr::Bool(b.bool("ceil_mode", false)?)),
            ];
            let op = [Op::MaxPool1d, Op::MaxPool2d, Op::MaxPool3d][n - 1];
            Ok(Val::Tensor(em.emit(op, &[x], attrs, &b.span)?))
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
            let x = tensor_arg(em, &b, "input")?;
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
            Ok(Val::Tensor(em.emit(op, &[x], attrs, &b.span)?))
        }
        ("F", "adaptive_avg_pool1d" | "adaptive_avg_pool2d" | "adaptive_avg_pool3d") => {
            let n = spatial(name);
            let b = bind(a, key, &["input", "output_size"])?;
            let x = tensor_arg(em, &b, "input")?;
            let shape = em.ty(x).shape.clone();
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
            Ok(Val::Tensor(em.emit(
                op,
                &[x],
                vec![("output_size", Attr::Ints(out))],
                &b.span,
            )?))
        }
        _ => return Ok(None),
    };
    v.map(Some)
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

fn conv(em: &mut Emitter, b: &Bound, op: Op, n: usize, transposed: bool) -> R<Val> {
    let x = tensor_arg(em, b, "input")?;
    let w = tensor_arg(em, b, "weight")?;
    let mut ins = vec![x, w];
    if let Some(bias) = opt_tensor_arg(em, b, "bias")? {
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
    Ok(Val::Tensor(em.emit(op, &ins, attrs, &b.span)?))
}
