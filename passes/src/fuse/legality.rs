//! Fusion legality: may a set of nodes form one region of a given kind?
//!
//! Three checks: the kinds combine (`combine`), the merged region is a valid instance of
//! its kind (one iteration space: `check_region`), and contracting the two regions creates
//! no cycle between regions (`creates_cycle`, on the region graph with petgraph).

use super::classify::{reduce_space, ReduceSpace};
use super::RegionKind;
use drtc_ir::{Graph, NodeId, Shape, ValueId};
use petgraph::graphmap::DiGraphMap;
use std::collections::HashSet;

/// The kind of the region made by merging a producer region into a consumer region, if
/// these kinds may merge at all.
pub fn combine(producer: RegionKind, consumer: RegionKind) -> Option<RegionKind> {
    use RegionKind::*;
    match (producer, consumer) {
        (Pointwise, Pointwise) => Some(Pointwise),
        (Pointwise, Reduction) | (Reduction, Pointwise) | (Reduction, Reduction) => Some(Reduction),
        (Contraction, Pointwise) => Some(Contraction),
        (Window, Pointwise) | (Pointwise, Window) => Some(Window),
        _ => None,
    }
}

/// Values a set of nodes must write: used by other live nodes, or graph outputs.
pub fn region_outputs(g: &Graph, nodes: &[NodeId]) -> Vec<ValueId> {
    let inside: HashSet<NodeId> = nodes.iter().copied().collect();
    let mut outs = vec![];
    for &n in nodes {
        if super::classify::is_inlined_constant(g, n) {
            continue;
        }
        for &v in &g.node(n).outputs {
            let used_outside = g
                .body()
                .iter()
                .any(|u| !inside.contains(u) && g.node(*u).inputs.contains(&v));
            if (used_outside || g.outputs().contains(&v)) && !outs.contains(&v) {
                outs.push(v);
            }
        }
    }
    outs
}

/// Values a set of nodes reads from outside.
pub fn region_inputs(g: &Graph, nodes: &[NodeId]) -> Vec<ValueId> {
    let defined: HashSet<ValueId> = nodes
        .iter()
        .flat_map(|&n| g.node(n).outputs.clone())
        .collect();
    let mut ins = vec![];
    for &n in nodes {
        for &v in &g.node(n).inputs {
            if !defined.contains(&v) && !ins.contains(&v) {
                ins.push(v);
            }
        }
    }
    ins
}

fn broadcasts_to(from: &[i64], to: &[i64]) -> bool {
    from.len() <= to.len()
        && from
            .iter()
            .rev()
            .zip(to.iter().rev())
            .all(|(&f, &t)| f == t || f == 1)
}

fn produced_inside(g: &Graph, nodes: &HashSet<NodeId>, v: ValueId) -> bool {
    g.producer(v).is_some_and(|p| nodes.contains(&p))
}

/// Where a value lives in a reduction region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// The whole domain.
    Full,
    /// One value per row, reduced dims kept as 1.
    RowKeep,
    /// One value per row, reduced dims dropped.
    RowDrop,
}

/// The space of a value of shape `s` in a reduction region.
pub fn space_of(space: &ReduceSpace, s: &[i64]) -> Option<Space> {
    if s == space.domain.as_slice() {
        Some(Space::Full)
    } else if s == space.keepdim_shape().as_slice() {
        Some(Space::RowKeep)
    } else if s == space.dropped_shape().as_slice() {
        Some(Space::RowDrop)
    } else {
        None
    }
}

/// Checks that `nodes` (program order) form a valid region of `kind`; returns the reason
/// when they don't.
pub fn check_region(g: &Graph, kind: RegionKind, nodes: &[NodeId]) -> Result<(), String> {
    check_pads(g, kind, nodes)?;
    match kind {
        RegionKind::Pointwise => check_pointwise(g, nodes),
        RegionKind::Reduction => check_reduction(g, nodes).map(|_| ()),
        RegionKind::Contraction | RegionKind::Window => check_epilogue(g, kind, nodes),
        _ => {
            if nodes.len() == 1 {
                Ok(())
            } else {
                Err(format!("{} regions hold one op", kind.name()))
            }
        }
    }
}

/// Ops computed from the domain's indices are in pointwise regions only (`tril`, `triu`:
/// a predicate on the last two dims' indices; `pad`). A pad reads its input at shifted
/// indices, masked where the padding is: its input comes from memory (not computed in the
/// region) and its result is the domain of its region, so each domain index is one
/// element of the result.
fn check_pads(g: &Graph, kind: RegionKind, nodes: &[NodeId]) -> Result<(), String> {
    use drtc_ir::Op;
    let indexed = |n: &NodeId| matches!(g.node(*n).op, Op::Pad | Op::Tril | Op::Triu);
    if kind != RegionKind::Pointwise {
        return match nodes.iter().find(|n| indexed(n)) {
            Some(&n) => Err(format!(
                "a {} is computed by a pointwise kernel, not in a {} region",
                g.node(n).op,
                kind.name()
            )),
            None => Ok(()),
        };
    }
    let pads: Vec<NodeId> = nodes
        .iter()
        .copied()
        .filter(|&n| g.node(n).op == Op::Pad)
        .collect();
    if pads.is_empty() {
        return Ok(());
    }
    let set: HashSet<NodeId> = nodes.iter().copied().collect();
    let domain = pointwise_domain(g, nodes);
    for n in pads {
        let node = g.node(n);
        if produced_inside(g, &set, node.inputs[0]) {
            return Err("a pad reads its input from memory, at shifted indices".into());
        }
        if g.ty(node.outputs[0]).shape != domain {
            return Err(format!(
                "a pad's result {:?} is its region's domain, not {:?}",
                g.ty(node.outputs[0]).shape,
                domain
            ));
        }
    }
    Ok(())
}

