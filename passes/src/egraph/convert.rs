//! Between graphs and e-graphs: a graph's nodes become e-nodes (hash-consing merges
//! duplicates, as `cse` would), and extraction picks the cheapest node of every class the
//! outputs need (by [`op_cost`]) and rebuilds a graph with the same inputs, in the same
//! order, under the same names, and the same number of outputs.

use super::cost::{graph_cost, node_cost};
use super::dag::dag_choices;
use super::lang::{AttrSet, TNode};
use super::types_and_constants::{TGraph, TypeAnalysis};
use drtc_ir::{Attrs, Graph, InputKind, TensorType, ValueDef, ValueId};
use egg::{CostFunction, Extractor, Id, Language};
use std::collections::HashMap;

/// A graph loaded into an e-graph: the class of every output.
pub struct Loaded {
    pub egraph: TGraph,
    pub roots: Vec<Id>,
}

/// Loads `g` (its live nodes); `Err` for what the e-graph cannot hold (multi-result nodes).
pub fn load(g: &Graph) -> Result<Loaded, String> {
    let analysis = TypeAnalysis {
        input_types: g.inputs().iter().map(|&v| g.ty(v).clone()).collect(),
    };
    let mut egraph = TGraph::new(analysis);
    let mut class: HashMap<ValueId, Id> = HashMap::new();
    for (i, &v) in g.inputs().iter().enumerate() {
        class.insert(v, egraph.add(TNode::Input(i as u32)));
    }
    let mut nonce = 0;
    for &n in g.body() {
        let node = g.node(n);
        if node.outputs.len() != 1 {
            return Err(format!("`{}` has {} results", node.op, node.outputs.len()));
        }
        let mut children: Vec<Id> = node
            .inputs
            .iter()
            .map(|v| {
                class
                    .get(v)
                    .copied()
                    .ok_or_else(|| format!("value %{} used before its definition", v.0))
            })
            .collect::<Result<_, _>>()?;
        if TNode::has_attrs(node.op) {
            children.push(egraph.add(TNode::Attrs(AttrSet::from_attrs(&node.attrs))));
        }
        let nonce = if node.op.is_random(&node.attrs) {
            nonce += 1;
            nonce
        } else {
            0
        };
        let id = egraph.add(TNode::Op {
            op: node.op,
            nonce,
            children,
        });
        if egraph[id].data.ty.as_ref() != Some(g.ty(node.outputs[0])) {
            return Err(format!("`{}` does not type-check in the e-graph", node.op));
        }
        class.insert(node.outputs[0], id);
    }
    let roots = g
        .outputs()
        .iter()
        .map(|v| {
            class
                .get(v)
                .copied()
                .ok_or_else(|| format!("output %{} is not defined", v.0))
        })
        .collect::<Result<_, _>>()?;
    egraph.rebuild();
    Ok(Loaded { egraph, roots })
}

/// Extraction costs: [`node_cost`] of each node plus its children's (tree cost). In f64: a
/// value shared along a deep chain is counted once per path, which outgrows any integer.
pub struct TreeCost<'a> {
    pub egraph: &'a TGraph,
}

impl CostFunction<TNode> for TreeCost<'_> {
    type Cost = f64;

    fn cost<C: FnMut(Id) -> f64>(&mut self, enode: &TNode, mut costs: C) -> f64 {
        let own = node_cost(self.egraph, enode);
        enode.fold(own, |acc, c| acc + costs(c))
    }
}

