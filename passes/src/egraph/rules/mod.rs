//! The rule files, one per topic, and the rule sets of the passes built from them.

pub mod activations;
pub mod algebra;
pub mod attention;
pub mod convolution;
pub mod layout;
pub mod linearity;
pub mod normalization;
pub mod reductions;
pub mod selection;
#[cfg(test)]
mod tests;

use super::rule::Rule;

/// A named group of rules (one topic file).
pub struct Family {
    pub name: &'static str,
    pub rules: fn() -> Vec<Rule>,
}

/// Every rule family, in the order they are listed in reports.
pub const FAMILIES: &[Family] = &[
    Family {
        name: "algebra",
        rules: algebra::rules,
    },
    Family {
        name: "activations",
        rules: activations::rules,
    },
    Family {
        name: "reductions",
        rules: reductions::rules,
    },
    Family {
        name: "linearity",
        rules: linearity::rules,
    },
    Family {
        name: "attention",
        rules: attention::rules,
    },
    Family {
        name: "normalization",
        rules: normalization::rules,
    },
    Family {
        name: "convolution",
        rules: convolution::rules,
    },
    Family {
        name: "layout",
        rules: layout::rules,
    },
    Family {
        name: "selection",
        rules: selection::rules,
    },
];

/// The family called `name`.
pub fn family(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.name == name)
}

/// The family a rule belongs to.
pub fn family_of(rule: &str) -> Option<&'static str> {
    FAMILIES
        .iter()
        .find(|f| (f.rules)().iter().any(|r| r.name == rule))
        .map(|f| f.name)
}

/// `canonicalize`: normal forms that never need a cost trade-off (identities, constant
/// folding, clamp merging, layout chains).
pub fn canonical() -> Vec<Rule> {
    let mut rules = algebra::rules();
    rules.extend(layout::rules());
    rules
}

/// `simplify`: every family.
pub fn all() -> Vec<Rule> {
    FAMILIES.iter().flat_map(|f| (f.rules)()).collect()
}
