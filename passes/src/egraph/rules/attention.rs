//! Attention written out: `softmax(q @ kt * scale + mask) @ v`, the scores materialized,
//! is `scaled_dot_product_attention(q, kt^T, v, mask, scale)`, which never writes the
//! `[..., L, S]` scores (PyTorch's fused attention kernels keep them on chip). The forms
//! matched, with the product as `matmul` or `bmm`:
//!
//! - the scores `q @ kt`, times a scalar constant or divided by one (a scale folded into
//!   `q` before the product is part of `q`: the replacement computes exactly that `q`);
//! - optionally masked with `-inf` (`masked_fill(s, m, -inf)` is `where(m, -inf, s)`;
//!   `where(m, s, -inf)` keeps where `m` holds): the mask becomes an additive one, `-inf`
//!   where the scores were filled and `0` elsewhere, which SDPA adds to the scaled scores
//!   (`s + 0` is `s` exactly, `s + -inf` is `-inf`), plus NaN on the rows where every
//!   score was filled (the written-out softmax is NaN there, `exp(-inf - -inf)`, where
//!   SDPA may give 0): `0 / max(kept, -1)`, 0 on a row that keeps a score and 0/0 on one
//!   that keeps none. The mask is usually small (`[L, S]`, broadcast over the batch);
//!   these ops read only it;
//! - a softmax over the last dim, then the product with `v`.
//!
//! `q`, `kt` and `v` must have rank 3 or 4 and the same batch dims (no broadcasting
//! between them). The scale is always explicit (SDPA's default is `1/sqrt(E)`). Whether the
//! rewrite pays is the cost model's call: the scores' traffic against the fused op's.

use crate::egraph::rule::{norm_dim, Build, Rule};
use drtc_ir::{Attr, DType, Op};

/// How the scores are scaled before the softmax.
#[derive(Clone, Copy)]
enum Scale {
    /// Not at all.
    One,
    /// `s * ?c`.
    Mul,
    /// `s / ?c`.
    Div,
}

/// How the scores are masked before the softmax.
#[derive(Clone, Copy)]
enum Mask {
    None,
    /// `where(?m, ?f, s)`: `-inf` where `?m` holds.
    FillWhere,
    /// `where(?m, s, ?f)`: `-inf` where `?m` does not hold.
    KeepWhere,
}

/// The SDPA call equal to the match, or `None` when the shapes, dtypes, dim or constants
/// do not fit.
fn attend(b: &mut Build, scale: Scale, mask: Mask) -> Option<egg::Id> {
    let m = b.m();
    let (q, kt, v) = (m.ty("?q")?, m.ty("?kt")?, m.ty("?v")?);
    let rank = q.rank();
    let dtype = q.dtype;
    if !(3..=4).contains(&rank)
        || kt.rank() != rank
        || v.rank() != rank
        || !matches!(dtype, DType::F32 | DType::F16 | DType::BF16)
        || kt.dtype != dtype
        || v.dtype != dtype
        || q.shape[..rank - 2] != kt.shape[..rank - 2]
        || q.shape[..rank - 2] != v.shape[..rank - 2]
        || q.shape[rank - 1] != kt.shape[rank - 2]
        || kt.shape[rank - 1] != v.shape[rank - 2]
    {
        return None;
    }
    let dim = m.attr("?a", "dim")?.as_int()?;
    (norm_dim(dim, rank)? == rank - 1).then_some(())?;
    let factor = match scale {
        Scale::One => 1.0,
        Scale::Mul => m.scalar("?c")?,
        Scale::Div => 1.0 / m.scalar("?c")?,
    };
    if !factor.is_finite() {
        return None;
    }
    let fill = match mask {
        Mask::None => None,
        Mask::FillWhere | Mask::KeepWhere => {
            (m.scalar("?f")? == f64::NEG_INFINITY).then_some(())?;
            (m.ty("?m")?.dtype == DType::Bool).then_some(())?;
            Some(m.id("?m"))
        }
    };
    let (q, kt, v) = (m.id("?q"), m.id("?kt"), m.id("?v"));
    let k = b.op(
        Op::Transpose,
        &[kt],
        [("dim0", Attr::Int(-2)), ("dim1", Attr::Int(-1))],
    )?;
    let mut inputs = vec![q, k, v];
    if let Some(cond) = fill {
        let ninf = b.constant(f64::NEG_INFINITY, dtype);
        let zero = b.constant(0.0, dtype);
        let one = b.constant(1.0, dtype);
        let ((yes, no), (kept_yes, kept_no)) = match mask {
            Mask::KeepWhere => ((zero, ninf), (one, zero)),
            Mask::FillWhere | Mask::None => ((ninf, zero), (zero, one)),
        };
        let additive = b.op(Op::Where, &[cond, yes, no], [])?;
        // a row with every score filled is NaN in the written-out softmax (`exp(-inf -
        // -inf)`), where SDPA may give 0: `0 / (any kept in the row)` adds NaN there
        let kept = b.op(Op::Where, &[cond, kept_yes, kept_no], [])?;
        let any = b.op(
            Op::Max,
            &[kept],
            [("dim", Attr::Ints(vec![-1])), ("keepdim", Attr::Bool(true))],
        )?;
        let guard = b.op(Op::Div, &[zero, any], [])?;
        inputs.push(b.op(Op::Add, &[additive, guard], [])?);
    }
    b.op(Op::Attention, &inputs, [("scale", Attr::Float(factor))])
}

