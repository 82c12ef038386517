//! `expand-losses`: a loss op whose value is an elementwise formula of its two inputs
//! followed by a reduction is written as that formula and the reduction, so the fusion
//! planner sees a pointwise chain (and row norms) feeding a sum or mean (one reduction kernel, as for a
//! loss the program spelled out itself) where the loss op alone would have no template.
//! The formulas are PyTorch's own (ATen's `Loss.cpp`):
//!
//! - `mse_loss(x, y)`: `d * d` with `d = x - y`;
//! - `smooth_l1_loss(x, y, beta)`: `z = |x - y|`, `where(z < beta, 0.5 * z * z / beta,
//!   z - 0.5 * beta)`; `z` itself when `beta` is 0 (the L1 loss);
//! - `kl_div(x, t)`: `xlogy(t, t) - t * x` (`xlogy(t, t)` is `where(t == 0, 0, t * log t)`),
//!   and with `log_target`: `exp(t) * (t - x)`;
//! - `triplet_margin_loss(a, p, n)` with `p` 1 or 2: `relu(margin + d(a, p) - d(a, n))` with
//!   `d(x, y)` the `p`-norm of `x - y + eps` over the last dim (`pairwise_distance`), and
//!   with `swap`, `d(a, n)` replaced by `minimum(d(a, n), d(p, n))`; other norms stay whole;
//!
//! - `cross_entropy(x, t)` with class indices `t` (`[N, C]` scores): `logsumexp(x, 1) -
//!   sum(where(arange(C) == t[:, None], x, 0), 1)`, 0 where `t` is -100 (the ignored index),
//!   and `mean` over the rows that count;
//!
//! then `reduction`: `mean` over every element, `sum`, `batchmean` (kl_div: the sum over
//! the size of dim 0), or `none`. The rewrite changes where each value is computed, not
//! its formula; accumulation order is the reduction template's, as for any sum.

use crate::insert::Builder;
use crate::PassInfo;
use crate::{Changed, Pass, PassContext, PassError};
use drtc_ir::{Attr, Graph, Op, ValueId};

const NAME: &str = "expand-losses";

/// Registry entry.
pub const INFO: PassInfo = PassInfo {
    name: NAME,
    summary: "write mse_loss, smooth_l1_loss, kl_div, triplet_margin_loss and cross_entropy \
              (class indices) as their elementwise formula and a reduction, for the reduction \
              templates",
    options: &[],
    build: |_| Ok(Box::new(ExpandLosses)),
};

/// The loss expansion.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExpandLosses;

/// Whether this pass writes out `op` applied to `inputs` with `attrs`.
fn expandable(op: Op, inputs: usize, attrs: &drtc_ir::Attrs) -> bool {
    match op {
        Op::MseLoss | Op::SmoothL1Loss | Op::KlDiv => inputs == 2,
        Op::CrossEntropy => inputs == 2,
        Op::TripletMarginLoss => {
            let p = attrs.get("p").and_then(Attr::as_float);
            inputs == 3 && matches!(p, Some(x) if x == 1.0 || x == 2.0)
        }
        _ => false,
    }
}

/// `pairwise_distance(x, y, p, eps)`: the `p`-norm (1 or 2) of `x - y + eps` over the last
/// dim.
fn distance(
    b: &mut Builder,
    x: ValueId,
    y: ValueId,
    p: f64,
    eps: f64,
) -> Result<ValueId, PassError> {
    let d = b.binary(Op::Sub, x, y)?;
    let eps = b.constant(eps, d)?;
    let shifted = b.binary(Op::Add, d, eps)?;
    let last = b.g.ty(shifted).rank() as i64 - 1;
    let dims = [("dim", Attr::Ints(vec![last]))];
    if p == 1.0 {
        let a = b.unary(Op::Abs, shifted)?;
        return b.op(Op::Sum, vec![a], &dims);
    }
    let sq = b.binary(Op::Mul, shifted, shifted)?;
    let sum = b.op(Op::Sum, vec![sq], &dims)?;
    b.unary(Op::Sqrt, sum)
}

