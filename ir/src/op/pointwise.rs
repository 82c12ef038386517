//! The facts of each pointwise op beyond its table row: its Triton expression, the domain
//! of its inputs, its scalar value on constants and its example's extras. A pointwise row
//! of `table.rs` links its entry here (`=> pd::SILU`); the layers read these facts instead
//! of restating them per op: the Triton backend renders [`Triton`], `domain.rs` and the
//! range analysis read [`PointwiseDef::domain`], the e-graph folds constants with
//! [`PointwiseDef::eval`], `example.rs` builds the example from the arity and
//! [`PointwiseDef::example`]. The other facts derive from the row: the PyTorch spelling
//! from its calls, the fusion class and template support from its kind.

use super::domain::{Domain, EXP2_MAX_ARG, EXP_MAX_ARG};
use super::AttrView;
use crate::attr::Default as D;
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
    /// The domain of each input slot; slots past the end accept any finite value.
    pub domain: &'static [Domain],
    /// The value on constants, for constant folding; `None`: not folded.
    pub eval: Option<EvalFn>,
    pub example: ExampleSpec,
}

const PLAIN: ExampleSpec = ExampleSpec {
    attrs: &[],
    dtypes: &[],
};

const fn expr(t: &'static str) -> PointwiseDef {
    PointwiseDef {
        triton: Triton::Expr(t),
        domain: &[],
        eval: None,
        example: PLAIN,
    }
}

const fn folded(t: &'static str, eval: EvalFn) -> PointwiseDef {
    PointwiseDef {
        eval: Some(eval),
        ..expr(t)
    }
}

const fn compare(sym: &'static str) -> PointwiseDef {
    PointwiseDef {
        triton: Triton::Compare(sym),
        ..expr("")
    }
}

/// `x`'s value when the operation has one operand.
fn one(a: &[f64]) -> Option<f64> {
    match a {
        [x] => Some(*x),
        _ => None,
    }
}

/// The two operands of a binary operation.
fn two(a: &[f64]) -> Option<(f64, f64)> {
    match a {
        [x, y] => Some((*x, *y)),
        _ => None,
    }
}

pub const CAST: PointwiseDef = PointwiseDef {
    example: ExampleSpec {
        attrs: &[("dtype", D::DType(DType::F16))],
        dtypes: &[],
    },
    ..expr("{0}")
};
pub const DROPOUT: PointwiseDef = expr("{0}");

pub const ADD: PointwiseDef = folded("({0} + {1})", |a, _| two(a).map(|(x, y)| x + y));
pub const SUB: PointwiseDef = folded("({0} - {1})", |a, _| two(a).map(|(x, y)| x - y));
pub const MUL: PointwiseDef = folded("({0} * {1})", |a, _| two(a).map(|(x, y)| x * y));
pub const DIV: PointwiseDef = PointwiseDef {
    domain: &[Domain::Any, Domain::NonZero],
    ..folded("({0} / {1})", |a, _| two(a).map(|(x, y)| x / y))
};
pub const MAXIMUM: PointwiseDef =
    folded("tl.maximum({0}, {1})", |a, _| two(a).map(|(x, y)| x.max(y)));
pub const MINIMUM: PointwiseDef =
    folded("tl.minimum({0}, {1})", |a, _| two(a).map(|(x, y)| x.min(y)));
pub const POW: PointwiseDef = PointwiseDef {
    triton: Triton::Power,
    domain: &[Domain::PowBase],
    eval: Some(|a, _| two(a).map(|(x, y)| x.powf(y))),
    example: PLAIN,
};
pub const LERP: PointwiseDef = expr("({0} + {2} * ({1} - {0}))");
pub const EQ: PointwiseDef = compare("==");
pub const NE: PointwiseDef = compare("!=");
pub const LT: PointwiseDef = compare("<");
pub const LE: PointwiseDef = compare("<=");
pub const GT: PointwiseDef = compare(">");
pub const GE: PointwiseDef = compare(">=");
pub const WHERE: PointwiseDef = PointwiseDef {
    example: ExampleSpec {
        attrs: &[],
        dtypes: &[DType::Bool],
    },
    ..expr("tl.where({b0}, {1}, {2})")
};

