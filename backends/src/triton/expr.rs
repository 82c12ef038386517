//! Pointwise ops as Triton expressions over already-loaded values.
//!
//! Values are computed in `compute_ty` of their dtype (halves in f32). Each op's expression
//! is a fact of its definition (`drtc_ir::op::pointwise::Triton`), rendered here. Each
//! function returns `None` for what has no Triton form yet, so the caller can fall back to
//! PyTorch.

use super::ty::{compute_ty, float_lit, lit};
use drtc_ir::op::pointwise::Triton;
use drtc_ir::{Attr, Attrs, DType, Op};

/// An argument of an expression: its code, dtype, and value when it is a known constant.
#[derive(Clone, Debug)]
pub struct Operand {
    pub expr: String,
    pub dtype: DType,
    pub constant: Option<f64>,
}

/// `x` converted to the compute type of `d`.
pub fn convert(x: &Operand, d: DType) -> String {
    if let Some(c) = x.constant {
        return lit(c, d);
    }
    if compute_ty(x.dtype) == compute_ty(d) {
        x.expr.clone()
    } else if d == DType::Bool {
        format!("({} != 0)", x.expr)
    } else {
        format!("({}).to({})", x.expr, compute_ty(d))
    }
}

fn f(attrs: &Attrs, name: &str) -> Option<f64> {
    attrs.get(name).and_then(Attr::as_float)
}

/// `x ** y` where `y` may be a known constant.
fn pow(x: &str, y: &Operand, yexpr: &str) -> String {
    match y.constant {
        Some(0.0) => format!("(({x}) * 0.0 + 1.0)"),
        Some(0.5) => format!("tl.sqrt({x})"),
        Some(-0.5) => format!("tl.rsqrt({x})"),
        Some(c) if c.fract() == 0.0 && c.abs() <= 8.0 => {
            let n = c.abs() as usize;
            let prod = vec![format!("({x})"); n].join(" * ");
            if c > 0.0 {
                format!("({prod})")
            } else {
                format!("(1.0 / ({prod}))")
            }
        }
        // general case: |x|^y with the sign of x for odd integer y is not known statically
        _ => format!("tl.exp2({yexpr} * tl.log2({x}))"),
    }
}

/// Fills a template of [`Triton`] (see there for its placeholders); `None` when a float
/// attribute it names is missing.
fn render(
    template: &str,
    attrs: &Attrs,
    c: &dyn Fn(usize) -> String,
    b0: &dyn Fn() -> String,
    out: DType,
) -> Option<String> {
    let mut s = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        s.push_str(&rest[..open]);
        let close = open + rest[open..].find('}')?;
        let name = &rest[open + 1..close];
        match name {
            "0" | "1" | "2" => s.push_str(&c(name.parse().ok()?)),
            "b0" => s.push_str(&b0()),
            "zero" => s.push_str(&lit(0.0, out)),
            "one" => s.push_str(&lit(1.0, out)),
            attr => s.push_str(&float_lit(f(attrs, attr)?)),
        }
        rest = &rest[close + 1..];
    }
    s.push_str(rest);
    Some(s)
}

/// The Triton expression of pointwise `op` on `args`, producing dtype `out`: its
/// [`Triton`] form from the op's facts (`drtc_ir::op::pointwise`); `None` for the other ops.
pub fn pointwise_expr(op: Op, attrs: &Attrs, args: &[Operand], out: DType) -> Option<String> {
    let triton = op.pointwise()?.triton;
    // operands converted to the promoted type of the inputs (for comparisons) or the result
    let promoted = args
        .iter()
        .skip(1)
        .fold(args.first().map(|a| a.dtype).unwrap_or(out), |d, a| {
            drtc_ir::dtype::promote_types(d, a.dtype)
        });
    let c = |i: usize| convert(&args[i], out);
    let b0 = || convert(&args[0], DType::Bool);
    match triton {
        Triton::Expr(t) => render(t, attrs, &c, &b0, out),
        Triton::Compare(sym) => Some(format!(
            "({} {sym} {})",
            convert(&args[0], promoted),
            convert(&args[1], promoted)
        )),
        Triton::ByAttr(name, cases, default) => {
            let value = attrs.get(name).and_then(Attr::as_str);
            let t = cases
                .iter()
                .find(|(v, _)| Some(*v) == value)
                .map_or(default, |(_, t)| t);
            render(t, attrs, &c, &b0, out)
        }
        Triton::Clip(lo, hi) => {
            let mut e = c(0);
            if let Some(lo) = f(attrs, lo) {
                e = format!("tl.maximum({e}, {})", lit(lo, out));
            }
            if let Some(hi) = f(attrs, hi) {
                e = format!("tl.minimum({e}, {})", lit(hi, out));
            }
            Some(e)
        }
        Triton::Power => {
            if !out.is_float() {
                return None;
            }
            Some(pow(&c(0), &args[1], &c(1)))
        }
    }
}
