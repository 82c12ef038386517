//! Convolutions and sliding windows: `F.conv*`, `F.conv_transpose*`, max/avg/adaptive pooling.

use super::helpers::*;
use super::{Call, Lowering};
use crate::python::args::Bound;
use crate::python::emitter::Emitter;
use crate::python::error::FrontendError;
use crate::python::value::Val;
use drtc_ir::{Attr, Op};

type R<T> = Result<T, FrontendError>;

/// The ops of this section whose spellings need more than binding by the table.
pub(super) const CUSTOM: &[(&[Op], Lowering)] = &[
    (&[Op::Conv1d, Op::Conv2d, Op::Conv3d], conv_nd),
    (
        &[
            Op::ConvTranspose1d,
            Op::ConvTranspose2d,
            Op::ConvTranspose3d,
        ],
        conv_transpose_nd,
    ),
    (&[Op::MaxPool1d, Op::MaxPool2d, Op::MaxPool3d], max_pool),
    (&[Op::AvgPool1d, Op::AvgPool2d, Op::AvgPool3d], avg_pool),
    (
        &[
            Op::AdaptiveAvgPool1d,
            Op::AdaptiveAvgPool2d,
            Op::AdaptiveAvgPool3d,
        ],
        adaptive_avg_pool,
    ),
];

fn conv_nd(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let n = spatial(op.name());
    let b = c.bind(op)?;
    conv(em, &b, op, n, false)
}

fn conv_transpose_nd(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let n = spatial(op.name());
    let b = c.bind(op)?;
    conv(em, &b, op, n, true)
}

fn max_pool(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let n = spatial(op.name());
    let b = c.bind(op)?;
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
        ("padding", Attr::Ints(ints_arg(&b, op, "padding", n)?)),
        ("dilation", Attr::Ints(ints_arg(&b, op, "dilation", n)?)),
        ("ceil_mode", attr_arg(&b, op, "ceil_mode")?),
    ];
    Ok(Val::Tensor(em.emit(op, &[x], attrs, &b.span)?))
}

fn avg_pool(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let n = spatial(op.name());
    let b = c.bind(op)?;
    let x = tensor_arg(em, &b, "input")?;
    let mut attrs = vec![
        ("kernel_size", Attr::Ints(b.req_ints_n("kernel_size", n)?)),
        ("stride", pool_stride(&b, n)?),
        ("padding", Attr::Ints(ints_arg(&b, op, "padding", n)?)),
        ("ceil_mode", attr_arg(&b, op, "ceil_mode")?),
        ("count_include_pad", attr_arg(&b, op, "count_include_pad")?),
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
    Ok(Val::Tensor(em.emit(op, &[x], attrs, &b.span)?))
}

fn adaptive_avg_pool(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let n = spatial(op.name());
    let b = c.bind(op)?;
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
    Ok(Val::Tensor(em.emit(
        op,
        &[x],
        vec![("output_size", Attr::Ints(out))],
        &b.span,
    )?))
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
        _ => ints_arg(b, op, "padding", n)?,
    };
    let mut attrs = vec![
        ("stride", Attr::Ints(ints_arg(b, op, "stride", n)?)),
        ("padding", Attr::Ints(padding)),
    ];
    if transposed {
        attrs.push((
            "output_padding",
            Attr::Ints(ints_arg(b, op, "output_padding", n)?),
        ));
    }
    attrs.push(("dilation", Attr::Ints(ints_arg(b, op, "dilation", n)?)));
    attrs.push(("groups", attr_arg(b, op, "groups")?));
    Ok(Val::Tensor(em.emit(op, &ins, attrs, &b.span)?))
}
