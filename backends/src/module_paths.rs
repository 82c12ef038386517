//! How `ModelNew.forward` reaches the module's parameters and buffers on every call.
//!
//! Each tensor is a dotted state_dict name (`layer1.0.bn1.running_mean`). Written as
//! attributes (`self.layer1[0].bn1.running_mean`), every step runs `nn.Module.__getattr__` or
//! `nn.Sequential.__getitem__` in Python: a ResNet18's 123 tensors took about 1 ms of host time
//! per call on a 2-core x86 CPU, while its 60 kernels take 0.42 ms of GPU time on an H100
//! (`bench/results/level3_bn_host_h100_d5af970.md`). So the forward reads the dictionaries
//! those names are keys of: `self._modules["layer1"]._modules["0"]...._buffers["running_mean"]`
//! (a dict read, about a tenth of an attribute miss: the list took 11-28x less host time,
//! `bench/results/host_steps_cpu_b18820b.md`), and a submodule that owns several of
//! the tensors, or that leads to several such owners, is looked up once per call into a local
//! (`_drtc_m3 = ...`). Where a name is not a key there (a plain tensor attribute such as an
//! RNN's `self.hidden`, a parametrized weight, a replaced container), the same list is built
//! by attribute lookups instead. Every lookup happens on every call, so a submodule or tensor
//! the user replaced is seen.

use crate::state::attr_step;
use drtc_ir::{Graph, InputKind, ValueDef, ValueId};

/// One argument of the kernels' entry, in order.
pub enum Slot<'a> {
    /// A Python expression (a `forward` argument).
    Value(String),
    /// A module tensor by its state_dict name.
    Module(&'a str, Held),
}

impl<'a> Slot<'a> {
    /// Graph input `v`: a module tensor by its name, else the expression `value()`.
    pub fn of(g: &'a Graph, v: ValueId, value: impl FnOnce() -> String) -> Self {
        let name = || g.value(v).name.as_deref().unwrap_or("");
        match g.value(v).def {
            ValueDef::Input {
                kind: InputKind::Param,
                ..
            } => Slot::Module(name(), Held::Parameter),
            ValueDef::Input {
                kind: InputKind::Buffer,
                ..
            } => Slot::Module(name(), Held::Buffer),
            _ => Slot::Value(value()),
        }
    }
}

/// Which dictionary of its owner a module tensor is a key of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Held {
    Parameter,
    Buffer,
}

/// Python lines (at `indent`) that bind `var` to the list of `slots`.
pub fn bind(var: &str, slots: &[Slot], indent: &str) -> String {
    let tensors: Vec<(&str, Held)> = slots
        .iter()
        .filter_map(|s| match s {
            Slot::Module(name, held) => Some((*name, *held)),
            Slot::Value(_) => None,
        })
        .collect();
    let names: Vec<&str> = tensors.iter().map(|(n, _)| *n).collect();
    let list = |exprs: Vec<String>| -> String {
        let mut exprs = exprs.into_iter();
        let items: Vec<String> = slots
            .iter()
            .map(|s| match s {
                Slot::Value(v) => v.clone(),
                Slot::Module(..) => exprs.next().expect("an expression per module tensor"),
            })
            .collect();
        format!("[{}]", items.join(", "))
    };
    if tensors.is_empty() {
        return format!("{indent}{var} = {}\n", list(vec![]));
    }
    let inner = format!("{indent}    ");
    let (fast_lines, fast) = resolve(&names, &inner, |part, leaf| {
        let dict = match leaf.map(|i| tensors[i].1) {
            None => "_modules",
            Some(Held::Parameter) => "_parameters",
            Some(Held::Buffer) => "_buffers",
        };
        format!(".{dict}[{part:?}]")
    });
    let (slow_lines, slow) = resolve(&names, &inner, |part, _| attr_step(part));
    format!(
        "{indent}try:\n{fast_lines}{inner}{var} = {}\n\
         {indent}except (KeyError, AttributeError):  # not a key there: attribute lookups\n\
         {slow_lines}{inner}{var} = {}\n",
        list(fast),
        list(slow)
    )
}

