//! Op attributes: values, their declared kinds and defaults.

use crate::DType;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// One attribute value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Attr {
    None,
    Bool(bool),
    Int(i64),
    Float(#[serde(with = "non_finite_as_string")] f64),
    Str(String),
    Ints(Vec<i64>),
    DType(DType),
}

/// Serde for float attributes: finite values are numbers; `inf`, `-inf` and `nan` are the
/// strings of the text format, since JSON has no such numbers (serde_json would write
/// `null` and fail to read it back).
mod non_finite_as_string {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        if x.is_finite() {
            s.serialize_f64(*x)
        } else {
            s.serialize_str(&super::format_float(*x))
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Number(f64),
            Text(String),
        }
        match Repr::deserialize(d)? {
            Repr::Number(x) => Ok(x),
            Repr::Text(t) => match t.as_str() {
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                "nan" => Ok(f64::NAN),
                _ => Err(serde::de::Error::custom(format!(
                    "expected a number, `inf`, `-inf` or `nan`, found {t:?}"
                ))),
            },
        }
    }
}

/// The attributes of one node, by name.
pub type Attrs = BTreeMap<String, Attr>;

/// What an attribute may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrKind {
    Bool,
    Int,
    /// An int or a float (a python number).
    Float,
    Str,
    Ints,
    DType,
    /// `Int`, or `none`.
    OptInt,
    /// `Float`, or `none`.
    OptFloat,
    /// `Ints`, or `none`.
    OptInts,
}

impl AttrKind {
    /// Whether `value` is acceptable for this kind (ints are accepted where floats are).
    pub fn accepts(self, value: &Attr) -> bool {
        matches!(
            (self, value),
            (AttrKind::Bool, Attr::Bool(_))
                | (AttrKind::Int | AttrKind::OptInt, Attr::Int(_))
                | (
                    AttrKind::Float | AttrKind::OptFloat,
                    Attr::Float(_) | Attr::Int(_)
                )
                | (AttrKind::Str, Attr::Str(_))
                | (AttrKind::Ints | AttrKind::OptInts, Attr::Ints(_))
                | (AttrKind::DType, Attr::DType(_))
                | (
                    AttrKind::OptInt | AttrKind::OptFloat | AttrKind::OptInts,
                    Attr::None
                )
        )
    }

    pub fn describe(self) -> &'static str {
        match self {
            AttrKind::Bool => "a bool",
            AttrKind::Int => "an int",
            AttrKind::Float => "a number",
            AttrKind::Str => "a string",
            AttrKind::Ints => "a list of ints",
            AttrKind::DType => "a dtype",
            AttrKind::OptInt => "an int or none",
            AttrKind::OptFloat => "a number or none",
            AttrKind::OptInts => "a list of ints or none",
        }
    }
}

/// A default value, spelled so it can live in a `static` table.
#[derive(Clone, Copy, Debug)]
pub enum Default {
    /// The attribute must be given.
    Required,
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'static str),
    Ints(&'static [i64]),
    DType(DType),
}

impl Default {
    pub fn value(self) -> Option<Attr> {
        Some(match self {
            Default::Required => return None,
            Default::None => Attr::None,
            Default::Bool(b) => Attr::Bool(b),
            Default::Int(i) => Attr::Int(i),
            Default::Float(x) => Attr::Float(x),
            Default::Str(s) => Attr::Str(s.to_string()),
            Default::Ints(v) => Attr::Ints(v.to_vec()),
            Default::DType(d) => Attr::DType(d),
        })
    }
}

/// The declaration of one attribute in the op table.
#[derive(Clone, Copy, Debug)]
pub struct AttrDef {
    pub name: &'static str,
    pub kind: AttrKind,
    pub default: Default,
}

/// Shorthand for table entries.
pub const fn attr(name: &'static str, kind: AttrKind, default: Default) -> AttrDef {
    AttrDef {
        name,
        kind,
        default,
    }
}

impl Attr {
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Attr::Int(i) => Some(*i),
            _ => None,
        }
    }
    pub fn as_float(&self) -> Option<f64> {
        match self {
            Attr::Float(x) => Some(*x),
            Attr::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Attr::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Attr::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_ints(&self) -> Option<&[i64]> {
        match self {
            Attr::Ints(v) => Some(v),
            _ => None,
        }
    }
    pub fn is_none(&self) -> bool {
        matches!(self, Attr::None)
    }
}

/// An attribute value with total equality, order and hashing: floats compare by their
/// bits, so `0.0` and `-0.0` differ and a NaN equals only the same NaN. Used where
/// attributes are keys (common-subexpression elimination, e-graph leaves).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AttrKey {
    None,
    Bool(bool),
    Int(i64),
    Float(u64),
    Str(String),
    Ints(Vec<i64>),
    DType(DType),
}

impl From<&Attr> for AttrKey {
    fn from(a: &Attr) -> AttrKey {
        match a {
            Attr::None => AttrKey::None,
            Attr::Bool(b) => AttrKey::Bool(*b),
            Attr::Int(i) => AttrKey::Int(*i),
            Attr::Float(x) => AttrKey::Float(x.to_bits()),
            Attr::Str(s) => AttrKey::Str(s.clone()),
            Attr::Ints(v) => AttrKey::Ints(v.clone()),
            Attr::DType(d) => AttrKey::DType(*d),
        }
    }
}

impl From<&AttrKey> for Attr {
    fn from(a: &AttrKey) -> Attr {
        match a {
            AttrKey::None => Attr::None,
            AttrKey::Bool(b) => Attr::Bool(*b),
            AttrKey::Int(i) => Attr::Int(*i),
            AttrKey::Float(x) => Attr::Float(f64::from_bits(*x)),
            AttrKey::Str(s) => Attr::Str(s.clone()),
            AttrKey::Ints(v) => Attr::Ints(v.clone()),
            AttrKey::DType(d) => Attr::DType(*d),
        }
    }
}

/// Formats a float so that it reads back as the same f64 and never looks like an int.
pub fn format_float(x: f64) -> String {
    if x.is_nan() {
        "nan".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        // `{:?}` is the shortest representation that round-trips, and always has `.` or `e`.
        format!("{x:?}")
    }
}

impl fmt::Display for Attr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Attr::None => f.write_str("none"),
            Attr::Bool(b) => write!(f, "{b}"),
            Attr::Int(i) => write!(f, "{i}"),
            Attr::Float(x) => f.write_str(&format_float(*x)),
            Attr::Str(s) => write!(f, "{s:?}"),
            Attr::Ints(v) => {
                f.write_str("[")?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{x}")?;
                }
                f.write_str("]")
            }
            Attr::DType(d) => write!(f, "{d}"),
        }
    }
}
