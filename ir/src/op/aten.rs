//! The opaque ATen call (`Op::Aten`): an op the export frontend found no IR op for, run by
//! PyTorch as `torch.ops.<target>(<args>)`. Its attributes carry everything the call needs:
//! `target` (`aten.lstm.input`), `args` (the argument list as Python, `$N` standing for
//! input N and `$device` for the device the module runs on) and `types` (its result types
//! as the export metadata gave them, `f32[2, 3]; f32[4]`). Inference parses `types` and
//! checks that `args` names every input, and no other.

use super::AttrView;
use crate::{DType, TensorType};

/// `f32[2, 3]` (one tensor) or `(f32[2, 3]; i64[])` (a tuple or list) -> the types, in
/// order, and whether the result is a tuple.
pub fn parse_result(s: &str) -> Result<(Vec<TensorType>, bool), String> {
    let s = s.trim();
    match s.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        Some(inner) => Ok((parse_types(inner)?, true)),
        None => {
            let t = parse_types(s)?;
            if t.len() > 1 {
                return Err(format!("several result types `{s}` must be in parentheses"));
            }
            Ok((t, false))
        }
    }
}

/// `f32[2, 3]; i64[]` -> the types, in order.
pub fn parse_types(s: &str) -> Result<Vec<TensorType>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(vec![]);
    }
    s.split(';')
        .map(|t| {
            let t = t.trim();
            let (dtype, rest) = t
                .split_once('[')
                .ok_or_else(|| format!("bad result type `{t}` (expected `f32[2, 3]`)"))?;
            let dtype =
                DType::from_name(dtype.trim()).ok_or_else(|| format!("unknown dtype `{dtype}`"))?;
            let dims = rest
                .strip_suffix(']')
                .ok_or_else(|| format!("bad result type `{t}` (no closing `]`)"))?;
            let shape: Result<Vec<i64>, String> = dims
                .split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(|d| {
                    d.parse::<i64>()
                        .ok()
                        .filter(|&d| (0..=super::MAX_DIM).contains(&d))
                        .ok_or_else(|| format!("bad dimension `{d}` in `{t}`"))
                })
                .collect();
            Ok(TensorType::new(dtype, shape?))
        })
        .collect()
}

/// The `types` attribute for these result types.
pub fn format_types(types: &[TensorType]) -> String {
    types
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

/// One piece of an `args` template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgPiece<'a> {
    Text(&'a str),
    /// `$N`: input N.
    Input(usize),
    /// `$device`.
    Device,
}

/// Splits an `args` template into text, input references and device references.
pub fn template_pieces(args: &str) -> Result<Vec<ArgPiece<'_>>, String> {
    let mut out = vec![];
    let mut rest = args;
    while let Some(i) = rest.find('$') {
        if i > 0 {
            out.push(ArgPiece::Text(&rest[..i]));
        }
        let after = &rest[i + 1..];
        if let Some(r) = after.strip_prefix("device") {
            out.push(ArgPiece::Device);
            rest = r;
            continue;
        }
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 {
            return Err(format!(
                "`$` at byte {i} of the arguments is neither `$N` nor `$device`"
            ));
        }
        let n: usize = after[..digits]
            .parse()
            .map_err(|_| format!("input number `{}` is too large", &after[..digits]))?;
        out.push(ArgPiece::Input(n));
        rest = &after[digits..];
    }
    if !rest.is_empty() {
        out.push(ArgPiece::Text(rest));
    }
    Ok(out)
}

/// Renders an `args` template with `inputs` (Python expressions) and `device`.
pub fn render_args(args: &str, inputs: &[String], device: &str) -> Result<String, String> {
    let mut s = String::new();
    for p in template_pieces(args)? {
        match p {
            ArgPiece::Text(t) => s.push_str(t),
            ArgPiece::Input(i) => s.push_str(
                inputs
                    .get(i)
                    .ok_or_else(|| format!("`${i}` names no input ({} inputs)", inputs.len()))?,
            ),
            ArgPiece::Device => s.push_str(device),
        }
    }
    Ok(s)
}

/// The inference rule of `Op::Aten`.
pub fn infer(inputs: &[&TensorType], a: AttrView) -> Result<Vec<TensorType>, String> {
    let target = a.str("target")?;
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    if target.split('.').count() < 2 || !target.chars().all(valid) {
        return Err(format!(
            "`{target}` is not an op target (expected `namespace.name[.overload]`)"
        ));
    }
    let mut used = vec![false; inputs.len()];
    for p in template_pieces(a.str("args")?)? {
        if let ArgPiece::Input(i) = p {
            *used.get_mut(i).ok_or_else(|| {
                format!(
                    "the arguments name input {i}, but the call has {} inputs",
                    inputs.len()
                )
            })? = true;
        }
    }
    if let Some(i) = used.iter().position(|u| !u) {
        return Err(format!("input {i} is not used by the arguments"));
    }
    let (types, _) = parse_result(a.str("types")?)?;
    if types.is_empty() {
        return Err(format!("`{target}` has no tensor result"));
    }
    Ok(types)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_round_trip() {
        let t = parse_types("f32[2, 3]; i64[]").unwrap();
        assert_eq!(
            t,
            vec![
                TensorType::new(DType::F32, vec![2, 3]),
                TensorType::scalar(DType::I64)
            ]
        );
        assert_eq!(format_types(&t), "f32[2, 3]; i64[]");
        assert!(parse_types("q8[2]").is_err());
        assert!(parse_types("f32[2, -1]").is_err());
        assert!(parse_types("f32 2").is_err());
        assert!(parse_result("(f32[2]; f32[3])").unwrap().1);
        assert_eq!(
            parse_result("f32[2]").unwrap(),
            (vec![TensorType::new(DType::F32, vec![2])], false)
        );
        assert!(parse_result("f32[2]; f32[3]").is_err());
    }

    #[test]
    fn templates_render_inputs_and_device() {
        let r = render_args(
            "$0, [$1, $2], True, device=$device",
            &["x".into(), "w".into(), "b".into()],
            "x.device",
        );
        assert_eq!(r.unwrap(), "x, [w, b], True, device=x.device");
        assert!(render_args("$3", &["x".into()], "d").is_err());
        assert!(template_pieces("a $ b").is_err());
    }
}
