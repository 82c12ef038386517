//! DAG-cost choices for extraction. Tree cost (`convert::TreeCost`) counts a class once per
//! path that reaches it, so a right-hand side that reads one expensive value in several
//! places (a mean used by a centring, a square and a scale) looks dearer than it is. Here
//! every class instead gets the node whose *set* of needed classes costs least, each class
//! in the set counted once (the greedy DAG extraction of the extraction-gym literature):
//! iterated to a fixed point, a node's set is the union of its children's sets plus
//! itself, and a node whose children's sets already hold its own class (a cycle) is not a
//! choice. Greedy, so not always optimal; [`super::convert::extract`] keeps whichever of
//! this and the tree choice gives the lower graph cost, so it never does worse than tree
//! extraction alone.

use super::cost::node_cost;
use super::types_and_constants::TGraph;
use egg::{Id, Language};
use std::collections::{BTreeMap, HashMap};

/// Above this many classes the sets (one per class, each up to every class) cost too much
/// memory and time; extraction then uses tree costs only.
pub const MAX_CLASSES: usize = 4_000;
/// Rounds over all classes before giving up on a fixed point (each round only lowers
/// costs, so this bounds a long tail of tiny improvements).
const MAX_ROUNDS: usize = 64;

/// The best choice found for a class: its total (each needed class once), the index of
/// the chosen node in the class, and the needed classes with their own costs.
struct Best {
    total: f64,
    node: usize,
    set: BTreeMap<Id, f64>,
}

/// The chosen node index of every class that has a finite-cost choice, or `None` when the
/// e-graph is larger than [`MAX_CLASSES`].
pub fn dag_choices(egraph: &TGraph) -> Option<HashMap<Id, usize>> {
    if egraph.number_of_classes() > MAX_CLASSES {
        return None;
    }
    let mut best: HashMap<Id, Best> = HashMap::new();
    for _ in 0..MAX_ROUNDS {
        let mut changed = false;
        for class in egraph.classes() {
            for (i, node) in class.nodes.iter().enumerate() {
                let own = node_cost(egraph, node);
                if !own.is_finite() {
                    continue;
                }
                let mut set: BTreeMap<Id, f64> = BTreeMap::new();
                let mut ready = true;
                for &child in node.children() {
                    match best.get(&egraph.find(child)) {
                        Some(b) => set.extend(b.set.iter().map(|(&k, &v)| (k, v))),
                        None => {
                            ready = false;
                            break;
                        }
                    }
                }
                if !ready || set.contains_key(&class.id) {
                    continue;
                }
                set.insert(class.id, own);
                let total: f64 = set.values().sum();
                let better = best
                    .get(&class.id)
                    .is_none_or(|b| total < b.total * (1.0 - 1e-12));
                if better {
                    best.insert(
                        class.id,
                        Best {
                            total,
                            node: i,
                            set,
                        },
                    );
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    Some(best.into_iter().map(|(id, b)| (id, b.node)).collect())
}

#[cfg(test)]
mod tests {
    use super::super::convert::{extract, load};
    use super::super::cost::graph_cost;
    use drtc_ir::{Attr, DType, Graph, GraphBuilder, Op, TensorType};

    #[test]
    fn a_value_used_twice_is_counted_once() {
        // two equal values: m * m with m = mean(x) (x: 4 MiB, read once), and
        // tanh(mean(z)) (z: 6 MiB). Tree cost counts x twice (8 MiB > 6 MiB) and picks the
        // second; DAG cost counts it once and picks the first, the cheaper program.
        let mut b = GraphBuilder::new("g");
        let x = b.input("x", TensorType::new(DType::F32, vec![64, 16384]));
        let z = b.input("z", TensorType::new(DType::F32, vec![64, 24576]));
        let dim = || [("dim", Attr::Ints(vec![1]))];
        let m = b.op1(Op::Mean, &[x], dim()).unwrap();
        let mm = b.op1(Op::Mul, &[m, m], []).unwrap();
        let mz = b.op1(Op::Mean, &[z], dim()).unwrap();
        let t = b.op1(Op::Tanh, &[mz], []).unwrap();
        let g = b.finish(vec![mm, t]);
        let mut loaded = load(&g).unwrap();
        let (a, c) = (loaded.roots[0], loaded.roots[1]);
        loaded.egraph.union(a, c);
        loaded.egraph.rebuild();
        let mut one = Graph::new("g");
        for &v in g.inputs() {
            one.add_input(
                g.value(v).name.clone().unwrap_or_default(),
                drtc_ir::InputKind::Activation,
                g.ty(v).clone(),
            );
        }
        let out = extract(&loaded.egraph, &[a], &one).unwrap();
        let ops: Vec<Op> = out.body().iter().map(|&n| out.node(n).op).collect();
        assert_eq!(ops, [Op::Mean, Op::Mul], "{}", drtc_ir::text::print(&out));
        assert!(super::dag_choices(&loaded.egraph).is_some());
        assert!(graph_cost(&out).bytes < 6 << 20);
    }
}
