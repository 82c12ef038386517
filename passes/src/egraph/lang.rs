//! The e-graph language over drtc's ops: one e-node kind per IR op, with the node's
//! attributes as a separate leaf child (so patterns can bind them, `(sum ?x ?a)`, and
//! rules can read them from the analysis), graph inputs as leaves, and a nonce that keeps
//! random ops (training dropout) from ever being merged.
//!
//! Pattern syntax (egg's s-expressions): op names as in the text format; an attribute
//! literal is one atom `@key=value;key=value` (`@approximate=tanh`, `@dim=[-1];keepdim=true`),
//! normalized against the parent op's defaults when instantiated.

use drtc_ir::{Attr, Attrs, DType, Op};
use egg::{Id, Language};
use std::fmt;

/// Attribute values in the e-graph: the IR's exact key type.
pub type AttrVal = drtc_ir::AttrKey;

/// A set of attributes, hashable (a leaf of the e-graph).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct AttrSet(pub Vec<(String, AttrVal)>);

impl AttrSet {
    pub fn from_attrs(attrs: &Attrs) -> AttrSet {
        AttrSet(
            attrs
                .iter()
                .map(|(k, v)| (k.clone(), AttrVal::from(v)))
                .collect(),
        )
    }

    pub fn to_attrs(&self) -> Attrs {
        self.0
            .iter()
            .map(|(k, v)| (k.clone(), Attr::from(v)))
            .collect()
    }
}

impl fmt::Display for AttrSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("@")?;
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(";")?;
            }
            let v = Attr::from(v);
            match &v {
                Attr::Str(s) => write!(f, "{k}={s}")?,
                Attr::Ints(xs) => write!(
                    f,
                    "{k}=[{}]",
                    xs.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
                )?,
                other => write!(f, "{k}={other}")?,
            }
        }
        Ok(())
    }
}

/// Parses one attribute literal value: bool, none, int, float, `[ints]`, dtype name or
/// otherwise a string.
fn parse_value(s: &str) -> Attr {
    match s {
        "true" => return Attr::Bool(true),
        "false" => return Attr::Bool(false),
        "none" => return Attr::None,
        _ => {}
    }
    if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let xs: Option<Vec<i64>> = inner
            .split(',')
            .filter(|p| !p.is_empty())
            .map(|p| p.trim().parse().ok())
            .collect();
        if let Some(xs) = xs {
            return Attr::Ints(xs);
        }
    }
    if let Ok(i) = s.parse::<i64>() {
        return Attr::Int(i);
    }
    if let Ok(x) = s.parse::<f64>() {
        return Attr::Float(x);
    }
    if let Some(d) = DType::from_name(s) {
        return Attr::DType(d);
    }
    Attr::Str(s.to_string())
}

/// Parses an attribute literal `@k=v;k=v` (without normalizing it).
pub fn parse_attr_literal(s: &str) -> Option<Attrs> {
    let body = s.strip_prefix('@')?;
    let mut attrs = Attrs::new();
    for part in body.split(';').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=')?;
        attrs.insert(k.to_string(), parse_value(v));
    }
    Some(attrs)
}

/// Normalizes an attribute literal for `op`: defaults filled in, and `none` read as the
/// string "none" where the op declares a string (`@approximate=none`).
pub fn normalize_literal(op: Op, raw: &Attrs) -> Result<Attrs, String> {
    let mut raw = raw.clone();
    for def in op.def().attrs {
        if def.kind == drtc_ir::AttrKind::Str && raw.get(def.name) == Some(&Attr::None) {
            raw.insert(def.name.to_string(), Attr::Str("none".into()));
        }
    }
    op.normalize_attrs(&raw)
        .map_err(|e| format!("`{op}` attributes: {e:?}"))
}

/// One e-node.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TNode {
    /// The `index`-th graph input.
    Input(u32),
    /// The attributes of the parent op node (normalized, except in pattern literals).
    Attrs(AttrSet),
    /// `op(children)`: the op's inputs, then its attribute leaf when the op declares
    /// attributes. `nonce` is 0 except for random ops, which each get their own.
    Op {
        op: Op,
        nonce: u32,
        children: Vec<Id>,
    },
}

