//! The CP-SAT model of a planned program (the CSP-DAG): one size variable per dim of every
//! tensor, one variable per size-dependent op parameter (kernel, stride, padding,
//! dilation, groups, output_padding, num_groups), and each op's shape, parameter and FLOP
//! constraints. Bounds: dims in 1..=max_dim, element counts, intermediate products, total
//! memory and the total FLOP range.
//!
//! FLOP terms follow the IR's FLOP rules (ops.md); `build.rs` checks the solved total
//! against the IR's own count, so the two cannot drift apart unnoticed.

use super::catalog::Family;
use super::options::SynthOptions;
use super::structure::{Origin, Plan, Step};
use drtc_cpsat::{BoolVar, CpModel, IntVar, LinearExpr};
use drtc_ir::{Attr, Attrs, Op, TensorType};
use rand::Rng;

/// The size variables of one tensor.
#[derive(Clone, Debug)]
pub struct TVar {
    pub dims: Vec<IntVar>,
    pub numel: IntVar,
}

/// An attribute whose value may come from the solution.
#[derive(Clone, Debug)]
pub enum AttrVal {
    Fixed(Attr),
    Int(IntVar),
    Ints(Vec<IntVar>),
}

/// The variables of one step.
#[derive(Clone, Debug)]
pub struct StepVars {
    pub attrs: Vec<(&'static str, AttrVal)>,
    pub flops: LinearExpr,
}

/// A planned program as a CP-SAT model (without the FLOP minimum, added per solve).
pub struct Csp {
    pub model: CpModel,
    /// Per plan tensor.
    pub tensors: Vec<TVar>,
    pub steps: Vec<StepVars>,
    /// Total FLOPs, constrained to `<= max`.
    pub total_flops: IntVar,
    /// Whether any step has FLOPs at all (a program of layout ops only has none).
    pub has_flops: bool,
    /// Branching variables (free sizes and parameters), in random order.
    pub decisions: Vec<IntVar>,
}

/// FLOPs per element of `op` under the IR's rule, read from the op table with unit sizes.
fn unit_flops(op: Op) -> i64 {
    let one = TensorType::new(drtc_ir::DType::F32, vec![1]);
    op.flops(&[&one], std::slice::from_ref(&one), &Attrs::new()) as i64
}

struct Enc<'a, R: Rng> {
    m: CpModel,
    o: &'a SynthOptions,
    rng: &'a mut R,
    one: IntVar,
    two: IntVar,
    decisions: Vec<IntVar>,
    /// log2 of the largest element count a hint aims at.
    hint_log: f64,
}

