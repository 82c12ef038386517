//! Numerical soundness of synthesized programs: which tensors an op input may be wired to
//! (its domain, `Op::domain`, against the tensor's size-independent range), and the guard
//! a kernel author would write when no such tensor exists (`x / y.abs().clamp(min=eps)`).
//!
//! Plan-time ranges come from the IR's range rules called without types, which bound a
//! value for every size; after solving, `generate.rs` checks the built graph with exact
//! sizes (`drtc_ir::range::violations`) and resamples what could still overflow.

use drtc_ir::op::domain::Domain;
pub use drtc_ir::range::admits;
use drtc_ir::range::{output_range, Interval, RANDN_BOUND};
use drtc_ir::{Attr, Attrs, DType, Node, Op, TensorType};

/// The least magnitude a guarded denominator (or `log`/`sqrt` argument) is clamped to.
pub const GUARD_EPS: f64 = 1e-3;

/// The range of every program input and weight (`torch.randn`, any seed).
pub fn input_range() -> Interval {
    Interval::symmetric(RANDN_BOUND)
}

/// Ops inserted in front of an op input to bring it into its domain.
#[derive(Clone, Debug, PartialEq)]
pub struct Guard {
    /// Take `abs` first.
    pub abs: bool,
    /// Then `clamp(min=...)`, if set.
    pub min: Option<f64>,
}

impl Guard {
    /// The guard for a value in `x` that must satisfy `d`, or `None` when a guard cannot
    /// help (an upper bound: such inputs are wired to bounded tensors instead).
    pub fn for_domain(d: Domain, x: Interval) -> Option<Guard> {
        let nonneg = x.lo >= 0.0;
        match d {
            Domain::Any => None,
            Domain::NonZero | Domain::Positive | Domain::PowBase => Some(Guard {
                abs: !nonneg,
                min: Some(GUARD_EPS),
            }),
            Domain::NonNegative => Some(Guard {
                abs: true,
                min: None,
            }),
            Domain::AtMost(_) => None,
        }
    }

    /// The guard's ops in order, with their attributes.
    pub fn ops(&self) -> Vec<(Op, Vec<(&'static str, Attr)>)> {
        let mut v = vec![];
        if self.abs {
            v.push((Op::Abs, vec![]));
        }
        if let Some(m) = self.min {
            v.push((
                Op::Clamp,
                vec![("min", Attr::Float(m)), ("max", Attr::None)],
            ));
        }
        v
    }

    /// FLOPs per guarded element under the IR's rules.
    pub fn unit_flops(&self) -> i64 {
        let one = TensorType::new(DType::F32, vec![1]);
        self.ops()
            .iter()
            .map(|(op, _)| op.flops(&[&one], std::slice::from_ref(&one), &Attrs::new()) as i64)
            .sum()
    }

    /// The range after the guard.
    pub fn apply(&self, x: Interval) -> Interval {
        self.ops()
            .into_iter()
            .fold(x, |r, (op, attrs)| plan_range(op, &attrs, &[r]))
    }
}

/// A bound of `op`'s result valid for every size, from its size-independent attributes
/// and its inputs' ranges (the IR's rules without types).
pub fn plan_range(op: Op, attrs: &[(&'static str, Attr)], ins: &[Interval]) -> Interval {
    let node = Node {
        op,
        inputs: vec![],
        attrs: attrs
            .iter()
            .map(|(n, a)| (n.to_string(), a.clone()))
            .collect(),
        outputs: vec![],
    };
    output_range(&node, ins, &[], &TensorType::scalar(DType::F32))
}
