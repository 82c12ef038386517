//! The facts of each pointwise op beyond its table row: its Triton expression, its value
//! range, the domain of its inputs, its scalar value on constants and its example's
//! extras. A pointwise row of `table.rs` links its entry here (`=> pd::SILU`; the table
//! does not build without one). The layers that read them: the Triton backend renders
//! [`Triton`], the range analysis applies [`PointwiseDef::range`] and checks
//! [`PointwiseDef::domain`], the e-graph folds constants with [`PointwiseDef::eval`],
//! `example.rs` builds the example from the arity and [`PointwiseDef::example`]. The other
//! facts derive from the row: the PyTorch call from its spelling, the fusion class and
//! template support from its kind.

use super::domain::{Domain, EXP2_MAX_ARG, EXP_MAX_ARG};
use super::AttrView;
use crate::attr::Default as D;
use crate::interval::Interval as I;
use crate::DType;

/// How the Triton backend writes a pointwise op over its loaded operands.
#[derive(Clone, Copy, Debug)]
pub enum Triton {
    /// A template. `{0}`, `{1}`, `{2}`: the operands in the result's compute type; `{b0}`:
    /// operand 0 as a bool; `{zero}`, `{one}`: literals of the result dtype; `{name}`: the
    /// float attribute `name` as a literal.
    Expr(&'static str),
    /// `({0} sym {1})` with both operands in their promoted type (a comparison).
    Compare(&'static str),
    /// The template chosen by the value of a string attribute: `(attribute, [(value,
    /// template)], default template)`.
    ByAttr(
        &'static str,
        &'static [(&'static str, &'static str)],
        &'static str,
    ),
    /// The operand clipped below by one float attribute and above by another, each when set
    /// (literals of the result dtype).
    Clip(&'static str, &'static str),
    /// A power, specialized on a constant exponent; float results only.
    Power,
}

/// A scalar evaluation on constant operands (f64), `None` where undefined.
pub type EvalFn = fn(&[f64], AttrView) -> Option<f64>;

/// A sound bound of the result from bounds of the inputs, the attributes and the result's
/// dtype.
pub type RangeFn = fn(&[I], AttrView, DType) -> I;

/// The example application's extras: attributes set beyond the defaults, and dtypes of
/// inputs that are not f32 (by slot). Inputs are `f32[4, 8]`, as many as the arity asks.
#[derive(Clone, Copy, Debug)]
pub struct ExampleSpec {
    pub attrs: &'static [(&'static str, D)],
    pub dtypes: &'static [DType],
}

/// The facts of one pointwise op.
#[derive(Clone, Copy, Debug)]
pub struct PointwiseDef {
    pub triton: Triton,
    /// The value range (`range/`).
    pub range: RangeFn,
    /// The domain of each input slot; slots past the end accept any finite value.
    pub domain: &'static [Domain],
    /// The value on constants, for constant folding; `None`: not folded.
    pub eval: Option<EvalFn>,
    pub example: ExampleSpec,
}

impl PointwiseDef {
    /// An op written as a Triton template, with its range rule.
    const fn new(template: &'static str, range: RangeFn) -> PointwiseDef {
        PointwiseDef {
            triton: Triton::Expr(template),
            range,
            domain: &[],
            eval: None,
            example: ExampleSpec {
                attrs: &[],
                dtypes: &[],
            },
        }
    }

    const fn triton(self, triton: Triton) -> PointwiseDef {
        PointwiseDef { triton, ..self }
    }

    const fn domain(self, domain: &'static [Domain]) -> PointwiseDef {
        PointwiseDef { domain, ..self }
    }

    const fn folds(self, eval: EvalFn) -> PointwiseDef {
        PointwiseDef {
            eval: Some(eval),
            ..self
        }
    }

    const fn example(
        self,
        attrs: &'static [(&'static str, D)],
        dtypes: &'static [DType],
    ) -> PointwiseDef {
        PointwiseDef {
            example: ExampleSpec { attrs, dtypes },
            ..self
        }
    }
}

/// The operand of a unary operation.
fn one(a: &[f64]) -> Option<f64> {
    match a {
        [x] => Some(*x),
        _ => None,
    }
}

