//! Activation recognition: the written-out forms of silu, sigmoid, mish, hardsigmoid,
//! hardswish, gelu (exact and tanh), softplus, logsigmoid and softsign become the named
//! op, so one fused kernel computes them with one read and one write. Constants are
//! matched with a relative tolerance of 1e-6 (`0.7978845608` for sqrt(2/pi)).

use crate::egraph::rule::{Match, Rule};
use drtc_ir::Attr;
use std::f64::consts::{FRAC_1_SQRT_2, PI, SQRT_2};

/// sqrt(2 / pi), the tanh-gelu scale.
fn k_gelu() -> f64 {
    (2.0 / PI).sqrt()
}

/// A softplus with PyTorch's defaults (beta 1, threshold 20).
fn default_softplus(m: &Match, a: &str) -> bool {
    m.attr(a, "beta").and_then(Attr::as_float) == Some(1.0)
        && m.attr(a, "threshold").and_then(Attr::as_float) == Some(20.0)
}

/// clamp(_, 0, 6).
fn relu6(m: &Match, a: &str) -> bool {
    m.attr(a, "min").and_then(Attr::as_float) == Some(0.0)
        && m.attr(a, "max").and_then(Attr::as_float) == Some(6.0)
}

/// clamp(_, 0, 1).
fn unit(m: &Match, a: &str) -> bool {
    m.attr(a, "min").and_then(Attr::as_float) == Some(0.0)
        && m.attr(a, "max").and_then(Attr::as_float) == Some(1.0)
}

