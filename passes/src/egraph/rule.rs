//! Rules as data: a name, a left-hand pattern, and a right-hand side that is either a
//! pattern (with an optional side condition) or a small function building the
//! replacement. Every right-hand side is instantiated with type inference, and joins the
//! matched e-class only when its type (dtype and shape) is exactly the class's: a rule can
//! never change a type, whatever it says.
//!
//! Each rule also carries a one-line test, `inputs | before => after`, run by
//! `rules::tests` (the rule must fire and the result must be `after`).

use super::lang::{normalize_literal, AttrSet, TNode};
use super::types_and_constants::{add_constant, TGraph, TypeAnalysis};
use drtc_ir::{Attr, Attrs, DType, Op, TensorType};
use egg::{Applier, ENodeOrVar, Id, Pattern, PatternAst, Rewrite, Subst, Symbol, Var};

/// A side condition on a match.
pub type Cond = fn(&Match) -> bool;
/// Builds a replacement for a match (`None`: the rule does not apply here).
pub type BuildFn = fn(&mut Build) -> Option<Id>;

/// The right-hand side of a rule.
#[derive(Clone, Copy)]
pub enum Rhs {
    /// A pattern over the left-hand side's variables.
    Pattern(&'static str),
    /// Code: for replacements that compute attributes or constants.
    Build(BuildFn),
}

/// One rewrite rule.
#[derive(Clone, Copy)]
pub struct Rule {
    pub name: &'static str,
    pub lhs: &'static str,
    pub rhs: Rhs,
    pub when: Option<Cond>,
    /// `x: f32[4, 8], ... | before => after`, in pattern syntax with inputs by name and
    /// number literals as f32 scalars.
    pub test: &'static str,
}

impl Rule {
    /// `lhs => rhs` (a pattern).
    pub const fn rewrite(name: &'static str, lhs: &'static str, rhs: &'static str) -> Rule {
        Rule {
            name,
            lhs,
            rhs: Rhs::Pattern(rhs),
            when: None,
            test: "",
        }
    }

    /// `lhs => build(match)`.
    pub const fn build(name: &'static str, lhs: &'static str, f: BuildFn) -> Rule {
        Rule {
            name,
            lhs,
            rhs: Rhs::Build(f),
            when: None,
            test: "",
        }
    }

    /// Applies only when `cond` holds.
    pub const fn when(mut self, cond: Cond) -> Rule {
        self.when = Some(cond);
        self
    }

    /// The rule's one-line test.
    pub const fn test(mut self, test: &'static str) -> Rule {
        self.test = test;
        self
    }

    /// The egg rewrite; `Err` if a pattern does not parse.
    pub fn to_rewrite(&self) -> Result<Rewrite<TNode, TypeAnalysis>, String> {
        let lhs: Pattern<TNode> = self
            .lhs
            .parse()
            .map_err(|e| format!("rule `{}`: left-hand side: {e}", self.name))?;
        let rhs = match self.rhs {
            Rhs::Pattern(p) => {
                let pat: Pattern<TNode> = p
                    .parse()
                    .map_err(|e| format!("rule `{}`: right-hand side: {e}", self.name))?;
                RhsImpl::Pattern(normalize_pattern(&pat.ast)?)
            }
            Rhs::Build(f) => RhsImpl::Build(f),
        };
        Rewrite::new(
            self.name,
            lhs,
            RuleApplier {
                rhs,
                when: self.when,
            },
        )
    }
}

/// Normalizes attribute literals in a pattern against their parent op's declarations.
pub fn normalize_pattern(ast: &PatternAst<TNode>) -> Result<PatternAst<TNode>, String> {
    let mut out = ast.clone();
    for node in ast.as_ref() {
        if let ENodeOrVar::ENode(TNode::Op { op, children, .. }) = node {
            if !TNode::has_attrs(*op) {
                continue;
            }
            let literal = children.last().and_then(|&a| match &ast[a] {
                ENodeOrVar::ENode(TNode::Attrs(raw)) => Some((a, raw)),
                _ => None,
            });
            if let Some((a, raw)) = literal {
                let attrs = normalize_literal(*op, &raw.to_attrs())?;
                out[a] = ENodeOrVar::ENode(TNode::Attrs(AttrSet::from_attrs(&attrs)));
            } else if !op.def().arity.accepts(children.len().saturating_sub(1)) {
                // no attributes written: the defaults
                return normalize_pattern(&with_default_attrs(ast)?);
            }
        }
    }
    Ok(out)
}

/// The pattern with a default attribute leaf added to every op node that has none (an op
/// with attributes whose children are all inputs).
fn with_default_attrs(ast: &PatternAst<TNode>) -> Result<PatternAst<TNode>, String> {
    let mut out: PatternAst<TNode> = Default::default();
    let mut map: Vec<Id> = vec![];
    for node in ast.as_ref() {
        let new = match node {
            ENodeOrVar::ENode(TNode::Op {
                op,
                nonce,
                children,
            }) => {
                let mut kids: Vec<Id> = children.iter().map(|&c| map[usize::from(c)]).collect();
                let has_literal = children
                    .last()
                    .is_some_and(|&c| matches!(ast[c], ENodeOrVar::ENode(TNode::Attrs(_))));
                if TNode::has_attrs(*op)
                    && !has_literal
                    && !op.def().arity.accepts(children.len().saturating_sub(1))
                {
                    let attrs = normalize_literal(*op, &Attrs::new())?;
                    kids.push(
                        out.add(ENodeOrVar::ENode(TNode::Attrs(AttrSet::from_attrs(&attrs)))),
                    );
                }
                ENodeOrVar::ENode(TNode::Op {
                    op: *op,
                    nonce: *nonce,
                    children: kids,
                })
            }
            other => other.clone(),
        };
        map.push(out.add(new));
    }
    Ok(out)
}

enum RhsImpl {
    Pattern(PatternAst<TNode>),
    Build(BuildFn),
}

struct RuleApplier {
    rhs: RhsImpl,
    when: Option<Cond>,
}

/// A match of a left-hand side: the e-graph, the bindings and the matched class.
pub struct Match<'a> {
    pub egraph: &'a TGraph,
    pub subst: &'a Subst,
    pub root: Id,
}

