//! A small, typed model-building API over `CpModelProto`: integer variables with domains,
//! boolean literals, linear expressions, and the constraints drtc's synthesizer needs
//! (linear with enforcement literals, products, division, max, bool or/and, exactly-one,
//! all-different), an objective, hints and decision strategies.

use crate::proto::{self as pb, Constraint};
use std::ops::{Add, Mul, Neg, Sub};

/// An integer variable of a [`CpModel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IntVar(pub(crate) i32);

/// A boolean literal: a 0/1 variable or its negation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BoolVar(pub(crate) i32);

impl IntVar {
    /// Index of the variable in the model (and in a solution).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl BoolVar {
    fn var_index(self) -> i32 {
        if self.0 >= 0 {
            self.0
        } else {
            -self.0 - 1
        }
    }
    /// This literal as a 0/1 linear expression.
    pub fn expr(self) -> LinearExpr {
        if self.0 >= 0 {
            LinearExpr::from(IntVar(self.0))
        } else {
            LinearExpr::constant(1) - LinearExpr::from(IntVar(self.var_index()))
        }
    }
}

impl std::ops::Not for BoolVar {
    type Output = BoolVar;
    /// The negated literal.
    fn not(self) -> BoolVar {
        BoolVar(-self.0 - 1)
    }
}

/// A domain: sorted, disjoint, closed intervals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Domain(Vec<(i64, i64)>);

impl Domain {
    /// `[lo, hi]`.
    pub fn new(lo: i64, hi: i64) -> Domain {
        Domain(vec![(lo, hi)])
    }
    /// A union of intervals; they are sorted and merged here.
    pub fn from_intervals(mut iv: Vec<(i64, i64)>) -> Domain {
        iv.retain(|(a, b)| a <= b);
        iv.sort();
        let mut out: Vec<(i64, i64)> = vec![];
        for (a, b) in iv {
            match out.last_mut() {
                Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
                _ => out.push((a, b)),
            }
        }
        Domain(out)
    }
    /// A set of values.
    pub fn from_values(values: &[i64]) -> Domain {
        Domain::from_intervals(values.iter().map(|&v| (v, v)).collect())
    }
    /// Every value but `v`.
    pub fn not_equal(v: i64) -> Domain {
        Domain::from_intervals(vec![(i64::MIN / 2, v - 1), (v + 1, i64::MAX / 2)])
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn min(&self) -> Option<i64> {
        self.0.first().map(|iv| iv.0)
    }
    pub fn max(&self) -> Option<i64> {
        self.0.last().map(|iv| iv.1)
    }
    fn flat(&self) -> Vec<i64> {
        self.0.iter().flat_map(|&(a, b)| [a, b]).collect()
    }
}

/// `sum(coeff * var) + offset`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinearExpr {
    terms: Vec<(IntVar, i64)>,
    offset: i64,
}

impl LinearExpr {
    pub fn constant(c: i64) -> LinearExpr {
        LinearExpr {
            terms: vec![],
            offset: c,
        }
    }
    /// `sum(vars)`.
    pub fn sum(vars: impl IntoIterator<Item = IntVar>) -> LinearExpr {
        LinearExpr {
            terms: vars.into_iter().map(|v| (v, 1)).collect(),
            offset: 0,
        }
    }
    /// `sum(c * v)`.
    pub fn weighted(terms: impl IntoIterator<Item = (IntVar, i64)>) -> LinearExpr {
        LinearExpr {
            terms: terms.into_iter().collect(),
            offset: 0,
        }
    }
    /// Adds `c * v`.
    pub fn add_term(mut self, v: IntVar, c: i64) -> LinearExpr {
        self.terms.push((v, c));
        self
    }
    /// The value of the expression under an assignment.
    pub fn eval_with(&self, value: impl Fn(IntVar) -> i64) -> i64 {
        self.terms.iter().map(|&(v, c)| c * value(v)).sum::<i64>() + self.offset
    }
    /// The constant if this expression has no variables.
    pub fn as_constant(&self) -> Option<i64> {
        self.terms.iter().all(|t| t.1 == 0).then_some(self.offset)
    }
    fn proto(&self) -> pb::LinearExpressionProto {
        let (vars, coeffs) = self.merged();
        pb::LinearExpressionProto {
            vars,
            coeffs,
            offset: self.offset,
        }
    }
    /// Terms with duplicate variables merged and zero coefficients dropped.
    fn merged(&self) -> (Vec<i32>, Vec<i64>) {
        let mut t = self.terms.clone();
        t.sort_by_key(|x| x.0);
        let mut vars: Vec<i32> = vec![];
        let mut coeffs: Vec<i64> = vec![];
        for (v, c) in t {
            if vars.last() == Some(&v.0) {
                *coeffs.last_mut().expect("parallel vectors") += c;
            } else {
                vars.push(v.0);
                coeffs.push(c);
            }
        }
        let keep: Vec<bool> = coeffs.iter().map(|&c| c != 0).collect();
        let vars = vars
            .into_iter()
            .zip(&keep)
            .filter(|x| *x.1)
            .map(|x| x.0)
            .collect();
        let coeffs = coeffs.into_iter().filter(|&c| c != 0).collect();
        (vars, coeffs)
    }
}

