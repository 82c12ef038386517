//! Training-mode batch norms update their module's running statistics, as PyTorch does:
//! after the kernel that writes a batch norm's statistics ([`BatchStats`] with `running`),
//! the module's `running_mean` and `running_var` buffers are blended with them and the
//! batch is counted.
//!
//! Nothing else in the forward reads those buffers in training mode, so the updates wait
//! until the end of the forward and run together: one `torch._foreach_mul_` and one
//! `torch._foreach_add_` for every blended buffer of a momentum, one `_foreach_add_` for the
//! counters, instead of five launches per batch norm (a ResNet18 has 20 batch norms, a
//! KernelBench DenseNet121 63). A buffer that another node reads is updated in place, where PyTorch
//! updates it; a module applied twice in one forward starts a new batch at its second
//! update, so each update sees the one before.

use super::Host;
use crate::triton::BatchStats;
use drtc_ir::{Graph, InputKind, NodeId, Op, ValueDef, ValueId};
use std::fmt::Write;

/// One batch norm's update: buffers blended with its statistics, and its counter.
#[derive(Debug, Clone)]
pub(super) struct RunningUpdate {
    /// (buffer, statistic) pairs: `running_mean` with the mean, `running_var` with the
    /// unbiased variance.
    blends: Vec<(String, String)>,
    momentum: f64,
    counter: Option<String>,
}

impl Host<'_> {
    /// Training-mode batch_norm updates its module's running statistics, as PyTorch does:
    /// deferred to the end of the forward when nothing else reads the buffers.
    pub(super) fn running_stats(&mut self, s: &BatchStats, mean: &str, var_: &str) {
        if !self.update_running_stats || !s.running {
            return;
        }
        let g = self.g;
        let node = g.node(s.node);
        let Some(prefix) = module_prefix(g, s.node) else {
            return;
        };
        let find = |suffix: &str| {
            g.inputs().iter().copied().find(|&v| {
                matches!(
                    g.value(v).def,
                    ValueDef::Input {
                        kind: InputKind::Buffer,
                        ..
                    }
                ) && g.value(v).name.as_deref() == Some(&format!("{prefix}{suffix}"))
            })
        };
        let momentum = node
            .attrs
            .get("momentum")
            .and_then(|a| a.as_float())
            .unwrap_or(0.1);
        let mut buffers = vec![];
        let mut update = RunningUpdate {
            blends: vec![],
            momentum,
            counter: None,
        };
        if let (Some(rm), Some(rv)) = (find("running_mean"), find("running_var")) {
            buffers.extend([rm, rv]);
            update.blends = vec![
                (self.name(rm), mean.to_string()),
                (self.name(rv), var_.to_string()),
            ];
        }
        if let Some(nb) = find("num_batches_tracked") {
            buffers.push(nb);
            update.counter = Some(self.name(nb));
        }
        if buffers.iter().all(|&b| only_batch_norms_read(g, b)) {
            self.running.push(update);
        } else {
            self.launches += emit(&mut self.body, std::slice::from_ref(&update));
        }
    }

    /// The deferred updates, at the end of the forward.
    pub(super) fn flush_running_stats(&mut self) {
        let pending = std::mem::take(&mut self.running);
        let mut start = 0;
        for end in 1..=pending.len() {
            // a batch ends before an update whose buffer it already blends or counts
            let repeats = end < pending.len() && {
                let next = buffer_names(&pending[end]);
                pending[start..end]
                    .iter()
                    .any(|u| buffer_names(u).any(|b| next.clone().any(|n| n == b)))
            };
            if end == pending.len() || repeats {
                self.launches += emit(&mut self.body, &pending[start..end]);
                start = end;
            }
        }
    }
}

fn buffer_names(u: &RunningUpdate) -> impl Iterator<Item = &str> + Clone {
    u.blends
        .iter()
        .map(|(b, _)| b.as_str())
        .chain(u.counter.as_deref())
}

/// Emits updates no two of which touch the same buffer; returns the launches.
fn emit(body: &mut String, updates: &[RunningUpdate]) -> usize {
    if updates.is_empty() {
        return 0;
    }
    let mut launches = 0;
    writeln!(
        body,
        "    # running statistics of {} training-mode batch norm(s)",
        updates.len()
    )
    .unwrap();
    let mut momenta: Vec<f64> = vec![];
    for u in updates {
        if !u.blends.is_empty() && !momenta.contains(&u.momentum) {
            momenta.push(u.momentum);
        }
    }
    for m in momenta {
        let (buffers, stats): (Vec<&str>, Vec<&str>) = updates
            .iter()
            .filter(|u| u.momentum == m)
            .flat_map(|u| u.blends.iter().map(|(b, s)| (b.as_str(), s.as_str())))
            .unzip();
        let list = buffers.join(", ");
        writeln!(body, "    torch._foreach_mul_([{list}], {})", 1.0 - m).unwrap();
        writeln!(
            body,
            "    torch._foreach_add_([{list}], [{}], alpha={m:?})",
            stats.join(", ")
        )
        .unwrap();
        launches += 2;
    }
    let counters: Vec<&str> = updates
        .iter()
        .filter_map(|u| u.counter.as_deref())
        .collect();
    if !counters.is_empty() {
        writeln!(
            body,
            "    torch._foreach_add_([{}], 1)",
            counters.join(", ")
        )
        .unwrap();
        launches += 1;
    }
    launches
}

/// Whether every node that reads `v` is a batch norm in training mode (which ignores its
/// running statistics): then an update of `v` may wait for the end of the forward.
fn only_batch_norms_read(g: &Graph, v: ValueId) -> bool {
    !g.outputs().contains(&v)
        && g.users(v).into_iter().all(|n| {
            let node = g.node(n);
            matches!(node.op, Op::BatchNorm)
                && node.attrs.get("training").and_then(|a| a.as_bool()) != Some(false)
        })
}
/// The state_dict prefix (`bn.`) of the module a batch_norm node belongs to: from the
/// parameter its weight or bias is (or, after rewrites that fold a scale into them, is
/// computed from), provided the module's `running_mean` buffer exists.
fn module_prefix(g: &Graph, node: NodeId) -> Option<String> {
    let n = g.node(node);
    let mut stack: Vec<(ValueId, usize)> = n.inputs.iter().skip(1).map(|&v| (v, 0)).collect();
    while let Some((v, depth)) = stack.pop() {
        match g.producer(v) {
            None => {
                let name = g.value(v).name.as_deref().unwrap_or("");
                let prefix = name
                    .strip_suffix("weight")
                    .or_else(|| name.strip_suffix("bias"));
                if let Some(prefix) = prefix {
                    let has_buffer = g.inputs().iter().any(|&i| {
                        g.value(i).name.as_deref() == Some(&format!("{prefix}running_mean"))
                    });
                    if has_buffer {
                        return Some(prefix.to_string());
                    }
                }
            }
            Some(p) if depth < 4 => {
                stack.extend(g.node(p).inputs.iter().map(|&i| (i, depth + 1)));
            }
            Some(_) => {}
        }
    }
    None
}
