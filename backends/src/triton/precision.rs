//! The precision policy of fp32 matrix products, per GEMM region, and the error model
//! that picks an implementation meeting the policy's bound.
//!
//! Policies (`--precision`):
//! - `fp32` (default): results must pass `allclose(atol=rtol=1e-4)` against full-fp32
//!   PyTorch (KernelBench's current rule). Candidates: Triton with `tf32x3` inputs
//!   (fp32-level accuracy on tensor cores), cuBLAS through PyTorch in full fp32 with the
//!   epilogue in a fused Triton kernel, or Triton in full ieee fp32.
//! - `tf32`: the relative-norm rule (1e-3) only. Candidates: Triton tf32, falling back to
//!   a two-level accumulation and then tf32x3 when the model predicts too much error.
//! - `ieee`: full fp32 everywhere (Triton ieee, or cuBLAS in full fp32).
//!
//! The error model: relative error (norm over the output) of one GEMM of reduction length
//! K, worst case over data signs, calibrated on the H200 with Triton 3.6
//! (bench/results/gemm_h200.md: rand/randn operands against a float64 product):
//! - Triton tf32: the operands are truncated to tf32 (not rounded), a biased error that
//!   does not cancel: 6.5e-4 measured at K=64; and the tensor cores' fp32 accumulator
//!   truncates each K-step of 8, which adds `(K / 8) * 2^-24` when the summands share a
//!   sign (measured: 6.8e-4 at K=4096, 7.1e-4 at 8192, 4.2e-3 at 524288; the model gives
//!   6.8e-4, 7.1e-4 and 4.6e-3). `acc += tl.dot(a, b)` does not help: Triton folds the
//!   add back into the dot's accumulator (measured identical).
//! - Triton tf32x3 (big and small tf32 parts, three products): 1.3e-7 to 6e-7 measured
//!   up to K=32768, no growth with K seen: modelled `2^-22 + sqrt(K) * 2^-24`.
//! - Triton ieee: fp32 FMAs, rounded: `sqrt(K) * 2^-24`.
//! - the reference's own rounding: full-fp32 cuBLAS rounds its sums too, about
//!   `sqrt(K) * 2^-24`; only the same library call reproduces it exactly, so under the
//!   1e-4 rule a Triton GEMM is admitted only when its error plus the reference's fits.
//!
//! Budgets: a quarter of the rule's tolerance for allclose 1e-4 (elementwise, so the
//! tails must fit too); 0.9e-3 for the relative norm (the model is calibrated on that
//! norm, and plain tf32 already spends 6.5e-4 of it).

use std::fmt;

/// The precision policy of a compilation (what the verifier enforces, too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum Precision {
    /// `allclose(atol=rtol=1e-4)` against full-fp32 PyTorch.
    #[default]
    Fp32,
    /// TensorFloat-32 where the relative-norm rule (1e-3) allows it.
    Tf32,
    /// Full fp32 products.
    Ieee,
}

impl Precision {
    pub fn name(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Tf32 => "tf32",
            Precision::Ieee => "ieee",
        }
    }

    /// The verifier's value rule under this policy.
    pub fn rule(self) -> &'static str {
        match self {
            Precision::Fp32 | Precision::Ieee => "allclose_1e-4",
            Precision::Tf32 => "rel_norm",
        }
    }

    /// The error budget of one GEMM region under this policy.
    pub fn budget(self) -> f64 {
        match self {
            Precision::Fp32 | Precision::Ieee => 0.25e-4,
            Precision::Tf32 => 0.9e-3,
        }
    }

    /// `torch.set_float32_matmul_precision` value for library calls under this policy.
    pub fn torch_matmul_precision(self) -> &'static str {
        match self {
            Precision::Fp32 | Precision::Ieee => "highest",
            Precision::Tf32 => "high",
        }
    }
}

/// `input_precision` of `tl.dot` for fp32 operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DotPrecision {
    Tf32,
    Tf32x3,
    Ieee,
}

impl DotPrecision {
    pub fn name(self) -> &'static str {
        match self {
            DotPrecision::Tf32 => "tf32",
            DotPrecision::Tf32x3 => "tf32x3",
            DotPrecision::Ieee => "ieee",
        }
    }
    /// Relative error of one product from rounding the inputs.
    fn input_error(self) -> f64 {
        match self {
            DotPrecision::Tf32 => 6.5e-4,
            DotPrecision::Tf32x3 => 2.4e-7,
            DotPrecision::Ieee => 0.0,
        }
    }
    /// Whether the accumulation truncates (tf32 on tensor cores, as measured).
    fn truncating_accumulation(self) -> bool {
        matches!(self, DotPrecision::Tf32)
    }
}

