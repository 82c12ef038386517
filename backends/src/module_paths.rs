//! How `ModelNew.forward` reaches the module's parameters and buffers on every call.
//!
//! Each tensor is a dotted state_dict name (`layer1.0.bn1.running_mean`), and Python
//! resolves every step of `self.layer1[0].bn1.running_mean` through `nn.Module.__getattr__`
//! or `nn.Sequential.__getitem__`: a ResNet18's 123 tensors took about 1 ms of host time per
//! call on a 2-core x86 CPU (0.35 ms resolved as below), while its 60 kernels take 0.42 ms
//! of GPU time on an H100 (`bench/results/level3_bn_host_h100_d5af970.md`). A submodule that owns several of the
//! tensors, or that leads to several such owners, is looked up once per call into a local
//! (`_drtc_m3 = self.layer1[0]`), and each tensor is read from the nearest local. Every
//! lookup still happens on every call, so a submodule or tensor the user replaced is seen.

use crate::state::attr_step;

/// The lines that bind the shared owners (at `indent`) and each name's expression, in the
/// order of `names`.
pub fn resolve(names: &[&str], indent: &str) -> (String, Vec<String>) {
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
    let expr = |path: &[&str], upto: usize| -> String {
        let from = (0..upto)
            .filter(|&i| shared[i].len() < path.len() && path.starts_with(&shared[i]))
            .max_by_key(|&i| shared[i].len());
        let (mut s, skip) = match from {
            Some(i) => (local(i), shared[i].len()),
            None => ("self".to_string(), 0),
        };
        for part in &path[skip..] {
            s.push_str(&attr_step(part));
        }
        s
    };
    let mut lines = String::new();
    for (i, q) in shared.iter().enumerate() {
        lines.push_str(&format!("{indent}{} = {}\n", local(i), expr(q, i)));
    }
    let exprs = parts.iter().map(|p| expr(p, shared.len())).collect();
    (lines, exprs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_owners_are_looked_up_once() {
        let names = [
            "fc.weight",
            "fc.bias",
            "layer1.0.bn1.weight",
            "layer1.0.bn1.running_mean",
            "layer1.0.conv1.weight",
            "layer1.1.conv1.weight",
            "head.0.weight",
            "scale",
        ];
        let (lines, exprs) = resolve(&names, "    ");
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
}
