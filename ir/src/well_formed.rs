//! Well-formedness: checks a graph and collects every problem it finds, each with its
//! message.
//!
//! Checked: arena ids (dangling values), input bookkeeping, arity, attributes (unknown,
//! missing, wrong kind), result types against inference, definition before use, cycles,
//! outputs; unused node results are reported as warnings (dead code is legal between passes,
//! `dce` removes it).

use crate::{Graph, NodeId, TensorType, ValueDef, ValueId};
use petgraph::graph::DiGraph;
use std::collections::HashMap;
use std::fmt;

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Warning,
    Error,
}

/// One finding of the verifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    pub severity: Severity,
    /// The node concerned, by its position in program order, if any.
    pub position: Option<usize>,
    pub message: String,
}

impl VerifyError {
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        match self.position {
            Some(p) => write!(f, "{sev}: node #{p}: {}", self.message),
            None => write!(f, "{sev}: {}", self.message),
        }
    }
}

struct Checker<'g> {
    g: &'g Graph,
    found: Vec<VerifyError>,
}

impl Checker<'_> {
    fn error(&mut self, position: Option<usize>, message: String) {
        self.found.push(VerifyError {
            severity: Severity::Error,
            position,
            message,
        });
    }
    fn warning(&mut self, position: Option<usize>, message: String) {
        self.found.push(VerifyError {
            severity: Severity::Warning,
            position,
            message,
        });
    }
}

/// Verifies `g`; returns every finding (errors and warnings), in a stable order.
pub fn verify(g: &Graph) -> Vec<VerifyError> {
    let mut c = Checker { g, found: vec![] };
    check_inputs(&mut c);
    let cyclic = check_cycles(&mut c);
    check_nodes(&mut c, &cyclic);
    check_outputs(&mut c);
    c.found
}

fn check_inputs(c: &mut Checker) {
    let g = c.g;
    let mut names = HashMap::new();
    for (i, &v) in g.inputs().iter().enumerate() {
        if !g.contains_value(v) {
            c.error(
                None,
                format!("graph input {i} refers to a value that does not exist"),
            );
            continue;
        }
        let val = g.value(v);
        match &val.def {
            ValueDef::Input { index, .. } if *index == i => {}
            _ => c.error(
                None,
                format!("graph input {i} is not recorded as input {i}"),
            ),
        }
        match &val.name {
            Some(n) if !n.is_empty() => {
                if let Some(prev) = names.insert(n.clone(), i) {
                    c.error(None, format!("inputs {prev} and {i} are both named `{n}`"));
                }
            }
            _ => c.error(None, format!("graph input {i} has no name")),
        }
    }
}

/// Returns the positions (in body order) of nodes on a cycle.
fn check_cycles(c: &mut Checker) -> Vec<bool> {
    let g = c.g;
    let body = g.body();
    let pos: HashMap<NodeId, usize> = body.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let mut dg = DiGraph::<usize, ()>::new();
    let idx: Vec<_> = (0..body.len()).map(|i| dg.add_node(i)).collect();
    for (i, &n) in body.iter().enumerate() {
        if !g.contains_node(n) {
            continue;
        }
        for &v in &g.node(n).inputs {
            if !g.contains_value(v) {
                continue;
            }
            if let ValueDef::Node { node, .. } = g.value(v).def {
                if let Some(&p) = pos.get(&node) {
                    dg.add_edge(idx[p], idx[i], ());
                }
            }
        }
    }
    let mut on_cycle = vec![false; body.len()];
    for scc in petgraph::algo::tarjan_scc(&dg) {
        let self_loop = scc.len() == 1 && dg.contains_edge(scc[0], scc[0]);
        if scc.len() > 1 || self_loop {
            let mut members: Vec<usize> = scc.iter().map(|&ix| dg[ix]).collect();
            members.sort();
            for &m in &members {
                on_cycle[m] = true;
            }
            let list = members
                .iter()
                .map(|m| format!("#{m}"))
                .collect::<Vec<_>>()
                .join(", ");
            c.error(Some(members[0]), format!("cycle through nodes {list}"));
        }
    }
    on_cycle
}