/// How one GEMM region is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GemmImpl {
    /// drtc's Triton template with the epilogue fused.
    Triton { dot: DotPrecision },
    /// cuBLAS through PyTorch (`torch.matmul`/`bmm`/`F.linear`) at the policy's matmul
    /// precision, the epilogue in one fused Triton pointwise kernel.
    Library,
    /// The library call on copies of the operands whose K and N are padded with zeros to
    /// multiples of 4 (16-byte rows, the alignment cuBLAS's fast kernels need; Inductor's
    /// `pad_mm` pads too), the product viewed back to N columns: exact, the zeros add
    /// nothing. Only offered to the search (`gemm_variants`) for fp32 operands with K or N
    /// not a multiple of 4, which measures it against the plain call (the copies cost
    /// their bytes).
    PaddedLibrary,
    /// Every op of the region with PyTorch (when no implementation verified).
    PyTorch,
}

impl GemmImpl {
    /// Short text for reports and cache files: `triton:tf32x3`, `library`, `pytorch`.
    pub fn describe(&self) -> String {
        match self {
            GemmImpl::Triton { dot } => format!("triton:{}", dot.name()),
            GemmImpl::Library => "library".into(),
            GemmImpl::PaddedLibrary => "library:padded".into(),
            GemmImpl::PyTorch => "pytorch".into(),
        }
    }

    pub fn parse(text: &str) -> Option<GemmImpl> {
        match text {
            "library" => return Some(GemmImpl::Library),
            "library:padded" => return Some(GemmImpl::PaddedLibrary),
            "pytorch" => return Some(GemmImpl::PyTorch),
            _ => {}
        }
        let mut parts = text.split(':');
        if parts.next()? != "triton" {
            return None;
        }
        let dot = match parts.next()? {
            "tf32" => DotPrecision::Tf32,
            "tf32x3" => DotPrecision::Tf32x3,
            "ieee" => DotPrecision::Ieee,
            _ => return None,
        };
        parts.next().is_none().then_some(GemmImpl::Triton { dot })
    }
}

impl fmt::Display for GemmImpl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

const U_ACC: f64 = 5.960464477539063e-8; // 2^-24

/// Predicted relative error of a GEMM of reduction length `k` computed with `imp`
/// (against exact arithmetic; library calls are cuBLAS at the policy's precision).
pub fn predicted_error(imp: GemmImpl, k: u64, policy: Precision) -> f64 {
    let k = k.max(1) as f64;
    match imp {
        GemmImpl::Triton { dot } => {
            let accumulation = if dot.truncating_accumulation() {
                (k / 8.0) * U_ACC
            } else {
                k.sqrt() * U_ACC
            };
            dot.input_error() + accumulation
        }
        GemmImpl::Library | GemmImpl::PyTorch | GemmImpl::PaddedLibrary => match policy {
            // padded operands: another kernel of the same library, its own fp32
            // accumulation order
            Precision::Fp32 | Precision::Ieee if imp == GemmImpl::PaddedLibrary => k.sqrt() * U_ACC,
            // the same call as the reference's: the same rounding
            Precision::Fp32 | Precision::Ieee => 0.0,
            // cuBLAS rounds to tf32 (measured 2.8e-5 to 2.9e-4, 1.1e-4 at K=524288)
            Precision::Tf32 => 3.0e-4 + k.sqrt() * U_ACC,
        },
    }
}

/// Error the comparison itself carries: the reference's own rounding, when the candidate
/// is not the reference's library call.
fn reference_noise(imp: GemmImpl, k: u64, policy: Precision) -> f64 {
    match (imp, policy) {
        (GemmImpl::Library | GemmImpl::PyTorch, Precision::Fp32 | Precision::Ieee) => 0.0,
        _ => (k.max(1) as f64).sqrt() * U_ACC,
    }
}

/// One implementation the policy may use for a region, with the model's verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct GemmCandidate {
    pub imp: GemmImpl,
    /// Predicted error, the reference's rounding included.
    pub predicted: f64,
    pub admitted: bool,
}