/// Whether a cross entropy reads `[N, C]` scores and `[N]` class indices: the form this
/// pass writes out (class probabilities, more dims and unbatched inputs stay whole).
fn class_indices(g: &Graph, inputs: &[ValueId]) -> bool {
    let (x, t) = (g.ty(inputs[0]), g.ty(inputs[1]));
    x.rank() == 2 && t.rank() == 1 && t.dtype == drtc_ir::DType::I64 && x.shape[0] == t.shape[0]
}

/// `cross_entropy(x, t)` for scores `x` `[N, C]` and class indices `t` `[N]` (PyTorch's
/// defaults: no weights, no label smoothing, `ignore_index` -100): per row the log-sum-exp
/// of the scores minus the target's score, picked as the sum of the scores where a class
/// index (`arange(C)`) equals the target; rows whose target is -100 count 0, and `mean`
/// divides by the rows that count.
fn cross_entropy(
    b: &mut Builder,
    x: ValueId,
    t: ValueId,
    reduction: &str,
) -> Result<ValueId, PassError> {
    let classes = b.g.ty(x).shape[1];
    let lse = b.op(
        Op::Logsumexp,
        vec![x],
        &[("dim", Attr::Ints(vec![1])), ("keepdim", Attr::Bool(false))],
    )?;
    let index = b.op(Op::Arange, vec![], &[("end", Attr::Int(classes))])?;
    let target = b.op(Op::Unsqueeze, vec![t], &[("dim", Attr::Int(1))])?;
    let hit = b.binary(Op::Eq, index, target)?;
    let zero = b.constant(0.0, x)?;
    let scores = b.op(Op::Where, vec![hit, x, zero], &[])?;
    let picked = b.op(
        Op::Sum,
        vec![scores],
        &[("dim", Attr::Ints(vec![1])), ("keepdim", Attr::Bool(false))],
    )?;
    let loss = b.binary(Op::Sub, lse, picked)?;
    let ignored = b.constant(-100.0, t)?;
    let counted = b.binary(Op::Ne, t, ignored)?;
    let per = b.op(Op::Where, vec![counted, loss, zero], &[])?;
    match reduction {
        "mean" => {
            let one = b.constant(1.0, x)?;
            let weight = b.op(Op::Where, vec![counted, one, zero], &[])?;
            let sum = b.op(Op::Sum, vec![per], &[])?;
            let rows = b.op(Op::Sum, vec![weight], &[])?;
            b.binary(Op::Div, sum, rows)
        }
        other => reduce(b, per, other, None),
    }
}