fn var(name: &str) -> Var {
    name.parse()
        .unwrap_or_else(|_| panic!("rule variable `{name}` must start with `?`"))
}

impl Match<'_> {
    /// The class bound to `v` (`?x`).
    pub fn id(&self, v: &str) -> Id {
        self.subst[var(v)]
    }
    /// The type of `v`.
    pub fn ty(&self, v: &str) -> Option<&TensorType> {
        self.egraph[self.id(v)].data.ty.as_ref()
    }
    /// The type of the matched class.
    pub fn root_ty(&self) -> Option<&TensorType> {
        self.egraph[self.root].data.ty.as_ref()
    }
    /// The value of `v` when it is a scalar (rank-0) constant.
    pub fn scalar(&self, v: &str) -> Option<f64> {
        let d = &self.egraph[self.id(v)].data;
        match &d.ty {
            Some(t) if t.rank() == 0 => d.konst,
            _ => None,
        }
    }
    /// Whether `v` is a scalar constant equal to `x` (relative tolerance 1e-6, for literals
    /// written with few digits such as `0.7978845608` or `0.044715`).
    pub fn is_scalar(&self, v: &str, x: f64) -> bool {
        self.scalar(v)
            .is_some_and(|c| (c - x).abs() <= 1e-6 * x.abs().max(1e-12))
    }
    /// The attributes bound to `v` (an attribute leaf).
    pub fn attrs(&self, v: &str) -> Option<&Attrs> {
        self.egraph[self.id(v)].data.attrs.as_ref()
    }
    pub fn attr(&self, v: &str, key: &str) -> Option<&Attr> {
        self.attrs(v)?.get(key)
    }
    /// The reduced dims of a reduction's attributes, normalized for an input of `rank`
    /// (every dim when `dim` is none).
    pub fn dims(&self, v: &str, rank: usize) -> Option<Vec<usize>> {
        match self.attr(v, "dim")? {
            Attr::None => Some((0..rank).collect()),
            Attr::Int(d) => Some(vec![norm_dim(*d, rank)?]),
            Attr::Ints(ds) => {
                let mut out: Vec<usize> = ds
                    .iter()
                    .map(|&d| norm_dim(d, rank))
                    .collect::<Option<_>>()?;
                out.sort_unstable();
                out.dedup();
                Some(out)
            }
            _ => None,
        }
    }
    /// `keepdim` of a reduction's attributes.
    pub fn keepdim(&self, v: &str) -> bool {
        self.attr(v, "keepdim")
            .and_then(Attr::as_bool)
            .unwrap_or(false)
    }
    /// Whether `a` and `b` are the same class.
    pub fn same(&self, a: &str, b: &str) -> bool {
        self.egraph.find(self.id(a)) == self.egraph.find(self.id(b))
    }
    /// Whether `v` has exactly the matched class's type.
    pub fn same_type_as_root(&self, v: &str) -> bool {
        self.ty(v).is_some() && self.ty(v) == self.root_ty()
    }
}

