//! `--set NAME=VALUE`: overriding module-level constants of a Python program (batch sizes,
//! dims) so that big tasks can be checked at small sizes. The rewrite is textual and
//! keeps every other line as it is: after each top-level statement that binds NAME, a line
//! `NAME = VALUE` is inserted, so constants computed later from NAME see the new value.

/// One override.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstantOverride {
    pub name: String,
    pub value: String,
}

impl std::str::FromStr for ConstantOverride {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (name, value) = s
            .split_once('=')
            .ok_or_else(|| format!("`{s}` is not NAME=VALUE"))?;
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("`{name}` is not a Python identifier"));
        }
        let value = value.trim();
        if value.is_empty() {
            return Err(format!("no value given for `{name}`"));
        }
        Ok(ConstantOverride {
            name: name.to_string(),
            value: value.to_string(),
        })
    }
}

/// The names a top-level assignment line binds (`a = b = 1`, `h, w = 2, 3`).
fn bound_names(line: &str) -> Vec<String> {
    if line.starts_with([' ', '\t', '#']) || line.trim().is_empty() {
        return vec![];
    }
    let parts: Vec<&str> = line.split('=').collect();
    if parts.len() < 2 {
        return vec![];
    }
    let mut names = vec![];
    for target in &parts[..parts.len() - 1] {
        if target.ends_with(['!', '<', '>']) || target.contains('(') || target.contains('[') {
            return vec![];
        }
        for n in target.split(',') {
            let n = n.trim();
            if !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                names.push(n.to_string());
            }
        }
    }
    names
}

/// `NAME=VALUE` per override, as reports list them.
pub fn described(overrides: &[ConstantOverride]) -> Vec<String> {
    overrides
        .iter()
        .map(|o| format!("{}={}", o.name, o.value))
        .collect()
}

/// Applies the overrides; returns the new source, or the names never bound at top level.
pub fn apply_overrides(
    source: &str,
    overrides: &[ConstantOverride],
) -> Result<String, Vec<String>> {
    let mut out = String::new();
    let mut seen = vec![false; overrides.len()];
    for line in source.lines() {
        out.push_str(line);
        out.push('\n');
        let bound = bound_names(line);
        for (i, o) in overrides.iter().enumerate() {
            if bound.contains(&o.name) {
                seen[i] = true;
                out.push_str(&format!("{} = {}  # drtc --set\n", o.name, o.value));
            }
        }
    }
    let missing: Vec<String> = overrides
        .iter()
        .zip(&seen)
        .filter(|(_, s)| !**s)
        .map(|(o, _)| o.name.clone())
        .collect();
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_follow_every_binding() {
        let src = "batch_size = 128\nheight = width = 2048\nD, H, W = 24, 32, 32\ndef f():\n    batch_size = 3\n";
        let o: Vec<ConstantOverride> = ["batch_size=2", "width=4", "H=5"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let out = apply_overrides(src, &o).unwrap();
        assert_eq!(
            out,
            "batch_size = 128\nbatch_size = 2  # drtc --set\nheight = width = 2048\nwidth = 4  # drtc --set\n\
             D, H, W = 24, 32, 32\nH = 5  # drtc --set\ndef f():\n    batch_size = 3\n"
        );
    }

    #[test]
    fn unknown_names_are_reported() {
        let o = vec!["nope=1".parse::<ConstantOverride>().unwrap()];
        assert_eq!(
            apply_overrides("x = 1\n", &o),
            Err(vec!["nope".to_string()])
        );
        assert!("x".parse::<ConstantOverride>().is_err());
        assert!("a b=1".parse::<ConstantOverride>().is_err());
    }
}