/// What pattern matching and the op index key on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TDiscriminant {
    Input(u32),
    Attrs,
    Op(Op),
}

impl TNode {
    /// Whether `op`'s nodes carry an attribute leaf.
    pub fn has_attrs(op: Op) -> bool {
        !op.def().attrs.is_empty()
    }

    /// The inputs (tensor children) of an op node.
    pub fn inputs(&self) -> &[Id] {
        match self {
            TNode::Op { op, children, .. } if TNode::has_attrs(*op) => {
                &children[..children.len().saturating_sub(1)]
            }
            TNode::Op { children, .. } => children,
            _ => &[],
        }
    }

    /// The attribute leaf of an op node, if it has one.
    pub fn attrs_child(&self) -> Option<Id> {
        match self {
            TNode::Op { op, children, .. } if TNode::has_attrs(*op) => children.last().copied(),
            _ => None,
        }
    }
}

impl Language for TNode {
    type Discriminant = TDiscriminant;

    fn discriminant(&self) -> TDiscriminant {
        match self {
            TNode::Input(i) => TDiscriminant::Input(*i),
            TNode::Attrs(_) => TDiscriminant::Attrs,
            TNode::Op { op, .. } => TDiscriminant::Op(*op),
        }
    }

    fn matches(&self, other: &Self) -> bool {
        match (self, other) {
            (TNode::Input(a), TNode::Input(b)) => a == b,
            (TNode::Attrs(a), TNode::Attrs(b)) => a == b,
            (
                TNode::Op {
                    op: a,
                    nonce: na,
                    children: ca,
                },
                TNode::Op {
                    op: b,
                    nonce: nb,
                    children: cb,
                },
            ) => a == b && na == nb && ca.len() == cb.len(),
            _ => false,
        }
    }

    fn children(&self) -> &[Id] {
        match self {
            TNode::Op { children, .. } => children,
            _ => &[],
        }
    }

    fn children_mut(&mut self) -> &mut [Id] {
        match self {
            TNode::Op { children, .. } => children,
            _ => &mut [],
        }
    }
}

impl fmt::Display for TNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TNode::Input(i) => write!(f, "in{i}"),
            TNode::Attrs(a) => write!(f, "{a}"),
            TNode::Op { op, .. } => f.write_str(op.name()),
        }
    }
}

impl egg::FromOp for TNode {
    type Error = String;

    fn from_op(op: &str, children: Vec<Id>) -> Result<TNode, String> {
        if op.starts_with('@') {
            let attrs =
                parse_attr_literal(op).ok_or_else(|| format!("bad attribute literal `{op}`"))?;
            return Ok(TNode::Attrs(AttrSet::from_attrs(&attrs)));
        }
        if let Some(i) = op.strip_prefix("in").and_then(|r| r.parse().ok()) {
            return Ok(TNode::Input(i));
        }
        let o = Op::from_name(op).ok_or_else(|| format!("unknown op `{op}`"))?;
        Ok(TNode::Op {
            op: o,
            nonce: 0,
            children,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attr_literals_parse_every_kind() {
        let a = parse_attr_literal("@dim=[-1,2];keepdim=true;p=0.5;approximate=tanh;dtype=f16")
            .unwrap();
        assert_eq!(a["dim"], Attr::Ints(vec![-1, 2]));
        assert_eq!(a["keepdim"], Attr::Bool(true));
        assert_eq!(a["p"], Attr::Float(0.5));
        assert_eq!(a["approximate"], Attr::Str("tanh".into()));
        assert_eq!(a["dtype"], Attr::DType(DType::F16));
        assert!(parse_attr_literal("dim=1").is_none());
    }

    #[test]
    fn patterns_parse_with_attribute_literals() {
        let p: egg::Pattern<TNode> = "(gelu ?x @approximate=tanh)".parse().unwrap();
        assert_eq!(p.to_string(), "(gelu ?x @approximate=tanh)");
        assert!("(bogus ?x)".parse::<egg::Pattern<TNode>>().is_err());
    }
}