impl From<IntVar> for LinearExpr {
    fn from(v: IntVar) -> LinearExpr {
        LinearExpr {
            terms: vec![(v, 1)],
            offset: 0,
        }
    }
}
impl From<i64> for LinearExpr {
    fn from(c: i64) -> LinearExpr {
        LinearExpr::constant(c)
    }
}
impl From<&LinearExpr> for LinearExpr {
    fn from(e: &LinearExpr) -> LinearExpr {
        e.clone()
    }
}
impl<T: Into<LinearExpr>> Add<T> for LinearExpr {
    type Output = LinearExpr;
    fn add(mut self, rhs: T) -> LinearExpr {
        let r = rhs.into();
        self.terms.extend(r.terms);
        self.offset += r.offset;
        self
    }
}
impl<T: Into<LinearExpr>> Sub<T> for LinearExpr {
    type Output = LinearExpr;
    fn sub(self, rhs: T) -> LinearExpr {
        self + (-rhs.into())
    }
}
impl Neg for LinearExpr {
    type Output = LinearExpr;
    fn neg(self) -> LinearExpr {
        self * -1
    }
}
impl Mul<i64> for LinearExpr {
    type Output = LinearExpr;
    fn mul(mut self, k: i64) -> LinearExpr {
        for t in &mut self.terms {
            t.1 *= k;
        }
        self.offset *= k;
        self
    }
}
impl<T: Into<LinearExpr>> Add<T> for IntVar {
    type Output = LinearExpr;
    fn add(self, rhs: T) -> LinearExpr {
        LinearExpr::from(self) + rhs
    }
}
impl<T: Into<LinearExpr>> Sub<T> for IntVar {
    type Output = LinearExpr;
    fn sub(self, rhs: T) -> LinearExpr {
        LinearExpr::from(self) - rhs
    }
}
impl Mul<i64> for IntVar {
    type Output = LinearExpr;
    fn mul(self, k: i64) -> LinearExpr {
        LinearExpr::from(self) * k
    }
}

/// A constraint added to a model, to attach enforcement literals to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ct(usize);

/// How a decision strategy picks the next variable (`VariableSelectionStrategy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarSelection {
    First = 0,
    LowestMin = 1,
    HighestMax = 2,
    MinDomainSize = 3,
    MaxDomainSize = 4,
}

/// How a decision strategy splits the chosen variable's domain (`DomainReductionStrategy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DomainReduction {
    MinValue = 0,
    MaxValue = 1,
    LowerHalf = 2,
    UpperHalf = 3,
    MedianValue = 4,
    RandomHalf = 5,
}

/// A CP-SAT model under construction.
#[derive(Clone, Debug, Default)]
pub struct CpModel {
    proto: pb::CpModelProto,
    hints: Vec<(i32, i64)>,
}

impl CpModel {
    pub fn new() -> CpModel {
        CpModel::default()
    }

    pub fn num_vars(&self) -> usize {
        self.proto.variables.len()
    }
    pub fn num_constraints(&self) -> usize {
        self.proto.constraints.len()
    }

    /// A new integer variable in `domain` (an empty domain makes the model infeasible).
    pub fn new_int_var(&mut self, domain: &Domain, name: &str) -> IntVar {
        let id = self.proto.variables.len() as i32;
        let mut flat = domain.flat();
        if flat.is_empty() {
            // an empty domain is reported as invalid by CP-SAT; use an infeasible pair instead
            flat = vec![0, 0];
            self.add_linear(LinearExpr::constant(0), &Domain::new(1, 1));
        }
        self.proto.variables.push(pb::IntegerVariableProto {
            name: name.to_string(),
            domain: flat,
        });
        IntVar(id)
    }

