//! The range rule of every op: given interval bounds of its inputs (and their exact types
//! and attributes), a sound bound of its result. Sums count their terms from the shapes
//! (a matmul's `K`, a reduction's reduced size, a convolution's window), so the bounds are
//! exact worst cases, not estimates. Ops the synthesizer never places, and rules with no
//! useful bound, give [`Interval::ANY`], which is always sound.

use super::interval::Interval as I;
use crate::{Attr, Node, Op, TensorType};
use std::ops::{Add, Div, Mul, Neg, Sub};

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

/// Pads a bound computed with f64 transcendental functions outwards, so that the f32
/// results (and their rounding) stay inside.
fn pad(x: I) -> I {
    let e = |v: f64| 1e-6 * (1.0 + v.abs());
    I::new(x.lo - e(x.lo), x.hi + e(x.hi))
}

/// Endpoints clamped to a finite range, so that functions like `x * sigmoid(x)` give a
/// limit instead of NaN at infinity.
fn finite_ends(x: I) -> (f64, f64) {
    (x.lo.max(-1e300), x.hi.min(1e300))
}

/// The image of a continuous function that is monotone between the listed `critical`
/// points: the hull of its values at the endpoints and at the critical points inside.
fn piecewise(x: I, critical: &[f64], f: impl Fn(f64) -> f64) -> I {
    let (a, b) = finite_ends(x);
    let mut lo = f(a).min(f(b));
    let mut hi = f(a).max(f(b));
    for &c in critical {
        if a < c && c < b {
            lo = lo.min(f(c));
            hi = hi.max(f(c));
        }
    }
    pad(I::new(lo, hi))
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// `ln(1 + e^x)`, computed without overflow.
fn softplus1(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

/// A bound of `erf` (Abramowitz and Stegun 7.1.26, error below 1.5e-7; `pad` covers it).
fn erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.3275911 * x.abs());
    let y = 1.0
        - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
            + 0.254829592)
            * t
            * (-x * x).exp();
    y.copysign(x)
}

