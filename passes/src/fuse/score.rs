//! Fusion scoring: how many bytes of memory traffic a merge saves.

use drtc_ir::{Graph, NodeId};
use std::collections::HashSet;

/// Bytes saved by merging the `producer` nodes into the `consumer` nodes: every value
/// passed from one to the other is no longer read back from memory (its size), and no
/// longer written either when nothing else needs it (twice its size).
pub fn bytes_saved(g: &Graph, producer: &[NodeId], consumer: &[NodeId]) -> u64 {
    let cons: HashSet<NodeId> = consumer.iter().copied().collect();
    let merged: HashSet<NodeId> = producer.iter().chain(consumer).copied().collect();
    let mut saved = 0;
    for &p in producer {
        for &v in &g.node(p).outputs {
            let users = g.users(v);
            if !users.iter().any(|u| cons.contains(u)) {
                continue;
            }
            let bytes = g.ty(v).size_bytes();
            let needed_outside =
                g.outputs().contains(&v) || users.iter().any(|u| !merged.contains(u));
            saved += if needed_outside { bytes } else { 2 * bytes };
        }
    }
    saved
}