    /// A new integer variable in `[lo, hi]`.
    pub fn new_int(&mut self, lo: i64, hi: i64, name: &str) -> IntVar {
        self.new_int_var(&Domain::new(lo, hi), name)
    }

    /// A new fixed variable.
    pub fn new_constant(&mut self, v: i64) -> IntVar {
        self.new_int(v, v, "")
    }

    /// A new boolean variable.
    pub fn new_bool(&mut self, name: &str) -> BoolVar {
        BoolVar(self.new_int(0, 1, name).0)
    }

    /// The 0/1 integer variable behind a positive literal.
    pub fn bool_as_int(&self, b: BoolVar) -> LinearExpr {
        b.expr()
    }

    fn push(&mut self, c: Constraint) -> Ct {
        self.proto.constraints.push(pb::ConstraintProto {
            name: String::new(),
            enforcement_literal: vec![],
            constraint: Some(c),
        });
        Ct(self.proto.constraints.len() - 1)
    }

    /// Makes `ct` hold only when all `lits` are true. CP-SAT supports this for linear and
    /// boolean constraints.
    pub fn only_enforce_if(&mut self, ct: Ct, lits: &[BoolVar]) -> Ct {
        self.proto.constraints[ct.0]
            .enforcement_literal
            .extend(lits.iter().map(|l| l.0));
        ct
    }

    /// `expr` in `domain`.
    pub fn add_linear(&mut self, expr: impl Into<LinearExpr>, domain: &Domain) -> Ct {
        let e = expr.into();
        let (vars, coeffs) = e.merged();
        let domain = domain
            .0
            .iter()
            .flat_map(|&(a, b)| [a.saturating_sub(e.offset), b.saturating_sub(e.offset)])
            .collect();
        self.push(Constraint::Linear(pb::LinearConstraintProto {
            vars,
            coeffs,
            domain,
        }))
    }

    /// `a == b`.
    pub fn add_eq(&mut self, a: impl Into<LinearExpr>, b: impl Into<LinearExpr>) -> Ct {
        self.add_linear(a.into() - b.into(), &Domain::new(0, 0))
    }
    /// `a != b`.
    pub fn add_ne(&mut self, a: impl Into<LinearExpr>, b: impl Into<LinearExpr>) -> Ct {
        self.add_linear(a.into() - b.into(), &Domain::not_equal(0))
    }
    /// `a <= b`.
    pub fn add_le(&mut self, a: impl Into<LinearExpr>, b: impl Into<LinearExpr>) -> Ct {
        self.add_linear(a.into() - b.into(), &Domain::new(i64::MIN / 2, 0))
    }
    /// `a >= b`.
    pub fn add_ge(&mut self, a: impl Into<LinearExpr>, b: impl Into<LinearExpr>) -> Ct {
        self.add_linear(a.into() - b.into(), &Domain::new(0, i64::MAX / 2))
    }
    /// `a < b`.
    pub fn add_lt(&mut self, a: impl Into<LinearExpr>, b: impl Into<LinearExpr>) -> Ct {
        self.add_linear(a.into() - b.into(), &Domain::new(i64::MIN / 2, -1))
    }

    /// `target == prod(factors)`.
    pub fn add_product(&mut self, target: impl Into<LinearExpr>, factors: &[LinearExpr]) -> Ct {
        let target = Some(target.into().proto());
        let exprs = factors.iter().map(LinearExpr::proto).collect();
        self.push(Constraint::IntProd(pb::LinearArgumentProto {
            target,
            exprs,
        }))
    }

    /// `target == num / den`, rounding toward zero; `den` must not contain 0.
    pub fn add_division(
        &mut self,
        target: impl Into<LinearExpr>,
        num: impl Into<LinearExpr>,
        den: impl Into<LinearExpr>,
    ) -> Ct {
        let target = Some(target.into().proto());
        let exprs = vec![num.into().proto(), den.into().proto()];
        self.push(Constraint::IntDiv(pb::LinearArgumentProto {
            target,
            exprs,
        }))
    }