/// A dim index normalized for `rank` (`-1` is the last dim).
pub fn norm_dim(d: i64, rank: usize) -> Option<usize> {
    let r = rank.max(1) as i64;
    let d = if d < 0 { d + r } else { d };
    (0..r).contains(&d).then_some(d as usize)
}

/// Adds typed nodes to the e-graph for a rule's replacement; [`Build::m`] reads the match.
pub struct Build<'a> {
    pub egraph: &'a mut TGraph,
    pub subst: &'a Subst,
    pub root: Id,
}

impl Build<'_> {
    /// The match being rewritten.
    pub fn m(&self) -> Match<'_> {
        Match {
            egraph: self.egraph,
            subst: self.subst,
            root: self.root,
        }
    }

    pub fn ty(&self, id: Id) -> Option<TensorType> {
        self.egraph[id].data.ty.clone()
    }

    /// Adds `op(inputs) {attrs}` (defaults filled in) if it type-checks.
    pub fn op(
        &mut self,
        op: Op,
        inputs: &[Id],
        attrs: impl IntoIterator<Item = (&'static str, Attr)>,
    ) -> Option<Id> {
        let raw: Attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let attrs = op.normalize_attrs(&raw).ok()?;
        self.node(op, inputs.to_vec(), attrs)
    }

    /// Adds `op(inputs)` with already normalized attributes if it type-checks.
    pub fn node(&mut self, op: Op, inputs: Vec<Id>, attrs: Attrs) -> Option<Id> {
        let tys: Vec<TensorType> = inputs.iter().map(|&i| self.ty(i)).collect::<Option<_>>()?;
        let refs: Vec<&TensorType> = tys.iter().collect();
        let out = op.infer(&refs, &attrs).ok()?;
        if out.len() != 1 {
            return None;
        }
        let mut children = inputs;
        if TNode::has_attrs(op) {
            children.push(self.egraph.add(TNode::Attrs(AttrSet::from_attrs(&attrs))));
        }
        Some(self.egraph.add(TNode::Op {
            op,
            nonce: 0,
            children,
        }))
    }

    /// A scalar constant.
    pub fn constant(&mut self, value: f64, dtype: DType) -> Id {
        add_constant(self.egraph, value, dtype)
    }

    /// Instantiates a (normalized) pattern with type checks.
    fn instantiate(&mut self, ast: &PatternAst<TNode>, subst: &Subst) -> Option<Id> {
        let mut ids: Vec<Id> = Vec::with_capacity(ast.as_ref().len());
        for node in ast.as_ref() {
            let id = match node {
                ENodeOrVar::Var(v) => subst[*v],
                ENodeOrVar::ENode(TNode::Op { op, children, .. }) => {
                    let kids: Vec<Id> = children.iter().map(|&c| ids[usize::from(c)]).collect();
                    let (inputs, attrs) = if TNode::has_attrs(*op) {
                        let (a, ins) = kids.split_last()?;
                        (ins.to_vec(), self.egraph[*a].data.attrs.clone()?)
                    } else {
                        (kids, Attrs::new())
                    };
                    self.node(*op, inputs, attrs)?
                }
                ENodeOrVar::ENode(leaf) => self.egraph.add(leaf.clone()),
            };
            ids.push(id);
        }
        ids.last().copied()
    }
}

impl Applier<TNode, TypeAnalysis> for RuleApplier {
    fn apply_one(
        &self,
        egraph: &mut TGraph,
        eclass: Id,
        subst: &Subst,
        _searcher_ast: Option<&PatternAst<TNode>>,
        _rule_name: Symbol,
    ) -> Vec<Id> {
        let root_ty = egraph[eclass].data.ty.clone();
        if root_ty.is_none() {
            return vec![];
        }
        if let Some(cond) = self.when {
            let m = Match {
                egraph,
                subst,
                root: eclass,
            };
            if !cond(&m) {
                return vec![];
            }
        }
        let mut b = Build {
            egraph,
            subst,
            root: eclass,
        };
        let new = match &self.rhs {
            RhsImpl::Pattern(ast) => b.instantiate(ast, subst),
            RhsImpl::Build(f) => f(&mut b),
        };
        match new {
            Some(id) if egraph[id].data.ty == root_ty && egraph.union(eclass, id) => {
                vec![eclass]
            }
            _ => vec![],
        }
    }
}