fn check_nodes(c: &mut Checker, on_cycle: &[bool]) {
    let g = c.g;
    let body = g.body();
    let mut seen_node = vec![false; g.num_nodes()];
    let mut defined = vec![false; g.num_values()];
    for &v in g.inputs() {
        if g.contains_value(v) {
            defined[v.index()] = true;
        }
    }
    let uses = g.use_counts();
    for (p, &n) in body.iter().enumerate() {
        if !g.contains_node(n) {
            c.error(
                Some(p),
                format!("refers to node {} that does not exist", n.0),
            );
            continue;
        }
        if std::mem::replace(&mut seen_node[n.index()], true) {
            c.error(Some(p), "appears twice in the program".into());
            continue;
        }
        let node = g.node(n);
        let name = node.op.name();
        let def = node.op.def();
        if !def.arity.accepts(node.inputs.len()) {
            c.error(
                Some(p),
                format!(
                    "`{name}` takes {} inputs, got {}",
                    def.arity,
                    node.inputs.len()
                ),
            );
        }
        let mut inputs_ok = true;
        for (i, &v) in node.inputs.iter().enumerate() {
            if !g.contains_value(v) {
                c.error(
                    Some(p),
                    format!("`{name}` input {i} is a dangling value (%{})", v.0),
                );
                inputs_ok = false;
            } else if !defined[v.index()] && !on_cycle[p] {
                c.error(
                    Some(p),
                    format!("`{name}` input {i} is used before it is defined"),
                );
                inputs_ok = false;
            }
        }
        match node.op.normalize_attrs(&node.attrs) {
            Ok(norm) if norm != node.attrs => c.error(
                Some(p),
                format!("`{name}` attributes are not normalized (defaults must be explicit)"),
            ),
            Ok(_) => {}
            Err(errs) => {
                for e in errs {
                    c.error(Some(p), format!("`{name}`: {e}"));
                }
                inputs_ok = false;
            }
        }
        for (i, &v) in node.outputs.iter().enumerate() {
            if !g.contains_value(v) {
                c.error(Some(p), format!("`{name}` result {i} does not exist"));
                inputs_ok = false;
                continue;
            }
            match g.value(v).def {
                ValueDef::Node { node: d, index } if d == n && index == i => {}
                _ => c.error(
                    Some(p),
                    format!("`{name}` result {i} is not recorded as its result"),
                ),
            }
            defined[v.index()] = true;
        }
        if inputs_ok && def.arity.accepts(node.inputs.len()) {
            let ins: Vec<&TensorType> = node.inputs.iter().map(|&v| g.ty(v)).collect();
            match node.op.infer(&ins, &node.attrs) {
                Err(m) => c.error(Some(p), format!("`{name}`: {m}")),
                Ok(tys) if tys.len() != node.outputs.len() => c.error(
                    Some(p),
                    format!(
                        "`{name}` has {} results, expected {}",
                        node.outputs.len(),
                        tys.len()
                    ),
                ),
                Ok(tys) => {
                    for (i, (t, &v)) in tys.iter().zip(&node.outputs).enumerate() {
                        if g.ty(v) != t {
                            c.error(
                                Some(p),
                                format!(
                                    "`{name}` result {i} is declared {} but inference gives {t}",
                                    g.ty(v)
                                ),
                            );
                        }
                    }
                }
            }
        }
        if !node.outputs.is_empty()
            && node
                .outputs
                .iter()
                .all(|v| g.contains_value(*v) && uses[v.index()] == 0)
        {
            c.warning(Some(p), format!("the result of `{name}` is never used"));
        }
    }
    let _ = defined;
}

fn check_outputs(c: &mut Checker) {
    let g = c.g;
    if g.outputs().is_empty() {
        c.error(None, "the graph returns nothing".into());
    }
    let live: std::collections::HashSet<ValueId> = g
        .inputs()
        .iter()
        .copied()
        .chain(
            g.body()
                .iter()
                .filter(|n| g.contains_node(**n))
                .flat_map(|&n| g.node(n).outputs.clone()),
        )
        .collect();
    for (i, &v) in g.outputs().iter().enumerate() {
        if !live.contains(&v) {
            c.error(None, format!("output {i} is a dangling value (%{})", v.0));
        }
    }
}