pub const RELU: PointwiseDef = folded("tl.maximum({0}, {zero})", |a, _| one(a).map(|x| x.max(0.0)));
pub const LEAKY_RELU: PointwiseDef = expr("tl.where({0} > 0.0, {0}, {0} * {negative_slope})");
pub const SIGMOID: PointwiseDef = folded("tl.sigmoid({0})", |a, _| {
    one(a).map(|x| 1.0 / (1.0 + (-x).exp()))
});
pub const TANH: PointwiseDef = folded("(2.0 * tl.sigmoid(2.0 * {0}) - 1.0)", |a, _| {
    one(a).map(f64::tanh)
});
pub const SILU: PointwiseDef = expr("({0} * tl.sigmoid({0}))");
pub const GELU: PointwiseDef = PointwiseDef {
    triton: Triton::ByAttr(
        "approximate",
        &[(
            "tanh",
            "(0.5 * {0} * (1.0 + (2.0 * tl.sigmoid(2.0 * 0.7978845608028654 * ({0} + 0.044715 * {0} * {0} * {0})) - 1.0)))",
        )],
        "(0.5 * {0} * (1.0 + tl.erf({0} * 0.7071067811865476)))",
    ),
    ..expr("")
};
pub const SELU: PointwiseDef = expr(
    "(1.0507009873554805 * tl.where({0} > 0.0, {0}, 1.6732632423543772 * (tl.exp({0}) - 1.0)))",
);
pub const HARDSIGMOID: PointwiseDef = expr("tl.minimum(tl.maximum({0} / 6.0 + 0.5, 0.0), 1.0)");
pub const HARDSWISH: PointwiseDef =
    expr("({0} * tl.minimum(tl.maximum({0} / 6.0 + 0.5, 0.0), 1.0))");
pub const SOFTPLUS: PointwiseDef = expr(
    "tl.where({0} * {beta} > {threshold}, {0}, tl.log(1.0 + tl.exp(tl.minimum({0} * {beta}, {threshold}))) / {beta})",
);
pub const SOFTSIGN: PointwiseDef = expr("({0} / (1.0 + tl.abs({0})))");
pub const ELU: PointwiseDef = expr("tl.where({0} > 0.0, {0}, {alpha} * (tl.exp({0}) - 1.0))");
pub const HARDTANH: PointwiseDef = PointwiseDef {
    triton: Triton::Clip("min_val", "max_val"),
    ..expr("")
};
pub const CLAMP: PointwiseDef = PointwiseDef {
    triton: Triton::Clip("min", "max"),
    eval: Some(|a, attrs| {
        let x = one(a)?;
        let x = attrs
            .opt_float("min")
            .ok()
            .flatten()
            .map_or(x, |l| x.max(l));
        Some(
            attrs
                .opt_float("max")
                .ok()
                .flatten()
                .map_or(x, |h| x.min(h)),
        )
    }),
    domain: &[],
    example: ExampleSpec {
        attrs: &[("min", D::Float(0.0))],
        dtypes: &[],
    },
};
pub const LOGSIGMOID: PointwiseDef =
    expr("(tl.minimum({0}, 0.0) - tl.log(1.0 + tl.exp(-tl.abs({0}))))");
/// `x * tanh(softplus(x))`, softplus with beta 1 and threshold 20.
pub const MISH: PointwiseDef = expr(
    "({0} * (2.0 * tl.sigmoid(2.0 * tl.where({0} * 1.0 > 20.0, {0}, tl.log(1.0 + tl.exp(tl.minimum({0} * 1.0, 20.0))) / 1.0)) - 1.0))",
);
pub const ABS: PointwiseDef = folded("tl.abs({0})", |a, _| one(a).map(f64::abs));
pub const NEG: PointwiseDef = folded("(-{0})", |a, _| one(a).map(|x| -x));
pub const SIGN: PointwiseDef =
    expr("tl.where({0} > {zero}, {one}, tl.where({0} < {zero}, -{one}, {zero}))");
pub const COS: PointwiseDef = expr("tl.cos({0})");
pub const SIN: PointwiseDef = expr("tl.sin({0})");
pub const EXP: PointwiseDef = PointwiseDef {
    domain: &[Domain::AtMost(EXP_MAX_ARG)],
    ..folded("tl.exp({0})", |a, _| one(a).map(f64::exp))
};
pub const EXP2: PointwiseDef = PointwiseDef {
    domain: &[Domain::AtMost(EXP2_MAX_ARG)],
    ..expr("tl.exp2({0})")
};
pub const LOG: PointwiseDef = PointwiseDef {
    domain: &[Domain::Positive],
    ..folded("tl.log({0})", |a, _| one(a).map(f64::ln))
};
pub const SQRT: PointwiseDef = PointwiseDef {
    domain: &[Domain::NonNegative],
    ..folded("tl.sqrt({0})", |a, _| one(a).map(f64::sqrt))
};
pub const RSQRT: PointwiseDef = PointwiseDef {
    domain: &[Domain::Positive],
    ..folded("tl.rsqrt({0})", |a, _| one(a).map(|x| 1.0 / x.sqrt()))
};
pub const ERF: PointwiseDef = expr("tl.erf({0})");
pub const RECIPROCAL: PointwiseDef = PointwiseDef {
    domain: &[Domain::NonZero],
    ..folded("(1.0 / {0})", |a, _| one(a).map(|x| 1.0 / x))
};
