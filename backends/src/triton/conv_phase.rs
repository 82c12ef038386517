//! A transposed convolution's output pixels by phase: along a dim of stride `s`, the pixels
//! `o` of one residue `c = o mod s` are reached by the same taps (those `t` for which
//! `o + padding - t * dilation` is a multiple of `s`), an arithmetic run of them. A program
//! of the template computes pixels of one phase (a residue per spatial dim), so its
//! reduction is that phase's taps only: `1 / s` of the kernel per strided dim, where a
//! gather over every tap would multiply masked zeros (level-1 81, stride 5 in both dims: 1
//! tap in 25 lands). Each phase's taps are unrolled in a branch of its own; the phase is the
//! grid's third axis (one launch) or the constexpr `PHASE` (a launch per phase, each
//! compiling its own branch only): `PhaseLaunch`, raced.
//!
//! With `o = q * s + c` and tap `t = t0 + m * step` (`step = s / gcd(s, dilation)`), the
//! input pixel is `(o + padding - t * dilation) / s = q + base - m * delta`, where
//! `base = (c + padding - t0 * dilation) / s` and `delta = step * dilation / s` are whole.

use super::conv_products::{emit_products, Operands, Taps};
use super::kernel::decompose;
use super::precision::DotPrecision;
use super::statements::InputArg;
use std::fmt::Write;

/// Phases a transposed convolution may have (the product of its strides): each is a
/// branch of the kernel.
pub const MAX_PHASES: i64 = 64;

/// The taps of one phase along one dim: `t0 + m * step` for `m` in `0..n`, each reading
/// input pixel `q + base - m * delta`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TapRun {
    pub t0: i64,
    pub step: i64,
    pub n: i64,
    pub base: i64,
    pub delta: i64,
}

/// A transposed convolution's geometry along its spatial dims.
#[derive(Clone, Copy, Debug)]
pub struct Geometry<'a> {
    pub kernel: &'a [i64],
    pub stride: &'a [i64],
    pub padding: &'a [i64],
    pub dilation: &'a [i64],
}

impl Geometry<'_> {
    fn nsp(&self) -> usize {
        self.kernel.len()
    }
}

/// One phase: the taps that reach it, per spatial dim (its residues are its index's
/// digits in the strides, the last dim innermost).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    pub runs: Vec<TapRun>,
}