    /// `target == max(exprs)`.
    pub fn add_max_equality(&mut self, target: impl Into<LinearExpr>, exprs: &[LinearExpr]) -> Ct {
        let target = Some(target.into().proto());
        let exprs = exprs.iter().map(LinearExpr::proto).collect();
        self.push(Constraint::LinMax(pb::LinearArgumentProto {
            target,
            exprs,
        }))
    }

    /// `target == min(exprs)` (as `-target == max(-exprs)`).
    pub fn add_min_equality(&mut self, target: impl Into<LinearExpr>, exprs: &[LinearExpr]) -> Ct {
        let neg: Vec<LinearExpr> = exprs.iter().map(|e| -e.clone()).collect();
        self.add_max_equality(-target.into(), &neg)
    }

    /// At least one literal is true.
    pub fn add_bool_or(&mut self, lits: &[BoolVar]) -> Ct {
        let literals = lits.iter().map(|l| l.0).collect();
        self.push(Constraint::BoolOr(pb::BoolArgumentProto { literals }))
    }

    /// Every literal is true (useful with enforcement literals: `a => b and c`).
    pub fn add_bool_and(&mut self, lits: &[BoolVar]) -> Ct {
        let literals = lits.iter().map(|l| l.0).collect();
        self.push(Constraint::BoolAnd(pb::BoolArgumentProto { literals }))
    }

    /// Exactly one literal is true.
    pub fn add_exactly_one(&mut self, lits: &[BoolVar]) -> Ct {
        let literals = lits.iter().map(|l| l.0).collect();
        self.push(Constraint::ExactlyOne(pb::BoolArgumentProto { literals }))
    }

    /// At most one literal is true.
    pub fn add_at_most_one(&mut self, lits: &[BoolVar]) -> Ct {
        let literals = lits.iter().map(|l| l.0).collect();
        self.push(Constraint::AtMostOne(pb::BoolArgumentProto { literals }))
    }

    /// All expressions take different values.
    pub fn add_all_different(&mut self, exprs: &[LinearExpr]) -> Ct {
        let exprs = exprs.iter().map(LinearExpr::proto).collect();
        self.push(Constraint::AllDiff(pb::AllDifferentConstraintProto {
            exprs,
        }))
    }

    /// Minimizes `expr`.
    pub fn minimize(&mut self, expr: impl Into<LinearExpr>) {
        let e = expr.into();
        let (vars, coeffs) = e.merged();
        self.proto.objective = Some(pb::CpObjectiveProto {
            vars,
            coeffs,
            offset: e.offset as f64,
            scaling_factor: 1.0,
        });
    }

    /// Maximizes `expr` (minimizes its negation; the reported objective is negated back).
    pub fn maximize(&mut self, expr: impl Into<LinearExpr>) {
        let e = -expr.into();
        let (vars, coeffs) = e.merged();
        self.proto.objective = Some(pb::CpObjectiveProto {
            vars,
            coeffs,
            offset: e.offset as f64,
            scaling_factor: -1.0,
        });
    }

    /// Suggests `value` for `var` to the search.
    pub fn add_hint(&mut self, var: IntVar, value: i64) {
        self.hints.push((var.0, value));
    }

    /// Drops every hint.
    pub fn clear_hints(&mut self) {
        self.hints.clear();
    }

    /// Branches on `vars` in the given order with the given value choice (used when the
    /// search follows the model's strategy).
    pub fn add_decision_strategy(
        &mut self,
        vars: &[IntVar],
        sel: VarSelection,
        red: DomainReduction,
    ) {
        self.proto.search_strategy.push(pb::DecisionStrategyProto {
            variables: vars.iter().map(|v| v.0).collect(),
            variable_selection_strategy: sel as i32,
            domain_reduction_strategy: red as i32,
        });
    }

    /// The protobuf to send (hints attached).
    pub fn to_proto(&self) -> pb::CpModelProto {
        let mut p = self.proto.clone();
        if !self.hints.is_empty() {
            let mut seen = std::collections::HashSet::new();
            let (mut vars, mut values) = (vec![], vec![]);
            for &(v, x) in &self.hints {
                if seen.insert(v) {
                    vars.push(v);
                    values.push(x);
                }
            }
            p.solution_hint = Some(pb::PartialVariableAssignment { vars, values });
        }
        p
    }
}
