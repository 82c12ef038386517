//! Training-mode batch norms update their module's running statistics, as PyTorch does:
//! after the kernel that writes a batch norm's statistics ([`BatchStats`] with `running`),
//! the host blends them into the module's `running_mean` and `running_var` buffers and
//! counts the batch.

use super::Host;
use crate::triton::BatchStats;
use drtc_ir::{Graph, InputKind, NodeId, ValueDef, ValueId};
use std::fmt::Write;

impl Host<'_> {
    /// Training-mode batch_norm updates its module's running statistics, as PyTorch does.
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
        let m = node
            .attrs
            .get("momentum")
            .and_then(|a| a.as_float())
            .unwrap_or(0.1);
        if let (Some(rm), Some(rv)) = (find("running_mean"), find("running_var")) {
            let (rm, rv) = (self.name(rm), self.name(rv));
            self.launches += 4;
            writeln!(
                self.body,
                "    {rm}.mul_({}).add_({mean}, alpha={m:?})",
                1.0 - m
            )
            .unwrap();
            writeln!(
                self.body,
                "    {rv}.mul_({}).add_({var_}, alpha={m:?})",
                1.0 - m
            )
            .unwrap();
        }
        if let Some(nb) = find("num_batches_tracked") {
            self.launches += 1;
            let nb = self.name(nb);
            writeln!(self.body, "    {nb}.add_(1)").unwrap();
        }
    }
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