/// The nine forms (three scalings, three maskings) with the products as `$op`.
macro_rules! forms {
    ($op:literal) => {{
        vec![
            Rule::build(
                concat!("attention-", $op),
                concat!("(", $op, " (softmax (", $op, " ?q ?kt) ?a) ?v)"),
                |b| attend(b, Scale::One, Mask::None),
            )
            .test(concat!(
                "q: f32[2, 64, 8], kt: f32[2, 8, 64], v: f32[2, 64, 8] | (",
                $op,
                " (softmax (",
                $op,
                " q kt) @dim=-1) v) => (scaled_dot_product_attention q (transpose kt @dim0=-2;dim1=-1) v @scale=1.0)"
            )),
            Rule::build(
                concat!("attention-", $op, "-scaled"),
                concat!("(", $op, " (softmax (mul (", $op, " ?q ?kt) ?c) ?a) ?v)"),
                |b| attend(b, Scale::Mul, Mask::None),
            )
            .test(concat!(
                "q: f32[2, 64, 8], kt: f32[2, 8, 64], v: f32[2, 64, 8] | (",
                $op,
                " (softmax (mul (",
                $op,
                " q kt) 0.25) @dim=-1) v) => (scaled_dot_product_attention q (transpose kt @dim0=-2;dim1=-1) v @scale=0.25)"
            )),
            Rule::build(
                concat!("attention-", $op, "-divided"),
                concat!("(", $op, " (softmax (div (", $op, " ?q ?kt) ?c) ?a) ?v)"),
                |b| attend(b, Scale::Div, Mask::None),
            )
            .test(concat!(
                "q: f32[2, 64, 8], kt: f32[2, 8, 64], v: f32[2, 64, 8] | (",
                $op,
                " (softmax (div (",
                $op,
                " q kt) 4.0) @dim=-1) v) => (scaled_dot_product_attention q (transpose kt @dim0=-2;dim1=-1) v @scale=0.25)"
            )),
            Rule::build(
                concat!("attention-", $op, "-filled"),
                concat!("(", $op, " (softmax (where ?m ?f (", $op, " ?q ?kt)) ?a) ?v)"),
                |b| attend(b, Scale::One, Mask::FillWhere),
            )
            .test(concat!(
                "q: f32[2, 64, 8], kt: f32[2, 8, 64], v: f32[2, 64, 8], m: bool[64, 64] | (",
                $op,
                " (softmax (where m -inf (",
                $op,
                " q kt)) @dim=-1) v) => (scaled_dot_product_attention q (transpose kt @dim0=-2;dim1=-1) v (add (where m -inf 0.0) (div 0.0 (max (where m 0.0 1.0) @dim=[-1];keepdim=true))) @scale=1.0)"
            )),
            Rule::build(
                concat!("attention-", $op, "-scaled-filled"),
                concat!("(", $op, " (softmax (where ?m ?f (mul (", $op, " ?q ?kt) ?c)) ?a) ?v)"),
                |b| attend(b, Scale::Mul, Mask::FillWhere),
            )
            .test(concat!(
                "q: f32[2, 64, 8], kt: f32[2, 8, 64], v: f32[2, 64, 8], m: bool[64, 64] | (",
                $op,
                " (softmax (where m -inf (mul (",
                $op,
                " q kt) 0.25)) @dim=-1) v) => (scaled_dot_product_attention q (transpose kt @dim0=-2;dim1=-1) v (add (where m -inf 0.0) (div 0.0 (max (where m 0.0 1.0) @dim=[-1];keepdim=true))) @scale=0.25)"
            )),
            Rule::build(
                concat!("attention-", $op, "-divided-filled"),
                concat!("(", $op, " (softmax (where ?m ?f (div (", $op, " ?q ?kt) ?c)) ?a) ?v)"),
                |b| attend(b, Scale::Div, Mask::FillWhere),
            )
            .test(concat!(
                "q: f32[2, 64, 8], kt: f32[2, 8, 64], v: f32[2, 64, 8], m: bool[64, 64] | (",
                $op,
                " (softmax (where m -inf (div (",
                $op,
                " q kt) 4.0)) @dim=-1) v) => (scaled_dot_product_attention q (transpose kt @dim0=-2;dim1=-1) v (add (where m -inf 0.0) (div 0.0 (max (where m 0.0 1.0) @dim=[-1];keepdim=true))) @scale=0.25)"
            )),
            Rule::build(
                concat!("attention-", $op, "-kept"),
                concat!("(", $op, " (softmax (where ?m (", $op, " ?q ?kt) ?f) ?a) ?v)"),
                |b| attend(b, Scale::One, Mask::KeepWhere),
            )
            .test(concat!(
                "q: f32[2, 64, 8], kt: f32[2, 8, 64], v: f32[2, 64, 8], m: bool[64, 64] | (",
                $op,
                " (softmax (where m (",
                $op,
                " q kt) -inf) @dim=-1) v) => (scaled_dot_product_attention q (transpose kt @dim0=-2;dim1=-1) v (add (where m 0.0 -inf) (div 0.0 (max (where m 1.0 0.0) @dim=[-1];keepdim=true))) @scale=1.0)"
            )),
            Rule::build(
                concat!("attention-", $op, "-scaled-kept"),
                concat!("(", $op, " (softmax (where ?m (mul (", $op, " ?q ?kt) ?c) ?f) ?a) ?v)"),
                |b| attend(b, Scale::Mul, Mask::KeepWhere),
            )
            .test(concat!(
                "q: f32[2, 64, 8], kt: f32[2, 8, 64], v: f32[2, 64, 8], m: bool[64, 64] | (",
                $op,
                " (softmax (where m (mul (",
                $op,
                " q kt) 0.25) -inf) @dim=-1) v) => (scaled_dot_product_attention q (transpose kt @dim0=-2;dim1=-1) v (add (where m 0.0 -inf) (div 0.0 (max (where m 1.0 0.0) @dim=[-1];keepdim=true))) @scale=0.25)"
            )),
            Rule::build(
                concat!("attention-", $op, "-divided-kept"),
                concat!("(", $op, " (softmax (where ?m (div (", $op, " ?q ?kt) ?c) ?f) ?a) ?v)"),
                |b| attend(b, Scale::Div, Mask::KeepWhere),
            )
            .test(concat!(
                "q: f32[2, 64, 8], kt: f32[2, 8, 64], v: f32[2, 64, 8], m: bool[64, 64] | (",
                $op,
                " (softmax (where m (div (",
                $op,
                " q kt) 4.0) -inf) @dim=-1) v) => (scaled_dot_product_attention q (transpose kt @dim0=-2;dim1=-1) v (add (where m 0.0 -inf) (div 0.0 (max (where m 1.0 0.0) @dim=[-1];keepdim=true))) @scale=0.25)"
            )),
        ]
    }};
}

pub fn rules() -> Vec<Rule> {
    let mut rules = forms!("matmul");
    rules.extend(forms!("bmm"));
    rules
}