/// The iteration space of a pointwise region: the shape of what it writes.
pub fn pointwise_domain(g: &Graph, nodes: &[NodeId]) -> Shape {
    let outs = region_outputs(g, nodes);
    match outs.first() {
        Some(&v) => g.ty(v).shape.clone(),
        None => g
            .ty(g.node(*nodes.last().unwrap()).outputs[0])
            .shape
            .clone(),
    }
}

fn check_pointwise(g: &Graph, nodes: &[NodeId]) -> Result<(), String> {
    let domain = pointwise_domain(g, nodes);
    for v in region_outputs(g, nodes) {
        if g.ty(v).shape != domain {
            return Err(format!(
                "a pointwise region writes one shape; {:?} differs from {:?}",
                g.ty(v).shape,
                domain
            ));
        }
    }
    for &n in nodes {
        for &v in &g.node(n).outputs {
            if !broadcasts_to(&g.ty(v).shape, &domain) {
                return Err(format!(
                    "{:?} does not broadcast to {:?}",
                    g.ty(v).shape,
                    domain
                ));
            }
        }
    }
    Ok(())
}

/// The reduction space shared by every reduction of the region.
pub fn check_reduction(g: &Graph, nodes: &[NodeId]) -> Result<ReduceSpace, String> {
    let set: HashSet<NodeId> = nodes.iter().copied().collect();
    let mut space: Option<ReduceSpace> = None;
    for &n in nodes {
        if let Some(s) = reduce_space(g, n) {
            match &space {
                None => space = Some(s),
                Some(prev) if *prev == s => {}
                Some(_) => return Err("reductions over different spaces".into()),
            }
        }
    }
    let space = space.ok_or("no reduction in a reduction region")?;
    if space.groups.is_some()
        && nodes
            .iter()
            .filter(|&&n| reduce_space(g, n).is_some())
            .count()
            > 1
    {
        return Err("group_norm does not share its region with another reduction".into());
    }
    let reverse = |n: NodeId| {
        let node = g.node(n);
        node.op.kind() == drtc_ir::Kind::Scan
            && node.attrs.get("reverse").and_then(drtc_ir::Attr::as_bool) == Some(true)
    };
    if nodes.iter().any(|&n| reverse(n)) {
        let forward = nodes
            .iter()
            .find(|&&n| g.node(n).op.kind() == drtc_ir::Kind::Scan && !reverse(n));
        if let Some(&n) = forward {
            return Err(format!(
                "`{}` runs forward in a region whose reverse scan takes the column blocks from the last",
                g.node(n).op.name()
            ));
        }
    }
    if let Some(n) = reduction_after_scan(g, nodes) {
        return Err(format!(
            "`{}` reduces a scan of its own region (a scan is carried only through the pass that writes the outputs)",
            g.node(n).op.name()
        ));
    }
    for &n in nodes {
        if super::classify::is_inlined_constant(g, n) {
            continue;
        }
        let node = g.node(n);
        let out = g.ty(node.outputs[0]);
        let out_space = space_of(&space, &out.shape).ok_or_else(|| {
            format!(
                "{:?} is neither the domain nor a row of {:?}",
                out.shape, space.domain
            )
        })?;
        if reduce_space(g, n).is_some() {
            // the reduced operand is read over the whole domain
            let x = node.inputs[0];
            if produced_inside(g, &set, x) && space_of(&space, &g.ty(x).shape) != Some(Space::Full)
            {
                return Err("a reduction reads a value that is not over the domain".into());
            }
            continue;
        }
        for &v in &node.inputs {
            let constant = g
                .producer(v)
                .is_some_and(|p| super::classify::is_inlined_constant(g, p));
            if !produced_inside(g, &set, v) || constant {
                if !broadcasts_to(&g.ty(v).shape, &out.shape) {
                    return Err("an input does not broadcast to its use".into());
                }
                continue;
            }
            let ok = matches!(
                (out_space, space_of(&space, &g.ty(v).shape)),
                (Space::Full, Some(Space::Full | Space::RowKeep))
                    | (Space::RowKeep, Some(Space::RowKeep))
                    | (Space::RowDrop, Some(Space::RowDrop))
            );
            if !ok {
                return Err(format!(
                    "`{}` mixes row values and domain values in a way broadcasting would misalign",
                    node.op.name()
                ));
            }
        }
    }
    Ok(space)
}