pub fn rules() -> Vec<Rule> {
    vec![
        // x * sigmoid(x) = silu(x) (swish).
        Rule::rewrite("silu", "(mul ?x (sigmoid ?x))", "(silu ?x)")
            .test("x: f32[4, 8] | (mul (sigmoid x) x) => (silu x)"),
        // x / (1 + exp(-x)) = silu(x).
        Rule::rewrite("silu-div", "(div ?x (add ?one (exp (neg ?x))))", "(silu ?x)")
            .when(|m| m.is_scalar("?one", 1.0))
            .test("x: f32[4, 8] | (div x (add 1.0 (exp (neg x)))) => (silu x)"),
        // 1 / (1 + exp(-x)) = sigmoid(x).
        Rule::rewrite("sigmoid", "(div ?one (add ?one2 (exp (neg ?x))))", "(sigmoid ?x)")
            .when(|m| m.is_scalar("?one", 1.0) && m.is_scalar("?one2", 1.0))
            .test("x: f32[4, 8] | (div 1.0 (add (exp (neg x)) 1.0)) => (sigmoid x)"),
        // reciprocal(1 + exp(-x)) = sigmoid(x).
        Rule::rewrite("sigmoid-reciprocal", "(reciprocal (add ?one (exp (neg ?x))))", "(sigmoid ?x)")
            .when(|m| m.is_scalar("?one", 1.0))
            .test("x: f32[4, 8] | (reciprocal (add 1.0 (exp (neg x)))) => (sigmoid x)"),
        // log(1 + exp(x)) = softplus(x) (beta 1, threshold 20: above it softplus returns x,
        // where the written-out form overflows to inf for x > 88).
        Rule::rewrite("softplus", "(log (add ?one (exp ?x)))", "(softplus ?x)")
            .when(|m| m.is_scalar("?one", 1.0))
            .test("x: f32[4, 8] | (log (add (exp x) 1.0)) => (softplus x)"),
        // x * tanh(softplus(x)) = mish(x).
        Rule::rewrite("mish", "(mul ?x (tanh (softplus ?x ?a)))", "(mish ?x)")
            .when(|m| default_softplus(m, "?a"))
            .test("x: f32[4, 8] | (mul x (tanh (log (add 1.0 (exp x))))) => (mish x)"),
        // log(sigmoid(x)) = logsigmoid(x).
        Rule::rewrite("logsigmoid", "(log (sigmoid ?x))", "(logsigmoid ?x)")
            .test("x: f32[4, 8] | (log (sigmoid x)) => (logsigmoid x)"),
        // -softplus(-x) = logsigmoid(x).
        Rule::rewrite("logsigmoid-softplus", "(neg (softplus (neg ?x) ?a))", "(logsigmoid ?x)")
            .when(|m| default_softplus(m, "?a"))
            .test("x: f32[4, 8] | (neg (softplus (neg x))) => (logsigmoid x)"),
        // x / (1 + |x|) = softsign(x).
        Rule::rewrite("softsign", "(div ?x (add ?one (abs ?x)))", "(softsign ?x)")
            .when(|m| m.is_scalar("?one", 1.0))
            .test("x: f32[4, 8] | (div x (add (abs x) 1.0)) => (softsign x)"),
        // clamp(x + 3, 0, 6) / 6 = hardsigmoid(x).
        Rule::rewrite("hardsigmoid", "(div (clamp (add ?x ?three) ?a) ?six)", "(hardsigmoid ?x)")
            .when(|m| m.is_scalar("?three", 3.0) && m.is_scalar("?six", 6.0) && relu6(m, "?a"))
            .test("x: f32[4, 8] | (div (clamp (add x 3.0) @min=0.0;max=6.0) 6.0) => (hardsigmoid x)"),
        // clamp((x + 3) / 6, 0, 1) = hardsigmoid(x).
        Rule::rewrite("hardsigmoid-unit", "(clamp (div (add ?x ?three) ?six) ?a)", "(hardsigmoid ?x)")
            .when(|m| m.is_scalar("?three", 3.0) && m.is_scalar("?six", 6.0) && unit(m, "?a"))
            .test("x: f32[4, 8] | (mul x (clamp (div (add x 3.0) 6.0) @min=0.0;max=1.0)) => (hardswish x)"),
        // x * hardsigmoid(x) = hardswish(x).
        Rule::rewrite("hardswish", "(mul ?x (hardsigmoid ?x))", "(hardswish ?x)")
            .test("x: f32[4, 8] | (mul (hardsigmoid x) x) => (hardswish x)"),
        // x * clamp(x + 3, 0, 6) / 6 = hardswish(x).
        Rule::rewrite("hardswish-div", "(div (mul ?x (clamp (add ?x ?three) ?a)) ?six)", "(hardswish ?x)")
            .when(|m| m.is_scalar("?three", 3.0) && m.is_scalar("?six", 6.0) && relu6(m, "?a"))
            .test("x: f32[4, 8] | (div (mul x (hardtanh (add x 3.0) @min_val=0.0;max_val=6.0)) 6.0) => (hardswish x)"),
        // 0.5 * x * (1 + erf(x / sqrt(2))) = gelu(x).
        Rule::rewrite("gelu-erf-div", "(mul (mul ?h ?x) (add ?one (erf (div ?x ?s))))", "(gelu ?x @approximate=none)")
            .when(|m| m.is_scalar("?h", 0.5) && m.is_scalar("?one", 1.0) && m.is_scalar("?s", SQRT_2))
            .test("x: f32[4, 8] | (mul (mul x 0.5) (add 1.0 (erf (div x 1.4142135623730951)))) => (gelu x)"),
        // 0.5 * x * (1 + erf(x * (1/sqrt(2)))) = gelu(x).
        Rule::rewrite("gelu-erf-mul", "(mul (mul ?h ?x) (add ?one (erf (mul ?x ?s))))", "(gelu ?x @approximate=none)")
            .when(|m| m.is_scalar("?h", 0.5) && m.is_scalar("?one", 1.0) && m.is_scalar("?s", FRAC_1_SQRT_2))
            .test("x: f32[4, 8] | (mul (mul 0.5 x) (add (erf (mul x 0.7071067811865476)) 1.0)) => (gelu x)"),
        // 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) = gelu(x, tanh).
        Rule::rewrite("gelu-tanh", "(mul (mul ?h ?x) (add ?one (tanh (mul ?k (add ?x (mul ?c (pow ?x ?three)))))))", "(gelu ?x @approximate=tanh)")
            .when(|m| {
                m.is_scalar("?h", 0.5)
                    && m.is_scalar("?one", 1.0)
                    && m.is_scalar("?k", k_gelu())
                    && m.is_scalar("?c", 0.044715)
                    && m.is_scalar("?three", 3.0)
            })
            .test("x: f32[4, 8] | (mul (mul 0.5 x) (add 1.0 (tanh (mul 0.7978845608028654 (add x (mul 0.044715 (pow x 3.0))))))) => (gelu x @approximate=tanh)"),
        // The same with x^3 written as x * x * x.
        Rule::rewrite("gelu-tanh-cube", "(mul (mul ?h ?x) (add ?one (tanh (mul ?k (add ?x (mul ?c (mul (mul ?x ?x) ?x)))))))", "(gelu ?x @approximate=tanh)")
            .when(|m| {
                m.is_scalar("?h", 0.5)
                    && m.is_scalar("?one", 1.0)
                    && m.is_scalar("?k", k_gelu())
                    && m.is_scalar("?c", 0.044715)
            })
            .test("x: f32[4, 8] | (mul (mul x 0.5) (add 1.0 (tanh (mul (add x (mul (mul (mul x x) x) 0.044715)) 0.7978845608))))) => (gelu x @approximate=tanh)"),
    ]
}
