//! A region as a small program of kernel statements, before it is laid out as a kernel.
//!
//! Every statement lives in a space: `Full` (one value per element of the iteration
//! space: a tile), `Row` (one value per row of a reduction: a column vector) or `Tap` (a
//! window kernel's pooled input at one tap of each window). Row statements come from
//! reductions (`Reduce`) and pointwise math on them. Loads are
//! statements too, so looped reductions can recompute what a pass needs.

use super::expr::{pointwise_expr, Operand};
use super::ty::compute_ty;
use drtc_ir::{DType, Graph, Op, ValueId};
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sp {
    Full,
    Row,
    /// One value per element of a window kernel's pooled input at the current tap of its
    /// window (the window template's prologue).
    Tap,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedKind {
    Sum,
    Max,
    Min,
    Prod,
    ArgMax,
    ArgMin,
}

/// A running (inclusive) combination along the columns: a scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanKind {
    Sum,
    Prod,
}

#[derive(Clone, Debug)]
pub enum Code {
    /// An expression over earlier statements (by var name) and loads.
    Expr(String),
    /// A reduction of a Full statement over the columns.
    Reduce { kind: RedKind, input: usize },
    /// The inclusive scan of a Full statement along the columns (a Full statement): the
    /// reduction template emits it, carrying the running value across column blocks;
    /// `reverse` runs it from the last column.
    Scan {
        kind: ScanKind,
        input: usize,
        reverse: bool,
    },
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub var: String,
    pub space: Sp,
    pub dtype: DType,
    pub code: Code,
    pub deps: Vec<usize>,
    pub constant: Option<f64>,
}

/// How a tensor input is read: which domain dim each of its dims follows (`None` for
/// broadcast dims of size 1).
pub type DimMap = Vec<Option<usize>>;

/// Where loads get their indices and masks from: supplied by each template.
pub trait IndexSource {
    /// The index expression of domain dim `d` in space `sp`.
    fn dim_index(&self, sp: Sp, d: usize) -> String;
    /// The load mask of space `sp`.
    fn mask(&self, sp: Sp) -> String;
    /// The mask of a load in space `sp` whose offset follows only domain dims `dims`:
    /// a template may give a narrower mask, of the shape of those dims (a vector along
    /// one dim broadcast by its use), so the load reads each element once instead of
    /// once per broadcast copy. The default is the space's mask.
    fn mask_of(&self, sp: Sp, _dims: &[usize]) -> String {
        self.mask(sp)
    }
    /// For a load in space `sp` through `map`: the offset terms `(tensor dim, index)` that
    /// are right when the tensor is row-major contiguous, with fewer index operations than
    /// one index per dim (a reduction's runs of columns, a window tap's merged leading
    /// dims). `None` (the default) where the template has no such form.
    fn flat_columns(&self, _sp: Sp, _map: &DimMap) -> Option<Vec<(usize, String)>> {
        None
    }
}

/// A kernel argument for a region input: the pointer and the strides it needs.
#[derive(Clone, Debug)]
pub struct InputArg {
    pub value: ValueId,
    pub ptr: String,
    /// `(dim, name)` of every stride argument.
    pub strides: Vec<(usize, String)>,
    /// A load reads it with flat columns when it is contiguous: the kernel takes the
    /// constexpr [`InputArg::flat_flag`], which the host sets to `x.is_contiguous()`.
    pub flat: bool,
}

impl InputArg {
    /// The stride argument of dim `dim` (`None` for a dim of size 1, which has none).
    pub fn stride(&self, dim: usize) -> Option<&str> {
        self.strides
            .iter()
            .find(|(d, _)| *d == dim)
            .map(|(_, s)| s.as_str())
    }

    /// The constexpr that selects the flat-column offsets (`IN0_FLAT`).
    pub fn flat_flag(&self) -> String {
        format!("{}_FLAT", self.ptr.to_uppercase())
    }
}

/// Statements, with lookup tables.
pub struct Program {
    pub stmts: Vec<Stmt>,
    pub vars: HashMap<(ValueId, Sp), usize>,
    loads: HashMap<(ValueId, Sp, DimMap), usize>,
    pub inputs: Vec<InputArg>,
}

/// The index of dim `j` of a value of `shape` whose dims follow domain dims `use_dims`: a
/// dim of size 1 has no index variable in the domain, its index is 0.
fn dim_index_or_zero(
    shape: &[i64],
    j: usize,
    use_dims: &[usize],
    sp: Sp,
    ix: &dyn IndexSource,
) -> String {
    if shape[j] == 1 {
        "0".to_string()
    } else {
        ix.dim_index(sp, use_dims[j])
    }
}