/// The implementations a policy considers, fastest first (by expected throughput on
/// tensor-core GPUs), each judged by the error model against the policy's budget.
pub fn candidates(policy: Precision, k: u64, half: bool) -> Vec<GemmCandidate> {
    use DotPrecision::*;
    let t = |dot| GemmImpl::Triton { dot };
    let order: Vec<GemmImpl> = if half {
        // 16-bit inputs: tensor cores at their own precision; no fp32 policy applies
        vec![t(Tf32), GemmImpl::Library]
    } else {
        match policy {
            // rows of K not a multiple of 4 fp32 (16 bytes): no TMA, no wide loads, and
            // tf32x3 fell to 18 TFLOP/s against cuBLAS SGEMM's 44 (K = 2949)
            Precision::Fp32 if !k.is_multiple_of(4) => vec![GemmImpl::Library, t(Tf32x3), t(Ieee)],
            // tf32x3 at 70-98 TFLOP/s against cuBLAS SGEMM's 50 (bench/results/gemm_h200.md)
            Precision::Fp32 => vec![t(Tf32x3), GemmImpl::Library, t(Ieee)],
            Precision::Tf32 => vec![t(Tf32), GemmImpl::Library, t(Tf32x3)],
            Precision::Ieee => vec![GemmImpl::Library, t(Ieee)],
        }
    };
    order
        .into_iter()
        .map(|imp| {
            let predicted = if half {
                0.0
            } else {
                predicted_error(imp, k, policy) + reference_noise(imp, k, policy)
            };
            GemmCandidate {
                imp,
                predicted,
                admitted: half || predicted <= policy.budget() || imp == GemmImpl::Library,
            }
        })
        .collect()
}

/// The policy's choice for a region without search, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct GemmChoice {
    pub imp: GemmImpl,
    pub predicted: f64,
    pub reason: String,
}

/// The widest output dim (M or N) at which the fp32 policy still prefers cuBLAS to the
/// template: the template's tiles are at least 64 wide in M and N (`contraction_config`),
/// so at 32 or less at most half of each tile's tensor-core products is real work, and
/// tf32x3 is at most about twice as fast as cuBLAS SGEMM (70-98 against 50 TFLOP/s on the
/// H200, bench/results/gemm_h200.md): the template cannot win, and its fp32 operand
/// copies to K-major layout (`contraction.rs`) cost on top (47_NetVlad: a 419 MB copy of
/// the input per call for a 32 x 512 x 100 batched product). The library call is the
/// reference's own computation, exact under the allclose rule.
pub const FP32_NARROW_LIBRARY: u64 = 32;

/// Products below this many FLOPs keep the template however narrow: at half-empty tiles
/// (about 49 TFLOP/s) they run for less than ~20 us, where the epilogue the template fuses
/// (the library path launches it as a second kernel) matters more than the tiles' waste.
pub const FP32_NARROW_MIN_FLOPS: u64 = 1_000_000_000;

