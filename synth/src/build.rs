//! Turning a solved model into an IR graph with the builder, which re-infers every type
//! from the op table: a solution whose sizes disagree with the IR's inference, or whose
//! FLOP total differs from the IR's count, is refused (a bug in `csp.rs`, never hidden).
//! Guards planned for an op input (`soundness.rs`) become their `abs` / `clamp` nodes
//! here.

use super::csp::{AttrVal, Csp};
use super::structure::{Origin, Plan};
use drtc_cpsat::Solution;
use drtc_ir::{Attr, DType, Graph, GraphBuilder, Op, TensorType, ValueId};

/// Builds the program's graph. Inputs are named `tensor_<i>` in creation order.
pub fn build_graph(plan: &Plan, csp: &Csp, sol: &Solution) -> Result<Graph, String> {
    let mut gb = GraphBuilder::new("fused_operator");
    let mut values: Vec<Option<ValueId>> = vec![None; plan.tensors.len()];
    let shape_of =
        |t: usize| -> Vec<i64> { csp.tensors[t].dims.iter().map(|&d| sol.value(d)).collect() };
    let mut n_inputs = 0;
    for (i, t) in plan.tensors.iter().enumerate() {
        if matches!(t.origin, Origin::Input { .. } | Origin::Weight { .. }) {
            let ty = TensorType::new(DType::F32, shape_of(i));
            values[i] = Some(gb.input(format!("tensor_{n_inputs}"), ty));
            n_inputs += 1;
        }
    }
    for (step, vars) in plan.steps.iter().zip(&csp.steps) {
        let attrs: Vec<(&'static str, Attr)> = vars
            .attrs
            .iter()
            .map(|(n, a)| {
                let v = match a {
                    AttrVal::Fixed(a) => a.clone(),
                    AttrVal::Int(v) => Attr::Int(sol.value(*v)),
                    AttrVal::Ints(vs) => Attr::Ints(vs.iter().map(|&v| sol.value(v)).collect()),
                };
                (*n, v)
            })
            .collect();
        let mut inputs: Vec<ValueId> = step
            .inputs
            .iter()
            .chain(&step.weights)
            .map(|&t| values[t].ok_or_else(|| format!("tensor {t} used before it is defined")))
            .collect::<Result<_, _>>()?;
        for (slot, guard) in &step.guards {
            for (op, attrs) in guard.ops() {
                inputs[*slot] = gb
                    .op1(op, &[inputs[*slot]], attrs)
                    .map_err(|e| e.to_string())?;
            }
        }
        let mut v = gb.op1(step.op, &inputs, attrs).map_err(|e| e.to_string())?;
        if matches!(step.op, Op::Argmax | Op::Argmin) {
            v = gb
                .op1(Op::Cast, &[v], [("dtype", Attr::DType(DType::F32))])
                .map_err(|e| e.to_string())?;
        }
        let expect = shape_of(step.output);
        if gb.ty(v).shape != expect {
            return Err(format!(
                "`{}`: the model solved its result to {:?} but the IR infers {:?}",
                step.op,
                expect,
                gb.ty(v).shape
            ));
        }
        values[step.output] = Some(v);
    }
    let outputs = plan
        .outputs
        .iter()
        .map(|&t| values[t].ok_or_else(|| format!("output tensor {t} is undefined")))
        .collect::<Result<Vec<_>, _>>()?;
    let g = gb.finish(outputs);
    let solved = sol.value(csp.total_flops) as u64;
    if g.flops() != solved {
        return Err(format!(
            "the model counts {solved} FLOPs but the IR counts {}",
            g.flops()
        ));
    }
    let errors: Vec<String> = drtc_ir::verify(&g)
        .into_iter()
        .filter(|e| e.is_error())
        .map(|e| e.to_string())
        .collect();
    if !errors.is_empty() {
        return Err(format!(
            "the IR verifier refused the graph: {}",
            errors.join("; ")
        ));
    }
    Ok(g)
}