/// Right-aligns `input` against a use of shape `use_shape` whose dims follow domain dims
/// `use_dims`.
pub fn align(input: &[i64], use_shape: &[i64], use_dims: &[usize]) -> DimMap {
    let off = use_shape.len() as isize - input.len() as isize;
    input
        .iter()
        .enumerate()
        .map(|(i, &size)| {
            let u = i as isize + off;
            if size == 1 || u < 0 {
                None
            } else {
                use_dims.get(u as usize).copied()
            }
        })
        .collect()
}

impl Program {
    pub fn new() -> Self {
        Program {
            stmts: vec![],
            vars: HashMap::new(),
            loads: HashMap::new(),
            inputs: vec![],
        }
    }

    pub fn push(&mut self, space: Sp, dtype: DType, code: Code, deps: Vec<usize>) -> usize {
        let id = self.stmts.len();
        self.stmts.push(Stmt {
            var: format!("t{id}"),
            space,
            dtype,
            code,
            deps,
            constant: None,
        });
        id
    }

    pub fn expr(&mut self, space: Sp, dtype: DType, code: String, deps: Vec<usize>) -> usize {
        self.push(space, dtype, Code::Expr(code), deps)
    }

    /// A reduction of statement `input`: the existing one when the same reduction of the
    /// same statement is already there (a mean and a variance of one operand share its sum,
    /// so one pass computes both).
    pub fn reduce(&mut self, kind: RedKind, input: usize) -> usize {
        let same = |s: &Stmt| matches!(s.code, Code::Reduce { kind: k, input: i } if k == kind && i == input);
        if let Some(i) = self.stmts.iter().position(same) {
            return i;
        }
        let dtype = match kind {
            RedKind::ArgMax | RedKind::ArgMin => DType::I64,
            _ => self.stmts[input].dtype,
        };
        self.push(Sp::Row, dtype, Code::Reduce { kind, input }, vec![input])
    }

    /// The inclusive scan of statement `input` along the columns (from the last column when
    /// `reverse`).
    pub fn scan(&mut self, kind: ScanKind, input: usize, reverse: bool) -> usize {
        let dtype = self.stmts[input].dtype;
        let code = Code::Scan {
            kind,
            input,
            reverse,
        };
        self.push(Sp::Full, dtype, code, vec![input])
    }

    /// Whether the program holds a scan.
    pub fn has_scan(&self) -> bool {
        self.stmts
            .iter()
            .any(|s| matches!(s.code, Code::Scan { .. }))
    }

    /// The direction of the program's scans: `Some(true)` when every scan runs from the last
    /// column, `Some(false)` when every one runs from the first (or there is none), `None`
    /// when they disagree.
    pub fn scan_direction(&self) -> Option<bool> {
        let mut dirs = self.stmts.iter().filter_map(|s| match s.code {
            Code::Scan { reverse, .. } => Some(reverse),
            Code::Expr(_) | Code::Reduce { .. } => None,
        });
        let first = dirs.next().unwrap_or(false);
        dirs.all(|d| d == first).then_some(first)
    }

    pub fn var(&self, i: usize) -> &str {
        &self.stmts[i].var
    }

    /// The region input and dim map statement `i` loads, when it is a load.
    pub fn load_of(&self, i: usize) -> Option<(ValueId, Sp, &DimMap)> {
        self.loads
            .iter()
            .find(|(_, &j)| j == i)
            .map(|((v, sp, map), _)| (*v, *sp, map))
    }

    pub fn operand(&self, i: usize) -> Operand {
        let s = &self.stmts[i];
        Operand {
            expr: s.var.clone(),
            dtype: s.dtype,
            constant: s.constant,
        }
    }

    pub fn input_arg(&mut self, g: &Graph, v: ValueId) -> usize {
        if let Some(i) = self.inputs.iter().position(|a| a.value == v) {
            return i;
        }
        let k = self.inputs.len();
        let strides = g
            .ty(v)
            .shape
            .iter()
            .enumerate()
            .filter(|(_, &d)| d != 1)
            .map(|(i, _)| (i, format!("in{k}_s{i}")))
            .collect();
        self.inputs.push(InputArg {
            value: v,
            ptr: format!("in{k}"),
            strides,
            flat: false,
        });
        k
    }

