//! Prints a graph in the text format. Values of nodes are numbered in program order
//! (`%0`, `%1`, ...), so printing is normalized: two graphs that differ only in arena
//! layout print the same.

use crate::{Graph, InputKind, ValueId};
use std::collections::HashMap;
use std::fmt::Write;

/// Whether `name` can be printed bare after `%` (and is not a number, which would clash
/// with node results).
pub(crate) fn is_bare_name(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return false,
    }
    name.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

fn input_name(name: &str) -> String {
    if is_bare_name(name) {
        format!("%{name}")
    } else {
        format!("%{name:?}")
    }
}

/// The text form of `g`.
pub fn print(g: &Graph) -> String {
    let mut names: HashMap<ValueId, String> = HashMap::new();
    let mut out = String::new();
    let graph_name = if is_bare_name(&g.name) {
        g.name.clone()
    } else {
        format!("{:?}", g.name)
    };
    write!(out, "graph @{graph_name}(").unwrap();
    for (i, &v) in g.inputs().iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let (name, kind, ty) = if g.contains_value(v) {
            let val = g.value(v);
            let kind = match &val.def {
                crate::ValueDef::Input { kind, .. } => kind.clone(),
                _ => InputKind::Activation,
            };
            (
                val.name.clone().unwrap_or_default(),
                kind,
                val.ty.to_string(),
            )
        } else {
            (format!("missing{i}"), InputKind::Activation, "?".into())
        };
        let n = input_name(&name);
        let kw = match kind {
            InputKind::Activation => "",
            InputKind::Param => "param ",
            InputKind::Buffer => "buffer ",
        };
        write!(out, "{n}: {kw}{ty}").unwrap();
        names.insert(v, n);
    }
    out.push_str(") {\n");
    let mut next = 0usize;
    let name_of = |names: &HashMap<ValueId, String>, v: ValueId| {
        names
            .get(&v)
            .cloned()
            .unwrap_or_else(|| format!("%?{}", v.0))
    };
    for &n in g.body() {
        if !g.contains_node(n) {
            continue;
        }
        let node = g.node(n);
        let mut results = vec![];
        for &v in &node.outputs {
            let name = format!("%{next}");
            next += 1;
            names.insert(v, name.clone());
            results.push(name);
        }
        let args: Vec<String> = node.inputs.iter().map(|&v| name_of(&names, v)).collect();
        write!(
            out,
            "  {} = {}({})",
            results.join(", "),
            node.op.name(),
            args.join(", ")
        )
        .unwrap();
        if !node.attrs.is_empty() {
            let def = node.op.def();
            let mut keys: Vec<&String> = def
                .attrs
                .iter()
                .filter_map(|a| node.attrs.get_key_value(a.name).map(|(k, _)| k))
                .collect();
            for k in node.attrs.keys() {
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{k} = {}", node.attrs[*k]))
                .collect();
            write!(out, " {{{}}}", parts.join(", ")).unwrap();
        }
        let tys: Vec<String> = node
            .outputs
            .iter()
            .map(|&v| {
                if g.contains_value(v) {
                    g.ty(v).to_string()
                } else {
                    "?".into()
                }
            })
            .collect();
        writeln!(out, " : {}", tys.join(", ")).unwrap();
    }
    let outs: Vec<String> = g.outputs().iter().map(|&v| name_of(&names, v)).collect();
    writeln!(out, "  return {}", outs.join(", ")).unwrap();
    out.push_str("}\n");
    out
}