/// The per-element (per-row, for the triplet loss) loss of `node`, before its reduction.
fn elementwise(
    b: &mut Builder,
    op: Op,
    inputs: &[ValueId],
    attrs: &drtc_ir::Attrs,
) -> Result<ValueId, PassError> {
    let (x, y) = (inputs[0], inputs[1]);
    match op {
        Op::MseLoss => {
            let d = b.binary(Op::Sub, x, y)?;
            b.binary(Op::Mul, d, d)
        }
        Op::SmoothL1Loss => {
            let beta = attrs.get("beta").and_then(Attr::as_float).unwrap_or(1.0);
            let d = b.binary(Op::Sub, x, y)?;
            let z = b.unary(Op::Abs, d)?;
            if beta == 0.0 {
                return Ok(z);
            }
            let beta_c = b.constant(beta, z)?;
            let half = b.constant(0.5, z)?;
            let below = b.binary(Op::Lt, z, beta_c)?;
            let zz = b.binary(Op::Mul, z, z)?;
            let half_zz = b.binary(Op::Mul, half, zz)?;
            let quadratic = b.binary(Op::Div, half_zz, beta_c)?;
            let half_beta = b.constant(0.5 * beta, z)?;
            let linear = b.binary(Op::Sub, z, half_beta)?;
            b.op(Op::Where, vec![below, quadratic, linear], &[])
        }
        Op::KlDiv => {
            let log_target = attrs.get("log_target").and_then(Attr::as_bool) == Some(true);
            if log_target {
                let e = b.unary(Op::Exp, y)?;
                let d = b.binary(Op::Sub, y, x)?;
                b.binary(Op::Mul, e, d)
            } else {
                let zero = b.constant(0.0, y)?;
                let is_zero = b.binary(Op::Eq, y, zero)?;
                let log = b.unary(Op::Log, y)?;
                let tlogt = b.binary(Op::Mul, y, log)?;
                let xlogy = b.op(Op::Where, vec![is_zero, zero, tlogt], &[])?;
                let tx = b.binary(Op::Mul, y, x)?;
                b.binary(Op::Sub, xlogy, tx)
            }
        }
        Op::TripletMarginLoss => {
            let float = |k: &str, d: f64| attrs.get(k).and_then(Attr::as_float).unwrap_or(d);
            let (margin, p, eps) = (float("margin", 1.0), float("p", 2.0), float("eps", 1e-6));
            let n = inputs[2];
            let pos = distance(b, x, y, p, eps)?;
            let mut neg = distance(b, x, n, p, eps)?;
            if attrs.get("swap").and_then(Attr::as_bool) == Some(true) {
                let other = distance(b, y, n, p, eps)?;
                neg = b.binary(Op::Minimum, neg, other)?;
            }
            let margin = b.constant(margin, pos)?;
            let up = b.binary(Op::Add, margin, pos)?;
            let gap = b.binary(Op::Sub, up, neg)?;
            b.unary(Op::Relu, gap)
        }
        other => Err(PassError::Failed {
            pass: NAME,
            message: format!("`{}` is not a loss this pass expands", other.name()),
        }),
    }
}

/// The loss's `reduction` applied to the elementwise values.
fn reduce(
    b: &mut Builder,
    per: ValueId,
    reduction: &str,
    batch: Option<i64>,
) -> Result<ValueId, PassError> {
    match reduction {
        "none" => Ok(per),
        "sum" => b.op(Op::Sum, vec![per], &[]),
        "mean" => b.op(Op::Mean, vec![per], &[]),
        "batchmean" => {
            let sum = b.op(Op::Sum, vec![per], &[])?;
            match batch {
                Some(n) => {
                    let n = b.constant(n as f64, sum)?;
                    b.binary(Op::Div, sum, n)
                }
                None => Ok(sum),
            }
        }
        other => Err(PassError::Failed {
            pass: NAME,
            message: format!("unknown reduction `{other}`"),
        }),
    }
}

impl Pass for ExpandLosses {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(&self, graph: &mut Graph, cx: &mut PassContext) -> Result<Changed, PassError> {
        let body = graph.body().to_vec();
        let mut order = vec![];
        let mut changed = Changed::No;
        for (pos, &n) in body.iter().enumerate() {
            let (op, inputs, attrs, out) = {
                let node = graph.node(n);
                (
                    node.op,
                    node.inputs.clone(),
                    node.attrs.clone(),
                    node.outputs[0],
                )
            };
            if !expandable(op, inputs.len(), &attrs)
                || op == Op::CrossEntropy && !class_indices(graph, &inputs)
            {
                order.push(n);
                continue;
            }
            let reduction = attrs
                .get("reduction")
                .and_then(Attr::as_str)
                .unwrap_or("mean")
                .to_string();
            // batchmean divides by the size of the input's first dim (none for a scalar)
            let batch = graph.ty(inputs[0]).shape.first().copied();
            let mut b = Builder::new(graph, NAME);
            let result = if op == Op::CrossEntropy {
                cross_entropy(&mut b, inputs[0], inputs[1], &reduction)?
            } else {
                let per = elementwise(&mut b, op, &inputs, &attrs)?;
                reduce(&mut b, per, &reduction, batch)?
            };
            order.extend(b.replace(out, result, &format!("#{pos} `{}`", op.name()))?);
            cx.log(format!(
                "#{pos} `{}` (reduction {reduction}): its elementwise formula and the reduction",
                op.name()
            ));
            changed = Changed::Yes;
        }
        graph.set_body(order);
        Ok(changed)
    }
}