    /// A statement that loads region input `v` read through `map`, in space `sp`.
    pub fn load(
        &mut self,
        g: &Graph,
        v: ValueId,
        sp: Sp,
        map: DimMap,
        ix: &dyn IndexSource,
    ) -> usize {
        if let Some(&i) = self.loads.get(&(v, sp, map.clone())) {
            return i;
        }
        let k = self.input_arg(g, v);
        let arg = &self.inputs[k];
        let mut terms = vec![];
        let mut used = vec![];
        for (dim, stride) in &arg.strides {
            if let Some(Some(d)) = map.get(*dim) {
                terms.push(format!("{} * {stride}", ix.dim_index(sp, *d)));
                used.push(*d);
            }
        }
        // flat columns: the same offset in fewer operations when the tensor is contiguous
        // (the per-element decomposition of the column index is then dead code)
        let flat = match sp {
            Sp::Full | Sp::Tap if !terms.is_empty() => ix.flat_columns(sp, &map).filter(|rows| {
                arg.strides
                    .iter()
                    .all(|(d, _)| map.get(*d).is_some_and(|m| m.is_some()))
                    && rows
                        .iter()
                        .all(|(t, _)| arg.strides.iter().any(|(d, _)| d == t))
            }),
            _ => None,
        };
        if let Some(flat_terms) = flat {
            let fterms: Vec<String> = flat_terms
                .iter()
                .map(|(t, e)| {
                    let stride = &arg.strides.iter().find(|(d, _)| d == t).unwrap().1;
                    format!("{e} * {stride}")
                })
                .collect();
            let generic = terms.join(" + ");
            terms = vec![format!(
                "(({}) if {} else ({generic}))",
                fterms.join(" + "),
                arg.flat_flag()
            )];
            self.inputs[k].flat = true;
        }
        let arg = &self.inputs[k];
        let dtype = g.ty(v).dtype;
        let ptr = &arg.ptr;
        let code = if g.ty(v).rank() == 0 || terms.is_empty() {
            // one element (every dim broadcast): a scalar load, broadcast by use
            format!("tl.load({ptr}).to({})", compute_ty(dtype))
        } else {
            let off = if terms.is_empty() {
                "0".to_string()
            } else {
                terms.join(" + ")
            };
            format!(
                "tl.load({ptr} + {off}, mask={}, other=0).to({})",
                ix.mask_of(sp, &used),
                compute_ty(dtype)
            )
        };
        let i = self.expr(sp, dtype, code, vec![]);
        self.loads.insert((v, sp, map), i);
        i
    }

    /// The statement of a pad node's result in space `sp`, whose dims follow domain dims
    /// `use_dims`: its input loaded at each index minus the padding before, masked where the
    /// index falls in the padding, which holds the pad's value. `None` where the input is
    /// computed in the region (`legality::check_pads` keeps such regions from forming).
    pub fn pad(
        &mut self,
        g: &Graph,
        node: drtc_ir::NodeId,
        sp: Sp,
        use_dims: &[usize],
        ix: &dyn IndexSource,
    ) -> Option<usize> {
        let n = g.node(node);
        let (x, out) = (n.inputs[0], n.outputs[0]);
        if self.vars.contains_key(&(x, sp)) || self.vars.contains_key(&(x, Sp::Row)) {
            return None;
        }
        let in_shape = g.ty(x).shape.clone();
        let out_shape = g.ty(out).shape.clone();
        let pad = n.attrs.get("pad").and_then(|a| a.as_ints())?;
        let amounts = drtc_ir::op::pad_amounts(pad, in_shape.len()).ok()?;
        let value = n
            .attrs
            .get("value")
            .and_then(|a| a.as_float())
            .unwrap_or(0.0);
        let k = self.input_arg(g, x);
        let arg = &self.inputs[k];
        let (mut terms, mut inside) = (vec![], vec![]);
        for (j, &(before, after)) in amounts.iter().enumerate() {
            let idx = dim_index_or_zero(&out_shape, j, use_dims, sp, ix);
            if let Some(stride) = arg.stride(j) {
                let at = match before {
                    0 => idx.clone(),
                    b if b < 0 => format!("({idx} + {})", -b),
                    b => format!("({idx} - {b})"),
                };
                terms.push(format!("{at} * {stride}"));
            }
            // input index idx - before within [0, size): a bound holds by itself where
            // that side crops or is not padded
            if before > 0 {
                inside.push(format!("({idx} >= {before})"));
            }
            if after > 0 {
                inside.push(format!("({idx} < {})", before + in_shape[j]));
            }
        }
        let dtype = g.ty(x).dtype;
        let ptr = &arg.ptr;
        let off = if terms.is_empty() {
            "0".to_string()
        } else {
            terms.join(" + ")
        };
        let base = ix.mask(sp);
        let code = if inside.is_empty() {
            format!(
                "tl.load({ptr} + {off}, mask={base}, other=0).to({})",
                compute_ty(dtype)
            )
        } else {
            let cond = inside.join(" & ");
            format!(
                "tl.where({cond}, tl.load({ptr} + {off}, mask={base} & {cond}, other=0).to({}), {})",
                compute_ty(dtype),
                super::ty::lit(value, dtype)
            )
        };
        let i = self.expr(sp, dtype, code, vec![]);
        self.vars.insert((out, sp), i);
        Some(i)
    }