/// The operands of a binary operation.
fn two(a: &[f64]) -> Option<(f64, f64)> {
    match a {
        [x, y] => Some((*x, *y)),
        _ => None,
    }
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

const BOOL: I = I { lo: 0.0, hi: 1.0 };
const UNIT: I = I { lo: -1.0, hi: 1.0 };

const fn compare(sym: &'static str) -> PointwiseDef {
    PointwiseDef::new("", |_, _, _| BOOL).triton(Triton::Compare(sym))
}

// ---- casts and identities
pub const CAST: PointwiseDef = PointwiseDef::new("{0}", |x, _, out| {
    if out.is_float() {
        x[0]
    } else if out == DType::Bool {
        BOOL
    } else {
        // truncation towards zero stays within the hull of x and 0
        x[0].hull(I::point(0.0))
    }
})
.example(&[("dtype", D::DType(DType::F16))], &[]);
pub const DROPOUT: PointwiseDef = PointwiseDef::new("{0}", |x, a, _| {
    let p = a.float("p").unwrap_or(0.5);
    if a.bool("training").ok() == Some(true) {
        if p >= 1.0 {
            I::point(0.0)
        } else {
            x[0].scale(1.0 / (1.0 - p)).hull(I::point(0.0))
        }
    } else {
        x[0]
    }
});

// ---- binary and ternary, broadcasting
pub const ADD: PointwiseDef = PointwiseDef::new("({0} + {1})", |x, _, _| x[0] + x[1])
    .folds(|a, _| two(a).map(|(x, y)| x + y));
pub const SUB: PointwiseDef = PointwiseDef::new("({0} - {1})", |x, _, _| x[0] - x[1])
    .folds(|a, _| two(a).map(|(x, y)| x - y));
pub const MUL: PointwiseDef = PointwiseDef::new("({0} * {1})", |x, _, _| x[0] * x[1])
    .folds(|a, _| two(a).map(|(x, y)| x * y));
pub const DIV: PointwiseDef = PointwiseDef::new("({0} / {1})", |x, _, _| x[0] / x[1])
    .domain(&[Domain::Any, Domain::NonZero])
    .folds(|a, _| two(a).map(|(x, y)| x / y));
pub const MAXIMUM: PointwiseDef =
    PointwiseDef::new("tl.maximum({0}, {1})", |x, _, _| x[0].max(x[1]))
        .folds(|a, _| two(a).map(|(x, y)| x.max(y)));
pub const MINIMUM: PointwiseDef =
    PointwiseDef::new("tl.minimum({0}, {1})", |x, _, _| x[0].min(x[1]))
        .folds(|a, _| two(a).map(|(x, y)| x.min(y)));
pub const POW: PointwiseDef = PointwiseDef::new("", |_, _, _| I::ANY)
    .triton(Triton::Power)
    .domain(&[Domain::PowBase])
    .folds(|a, _| two(a).map(|(x, y)| x.powf(y)));
pub const LERP: PointwiseDef = PointwiseDef::new("({0} + {2} * ({1} - {0}))", |x, _, _| {
    x[0] + x[2] * (x[1] - x[0])
});
pub const EQ: PointwiseDef = compare("==");
pub const NE: PointwiseDef = compare("!=");
pub const LT: PointwiseDef = compare("<");
pub const LE: PointwiseDef = compare("<=");
pub const GT: PointwiseDef = compare(">");
pub const GE: PointwiseDef = compare(">=");
pub const WHERE: PointwiseDef =
    PointwiseDef::new("tl.where({b0}, {1}, {2})", |x, _, _| x[1].hull(x[2]))
        .example(&[], &[DType::Bool]);

// ---- activations
pub const RELU: PointwiseDef = PointwiseDef::new("tl.maximum({0}, {zero})", |x, _, _| {
    x[0].clip(Some(0.0), None)
})
.folds(|a, _| one(a).map(|x| x.max(0.0)));
pub const LEAKY_RELU: PointwiseDef = PointwiseDef::new(
    "tl.where({0} > 0.0, {0}, {0} * {negative_slope})",
    |x, a, _| {
        let s = a.float("negative_slope").unwrap_or(0.01);
        x[0].piecewise(&[0.0], |v| if v >= 0.0 { v } else { s * v })
    },
);
pub const SIGMOID: PointwiseDef = PointwiseDef::new("tl.sigmoid({0})", |x, _, _| {
    x[0].monotone(sigmoid).pad().meet(0.0, 1.0)
})
.folds(|a, _| one(a).map(sigmoid));
pub const TANH: PointwiseDef =
    PointwiseDef::new("(2.0 * tl.sigmoid(2.0 * {0}) - 1.0)", |x, _, _| {
        x[0].monotone(f64::tanh).pad().meet(-1.0, 1.0)
    })
    .folds(|a, _| one(a).map(f64::tanh));
pub const SILU: PointwiseDef = PointwiseDef::new("({0} * tl.sigmoid({0}))", |x, _, _| {
    x[0].piecewise(&[-1.278_464_542_761_074], |v| v * sigmoid(v))
});
pub const GELU: PointwiseDef = PointwiseDef::new("", |x, _, _| {
    x[0].piecewise(&[-0.751_791_524_693_564_5], |v| {
        0.5 * v * (1.0 + erf(v / std::f64::consts::SQRT_2))
    })
})
.triton(Triton::ByAttr(
    "approximate",
    &[(
        "tanh",
        "(0.5 * {0} * (1.0 + (2.0 * tl.sigmoid(2.0 * 0.7978845608028654 * ({0} + 0.044715 * {0} * {0} * {0})) - 1.0)))",
    )],
    "(0.5 * {0} * (1.0 + tl.erf({0} * 0.7071067811865476)))",
));
pub const SELU: PointwiseDef = PointwiseDef::new(
    "(1.0507009873554805 * tl.where({0} > 0.0, {0}, 1.6732632423543772 * (tl.exp({0}) - 1.0)))",
    |x, _, _| {
        x[0].piecewise(&[], |v| {
            if v > 0.0 {
                SELU_SCALE * v
            } else {
                SELU_SCALE * SELU_ALPHA * v.exp_m1()
            }
        })
    },
);
pub const HARDSIGMOID: PointwiseDef = PointwiseDef::new(
    "tl.minimum(tl.maximum({0} / 6.0 + 0.5, 0.0), 1.0)",
    |x, _, _| x[0].monotone(|v| ((v + 3.0) / 6.0).clamp(0.0, 1.0)),
);
pub const HARDSWISH: PointwiseDef = PointwiseDef::new(
    "({0} * tl.minimum(tl.maximum({0} / 6.0 + 0.5, 0.0), 1.0))",
    |x, _, _| x[0].piecewise(&[-3.0, -1.5, 3.0], |v| v * (v + 3.0).clamp(0.0, 6.0) / 6.0),
);
pub const SOFTPLUS: PointwiseDef = PointwiseDef::new(
    "tl.where({0} * {beta} > {threshold}, {0}, tl.log(1.0 + tl.exp(tl.minimum({0} * {beta}, {threshold}))) / {beta})",
    |x, a, _| {
        let beta = a.float("beta").unwrap_or(1.0);
        let th = a.float("threshold").unwrap_or(20.0);
        if beta > 0.0 {
            x[0].piecewise(&[], |v| {
                if beta * v > th {
                    v
                } else {
                    softplus1(beta * v) / beta
                }
            })
            .clip(Some(0.0), None)
        } else {
            I::ANY
        }
    },
);
pub const SOFTSIGN: PointwiseDef = PointwiseDef::new("({0} / (1.0 + tl.abs({0})))", |x, _, _| {
    x[0].monotone(|v| v / (1.0 + v.abs())).meet(-1.0, 1.0)
});
pub const ELU: PointwiseDef = PointwiseDef::new(
    "tl.where({0} > 0.0, {0}, {alpha} * (tl.exp({0}) - 1.0))",
    |x, a, _| {
        let alpha = a.float("alpha").unwrap_or(1.0);
        x[0].piecewise(&[0.0], |v| if v > 0.0 { v } else { alpha * v.exp_m1() })
    },
);
pub const HARDTANH: PointwiseDef = PointwiseDef::new("", |x, a, _| {
    x[0].clip(a.float("min_val").ok(), a.float("max_val").ok())
})
.triton(Triton::Clip("min_val", "max_val"));
pub const CLAMP: PointwiseDef = PointwiseDef::new("", |x, a, _| {
    x[0].clip(a.float("min").ok(), a.float("max").ok())
})
.triton(Triton::Clip("min", "max"))
.folds(|a, attrs| {
    let x = one(a)?;
    let x = attrs.float("min").ok().map_or(x, |l| x.max(l));
    Some(attrs.float("max").ok().map_or(x, |h| x.min(h)))
})
.example(&[("min", D::Float(0.0))], &[]);
pub const LOGSIGMOID: PointwiseDef = PointwiseDef::new(
    "(tl.minimum({0}, 0.0) - tl.log(1.0 + tl.exp(-tl.abs({0}))))",
    |x, _, _| {
        x[0].piecewise(&[], |v| -softplus1(-v))
            .clip(None, Some(0.0))
    },
);
/// `x * tanh(softplus(x))`, softplus with beta 1 and threshold 20.
pub const MISH: PointwiseDef = PointwiseDef::new(
    "({0} * (2.0 * tl.sigmoid(2.0 * tl.where({0} * 1.0 > 20.0, {0}, tl.log(1.0 + tl.exp(tl.minimum({0} * 1.0, 20.0))) / 1.0)) - 1.0))",
    |x, _, _| x[0].piecewise(&[-1.192_365_2], |v| v * softplus1(v).tanh()),
);

// ---- elementary functions
pub const ABS: PointwiseDef =
    PointwiseDef::new("tl.abs({0})", |x, _, _| x[0].abs()).folds(|a, _| one(a).map(f64::abs));
pub const NEG: PointwiseDef =
    PointwiseDef::new("(-{0})", |x, _, _| -x[0]).folds(|a, _| one(a).map(|x| -x));
pub const SIGN: PointwiseDef = PointwiseDef::new(
    "tl.where({0} > {zero}, {one}, tl.where({0} < {zero}, -{one}, {zero}))",
    |x, _, _| {
        x[0].monotone(|v| {
            if v > 0.0 {
                1.0
            } else if v < 0.0 {
                -1.0
            } else {
                0.0
            }
        })
    },
);
pub const COS: PointwiseDef = PointwiseDef::new("tl.cos({0})", |_, _, _| UNIT);
pub const SIN: PointwiseDef = PointwiseDef::new("tl.sin({0})", |_, _, _| UNIT);
pub const EXP: PointwiseDef = PointwiseDef::new("tl.exp({0})", |x, _, _| {
    x[0].monotone(f64::exp).pad().clip(Some(0.0), None)
})
.domain(&[Domain::AtMost(EXP_MAX_ARG)])
.folds(|a, _| one(a).map(f64::exp));
pub const EXP2: PointwiseDef = PointwiseDef::new("tl.exp2({0})", |x, _, _| {
    x[0].monotone(f64::exp2).pad().clip(Some(0.0), None)
})
.domain(&[Domain::AtMost(EXP2_MAX_ARG)]);
pub const LOG: PointwiseDef = PointwiseDef::new("tl.log({0})", |x, _, _| {
    if x[0].lo > 0.0 {
        x[0].monotone(f64::ln).pad()
    } else {
        I::ANY
    }
})
.domain(&[Domain::Positive])
.folds(|a, _| one(a).map(f64::ln));
pub const SQRT: PointwiseDef = PointwiseDef::new("tl.sqrt({0})", |x, _, _| {
    if x[0].lo >= 0.0 {
        x[0].monotone(f64::sqrt).pad()
    } else {
        I::ANY
    }
})
.domain(&[Domain::NonNegative])
.folds(|a, _| one(a).map(f64::sqrt));
pub const RSQRT: PointwiseDef = PointwiseDef::new("tl.rsqrt({0})", |x, _, _| {
    if x[0].lo > 0.0 {
        I::new(1.0 / x[0].hi.sqrt(), 1.0 / x[0].lo.sqrt()).pad()
    } else {
        I::ANY
    }
})
.domain(&[Domain::Positive])
.folds(|a, _| one(a).map(|x| 1.0 / x.sqrt()));
pub const ERF: PointwiseDef = PointwiseDef::new("tl.erf({0})", |x, _, _| {
    if x[0].lo >= 0.0 {
        BOOL
    } else if x[0].hi <= 0.0 {
        I::new(-1.0, 0.0)
    } else {
        UNIT
    }
});
pub const RECIPROCAL: PointwiseDef =
    PointwiseDef::new("(1.0 / {0})", |x, _, _| I::point(1.0) / x[0])
        .domain(&[Domain::NonZero])
        .folds(|a, _| one(a).map(|x| 1.0 / x));