/// The first admitted candidate (the library call is always admitted under fp32 and
/// ieee: it is the reference's own computation). `narrow` is the smaller output dim,
/// min(M, N), and `flops` the product's: under the fp32 policy a product at most
/// `FP32_NARROW_LIBRARY` wide with at least `FP32_NARROW_MIN_FLOPS` is a library call.
pub fn choose(policy: Precision, k: u64, half: bool, narrow: u64, flops: u64) -> GemmChoice {
    if policy == Precision::Fp32
        && !half
        && narrow <= FP32_NARROW_LIBRARY
        && flops >= FP32_NARROW_MIN_FLOPS
    {
        return GemmChoice {
            imp: GemmImpl::Library,
            predicted: predicted_error(GemmImpl::Library, k, policy),
            reason: format!(
                "fp32 policy, min(M, N) = {narrow}: at most half of the template's 64-wide \
                 tiles is real work, where cuBLAS SGEMM is as fast as tf32x3 could be; \
                 library call, the reference's own computation"
            ),
        };
    }
    let all = candidates(policy, k, half);
    let pick = all
        .iter()
        .find(|c| c.admitted)
        .cloned()
        .unwrap_or_else(|| all[all.len() - 1].clone());
    let rejected: Vec<String> = all
        .iter()
        .take_while(|c| c.imp != pick.imp)
        .map(|c| format!("{} predicts {:.1e}", c.imp, c.predicted))
        .collect();
    let reason = if all[0].imp == GemmImpl::Library && policy == Precision::Fp32 && !half {
        format!(
            "fp32 policy, K={k}: rows of K not 16-byte aligned, where cuBLAS SGEMM is faster \
             than tf32x3 (measured); library call, the reference's own computation"
        )
    } else if half {
        "16-bit inputs: tensor cores at the inputs' precision".to_string()
    } else if rejected.is_empty() {
        format!(
            "{} policy, K={k}: predicted error {:.1e} within the budget {:.1e}",
            policy.name(),
            pick.predicted,
            policy.budget()
        )
    } else {
        format!(
            "{} policy, K={k}: {} over the budget {:.1e}; {} predicts {:.1e}",
            policy.name(),
            rejected.join(", "),
            policy.budget(),
            pick.imp,
            pick.predicted
        )
    };
    GemmChoice {
        imp: pick.imp,
        predicted: pick.predicted,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FLOPs of a product large enough for the narrow rule (KernelBench's 47_NetVlad:
    /// 2 x 204800 x 32 x 512).
    const BIG: u64 = 6_710_886_400;

    #[test]
    fn describe_parses_back() {
        for c in candidates(Precision::Fp32, 4096, false)
            .into_iter()
            .chain(candidates(Precision::Tf32, 4096, false))
        {
            assert_eq!(GemmImpl::parse(&c.imp.describe()), Some(c.imp));
        }
        assert_eq!(GemmImpl::parse("pytorch"), Some(GemmImpl::PyTorch));
        let padded = GemmImpl::PaddedLibrary;
        assert_eq!(GemmImpl::parse(&padded.describe()), Some(padded));
        assert_eq!(GemmImpl::parse("library:x"), None);
        assert_eq!(GemmImpl::parse("triton:tf32:x"), None);
        assert_eq!(GemmImpl::parse("triton:bf8"), None);
    }

    #[test]
    fn tf32_breaks_the_relative_norm_at_large_k() {
        let tf32 = GemmImpl::Triton {
            dot: DotPrecision::Tf32,
        };
        // the model against the H200 measurements (4.2e-3 at K = 524288)
        let e = predicted_error(tf32, 524_288, Precision::Tf32);
        assert!((3.5e-3..5e-3).contains(&e), "{e}");
        let c = choose(Precision::Tf32, 1 << 20, false, 4096, BIG);
        assert_eq!(c.imp, GemmImpl::Library);
        assert!(c.predicted < 1e-3, "{c:?}");
        assert!(c.reason.contains("over the budget"), "{}", c.reason);
        // ordinary K keeps plain tf32
        assert_eq!(choose(Precision::Tf32, 8192, false, 4096, BIG).imp, tf32);
        // K = 32768 is at the edge (9.0e-4 predicted, 8.1e-4 measured on mixed signs)
        assert_eq!(choose(Precision::Tf32, 16384, false, 4096, BIG).imp, tf32);
        assert_eq!(
            choose(Precision::Tf32, 32768, false, 4096, BIG).imp,
            GemmImpl::Library
        );
    }

    #[test]
    fn fp32_uses_tf32x3_and_the_library_for_huge_k() {
        let x3 = GemmImpl::Triton {
            dot: DotPrecision::Tf32x3,
        };
        assert_eq!(choose(Precision::Fp32, 1024, false, 4096, BIG).imp, x3);
        assert_eq!(choose(Precision::Fp32, 32768, false, 4096, BIG).imp, x3);
        // beyond K ~ 40k the reference's own rounding exceeds the budget
        assert_eq!(
            choose(Precision::Fp32, 1 << 19, false, 4096, BIG).imp,
            GemmImpl::Library
        );
        assert_eq!(
            choose(Precision::Ieee, 64, false, 4096, BIG).imp,
            GemmImpl::Library
        );
        let odd = choose(Precision::Fp32, 2949, false, 4096, BIG);
        assert_eq!(odd.imp, GemmImpl::Library);
        assert!(odd.reason.contains("aligned"), "{}", odd.reason);
        // narrow products (min(M, N) <= 32: half-empty 64-wide tiles) are library calls
        // under fp32 only, when large; 64 wide keeps the template, and so do small ones
        for (k, narrow) in [(512, 32), (100, 1), (256, 10)] {
            let c = choose(Precision::Fp32, k, false, narrow, BIG);
            assert_eq!(c.imp, GemmImpl::Library, "{k} {narrow}");
            assert_eq!(c.predicted, 0.0);
            assert!(c.reason.contains("min(M, N)"), "{}", c.reason);
        }
        assert_eq!(choose(Precision::Fp32, 512, false, 64, BIG).imp, x3);
        assert_eq!(choose(Precision::Fp32, 512, false, 32, BIG / 8).imp, x3);
        assert_eq!(
            choose(Precision::Tf32, 512, false, 32, BIG).imp,
            GemmImpl::Triton {
                dot: DotPrecision::Tf32
            }
        );
        assert_eq!(
            choose(Precision::Fp32, 512, true, 32, BIG).imp,
            GemmImpl::Triton {
                dot: DotPrecision::Tf32
            }
        );
        // plain tf32 is never admitted under fp32
        assert!(candidates(Precision::Fp32, 64, false).iter().all(|c| c.imp
            != GemmImpl::Triton {
                dot: DotPrecision::Tf32
            }
            || !c.admitted));
    }
}
