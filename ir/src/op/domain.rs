//! Domain facts: which values each op input may hold for the result to be finite.
//!
//! These are mathematical facts of the ops (PyTorch semantics), kept as data beside the op
//! table: a denominator must stay away from zero, a `log` argument must be positive, an
//! `exp` argument must be small enough not to overflow f32. `range/` checks a whole graph
//! against them; the synthesizer wires programs so that they hold.

use super::Op;

/// What one input of an op must satisfy for a finite result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Domain {
    /// Any finite value.
    Any,
    /// Bounded away from zero (a denominator, a reciprocal).
    NonZero,
    /// Strictly positive (log, rsqrt).
    Positive,
    /// Non-negative (sqrt).
    NonNegative,
    /// At most this value: larger arguments overflow (exp: 69, exp2: 99; see below).
    AtMost(f64),
    /// A power's base: positive unless the exponent is a small integer, and the result
    /// must stay finite (checked on the result's range).
    PowBase,
}

/// The largest `exp` argument whose result stays within the safe f32 magnitude of
/// `range::finite_limit` (1e30; ln 1e30 = 69.08), so that later sums cannot overflow.
pub const EXP_MAX_ARG: f64 = 69.0;
/// The same bound for `exp2` (log2 1e30 = 99.66).
pub const EXP2_MAX_ARG: f64 = 99.0;

impl Op {
    /// The domain of data input `slot` (0-based): a pointwise op's from its facts
    /// (`pointwise.rs`). Inputs not stated accept any finite value.
    pub fn domain(self, slot: usize) -> Domain {
        match self.def().pointwise {
            Some(pw) => pw.domain.get(slot).copied().unwrap_or(Domain::Any),
            // kl_div takes log-probabilities first and probabilities second (log of target)
            None if self == Op::KlDiv && slot == 1 => Domain::NonNegative,
            None => Domain::Any,
        }
    }
}
