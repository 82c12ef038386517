//! The packages drtc's environment pins: one embedded file,
//! `data/runtime/requirements.txt`, which `drtc setup` installs exactly.

/// The pinned requirements (`drtc setup` installs exactly these).
pub const REQUIREMENTS: &str = include_str!("../../data/runtime/requirements.txt");

/// Packages the worker imports; the others in [`REQUIREMENTS`] are for other parts of drtc.
pub const WORKER_PACKAGES: [&str; 3] = ["torch", "triton", "numpy"];

/// One `name==version` line of [`REQUIREMENTS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub name: String,
    pub version: String,
}

/// The pinned packages, in file order.
pub fn pins() -> Vec<Pin> {
    REQUIREMENTS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let (name, version) = l.split_once("==")?;
            Some(Pin {
                name: name.trim().to_string(),
                version: version.trim().to_string(),
            })
        })
        .collect()
}

/// The Python version the environment is built on (`# drtc-python: X.Y`).
pub fn pinned_python() -> &'static str {
    REQUIREMENTS
        .lines()
        .find_map(|l| l.strip_prefix("# drtc-python:"))
        .map(str::trim)
        .unwrap_or("3.11")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_cover_the_worker_packages() {
        let p = pins();
        for pkg in WORKER_PACKAGES {
            assert!(p.iter().any(|x| x.name == pkg), "{pkg} not pinned");
        }
        assert!(p.iter().all(|x| !x.version.is_empty()));
        assert_eq!(pinned_python(), "3.11");
    }
}
