//! Which rewrite rules can fire on an op: the rules whose left-hand side mentions it
//! (`drtc ops` prints the count beside whether constant folding evaluates it).

use super::lang::TNode;
use super::rules::FAMILIES;
use drtc_ir::Op;
use egg::{ENodeOrVar, Pattern};

/// The names of the rules whose left-hand side has a node of `op` (every family).
pub fn rules_matching(op: Op) -> Vec<&'static str> {
    let mut out = vec![];
    for family in FAMILIES {
        for rule in (family.rules)() {
            let Ok(lhs) = rule.lhs.parse::<Pattern<TNode>>() else {
                continue; // a rule that does not parse is reported by the rule tests
            };
            let mentions = lhs
                .ast
                .as_ref()
                .iter()
                .any(|n| matches!(n, ENodeOrVar::ENode(TNode::Op { op: o, .. }) if *o == op));
            if mentions {
                out.push(rule.name);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_found_by_the_ops_they_match() {
        let mul = rules_matching(Op::Mul);
        assert!(!mul.is_empty());
        let all: Vec<_> = FAMILIES.iter().flat_map(|f| (f.rules)()).collect();
        for name in mul {
            let rule = all.iter().find(|r| r.name == name).unwrap();
            assert!(rule.lhs.contains("(mul "), "{name}: {}", rule.lhs);
        }
    }
}
