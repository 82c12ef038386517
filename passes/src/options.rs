//! Pass options: what a pass declares it accepts ([`OptionDef`]) and the checked, typed
//! values its constructor receives ([`PassOptions`]), defaults filled in. Declaring options
//! as data lets the registry reject unknown options and bad values, listing the valid ones,
//! before any pass is built.

use std::collections::BTreeMap;
use std::fmt;

/// What an option holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionKind {
    /// `true` or `false`.
    Bool,
    /// A non-negative integer.
    Count,
}

impl OptionKind {
    pub fn describe(self) -> &'static str {
        match self {
            OptionKind::Bool => "a bool (true or false)",
            OptionKind::Count => "a non-negative integer",
        }
    }

    /// The kind in a few characters, for listings (`bool`, `N`).
    pub fn describe_short(self) -> &'static str {
        match self {
            OptionKind::Bool => "bool",
            OptionKind::Count => "N",
        }
    }

    /// Parses a value written in a pipeline string.
    pub fn parse(self, text: &str) -> Option<OptionValue> {
        match self {
            OptionKind::Bool => match text {
                "true" => Some(OptionValue::Bool(true)),
                "false" => Some(OptionValue::Bool(false)),
                _ => None,
            },
            OptionKind::Count => text.parse().ok().map(OptionValue::Count),
        }
    }
}

/// The value of one option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionValue {
    Bool(bool),
    Count(u64),
}

impl fmt::Display for OptionValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionValue::Bool(b) => write!(f, "{b}"),
            OptionValue::Count(n) => write!(f, "{n}"),
        }
    }
}

/// The declaration of one option of a pass.
#[derive(Clone, Copy, Debug)]
pub struct OptionDef {
    /// The name in pipeline strings (`max-ops`).
    pub name: &'static str,
    pub kind: OptionKind,
    pub default: OptionValue,
    /// One line for `--help`-style listings.
    pub help: &'static str,
}

/// The checked options of one pass, every declared option present.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassOptions {
    values: BTreeMap<&'static str, OptionValue>,
}

impl PassOptions {
    /// The defaults of `defs`.
    pub fn defaults(defs: &[OptionDef]) -> PassOptions {
        PassOptions {
            values: defs.iter().map(|d| (d.name, d.default)).collect(),
        }
    }

    pub fn set(&mut self, name: &'static str, value: OptionValue) {
        self.values.insert(name, value);
    }

    pub fn get(&self, name: &str) -> Option<OptionValue> {
        self.values.get(name).copied()
    }

    /// A bool option; `Err` names the problem (undeclared, or not a bool).
    pub fn bool(&self, name: &str) -> Result<bool, String> {
        match self.get(name) {
            Some(OptionValue::Bool(b)) => Ok(b),
            Some(other) => Err(format!("option `{name}` is `{other}`, not a bool")),
            None => Err(format!("no option `{name}`")),
        }
    }

    /// A count option; `Err` names the problem (undeclared, or not a count).
    pub fn count(&self, name: &str) -> Result<u64, String> {
        match self.get(name) {
            Some(OptionValue::Count(n)) => Ok(n),
            Some(other) => Err(format!("option `{name}` is `{other}`, not a count")),
            None => Err(format!("no option `{name}`")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_their_values_only() {
        assert_eq!(
            OptionKind::Bool.parse("true"),
            Some(OptionValue::Bool(true))
        );
        assert_eq!(OptionKind::Bool.parse("1"), None);
        assert_eq!(OptionKind::Count.parse("12"), Some(OptionValue::Count(12)));
        assert_eq!(OptionKind::Count.parse("-1"), None);
        assert_eq!(OptionKind::Count.parse("true"), None);
    }

    #[test]
    fn typed_getters_check_kind() {
        let defs = [OptionDef {
            name: "flag",
            kind: OptionKind::Bool,
            default: OptionValue::Bool(true),
            help: "",
        }];
        let mut o = PassOptions::defaults(&defs);
        assert_eq!(o.bool("flag"), Ok(true));
        o.set("flag", OptionValue::Bool(false));
        assert_eq!(o.bool("flag"), Ok(false));
        assert!(o.count("flag").is_err());
        assert_eq!(o.bool("other"), Err("no option `other`".to_string()));
    }
}
