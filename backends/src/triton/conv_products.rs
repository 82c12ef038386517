//! The reduction loop of the convolution template's implicit GEMM, shared by the direct and
//! the transposed (per phase) forms: `K` reduction indices, unrolled; the input tile `a` at
//! `row + a_off(kk)` and the weight tile `b` at `w_row + b_off(kk)`, accumulated into `acc`
//! by `tl.dot` chunks of BLOCK_K (tf32, tf32x3) or by rank-1 FMA updates, one index at a
//! time (ieee).

use super::precision::DotPrecision;
use std::fmt::Write;

/// The operands' pointers and the terms every load shares.
pub struct Operands<'a> {
    pub px: &'a str,
    pub pw: &'a str,
    /// The weight's output-channel term.
    pub w_row: &'a str,
    /// The input tile's own mask: `mask_m` (pixels), or `mask` where a tap reads a
    /// [pixels, channels] tile (a depthwise convolution).
    pub a_mask: &'a str,
}

/// Where reduction index `kk` reads: the input's offset and bounds, the weight's offset.
pub struct Taps<'a> {
    pub a_off: &'a dyn Fn(&str) -> String,
    pub a_masks: &'a dyn Fn(&str) -> Vec<String>,
    pub b_off: &'a dyn Fn(&str) -> String,
}

/// Writes the loop over `k` reduction indices at `indent`.
pub fn emit_products(
    body: &mut String,
    indent: &str,
    (k, dot): (i64, DotPrecision),
    ops: &Operands,
    taps: &Taps,
) {
    let (px, pw, w_row) = (ops.px, ops.pw, ops.w_row);
    let inner = format!("{indent}    ");
    let (a_idx, b_idx, mut a_mask, b_mask) = match dot {
        DotPrecision::Ieee => {
            writeln!(body, "{indent}for kk in tl.static_range({k}):").unwrap();
            (
                "kk",
                "kk",
                vec![ops.a_mask.to_string()],
                "mask_n".to_string(),
            )
        }
        DotPrecision::Tf32 | DotPrecision::Tf32x3 => {
            writeln!(body, "{indent}for k0 in tl.static_range(0, {k}, BLOCK_K):").unwrap();
            writeln!(body, "{inner}kk = k0 + tl.arange(0, BLOCK_K)").unwrap();
            writeln!(body, "{inner}ka = kk[None, :]").unwrap();
            writeln!(body, "{inner}kb = kk[:, None]").unwrap();
            let a = vec![ops.a_mask.to_string(), format!("(ka < {k})")];
            ("ka", "kb", a, format!("(kb < {k}) & mask_n"))
        }
    };
    a_mask.extend((taps.a_masks)(a_idx));
    writeln!(
        body,
        "{inner}a = tl.load({px} + row + ({}), mask={}, other=0.0)",
        (taps.a_off)(a_idx),
        a_mask.join(" & ")
    )
    .unwrap();
    writeln!(
        body,
        "{inner}b = tl.load({pw} + {w_row} + ({}), mask={b_mask}, other=0.0)",
        (taps.b_off)(b_idx)
    )
    .unwrap();
    match dot {
        DotPrecision::Ieee => writeln!(body, "{inner}acc += a * b").unwrap(),
        DotPrecision::Tf32 | DotPrecision::Tf32x3 => writeln!(
            body,
            "{inner}acc = tl.dot(a, b, acc, input_precision=\"{}\")",
            dot.name()
        )
        .unwrap(),
    }
}