impl<R: Rng> Enc<'_, R> {
    fn var(&mut self, lo: i64, hi: i64) -> IntVar {
        self.m.new_int(lo, hi, "")
    }

    /// A free parameter in `lo..=hi`, hinted uniformly.
    fn param(&mut self, lo: i64, hi: i64) -> IntVar {
        let v = self.var(lo, hi);
        let h = self.rng.random_range(lo..=hi);
        self.m.add_hint(v, h);
        self.decisions.push(v);
        v
    }

    /// Fresh dims of a program input, hinted so the element count is log-uniform.
    fn fresh_dims(&mut self, rank: usize) -> Vec<IntVar> {
        let target = self.rng.random_range(5.0..self.hint_log.max(5.5));
        let w: Vec<f64> = (0..rank)
            .map(|_| self.rng.random_range(0.05..1.0))
            .collect();
        let total: f64 = w.iter().sum();
        (0..rank)
            .map(|i| {
                let v = self.var(1, self.o.max_dim);
                let log = target * w[i] / total;
                let jitter = self.rng.random_range(0.75..1.25);
                let h = (2f64.powf(log) * jitter)
                    .round()
                    .clamp(1.0, self.o.max_dim as f64);
                self.m.add_hint(v, h as i64);
                self.decisions.push(v);
                v
            })
            .collect()
    }

    fn mul(
        &mut self,
        a: impl Into<LinearExpr>,
        b: impl Into<LinearExpr>,
        lo: i64,
        hi: i64,
    ) -> IntVar {
        let t = self.var(lo, hi);
        self.m.add_product(t, &[a.into(), b.into()]);
        t
    }

    /// The element count of `dims` (a product chain bounded by the element limit).
    fn numel(&mut self, dims: &[IntVar]) -> IntVar {
        let hi = self.o.numel.1 as i64;
        match dims {
            [] => self.one,
            [d] => *d,
            [first, rest @ ..] => {
                let mut acc = *first;
                for &d in rest {
                    acc = self.mul(acc, d, 1, hi);
                }
                acc
            }
        }
    }

    fn tensor(&mut self, dims: Vec<IntVar>) -> TVar {
        let numel = self.numel(&dims);
        TVar { dims, numel }
    }

    /// One broadcast output dim from the input dims present at that position.
    fn broadcast_dim(&mut self, xs: &[IntVar]) -> IntVar {
        let mut uniq: Vec<IntVar> = xs.to_vec();
        uniq.dedup();
        if uniq.len() == 1 {
            return uniq[0];
        }
        let out = self.var(1, self.o.max_dim);
        let exprs: Vec<LinearExpr> = uniq.iter().map(|&x| x.into()).collect();
        self.m.add_max_equality(out, &exprs);
        for &x in &uniq {
            let e: BoolVar = self.m.new_bool("");
            let c = self.m.add_eq(x, out);
            self.m.only_enforce_if(c, &[e]);
            let c = self.m.add_eq(x, 1);
            self.m.only_enforce_if(c, &[!e]);
        }
        out
    }

    /// Right-aligned broadcasting of several shapes.
    fn broadcast(&mut self, shapes: &[Vec<IntVar>]) -> Vec<IntVar> {
        let r = shapes.iter().map(Vec::len).max().unwrap_or(0);
        (0..r)
            .map(|j| {
                let xs: Vec<IntVar> = shapes
                    .iter()
                    .filter(|s| j + s.len() >= r)
                    .map(|s| s[j + s.len() - r])
                    .collect();
                self.broadcast_dim(&xs)
            })
            .collect()
    }

    /// `floor((in + 2p - d(k-1) - 1) / s) + 1`, with the numerator kept >= 0.
    fn window_out(
        &mut self,
        input: IntVar,
        k: IntVar,
        s: IntVar,
        p: IntVar,
        d: Option<IntVar>,
    ) -> IntVar {
        let kmax = self.o.kernel.1;
        let dk: LinearExpr = match d {
            Some(d) => self.mul(d, k - 1, 0, 3 * kmax).into(),
            None => k - 1,
        };
        let num = self.var(0, self.o.max_dim + 2 * kmax);
        self.m.add_eq(num, LinearExpr::from(input) + p * 2 - dk - 1);
        let q = self.var(0, self.o.max_dim - 1);
        self.m.add_division(q, num, s);
        let out = self.var(1, self.o.max_dim);
        self.m.add_eq(out, q + 1);
        out
    }

    /// `(in - 1) s - 2p + d(k-1) + output_padding + 1`.
    fn transposed_out(
        &mut self,
        input: IntVar,
        k: IntVar,
        s: IntVar,
        p: IntVar,
        d: IntVar,
        op: IntVar,
    ) -> IntVar {
        let kmax = self.o.kernel.1;
        let t = self.mul(input - 1, s, 0, self.o.max_dim * 4);
        let dk = self.mul(d, k - 1, 0, 3 * kmax);
        let out = self.var(1, self.o.max_dim);
        self.m
            .add_eq(out, LinearExpr::from(t) - p * 2 + dk + op + 1);
        out
    }

    fn product_of(&mut self, vars: &[IntVar], hi: i64) -> IntVar {
        let mut acc = vars[0];
        for &v in &vars[1..] {
            acc = self.mul(acc, v, 1, hi);
        }
        acc
    }

    fn ints(vars: &[IntVar]) -> AttrVal {
        AttrVal::Ints(vars.to_vec())
    }
}