/// A reduction of the region (other than a scan) that reads, through the region's own
/// values, the result of a scan of the region: its pass would need the scan's carry.
fn reduction_after_scan(g: &Graph, nodes: &[NodeId]) -> Option<NodeId> {
    let is_scan = |n: NodeId| g.node(n).op.kind() == drtc_ir::Kind::Scan;
    // values downstream of a scan, to a fixpoint (whatever the order of `nodes`)
    let mut after_scan: HashSet<ValueId> = HashSet::new();
    loop {
        let before = after_scan.len();
        for &n in nodes {
            let node = g.node(n);
            let reads_scan = node.inputs.iter().any(|v| after_scan.contains(v));
            if reads_scan && !is_scan(n) && reduce_space(g, n).is_some() {
                return Some(n);
            }
            if reads_scan || is_scan(n) {
                after_scan.extend(node.outputs.iter().copied());
            }
        }
        if after_scan.len() == before {
            return None;
        }
    }
}

fn check_epilogue(g: &Graph, kind: RegionKind, nodes: &[NodeId]) -> Result<(), String> {
    let set: HashSet<NodeId> = nodes.iter().copied().collect();
    let main = nodes
        .iter()
        .copied()
        .filter(|&n| super::classify::classify(g, n) == kind)
        .collect::<Vec<_>>();
    if main.len() != 1 {
        return Err(format!(
            "a {} region holds exactly one main op",
            kind.name()
        ));
    }
    let main = main[0];
    let pos = nodes.iter().position(|&n| n == main).unwrap_or(0);
    let constant = |n: NodeId| super::classify::is_inlined_constant(g, n);
    let prologue: Vec<NodeId> = nodes[..pos]
        .iter()
        .copied()
        .filter(|&n| !constant(n))
        .collect();
    if !prologue.is_empty() {
        if kind != RegionKind::Window {
            return Err("only epilogues fuse after a contraction".into());
        }
        // no value of the prologue is read after the pool, by the epilogue included
        check_prologue(g, nodes, main, &prologue)?;
    }
    let shape = g.ty(g.node(main).outputs[0]).shape.clone();
    for &n in &nodes[pos + 1..] {
        if constant(n) {
            continue;
        }
        let node = g.node(n);
        if g.ty(node.outputs[0]).shape != shape {
            return Err("an epilogue op changes the output shape".into());
        }
        for &v in &node.inputs {
            let inside = produced_inside(g, &set, v);
            if inside && g.ty(v).shape != shape && g.ty(v).rank() != 0 {
                return Err("an epilogue reads an in-region value of another shape".into());
            }
            if !inside && !broadcasts_to(&g.ty(v).shape, &shape) {
                return Err("an epilogue input does not broadcast".into());
            }
        }
    }
    Ok(())
}

/// A window's prologue (`prologue`, program order): pointwise ops over the pooled input's
/// shape whose values only the prologue and the pool read (the window kernel computes them
/// at each tap of a window, from the input's own index, and never writes them).
fn check_prologue(
    g: &Graph,
    nodes: &[NodeId],
    main: NodeId,
    prologue: &[NodeId],
) -> Result<(), String> {
    let x = g.node(main).inputs[0];
    let in_shape = &g.ty(x).shape;
    let outputs = region_outputs(g, nodes);
    for &n in prologue {
        let node = g.node(n);
        if super::classify::classify(g, n) != RegionKind::Pointwise {
            return Err(format!(
                "`{}` before a window is not pointwise",
                node.op.name()
            ));
        }
        for &v in &node.outputs {
            if &g.ty(v).shape != in_shape {
                return Err("a prologue op's result is not of the pooled input's shape".into());
            }
            if outputs.contains(&v) {
                return Err("a prologue value is needed outside the window kernel".into());
            }
            let read_in_prologue = g
                .users(v)
                .iter()
                .all(|u| *u == main || prologue.contains(u));
            if !read_in_prologue {
                return Err("a prologue value is read after the pool".into());
            }
        }
        // values of the prologue itself have the pooled input's shape (checked above)
        for &v in &node.inputs {
            let from_prologue = g.producer(v).is_some_and(|p| prologue.contains(&p));
            if !from_prologue && !broadcasts_to(&g.ty(v).shape, in_shape) {
                return Err("a prologue input does not broadcast to the pooled input".into());
            }
        }
    }
    Ok(())
}

/// Would merging regions `a` and `b` of the region graph create a cycle: is there a path
/// from one to the other through a third region?
pub fn creates_cycle(region_graph: &DiGraphMap<usize, ()>, a: usize, b: usize) -> bool {
    let via_other = |from: usize, to: usize| {
        region_graph
            .neighbors(from)
            .filter(|&s| s != to)
            .any(|s| petgraph::algo::has_path_connecting(region_graph, s, to, None))
    };
    via_other(a, b) || via_other(b, a)
}
