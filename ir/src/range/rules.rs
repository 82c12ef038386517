//! The range rule of every op (a pointwise op's is among its facts, `op/pointwise.rs`;
//! the others' are here): given interval bounds of its inputs (and their exact types
//! and attributes), a sound bound of its result. Sums count their terms from the shapes
//! (a matmul's `K`, a reduction's reduced size, a convolution's window), so the bounds are
//! exact worst cases, not estimates. Ops the synthesizer never places, and rules with no
//! useful bound, give [`Interval::ANY`], which is always sound.

use crate::interval::Interval as I;
use crate::op::AttrView;
use crate::{Attr, Node, Op, TensorType};
use std::ops::{Add, Mul, Sub};

fn attr<'a>(n: &'a Node, name: &str) -> Option<&'a Attr> {
    n.attrs.get(name)
}
fn float(n: &Node, name: &str) -> Option<f64> {
    attr(n, name).and_then(Attr::as_float)
}
fn int(n: &Node, name: &str) -> Option<i64> {
    attr(n, name).and_then(Attr::as_int)
}

fn numel(t: &TensorType) -> f64 {
    t.numel() as f64
}

/// Elements folded into one output element (input / output element counts).
fn folded(inp: &TensorType, out: &TensorType) -> f64 {
    (numel(inp) / numel(out).max(1.0)).max(1.0)
}

/// The size of `dim` (an `Int` attribute) of `t`.
fn dim_size(t: &TensorType, dim: Option<i64>) -> f64 {
    let r = t.rank() as i64;
    match dim {
        Some(d) if r > 0 => {
            let d = if d < 0 { d + r } else { d };
            t.shape.get(d.max(0) as usize).copied().unwrap_or(1).max(1) as f64
        }
        _ => 1.0,
    }
}

/// A normalization's result `(x - mean) / sqrt(var + eps)` over groups of `n` elements
/// lies within `sqrt(n)` in magnitude; then times `weight`, plus `bias`.
fn normalized(n: f64, ins: &[I]) -> I {
    let mut z = I::symmetric(n.max(1.0).sqrt());
    if let Some(&w) = ins.get(1) {
        z = z.mul(w);
    }
    if let Some(&b) = ins.get(2) {
        z = z.add(b);
    }
    z
}

/// `prod` of `n` values of `x`.
fn power_bound(x: I, n: f64) -> I {
    let m = x.mag().powf(n);
    if x.lo >= 0.0 {
        I::new(x.lo.powf(n), m)
    } else {
        I::symmetric(m)
    }
}