const SELU_SCALE: f64 = 1.050_700_987_355_480_5;
const SELU_ALPHA: f64 = 1.673_263_242_354_377_3;

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
    match node.op {
        Op::Full => float(node, "value").map_or(any, I::point),
        // an opaque PyTorch call: nothing is known of its values
        Op::Aten => any,
        Op::Cast => {
            if out.dtype.is_float() {
                x
            } else if out.dtype == crate::DType::Bool {
                I::new(0.0, 1.0)
            } else {
                // truncation towards zero stays within the hull of x and 0
                x.hull(I::point(0.0))
            }
        }
        Op::Dropout => {
            let p = float(node, "p").unwrap_or(0.5);
            if attr(node, "training").and_then(Attr::as_bool) == Some(true) {
                if p >= 1.0 {
                    I::point(0.0)
                } else {
                    x.scale(1.0 / (1.0 - p)).hull(I::point(0.0))
                }
            } else {
                x
            }
        }
        Op::Add => x.add(ins[1]),
        Op::Sub => x.sub(ins[1]),
        Op::Mul => x.mul(ins[1]),
        Op::Div => x.div(ins[1]),
        Op::Maximum => x.max(ins[1]),
        Op::Minimum => x.min(ins[1]),
        Op::Pow => any,
        Op::Lerp => x.add(ins[2].mul(ins[1].sub(x))),
        Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => I::new(0.0, 1.0),
        Op::Where => ins[1].hull(ins[2]),
        Op::Relu => x.clip(Some(0.0), None),
        Op::LeakyRelu => {
            let s = float(node, "negative_slope").unwrap_or(0.01);
            piecewise(x, &[0.0], |v| if v >= 0.0 { v } else { s * v })
        }
        Op::Sigmoid => pad(x.monotone(sigmoid)).meet(0.0, 1.0),
        Op::Tanh => pad(x.monotone(f64::tanh)).meet(-1.0, 1.0),
        Op::Silu => piecewise(x, &[-1.278_464_542_761_074], |v| v * sigmoid(v)),
        Op::Gelu => piecewise(x, &[-0.751_791_524_693_564_5], |v| {
            0.5 * v * (1.0 + erf(v / std::f64::consts::SQRT_2))
        }),
        Op::Selu => piecewise(x, &[], |v| {
            if v > 0.0 {
                SELU_SCALE * v
            } else {
                SELU_SCALE * SELU_ALPHA * v.exp_m1()
            }
        }),
        Op::Hardsigmoid => x.monotone(|v| ((v + 3.0) / 6.0).clamp(0.0, 1.0)),
        Op::Hardswish => piecewise(x, &[-3.0, -1.5, 3.0], |v| {
            v * (v + 3.0).clamp(0.0, 6.0) / 6.0
        }),
        Op::Softplus => {
            let beta = float(node, "beta").unwrap_or(1.0);
            let th = float(node, "threshold").unwrap_or(20.0);
            if beta > 0.0 {
                piecewise(x, &[], |v| {
                    if beta * v > th {
                        v
                    } else {
                        softplus1(beta * v) / beta
                    }
                })
                .clip(Some(0.0), None)
            } else {
                any
            }
        }
        Op::Softsign => x.monotone(|v| v / (1.0 + v.abs())).meet(-1.0, 1.0),
        Op::Elu => {
            let a = float(node, "alpha").unwrap_or(1.0);
            piecewise(x, &[0.0], |v| if v > 0.0 { v } else { a * v.exp_m1() })
        }
        Op::Hardtanh => x.clip(float(node, "min_val"), float(node, "max_val")),
        Op::Clamp => x.clip(float(node, "min"), float(node, "max")),
        Op::Logsigmoid => piecewise(x, &[], |v| -softplus1(-v)).clip(None, Some(0.0)),
        Op::Mish => piecewise(x, &[-1.192_365_2], |v| v * softplus1(v).tanh()),
        Op::Abs => x.abs(),
        Op::Neg => x.neg(),
        Op::Sign => x.monotone(|v| {
            if v > 0.0 {
                1.0
            } else if v < 0.0 {
                -1.0
            } else {
                0.0
            }
        }),
        Op::Cos | Op::Sin => I::new(-1.0, 1.0),
        Op::Exp => pad(x.monotone(f64::exp)).clip(Some(0.0), None),
        Op::Exp2 => pad(x.monotone(f64::exp2)).clip(Some(0.0), None),
        Op::Log => {
            if x.lo > 0.0 {
                pad(x.monotone(f64::ln))
            } else {
                any
            }
        }
        Op::Sqrt => {
            if x.lo >= 0.0 {
                pad(x.monotone(f64::sqrt))
            } else {
                any
            }
        }
        Op::Rsqrt => {
            if x.lo > 0.0 {
                pad(I::new(1.0 / x.hi.sqrt(), 1.0 / x.lo.sqrt()))
            } else {
                any
            }
        }
        Op::Erf => {
            if x.lo >= 0.0 {
                I::new(0.0, 1.0)
            } else if x.hi <= 0.0 {
                I::new(-1.0, 0.0)
            } else {
                I::new(-1.0, 1.0)
            }
        }
        Op::Reciprocal => I::point(1.0).div(x),
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
                pad(var.monotone(f64::sqrt))
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
                pad(I::new(0.0, n.powf(1.0 / p) * x.mag()))
            } else {
                any
            }
        }
        Op::Logsumexp => xt.map_or(any, |t| pad(I::new(x.lo, x.hi + folded(t, out).ln()))),
        Op::Softmax => I::new(0.0, 1.0),
        Op::LogSoftmax => xt.map_or(any, |t| {
            let n = dim_size(t, int(node, "dim"));
            pad(I::new(x.lo - x.hi - n.ln(), 0.0))
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
        Op::Cat | Op::Stack => ins.iter().fold(x, |acc, &r| acc.hull(r)),
    }
}