/// The lines that bind the shared owners (at `indent`) and each name's expression, in the
/// order of `names`. `step(part, leaf)` writes one step of a path: `leaf` is the index of
/// the name whose last part `part` is, None for a submodule.
pub fn resolve(
    names: &[&str],
    indent: &str,
    step: impl Fn(&str, Option<usize>) -> String,
) -> (String, Vec<String>) {
    let parts: Vec<Vec<&str>> = names.iter().map(|n| n.split('.').collect()).collect();
    // how many tensors each proper prefix (an owner path) leads to
    let mut uses: Vec<(Vec<&str>, usize)> = vec![];
    for p in &parts {
        for len in 1..p.len() {
            let prefix = &p[..len];
            match uses.iter_mut().find(|(q, _)| q.as_slice() == prefix) {
                Some((_, n)) => *n += 1,
                None => uses.push((prefix.to_vec(), 1)),
            }
        }
    }
    // shared owners, parents before children (a parent is reached first)
    let shared: Vec<Vec<&str>> = uses
        .into_iter()
        .filter(|(_, n)| *n >= 2)
        .map(|(q, _)| q)
        .collect();
    let local = |i: usize| format!("_drtc_m{i}");
    // the expression of `path` from the nearest shared proper prefix (or `self`)
    let expr = |path: &[&str], upto: usize, leaf: Option<usize>| -> String {
        let from = (0..upto)
            .filter(|&i| shared[i].len() < path.len() && path.starts_with(&shared[i]))
            .max_by_key(|&i| shared[i].len());
        let (mut s, skip) = match from {
            Some(i) => (local(i), shared[i].len()),
            None => ("self".to_string(), 0),
        };
        for (k, part) in path.iter().enumerate().skip(skip) {
            s.push_str(&step(part, leaf.filter(|_| k + 1 == path.len())));
        }
        s
    };
    let mut lines = String::new();
    for (i, q) in shared.iter().enumerate() {
        lines.push_str(&format!("{indent}{} = {}\n", local(i), expr(q, i, None)));
    }
    let exprs = parts
        .iter()
        .enumerate()
        .map(|(i, p)| expr(p, shared.len(), Some(i)))
        .collect();
    (lines, exprs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 8] = [
        "fc.weight",
        "fc.bias",
        "layer1.0.bn1.weight",
        "layer1.0.bn1.running_mean",
        "layer1.0.conv1.weight",
        "layer1.1.conv1.weight",
        "head.0.weight",
        "scale",
    ];

    #[test]
    fn shared_owners_are_looked_up_once() {
        let (lines, exprs) = resolve(&NAMES, "    ", |part, _| attr_step(part));
        assert_eq!(
            lines,
            "    _drtc_m0 = self.fc\n    _drtc_m1 = self.layer1\n    _drtc_m2 = _drtc_m1[0]\n    _drtc_m3 = _drtc_m2.bn1\n"
        );
        assert_eq!(
            exprs,
            [
                "_drtc_m0.weight",
                "_drtc_m0.bias",
                "_drtc_m3.weight",
                "_drtc_m3.running_mean",
                "_drtc_m2.conv1.weight",
                "_drtc_m1[1].conv1.weight",
                "self.head[0].weight",
                "self.scale",
            ]
        );
    }

    #[test]
    fn the_fast_list_reads_the_dictionaries_and_falls_back_to_attributes() {
        let slots = [
            Slot::Value("x".into()),
            Slot::Module("layer1.0.bn1.weight", Held::Parameter),
            Slot::Module("layer1.0.bn1.running_mean", Held::Buffer),
            Slot::Value("y".into()),
            Slot::Module("scale", Held::Parameter),
        ];
        let text = bind("args", &slots, "  ");
        assert_eq!(
            text,
            "  try:\n\
             \x20     _drtc_m0 = self._modules[\"layer1\"]\n\
             \x20     _drtc_m1 = _drtc_m0._modules[\"0\"]\n\
             \x20     _drtc_m2 = _drtc_m1._modules[\"bn1\"]\n\
             \x20     args = [x, _drtc_m2._parameters[\"weight\"], _drtc_m2._buffers[\"running_mean\"], y, self._parameters[\"scale\"]]\n\
             \x20 except (KeyError, AttributeError):  # not a key there: attribute lookups\n\
             \x20     _drtc_m0 = self.layer1\n\
             \x20     _drtc_m1 = _drtc_m0[0]\n\
             \x20     _drtc_m2 = _drtc_m1.bn1\n\
             \x20     args = [x, _drtc_m2.weight, _drtc_m2.running_mean, y, self.scale]\n"
        );
        assert_eq!(bind("args", &[Slot::Value("x".into())], ""), "args = [x]\n");
    }
}