impl Phase {
    /// Taps per input channel (the product over the dims; 0 when a dim has none).
    pub fn taps(&self) -> i64 {
        self.runs.iter().map(|r| r.n).product()
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The taps of residue `c` along a dim of `kernel` taps, `stride`, `padding`, `dilation`.
fn run(c: i64, kernel: i64, stride: i64, padding: i64, dilation: i64) -> TapRun {
    let step = stride / gcd(stride, dilation);
    let first = (0..kernel.min(step)).find(|t| (c + padding - t * dilation) % stride == 0);
    match first {
        Some(t0) => TapRun {
            t0,
            step,
            n: (kernel - t0 + step - 1) / step,
            base: (c + padding - t0 * dilation) / stride,
            delta: step * dilation / stride,
        },
        None => TapRun {
            t0: 0,
            step,
            n: 0,
            base: 0,
            delta: 0,
        },
    }
}

/// Every phase of a transposed convolution, the last dim's residue innermost (the order of
/// the grid's third axis).
pub fn phases(geom: Geometry) -> Vec<Phase> {
    let mut out = vec![Phase { runs: vec![] }];
    for j in 0..geom.nsp() {
        let s = geom.stride[j];
        out = out
            .into_iter()
            .flat_map(|p| {
                (0..s).map(move |c| {
                    let mut q = p.clone();
                    q.runs
                        .push(run(c, geom.kernel[j], s, geom.padding[j], geom.dilation[j]));
                    q
                })
            })
            .collect();
    }
    out
}

/// Taps per input channel of the fullest phase, or `None` past [`MAX_PHASES`] phases.
pub fn max_taps(geom: Geometry) -> Option<i64> {
    phase_count(geom.stride)?;
    Some(phases(geom).iter().map(Phase::taps).max().unwrap_or(0))
}

/// The number of phases, or `None` past [`MAX_PHASES`] (or a stride below 1).
pub fn phase_count(stride: &[i64]) -> Option<i64> {
    if stride.iter().any(|&s| s < 1) {
        return None;
    }
    let n = stride.iter().try_fold(1i64, |acc, &s| acc.checked_mul(s))?;
    (n <= MAX_PHASES).then_some(n)
}

/// What the phase branches read: the geometry, the groups, the input's shape, the input and
/// weight arguments, the weight's output-channel term, input channels per group.
pub struct Gather<'a> {
    pub geom: Geometry<'a>,
    /// Groups of a grouped convolution (1: dense).
    pub groups: u64,
    pub x_shape: &'a [i64],
    pub arg_x: &'a InputArg,
    pub arg_w: &'a InputArg,
    pub w_row: &'a str,
    pub cin_group: i64,
}

/// The pixel indices of a phase program: `offs_m` walks (batch, `q` per spatial dim),
/// `phase` is the phase's expression (the grid's third axis, or the constexpr `PHASE`;
/// `c{j}` its residues), and output pixel `o = q * s + c`, masked past the output's end.
/// `out_shape` is the output's (N, C, spatial...).
pub fn emit_pixels(body: &mut String, geom: Geometry, out_shape: &[i64], phase: &str) {
    let mut pix_shape = vec![out_shape[0]];
    pix_shape.extend(phase_extents(geom, out_shape));
    let mut names = vec!["o0".to_string()];
    names.extend((0..geom.nsp()).map(|j| format!("q{j}")));
    decompose(body, "    ", "offs_m", &pix_shape, &names);
    for (i, name) in names.iter().enumerate() {
        if pix_shape[i] == 1 {
            writeln!(body, "    {name} = offs_m * 0").unwrap();
        }
    }
    writeln!(body, "    ph = {phase}").unwrap();
    let residues: Vec<String> = (0..geom.nsp()).map(|j| format!("c{j}")).collect();
    decompose(body, "    ", "ph", geom.stride, &residues);
    for j in 0..geom.nsp() {
        if geom.stride[j] == 1 {
            writeln!(body, "    c{j} = 0").unwrap();
        }
        let d = 2 + j;
        writeln!(body, "    o{d} = q{j} * {} + c{j}", geom.stride[j]).unwrap();
        writeln!(body, "    mask_m = mask_m & (o{d} < {})", out_shape[d]).unwrap();
    }
}

/// `q`'s extent per spatial dim: `ceil(out / stride)`.
fn phase_extents(geom: Geometry, out_shape: &[i64]) -> Vec<i64> {
    (0..geom.nsp())
        .map(|j| (out_shape[2 + j] + geom.stride[j] - 1) / geom.stride[j])
        .collect()
}

/// Pixels a phase program's `offs_m` walks: batch x `ceil(out / stride)` per spatial dim.
pub fn phase_pixels(geom: Geometry, out_shape: &[i64]) -> u64 {
    phase_extents(geom, out_shape)
        .iter()
        .map(|&q| q as u64)
        .product::<u64>()
        * out_shape[0] as u64
}

/// The reduction of every phase, each in its own branch on `ph` (phases without taps have
/// none; with `ph` a constexpr, a launch compiles its own branch only), accumulating into
/// `acc` (`row` the batch's input offset).
pub fn emit_reductions(body: &mut String, gather: &Gather, dot: DotPrecision) {
    let mut first = true;
    for (index, phase) in phases(gather.geom).iter().enumerate() {
        let taps = phase.taps();
        if taps == 0 {
            continue;
        }
        let kw = if first { "if" } else { "elif" };
        first = false;
        writeln!(body, "    {kw} ph == {index}:").unwrap();
        let k = gather.cin_group * taps;
        let ops = Operands {
            px: &gather.arg_x.ptr,
            pw: &gather.arg_w.ptr,
            w_row: gather.w_row,
            a_mask: "mask_m",
        };
        let read = Taps {
            a_off: &|kk: &str| offsets(gather, phase, kk, true),
            a_masks: &|kk: &str| masks(gather, phase, kk),
            b_off: &|kk: &str| offsets(gather, phase, kk, false),
        };
        emit_products(body, "        ", (k, dot), &ops, &read);
    }
}

/// Run index `m` along dim `j` of reduction index `kk` (input channel outermost, then the
/// phase's taps, the last dim innermost).
fn tap_index(phase: &Phase, kk: &str, j: usize) -> String {
    let taps = phase.taps();
    let inner: i64 = phase.runs[j + 1..].iter().map(|r| r.n).product();
    format!("(({kk} % {taps}) // {inner} % {})", phase.runs[j].n)
}

/// The input pixel along dim `j` that tap `m` of the phase reads.
fn input_pixel(phase: &Phase, kk: &str, j: usize) -> String {
    let r = phase.runs[j];
    format!(
        "(q{j} + {} - {} * {})",
        r.base,
        tap_index(phase, kk, j),
        r.delta
    )
}

/// Offsets of reduction index `kk`: in the input, its channel and the pixel each tap reads;
/// in the weight (`[Cin, Cout / groups, k...]`), the input channel and the tap.
fn offsets(gather: &Gather, phase: &Phase, kk: &str, input: bool) -> String {
    let taps = phase.taps();
    let channel = if gather.groups > 1 {
        format!("(grp * {} + {kk} // {taps})", gather.cin_group)
    } else {
        format!("({kk} // {taps})")
    };
    let arg = if input { gather.arg_x } else { gather.arg_w };
    let mut terms = vec![];
    if let Some(s) = arg.stride(if input { 1 } else { 0 }) {
        terms.push(format!("{channel} * {s}"));
    }
    for j in 0..gather.geom.nsp() {
        if let Some(s) = arg.stride(2 + j) {
            let r = phase.runs[j];
            let at = if input {
                input_pixel(phase, kk, j)
            } else {
                format!("({} + {} * {})", r.t0, tap_index(phase, kk, j), r.step)
            };
            terms.push(format!("{at} * {s}"));
        }
    }
    if terms.is_empty() {
        format!("{kk} * 0")
    } else {
        terms.join(" + ")
    }
}

/// The taps whose input pixel lies inside the input.
fn masks(gather: &Gather, phase: &Phase, kk: &str) -> Vec<String> {
    (0..gather.geom.nsp())
        .map(|j| {
            let i = input_pixel(phase, kk, j);
            format!("({i} >= 0) & ({i} < {})", gather.x_shape[2 + j])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (pixel, tap) pair that reads an input pixel appears in exactly the phase of
    /// the pixel, at the input pixel the definition gives.
    #[test]
    fn phases_hold_exactly_the_taps_that_land() {
        for (kernel, stride, padding, dilation) in [
            (3, 2, 1, 1),
            (3, 5, 1, 2),
            (4, 2, 1, 1),
            (5, 3, 2, 2),
            (3, 1, 0, 3),
            (7, 4, 3, 2),
        ] {
            for c in 0..stride {
                let r = run(c, kernel, stride, padding, dilation);
                for q in 0..6i64 {
                    let o = q * stride + c;
                    let mut want = vec![];
                    for t in 0..kernel {
                        let h = o + padding - t * dilation;
                        if h % stride == 0 {
                            want.push((t, h.div_euclid(stride)));
                        }
                    }
                    let got: Vec<(i64, i64)> = (0..r.n)
                        .map(|m| (r.t0 + m * r.step, q + r.base - m * r.delta))
                        .collect();
                    assert_eq!(
                        got, want,
                        "k{kernel} s{stride} p{padding} d{dilation} c{c} q{q}"
                    );
                }
            }
        }
    }

    fn max_of(kernel: &[i64], stride: &[i64], padding: &[i64], dilation: &[i64]) -> Option<i64> {
        max_taps(Geometry {
            kernel,
            stride,
            padding,
            dilation,
        })
    }

    #[test]
    fn the_fullest_phase_bounds_the_reduction() {
        // 3x3, stride 5, dilation 2 (level-1 81's geometry): one tap per dim per phase
        assert_eq!(max_of(&[3, 3], &[5, 5], &[1, 1], &[2, 2]), Some(1));
        // 3x3x3, stride 2, dilation 2: the even residues take every tap, the odd none
        assert_eq!(
            max_of(&[3, 3, 3], &[2, 2, 2], &[1, 1, 1], &[2, 2, 2]),
            Some(27)
        );
        // 4x4, stride 2: two taps per dim in every phase
        assert_eq!(max_of(&[4, 4], &[2, 2], &[1, 1], &[1, 1]), Some(4));
        // past the phase limit
        assert_eq!(max_of(&[3, 3], &[8, 9], &[0, 0], &[1, 1]), None);
    }

    #[test]
    fn phase_counts_are_bounded() {
        assert_eq!(phase_count(&[2, 2, 2]), Some(8));
        assert_eq!(phase_count(&[5, 5]), Some(25));
        assert_eq!(phase_count(&[8, 9]), None);
        assert_eq!(phase_count(&[0, 2]), None);
    }
}