    /// The statement of a `tril`/`triu` node's result in space `sp` from its input's
    /// statement `x`: `x` where the column index minus the row index is at most (`tril`)
    /// or at least (`triu`) the diagonal, else 0; the last two dims follow domain dims at
    /// the end of `use_dims` (a dim of size 1 has index 0).
    pub fn triangle(
        &mut self,
        g: &Graph,
        node: drtc_ir::NodeId,
        sp: Sp,
        x: usize,
        use_dims: &[usize],
        ix: &dyn IndexSource,
    ) -> Option<usize> {
        let n = g.node(node);
        let out = n.outputs[0];
        let shape = &g.ty(out).shape;
        let r = shape.len();
        if r < 2 {
            return None;
        }
        let k = n
            .attrs
            .get("diagonal")
            .and_then(|a| a.as_int())
            .unwrap_or(0);
        let index = |j: usize| dim_index_or_zero(shape, j, use_dims, sp, ix);
        let side = if n.op == drtc_ir::Op::Tril {
            "<="
        } else {
            ">="
        };
        let dtype = g.ty(out).dtype;
        let code = format!(
            "tl.where(({} - {}) {side} {k}, {}, {})",
            index(r - 1),
            index(r - 2),
            self.var(x),
            super::ty::lit(0.0, dtype)
        );
        let i = self.expr(sp, dtype, code, vec![x]);
        self.vars.insert((out, sp), i);
        Some(i)
    }

    /// The statement holding `v` in space `sp`: an earlier statement, an inlined constant,
    /// or a load of a region input.
    pub fn value(
        &mut self,
        g: &Graph,
        v: ValueId,
        sp: Sp,
        map: DimMap,
        ix: &dyn IndexSource,
    ) -> usize {
        if let Some(&i) = self.vars.get(&(v, sp)) {
            return i;
        }
        if sp == Sp::Full {
            if let Some(&i) = self.vars.get(&(v, Sp::Row)) {
                return i; // row values broadcast over the columns
            }
        }
        if let Some(n) = g.producer(v) {
            let node = g.node(n);
            if node.op == Op::Arange {
                // the index of the domain dim it runs along (0 where it is broadcast)
                let dtype = g.ty(v).dtype;
                let index = match map.first().copied().flatten() {
                    Some(d) => format!("({}).to({})", ix.dim_index(sp, d), compute_ty(dtype)),
                    None => super::ty::lit(0.0, dtype),
                };
                // not cached by value: another use may align it with another dim
                return self.expr(sp, dtype, index, vec![]);
            }
            if node.op == Op::Full {
                let value = node
                    .attrs
                    .get("value")
                    .and_then(|a| a.as_float())
                    .unwrap_or(0.0);
                let dtype = g.ty(v).dtype;
                let i = self.expr(sp, dtype, super::ty::lit(value, dtype), vec![]);
                self.stmts[i].constant = Some(value);
                self.vars.insert((v, sp), i);
                return i;
            }
        }
        self.load(g, v, sp, map, ix)
    }

    /// Adds a pointwise node computed in space `sp` whose operands are `args`.
    pub fn pointwise(
        &mut self,
        g: &Graph,
        node: drtc_ir::NodeId,
        sp: Sp,
        args: Vec<usize>,
    ) -> Option<usize> {
        let n = g.node(node);
        let out = g.ty(n.outputs[0]).dtype;
        let ops: Vec<Operand> = args.iter().map(|&a| self.operand(a)).collect();
        let code = pointwise_expr(n.op, &n.attrs, &ops, out)?;
        let i = self.expr(sp, out, code, args);
        self.vars.insert((n.outputs[0], sp), i);
        Some(i)
    }

    /// Statement indices needed to compute `roots`, in order, stopping at `available`.
    pub fn closure(&self, roots: &[usize], available: &dyn Fn(usize) -> bool) -> Vec<usize> {
        let mut need = vec![false; self.stmts.len()];
        let mut stack: Vec<usize> = roots.to_vec();
        while let Some(i) = stack.pop() {
            if need[i] || available(i) {
                continue;
            }
            need[i] = true;
            stack.extend(self.stmts[i].deps.iter().copied());
        }
        (0..self.stmts.len()).filter(|&i| need[i]).collect()
    }
}

impl Default for Program {
    fn default() -> Self {
        Self::new()
    }
}
