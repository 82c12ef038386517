//! The structure of a program before its sizes are solved: which tensor feeds which op
//! (wiring), every tensor's rank, and each op's structural choices (reduced dim, keepdim,
//! trailing dims of a norm, bias or not...).
//!
//! Wiring follows the DRTriton generator: each op takes its inputs uniformly from the
//! tensors nobody has consumed yet, restricted to those whose rank the op accepts, and
//! creates a new `torch.randn` input when none fits; every tensor left unconsumed at the
//! end is an output. Wiring also honours each op's domain (`soundness.rs`): an input with a
//! domain (an `exp` argument, a denominator) is taken only from tensors whose range
//! satisfies it, or from a fresh input when that does, or else gets a guard. Ranks are decided here rather than in CP-SAT: a rank is a discrete
//! choice that fixes which size variables exist, and sampling it uniformly keeps the
//! choice explicit and the CP-SAT models small.

use super::catalog::{family, Family};
use super::soundness::{admits, input_range, plan_range, Guard};
use drtc_ir::range::Interval;
use drtc_ir::{Attr, Op};
use rand::seq::{IndexedRandom, SliceRandom};
use rand::Rng;

/// Where a tensor comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A program input (`torch.randn` in `get_inputs()`), consumed by `step`.
    Input { step: usize },
    /// A weight of an op (conv weight, norm weight, bias): also a program input.
    Weight { step: usize },
    /// The result of a step.
    Step(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub struct PlanTensor {
    pub rank: usize,
    pub origin: Origin,
    /// A bound of its values valid for every size (see `soundness::plan_range`).
    pub range: Interval,
}

/// Structural choices of one step (only the ones its family uses are meaningful).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Choice {
    /// Reduced / scanned / concatenated / stacked / unsqueezed dim.
    pub dim: usize,
    pub keepdim: bool,
    /// Trailing dims normalized by layer_norm / rms_norm.
    pub norm_dims: usize,
    /// flatten's start and end dims.
    pub flatten: (usize, usize),
    pub perm: Vec<usize>,
    pub flip: Vec<usize>,
    /// Whether conv / linear get a bias.
    pub bias: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub op: Op,
    pub family: Family,
    /// Data inputs (tensors of the program).
    pub inputs: Vec<usize>,
    /// Weight inputs, created for this step.
    pub weights: Vec<usize>,
    pub output: usize,
    pub choice: Choice,
    /// Attributes that do not depend on sizes.
    pub fixed_attrs: Vec<(&'static str, Attr)>,
    /// Guards in front of data inputs, by slot.
    pub guards: Vec<(usize, Guard)>,
}

/// A program's structure.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub tensors: Vec<PlanTensor>,
    pub steps: Vec<Step>,
    /// Unconsumed step results, in creation order.
    pub outputs: Vec<usize>,
}

