//! The opaque call: an ATen node with no IR form becomes one `Op::Aten` node whose `args`
//! attribute is the call's argument list as Python (`$N` for its N-th tensor input,
//! `$device` for the module's device) and whose `types` are the export metadata's result
//! types (`(t1; t2)` for a tuple or list result).

use drtc_ir::DType;
use serde_json::Value;

/// The `args` template of one call, and the FX node names of its tensor inputs in order.
pub struct Template {
    pub args: String,
    pub inputs: Vec<String>,
}

/// Python text of one JSON argument; tensor references become `$N`.
fn render(v: &Value, inputs: &mut Vec<String>) -> Result<String, String> {
    Ok(match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.to_string()
            } else {
                let x = n.as_f64().ok_or("a number out of range")?;
                format!("{x:?}")
            }
        }
        // a Python string literal; `$` written as an escape so it never reads as `$N`
        Value::String(s) => {
            let lit = format!("{s:?}").replace('$', "\\x24");
            if s.chars().all(|c| c.is_ascii() && !c.is_ascii_control()) {
                lit
            } else {
                return Err(format!("a non-ASCII string argument {s:?}"));
            }
        }
        Value::Array(items) => {
            let parts: Result<Vec<String>, String> =
                items.iter().map(|x| render(x, inputs)).collect();
            format!("[{}]", parts?.join(", "))
        }
        Value::Object(o) => {
            if let Some(Value::String(n)) = o.get("node") {
                let i = match inputs.iter().position(|x| x == n) {
                    Some(i) => i,
                    None => {
                        inputs.push(n.clone());
                        inputs.len() - 1
                    }
                };
                format!("${i}")
            } else if let Some(Value::String(d)) = o.get("dtype") {
                let d = DType::from_name(d).map(|d| d.torch_name()).unwrap_or(d);
                format!("torch.{d}")
            } else if o.contains_key("device") {
                "$device".into()
            } else if let Some(Value::String(l)) = o.get("layout") {
                check_ident(l)?;
                format!("torch.{l}")
            } else if let Some(Value::String(m)) = o.get("memory_format") {
                check_ident(m)?;
                format!("torch.{m}")
            } else if let Some(Value::String(f)) = o.get("float") {
                match f.as_str() {
                    "inf" => "float('inf')".into(),
                    "-inf" => "float('-inf')".into(),
                    "nan" => "float('nan')".into(),
                    _ => return Err(format!("a float `{f}`")),
                }
            } else {
                let what = o
                    .get("unsupported")
                    .and_then(Value::as_str)
                    .unwrap_or("value");
                let text = o.get("text").and_then(Value::as_str).unwrap_or("");
                return Err(format!(
                    "an argument PyTorch's generated code cannot spell: a {what} `{text}`"
                ));
            }
        }
    })
}

fn check_ident(s: &str) -> Result<(), String> {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(())
    } else {
        Err(format!("a torch attribute `{s}`"))
    }
}

/// The template of a call with these positional and keyword arguments.
pub fn template(
    args: &[Value],
    kwargs: &std::collections::BTreeMap<String, Value>,
) -> Result<Template, String> {
    let mut inputs = vec![];
    let mut parts = vec![];
    for a in args {
        parts.push(render(a, &mut inputs)?);
    }
    for (k, v) in kwargs {
        check_ident(k)?;
        parts.push(format!("{k}={}", render(v, &mut inputs)?));
    }
    Ok(Template {
        args: parts.join(", "),
        inputs,
    })
}