/// Builds the CP-SAT model of `plan`.
pub fn encode(plan: &Plan, o: &SynthOptions, rng: &mut impl Rng) -> Csp {
    let mut m = CpModel::new();
    let one = m.new_constant(1);
    let two = m.new_constant(2);
    let hint_log = ((o.flops.1 as f64).log2() - 2.0).min((o.numel.1 as f64).log2());
    let mut e = Enc {
        m,
        o,
        rng,
        one,
        two,
        decisions: vec![],
        hint_log,
    };
    let mut tensors: Vec<Option<TVar>> = vec![None; plan.tensors.len()];
    let mut steps = vec![];
    let max_prod = o.max_product;
    for (si, step) in plan.steps.iter().enumerate() {
        // fresh data inputs of this step
        let mut ins: Vec<TVar> = vec![];
        for &t in &step.inputs {
            if tensors[t].is_none() {
                debug_assert_eq!(plan.tensors[t].origin, Origin::Input { step: si });
                let dims = e.fresh_dims(plan.tensors[t].rank);
                let tv = e.tensor(dims);
                if plan.tensors[t].rank > 0 {
                    e.m.add_ge(tv.numel, o.numel.0 as i64);
                }
                tensors[t] = Some(tv);
            }
            ins.push(tensors[t].clone().expect("created above"));
        }
        let (out_dims, weights, attrs, mut flops) = encode_step(&mut e, step, &ins, max_prod);
        // guards (`abs`, `clamp`) run over their whole input
        for (slot, g) in &step.guards {
            flops = flops + ins[*slot].numel * g.unit_flops();
        }
        let out = match out_dims {
            OutShape::Same => ins[0].clone(),
            OutShape::SameNumel(dims) => TVar {
                dims,
                numel: ins[0].numel,
            },
            OutShape::New(dims) => e.tensor(dims),
        };
        for (&w, dims) in step.weights.iter().zip(weights) {
            tensors[w] = Some(e.tensor(dims));
        }
        tensors[step.output] = Some(out);
        steps.push(StepVars { attrs, flops });
    }
    let tensors: Vec<TVar> = tensors
        .into_iter()
        .map(|t| t.expect("every planned tensor is encoded"))
        .collect();
    // memory: every tensor of the program (an argmax's f32 copy counts twice)
    let mut mem = LinearExpr::default();
    for (i, t) in tensors.iter().enumerate() {
        mem = mem.add_term(t.numel, 1);
        if let Origin::Step(s) = plan.tensors[i].origin {
            if matches!(plan.steps[s].op, Op::Argmax | Op::Argmin) {
                mem = mem.add_term(t.numel, 1);
            }
        }
    }
    e.m.add_le(mem, o.max_total_elements as i64);
    let total_expr = steps
        .iter()
        .fold(LinearExpr::default(), |acc, s| acc + s.flops.clone());
    let has_flops = total_expr.as_constant() != Some(0);
    let total = e.var(0, o.flops.1 as i64);
    e.m.add_eq(total, total_expr);
    let mut decisions = e.decisions;
    use rand::seq::SliceRandom;
    decisions.shuffle(e.rng);
    Csp {
        model: e.m,
        tensors,
        steps,
        total_flops: total,
        has_flops,
        decisions,
    }
}

enum OutShape {
    /// The output is the first input's shape (same variables).
    Same,
    /// New dims, same element count as the first input.
    SameNumel(Vec<IntVar>),
    New(Vec<IntVar>),
}

