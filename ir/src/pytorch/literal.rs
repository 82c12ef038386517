//! Python literals for attribute values.

use super::Dialect;
use crate::{Attr, DType};

/// The `torch.<dtype>` spelling of a dtype.
pub fn torch_dtype(d: DType) -> String {
    format!("torch.{}", d.torch_name())
}

/// A Python literal for an attribute value (the reference dialect's).
pub fn py(attr: &Attr) -> String {
    literal(attr, Dialect::Reference)
}

/// A Python literal for an attribute value in dialect `d`: floats are the shortest text that
/// round-trips (`float('inf')` and `float('nan')` where Python has no literal); strings
/// are double-quoted, or single-quoted in the seed dialect.
pub fn literal(attr: &Attr, d: Dialect) -> String {
    match attr {
        Attr::None => "None".into(),
        Attr::Bool(b) => if *b { "True" } else { "False" }.into(),
        Attr::Int(i) => i.to_string(),
        Attr::Float(x) if x.is_nan() => "float('nan')".into(),
        Attr::Float(x) if x.is_infinite() => if *x > 0.0 {
            "float('inf')"
        } else {
            "float('-inf')"
        }
        .into(),
        Attr::Float(x) => format!("{x:?}"),
        Attr::Str(s) => match d {
            Dialect::Reference => format!("{s:?}"),
            Dialect::Seed => format!("'{s}'"),
        },
        Attr::Ints(v) => format!(
            "[{}]",
            v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
        ),
        Attr::DType(t) => torch_dtype(*t),
    }
}

/// A float attribute written as an int when it is whole (`correction=1`).
pub fn int_if_whole(a: &Attr, d: Dialect) -> String {
    match a {
        Attr::Float(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", *x as i64),
        a => literal(a, d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_python() {
        assert_eq!(py(&Attr::Float(1e-5)), "1e-5");
        assert_eq!(py(&Attr::Float(0.01)), "0.01");
        assert_eq!(py(&Attr::Float(f64::NEG_INFINITY)), "float('-inf')");
        assert_eq!(
            literal(&Attr::Float(f64::NAN), Dialect::Seed),
            "float('nan')"
        );
        assert_eq!(py(&Attr::Str("tanh".into())), "\"tanh\"");
        assert_eq!(literal(&Attr::Str("tanh".into()), Dialect::Seed), "'tanh'");
        assert_eq!(int_if_whole(&Attr::Float(1.0), Dialect::Seed), "1");
        assert_eq!(int_if_whole(&Attr::Float(0.5), Dialect::Seed), "0.5");
    }
}