/// Rebuilds a graph from the cheapest nodes of the classes `roots` need: by tree cost, and
/// by DAG cost ([`super::dag`]) where the e-graph is small enough; whichever graph costs
/// less by [`graph_cost`] (the tree one on a tie). `template` gives the inputs (names,
/// kinds, types) and the graph's name.
pub fn extract(egraph: &TGraph, roots: &[Id], template: &Graph) -> Result<Graph, String> {
    let extractor = Extractor::new(egraph, TreeCost { egraph });
    let tree = extract_with(egraph, roots, template, &|id| {
        extractor.find_best_node(id).clone()
    })?;
    let Some(choice) = dag_choices(egraph) else {
        return Ok(tree);
    };
    let by_dag = |id: Id| match choice.get(&id) {
        Some(&i) => egraph[id].nodes[i].clone(),
        None => extractor.find_best_node(id).clone(),
    };
    match extract_with(egraph, roots, template, &by_dag) {
        Ok(dag) if graph_cost(&dag).total() < graph_cost(&tree).total() => Ok(dag),
        _ => Ok(tree),
    }
}

/// The node chosen for a (canonical) class.
type Choose<'a> = dyn Fn(Id) -> TNode + 'a;

fn extract_with(
    egraph: &TGraph,
    roots: &[Id],
    template: &Graph,
    choose: &Choose,
) -> Result<Graph, String> {
    let mut g = Graph::new(template.name.clone());
    let mut inputs = vec![];
    for &v in template.inputs() {
        let val = template.value(v);
        let kind = match &val.def {
            ValueDef::Input { kind, .. } => kind.clone(),
            ValueDef::Node { .. } => InputKind::Activation,
        };
        inputs.push(g.add_input(val.name.clone().unwrap_or_default(), kind, val.ty.clone()));
    }
    let mut done: HashMap<Id, ValueId> = HashMap::new();
    // random ops draw from one generator: emit them first, in their original order, so
    // that each still gets the same draw
    let mut random: Vec<(u32, Id)> = egraph
        .classes()
        .flat_map(|c| {
            c.nodes.iter().filter_map(move |n| match n {
                TNode::Op { nonce, .. } if *nonce > 0 => Some((*nonce, c.id)),
                _ => None,
            })
        })
        .collect();
    random.sort();
    for (_, id) in random {
        emit(egraph, choose, &mut g, &inputs, &mut done, id, 0)?;
    }
    let mut outputs = vec![];
    for &root in roots {
        outputs.push(emit(egraph, choose, &mut g, &inputs, &mut done, root, 0)?);
    }
    g.set_outputs(outputs);
    Ok(g)
}

fn emit(
    egraph: &TGraph,
    choose: &Choose,
    g: &mut Graph,
    inputs: &[ValueId],
    done: &mut HashMap<Id, ValueId>,
    id: Id,
    depth: usize,
) -> Result<ValueId, String> {
    let id = egraph.find(id);
    if let Some(&v) = done.get(&id) {
        return Ok(v);
    }
    // deeper than there are classes: the choices form a cycle (a greedy DAG choice can)
    if depth > egraph.number_of_classes() {
        return Err("the chosen nodes form a cycle".into());
    }
    let node = choose(id);
    let v = match &node {
        TNode::Input(i) => *inputs
            .get(*i as usize)
            .ok_or_else(|| format!("input {i} does not exist"))?,
        TNode::Attrs(_) => return Err("an attribute leaf used as a tensor".into()),
        TNode::Op { op, .. } => {
            let mut args = vec![];
            for &c in node.inputs() {
                args.push(emit(egraph, choose, g, inputs, done, c, depth + 1)?);
            }
            let attrs: Attrs = node
                .attrs_child()
                .and_then(|a| egraph[a].data.attrs.clone())
                .unwrap_or_default();
            let tys: Vec<&TensorType> = args.iter().map(|&a| g.ty(a)).collect();
            let out = op
                .infer(&tys, &attrs)
                .map_err(|e| format!("extracted `{op}` does not type-check: {e}"))?;
            if Some(&out[0]) != egraph[id].data.ty.as_ref() {
                return Err(format!("extracted `{op}` changed its class's type"));
            }
            let n = g.add_node_unchecked(*op, args, attrs, out);
            g.node(n).outputs[0]
        }
    };
    done.insert(id, v);
    Ok(v)
}