type StepEnc = (
    OutShape,
    Vec<Vec<IntVar>>,
    Vec<(&'static str, AttrVal)>,
    LinearExpr,
);

fn encode_step<R: Rng>(e: &mut Enc<'_, R>, step: &Step, ins: &[TVar], max_prod: i64) -> StepEnc {
    use AttrVal as A;
    let x = &ins[0];
    let r = x.dims.len();
    let c = &step.choice;
    let k = || unit_flops(step.op);
    let mut attrs: Vec<(&'static str, AttrVal)> = step
        .fixed_attrs
        .iter()
        .map(|(n, a)| (*n, A::Fixed(a.clone())))
        .collect();
    let zero = LinearExpr::default();
    match step.family {
        Family::Unary => (OutShape::Same, vec![], attrs, x.numel * k()),
        Family::Broadcast(_) => {
            let shapes: Vec<Vec<IntVar>> = ins.iter().map(|t| t.dims.clone()).collect();
            let dims = e.broadcast(&shapes);
            let out = e.tensor(dims.clone());
            (OutShape::New(dims), vec![], attrs, out.numel * k())
        }
        Family::Matmul | Family::Bmm => {
            let (a, b) = (&ins[0].dims, &ins[1].dims);
            let (ra, rb) = (a.len(), b.len());
            e.m.add_eq(a[ra - 1], b[rb - 2]);
            let mut dims = if step.family == Family::Bmm {
                e.m.add_eq(a[0], b[0]);
                vec![a[0]]
            } else {
                e.broadcast(&[a[..ra - 2].to_vec(), b[..rb - 2].to_vec()])
            };
            dims.push(a[ra - 2]);
            dims.push(b[rb - 1]);
            let out = e.tensor(dims.clone());
            let f = e.mul(out.numel, a[ra - 1], 1, max_prod);
            (OutShape::New(dims), vec![], attrs, f * 2)
        }
        Family::Reduce { min_size } => {
            if min_size > 1 {
                e.m.add_ge(x.dims[c.dim], min_size);
            }
            let mut dims = x.dims.clone();
            if c.keepdim {
                dims[c.dim] = e.one;
            } else {
                dims.remove(c.dim);
            }
            let d = c.dim as i64;
            if matches!(step.op, Op::Argmax | Op::Argmin) {
                attrs.push(("dim", A::Fixed(Attr::Int(d))));
            } else {
                attrs.push(("dim", A::Fixed(Attr::Ints(vec![d]))));
            }
            attrs.push(("keepdim", A::Fixed(Attr::Bool(c.keepdim))));
            let mut flops = x.numel * k();
            if matches!(step.op, Op::Argmax | Op::Argmin) {
                // the `.float()` cast of the seed format: one FLOP per output element
                let out = e.tensor(dims.clone());
                flops = flops + out.numel;
            }
            (OutShape::New(dims), vec![], attrs, flops)
        }
        Family::AlongDim => {
            attrs.push(("dim", A::Fixed(Attr::Int(c.dim as i64))));
            (OutShape::Same, vec![], attrs, x.numel * k())
        }
        Family::Transpose => {
            attrs.push(("dim0", A::Fixed(Attr::Int(-2))));
            attrs.push(("dim1", A::Fixed(Attr::Int(-1))));
            let mut dims = x.dims.clone();
            dims.swap(r - 2, r - 1);
            (OutShape::SameNumel(dims), vec![], attrs, zero)
        }
        Family::Triangle => (OutShape::Same, vec![], attrs, zero),
        Family::Cat => {
            let b = &ins[1].dims;
            let mut dims = x.dims.clone();
            for (j, (&xd, &bd)) in x.dims.iter().zip(b).enumerate() {
                if j != c.dim {
                    e.m.add_eq(xd, bd);
                }
            }
            let d = e.var(2, e.o.max_dim);
            e.m.add_eq(d, x.dims[c.dim] + b[c.dim]);
            dims[c.dim] = d;
            attrs.push(("dim", A::Fixed(Attr::Int(c.dim as i64))));
            (OutShape::New(dims), vec![], attrs, zero)
        }
        Family::Stack => {
            for (&xd, &yd) in x.dims.iter().zip(&ins[1].dims) {
                e.m.add_eq(xd, yd);
            }
            let mut dims = x.dims.clone();
            dims.insert(c.dim, e.two);
            attrs.push(("dim", A::Fixed(Attr::Int(c.dim as i64))));
            (OutShape::New(dims), vec![], attrs, zero)
        }
        Family::BatchNorm => {
            let ch = x.dims[1];
            // batch statistics need more than one value per channel
            e.m.add_ge(x.numel, ch * 2);
            (OutShape::Same, vec![vec![ch], vec![ch]], attrs, x.numel * 7)
        }
        Family::InstanceNorm => {
            let spatial = e.product_of(&x.dims[2..], e.o.numel.1 as i64);
            e.m.add_ge(spatial, 2);
            let ch = x.dims[1];
            (OutShape::Same, vec![vec![ch], vec![ch]], attrs, x.numel * 7)
        }
        Family::GroupNorm => {
            let ch = x.dims[1];
            let g = e.param(1, 32);
            let per = e.var(1, e.o.max_dim);
            e.m.add_product(ch, &[g.into(), per.into()]);
            // like batch statistics, each group needs more than one value
            let ng = e.mul(x.dims[0], g, 1, e.o.numel.1 as i64);
            e.m.add_ge(x.numel, ng * 2);
            attrs.push(("num_groups", A::Int(g)));
            (OutShape::Same, vec![vec![ch], vec![ch]], attrs, x.numel * 7)
        }
        Family::LayerNorm | Family::RmsNorm => {
            let ns = x.dims[r - c.norm_dims..].to_vec();
            attrs.push(("normalized_shape", Enc::<R>::ints(&ns)));
            let w = if step.family == Family::LayerNorm {
                vec![ns.clone(), ns]
            } else {
                vec![ns]
            };
            (OutShape::Same, w, attrs, x.numel * 7)
        }
        Family::Pool { n, max } => {
            let (kmin, kmax) = e.o.kernel;
            let mut dims = x.dims[..2].to_vec();
            let (mut ks, mut ss, mut ps, mut ds) = (vec![], vec![], vec![], vec![]);
            for i in 0..n {
                let kk = e.param(kmin, kmax);
                let s = e.param(1, 3);
                let p = e.param(0, kmax / 2);
                e.m.add_le(p * 2, kk);
                let d = if max { Some(e.param(1, 3)) } else { None };
                if !max && n == 3 {
                    // PyTorch's avg_pool3d also wants the unpadded input to hold a window
                    e.m.add_ge(x.dims[2 + i], kk);
                }
                dims.push(e.window_out(x.dims[2 + i], kk, s, p, d));
                ks.push(kk);
                ss.push(s);
                ps.push(p);
                if let Some(d) = d {
                    ds.push(d);
                }
            }
            attrs.push(("kernel_size", Enc::<R>::ints(&ks)));
            attrs.push(("stride", Enc::<R>::ints(&ss)));
            attrs.push(("padding", Enc::<R>::ints(&ps)));
            if max {
                attrs.push(("dilation", Enc::<R>::ints(&ds)));
            }
            let out = e.tensor(dims.clone());
            let kvol = e.product_of(&ks, kmax.pow(3));
            let f = e.mul(out.numel, kvol, 1, max_prod);
            (OutShape::New(dims), vec![], attrs, f.into())
        }
        Family::AdaptivePool { n } => {
            let mut dims = x.dims[..2].to_vec();
            let mut os = vec![];
            for i in 0..n {
                let o = e.param(1, e.o.max_dim);
                e.m.add_le(o, x.dims[2 + i]);
                os.push(o);
                dims.push(o);
            }
            attrs.push(("output_size", Enc::<R>::ints(&os)));
            (OutShape::New(dims), vec![], attrs, x.numel.into())
        }
        Family::Conv { n, transposed } => {
            let (kmin, kmax) = e.o.kernel;
            let cin = x.dims[1];
            let g = e.param(1, 32);
            let cpg = e.var(1, e.o.max_dim);
            e.m.add_product(cin, &[g.into(), cpg.into()]);
            let m = e.var(1, e.o.max_dim);
            let cout = e.var(1, e.o.max_dim);
            e.decisions.push(cout);
            let h = e.rng.random_range(1..=256);
            e.m.add_hint(cout, h);
            e.m.add_product(cout, &[g.into(), m.into()]);
            let mut dims = vec![x.dims[0], cout];
            let (mut ks, mut ss, mut ps, mut ds, mut ops) =
                (vec![], vec![], vec![], vec![], vec![]);
            for i in 0..n {
                let kk = e.param(kmin, kmax);
                let s = e.param(1, 3);
                let p = e.param(0, 7);
                let d = e.param(1, 3);
                if transposed {
                    let op = e.param(0, 2);
                    e.m.add_le(op, s - 1);
                    dims.push(e.transposed_out(x.dims[2 + i], kk, s, p, d, op));
                    ops.push(op);
                } else {
                    e.m.add_le(p * 2, 15);
                    dims.push(e.window_out(x.dims[2 + i], kk, s, p, Some(d)));
                }
                ks.push(kk);
                ss.push(s);
                ps.push(p);
                ds.push(d);
            }
            attrs.push(("stride", Enc::<R>::ints(&ss)));
            attrs.push(("padding", Enc::<R>::ints(&ps)));
            if transposed {
                attrs.push(("output_padding", Enc::<R>::ints(&ops)));
            }
            attrs.push(("dilation", Enc::<R>::ints(&ds)));
            attrs.push(("groups", A::Int(g)));
            let mut wdims = if transposed {
                vec![cin, m]
            } else {
                vec![cout, cpg]
            };
            wdims.extend(&ks);
            let mut weights = vec![wdims];
            if step.choice.bias {
                weights.push(vec![cout]);
            }
            let kvol = e.product_of(&ks, kmax.pow(3));
            let per = e.mul(if transposed { m } else { cpg }, kvol, 1, max_prod);
            let flops = if transposed {
                e.mul(x.numel, per, 1, max_prod)
            } else {
                let out = e.tensor(dims.clone());
                e.mul(out.numel, per, 1, max_prod)
            };
            (OutShape::New(dims), weights, attrs, flops * 2)
        }
        Family::Linear => {
            let kdim = x.dims[r - 1];
            let nout = e.param(1, e.o.max_dim);
            let mut dims = x.dims.clone();
            dims[r - 1] = nout;
            let mut weights = vec![vec![nout, kdim]];
            if step.choice.bias {
                weights.push(vec![nout]);
            }
            let out = e.tensor(dims.clone());
            let f = e.mul(out.numel, kdim, 1, max_prod);
            (OutShape::New(dims), weights, attrs, f * 2)
        }
        Family::Loss => {
            for (&xd, &yd) in x.dims.iter().zip(&ins[1].dims) {
                e.m.add_eq(xd, yd);
            }
            (OutShape::New(vec![]), vec![], attrs, x.numel * k())
        }
        Family::Flatten => {
            let (s, t) = c.flatten;
            let merged = e.product_of(&x.dims[s..=t], e.o.max_dim);
            let mut dims = x.dims[..s].to_vec();
            dims.push(merged);
            dims.extend(&x.dims[t + 1..]);
            attrs.push(("start_dim", A::Fixed(Attr::Int(s as i64))));
            attrs.push(("end_dim", A::Fixed(Attr::Int(t as i64))));
            (OutShape::SameNumel(dims), vec![], attrs, zero)
        }
        Family::Unsqueeze => {
            let mut dims = x.dims.clone();
            dims.insert(c.dim, e.one);
            attrs.push(("dim", A::Fixed(Attr::Int(c.dim as i64))));
            (OutShape::SameNumel(dims), vec![], attrs, zero)
        }
        Family::Permute => {
            let dims = c.perm.iter().map(|&p| x.dims[p]).collect();
            let perm = c.perm.iter().map(|&p| p as i64).collect();
            attrs.push(("dims", A::Fixed(Attr::Ints(perm))));
            (OutShape::SameNumel(dims), vec![], attrs, zero)
        }
        Family::Flip => {
            let dims = c.flip.iter().map(|&p| p as i64).collect();
            attrs.push(("dims", A::Fixed(Attr::Ints(dims))));
            (OutShape::Same, vec![], attrs, zero)
        }
    }
}