/// The range of `node`'s first result.
pub fn output_range(node: &Node, ins: &[I], tys: &[&TensorType], out: &TensorType) -> I {
    let x = ins.first().copied().unwrap_or(I::ANY);
    let xt = tys.first().copied();
    let any = I::ANY;
    if let Some(pw) = node.op.pointwise() {
        return (pw.range)(ins, AttrView(&node.attrs), out.dtype);
    }
    match node.op {
        Op::Full => float(node, "value").map_or(any, I::point),
        Op::Arange => node
            .attrs
            .get("end")
            .and_then(Attr::as_int)
            .map_or(any, |e| I::new(0.0, (e.max(1) - 1) as f64)),
        // an opaque PyTorch call: nothing is known of its values
        Op::Aten => any,
        Op::Sum => xt.map_or(any, |t| x.scale(folded(t, out))),
        Op::Mean | Op::Max | Op::Min | Op::Cummax | Op::Cummin => x,
        Op::Prod => xt.map_or(any, |t| power_bound(x, folded(t, out))),
        Op::Argmax | Op::Argmin => xt.map_or(any, |t| I::new(0.0, folded(t, out) - 1.0)),
        Op::Var | Op::Std => {
            let Some(t) = xt else { return any };
            let n = folded(t, out);
            let c = float(node, "correction").unwrap_or(1.0);
            if n - c <= 0.0 {
                return any;
            }
            let w = x.hi - x.lo;
            let var = I::new(0.0, w * w / 4.0 * n / (n - c));
            if node.op == Op::Std {
                var.monotone(f64::sqrt).pad()
            } else {
                var
            }
        }
        Op::Norm => {
            let Some(t) = xt else { return any };
            let p = float(node, "p").unwrap_or(2.0);
            let n = folded(t, out);
            if p == f64::INFINITY {
                I::new(0.0, x.mag())
            } else if p > 0.0 {
                I::new(0.0, n.powf(1.0 / p) * x.mag()).pad()
            } else {
                any
            }
        }
        Op::Logsumexp => xt.map_or(any, |t| I::new(x.lo, x.hi + folded(t, out).ln()).pad()),
        Op::Softmax => I::new(0.0, 1.0),
        Op::LogSoftmax => xt.map_or(any, |t| {
            let n = dim_size(t, int(node, "dim"));
            I::new(x.lo - x.hi - n.ln(), 0.0).pad()
        }),
        Op::Cumsum => xt.map_or(any, |t| {
            let n = dim_size(t, int(node, "dim"));
            x.hull(x.scale(n))
        }),
        Op::Cumprod => xt.map_or(any, |t| {
            let n = dim_size(t, int(node, "dim"));
            x.hull(power_bound(x, n))
        }),
        Op::MseLoss | Op::SmoothL1Loss => {
            let Some(t) = xt else { return any };
            let d = x.sub(ins[1]).mag();
            let per = if node.op == Op::MseLoss {
                d * d
            } else {
                let beta = float(node, "beta").unwrap_or(1.0);
                if beta > 0.0 {
                    (d * d / (2.0 * beta)).max(d)
                } else {
                    d
                }
            };
            let per = I::new(0.0, per);
            match attr(node, "reduction").and_then(Attr::as_str) {
                Some("sum") => per.scale(numel(t)),
                _ => per,
            }
        }
        Op::KlDiv | Op::CrossEntropy | Op::TripletMarginLoss => any,
        Op::Matmul | Op::Bmm => {
            let Some(t) = xt else { return any };
            let k = t.shape.last().copied().unwrap_or(1).max(1) as f64;
            x.mul(ins[1]).scale(k)
        }
        Op::Linear => {
            let Some(t) = xt else { return any };
            let k = t.shape.last().copied().unwrap_or(1).max(1) as f64;
            let y = x.mul(ins[1]).scale(k);
            ins.get(2).map_or(y, |&b| y.add(b))
        }
        Op::Einsum | Op::Attention => any,
        Op::Conv1d | Op::Conv2d | Op::Conv3d => {
            let Some(w) = tys.get(1) else { return any };
            let terms: f64 = w.shape.iter().skip(1).map(|&d| d.max(1) as f64).product();
            let y = x.mul(ins[1]).scale(terms);
            ins.get(2).map_or(y, |&b| y.add(b))
        }
        Op::ConvTranspose1d | Op::ConvTranspose2d | Op::ConvTranspose3d => {
            let Some(w) = tys.get(1) else { return any };
            let groups = int(node, "groups").unwrap_or(1).max(1) as f64;
            let cin = w.shape.first().copied().unwrap_or(1).max(1) as f64 / groups;
            let kvol: f64 = w.shape.iter().skip(2).map(|&d| d.max(1) as f64).product();
            let y = x.mul(ins[1]).scale(cin.ceil() * kvol);
            ins.get(2).map_or(y, |&b| y.add(b))
        }
        Op::MaxPool1d | Op::MaxPool2d | Op::MaxPool3d => x,
        Op::AvgPool1d | Op::AvgPool2d | Op::AvgPool3d => {
            let kvol: f64 = attr(node, "kernel_size")
                .and_then(Attr::as_ints)
                .map_or(1.0, |k| k.iter().map(|&d| d.max(1) as f64).product());
            match int(node, "divisor_override") {
                Some(d) if d > 0 => x.scale(kvol / d as f64).hull(I::point(0.0)),
                Some(_) => any,
                // padded positions count as zeros
                None => x.hull(I::point(0.0)),
            }
        }
        Op::AdaptiveAvgPool1d | Op::AdaptiveAvgPool2d | Op::AdaptiveAvgPool3d => x,
        Op::BatchNorm => xt.map_or(any, |t| {
            let c = t.shape.get(1).copied().unwrap_or(1).max(1) as f64;
            normalized(numel(t) / c, ins)
        }),
        Op::LayerNorm | Op::RmsNorm => {
            let n: f64 = attr(node, "normalized_shape")
                .and_then(Attr::as_ints)
                .map_or(f64::INFINITY, |s| {
                    s.iter().map(|&d| d.max(1) as f64).product()
                });
            normalized(n, ins)
        }
        Op::GroupNorm => xt.map_or(any, |t| {
            let b = t.shape.first().copied().unwrap_or(1).max(1) as f64;
            let g = int(node, "num_groups").unwrap_or(1).max(1) as f64;
            normalized(numel(t) / (b * g), ins)
        }),
        Op::InstanceNorm => xt.map_or(any, |t| {
            let spatial: f64 = t.shape.iter().skip(2).map(|&d| d.max(1) as f64).product();
            normalized(spatial, ins)
        }),
        Op::Transpose
        | Op::Permute
        | Op::Reshape
        | Op::Flatten
        | Op::Squeeze
        | Op::Unsqueeze
        | Op::Expand
        | Op::Narrow
        | Op::Slice
        | Op::Select
        | Op::Flip => x,
        // zeros fill the rest
        Op::Diag | Op::Triu | Op::Tril => x.hull(I::point(0.0)),
        // the padding value fills the rest
        Op::Pad => x.hull(I::point(
            node.attrs
                .get("value")
                .and_then(|v| v.as_float())
                .unwrap_or(0.0),
        )),
        Op::Cat | Op::Stack => ins.iter().fold(x, |acc, &r| acc.hull(r)),
        // every other op is pointwise: its own rule applied above
        _ => unreachable!("`{}` is pointwise: its range rule is its own", node.op),
    }
}