/// Samples a plan for `ops`. Fails only for an op the synthesizer cannot place.
pub fn sample_plan(ops: &[Op], max_rank: usize, rng: &mut impl Rng) -> Result<Plan, String> {
    let mut tensors: Vec<PlanTensor> = vec![];
    let mut pool: Vec<usize> = vec![];
    let mut steps = vec![];
    for (si, &op) in ops.iter().enumerate() {
        let fam = family(op).ok_or_else(|| format!("the synthesizer cannot place `{op}`"))?;
        let mut inputs = vec![];
        let mut ranks = vec![];
        let mut guards = vec![];
        for slot in 0..fam.data_arity() {
            let (lo, hi) = fam.slot_ranks(slot, &ranks, max_rank);
            let domain = op.domain(slot);
            let fits: Vec<usize> = pool
                .iter()
                .copied()
                .filter(|&t| (lo..=hi).contains(&tensors[t].rank))
                .collect();
            // tensors in the domain; else a fresh input if that is in it; else any, guarded
            let safe: Vec<usize> = fits
                .iter()
                .copied()
                .filter(|&t| admits(domain, tensors[t].range))
                .collect();
            let fresh_ok = admits(domain, input_range());
            let cands = if !safe.is_empty() || fresh_ok {
                safe
            } else {
                fits
            };
            let t = match cands.choose(rng) {
                Some(&t) => {
                    pool.retain(|&p| p != t);
                    t
                }
                None => {
                    // inputs get rank >= 1 unless the slot needs a scalar (stacking two scalars)
                    let rank = rng.random_range(lo.max(1).min(hi)..=hi);
                    tensors.push(PlanTensor {
                        rank,
                        origin: Origin::Input { step: si },
                        range: input_range(),
                    });
                    tensors.len() - 1
                }
            };
            if !admits(domain, tensors[t].range) {
                match Guard::for_domain(domain, tensors[t].range) {
                    Some(g) => guards.push((slot, g)),
                    None => {
                        return Err(format!(
                            "`{op}` input {slot} has no tensor in its domain and no guard"
                        ))
                    }
                }
            }
            ranks.push(tensors[t].rank);
            inputs.push(t);
        }
        let r = ranks[0];
        let mut choice = Choice::default();
        let mut fixed: Vec<(&'static str, Attr)> = vec![];
        let mut weight_ranks: Vec<usize> = vec![];
        let out_rank = match fam {
            Family::Unary => {
                match op {
                    Op::Clamp => {
                        let lo = *[-1.0, -0.5, 0.0].choose(rng).unwrap_or(&-1.0);
                        let hi = *[0.5, 1.0, 2.0].choose(rng).unwrap_or(&1.0);
                        fixed.push(("min", Attr::Float(lo)));
                        fixed.push(("max", Attr::Float(hi)));
                    }
                    Op::Gelu => {
                        let a = if rng.random_bool(0.5) { "none" } else { "tanh" };
                        fixed.push(("approximate", Attr::Str(a.into())));
                    }
                    _ => {}
                }
                r
            }
            Family::Broadcast(_) | Family::Matmul => ranks.iter().copied().max().unwrap_or(0),
            Family::Bmm => 3,
            Family::Reduce { .. } => {
                choice.dim = rng.random_range(0..r);
                choice.keepdim = rng.random_bool(0.5);
                if choice.keepdim {
                    r
                } else {
                    r - 1
                }
            }
            Family::AlongDim | Family::Cat => {
                choice.dim = rng.random_range(0..r);
                r
            }
            Family::Stack => {
                choice.dim = rng.random_range(0..=r);
                r + 1
            }
            Family::Transpose => r,
            Family::Triangle => {
                fixed.push(("diagonal", Attr::Int(rng.random_range(-2..=2))));
                r
            }
            Family::BatchNorm | Family::GroupNorm | Family::InstanceNorm => {
                weight_ranks = vec![1, 1];
                r
            }
            Family::LayerNorm => {
                choice.norm_dims = rng.random_range(1..=r.min(3));
                weight_ranks = vec![choice.norm_dims, choice.norm_dims];
                r
            }
            Family::RmsNorm => {
                choice.norm_dims = rng.random_range(1..=r.min(3));
                weight_ranks = vec![choice.norm_dims];
                r
            }
            Family::Pool { .. } | Family::AdaptivePool { .. } => r,
            Family::Conv { n, .. } => {
                choice.bias = rng.random_bool(0.5);
                weight_ranks = vec![n + 2];
                if choice.bias {
                    weight_ranks.push(1);
                }
                r
            }
            Family::Linear => {
                choice.bias = rng.random_bool(0.5);
                weight_ranks = vec![2];
                if choice.bias {
                    weight_ranks.push(1);
                }
                r
            }
            Family::Loss => 0,
            Family::Flatten => {
                let s = rng.random_range(0..r - 1);
                let e = rng.random_range(s + 1..r);
                choice.flatten = (s, e);
                r - (e - s)
            }
            Family::Unsqueeze => {
                choice.dim = rng.random_range(0..=r);
                r + 1
            }
            Family::Permute => {
                let mut p: Vec<usize> = (0..r).collect();
                while p.iter().enumerate().all(|(i, &x)| i == x) {
                    p.shuffle(rng);
                }
                choice.perm = p;
                r
            }
            Family::Flip => {
                let mut dims: Vec<usize> = (0..r).filter(|_| rng.random_bool(0.5)).collect();
                if dims.is_empty() {
                    dims.push(rng.random_range(0..r));
                }
                choice.flip = dims;
                r
            }
        };
        let mut weights = vec![];
        for wr in weight_ranks {
            tensors.push(PlanTensor {
                rank: wr,
                origin: Origin::Weight { step: si },
                range: input_range(),
            });
            weights.push(tensors.len() - 1);
        }
        let mut in_ranges: Vec<Interval> = inputs
            .iter()
            .chain(&weights)
            .map(|&t| tensors[t].range)
            .collect();
        for (slot, g) in &guards {
            in_ranges[*slot] = g.apply(in_ranges[*slot]);
        }
        let mut range = plan_range(op, &fixed, &in_ranges);
        if matches!(op, Op::Argmax | Op::Argmin) {
            range = plan_range(
                Op::Cast,
                &[("dtype", Attr::DType(drtc_ir::DType::F32))],
                &[range],
            );
        }
        tensors.push(PlanTensor {
            rank: out_rank,
            origin: Origin::Step(si),
            range,
        });
        let output = tensors.len() - 1;
        pool.push(output);
        steps.push(Step {
            op,
            family: fam,
            inputs,
            weights,
            output,
            choice,
            fixed_attrs: fixed,
            guards,
        });
    }
    Ok(Plan {
        tensors,
        steps,
        outputs: pool,
    })
}
