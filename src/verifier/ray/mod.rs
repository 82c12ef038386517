//! The verifier's Ray transport: the worker pool's requests sent to verification actors on
//! a Ray cluster instead of to local worker processes. One embedded Python bridge
//! (`bridge.py`, [`bridge::Bridge`]) connects to the cluster and owns the actors
//! (`verifier_actor.py`: one per GPU, or CPU actors under Triton's interpreter), each of
//! which runs drtc's own worker program, so a verdict on the cluster is the verdict a local
//! worker gives. The pool keeps its deadlines, gates and reports; only the hop differs.

pub mod bridge;
pub mod summary;

use std::fmt;
use std::str::FromStr;

/// The embedded bridge and actor programs, as (file name, contents).
pub const RAY_FILES: &[(&str, &str)] = &[
    ("bridge.py", include_str!("bridge.py")),
    ("verifier_actor.py", include_str!("verifier_actor.py")),
];

/// Which Ray cluster to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RayTarget {
    /// The cluster `RAY_ADDRESS` names, else a running local head, else a local cluster.
    Auto,
    /// A cluster of drtc's own on this machine, started and stopped with the run.
    Local,
    /// The cluster at this address (`ray://host:10001`, `host:6379`).
    Address(String),
}

impl RayTarget {
    /// The bridge's spelling: `auto`, `local`, or the address.
    pub fn as_str(&self) -> &str {
        match self {
            RayTarget::Auto => "auto",
            RayTarget::Local => "local",
            RayTarget::Address(a) => a,
        }
    }
}

impl fmt::Display for RayTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RayTarget {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "" => Err("an empty Ray address (use auto, local or HOST:PORT)".into()),
            "auto" => Ok(RayTarget::Auto),
            "local" => Ok(RayTarget::Local),
            a => Ok(RayTarget::Address(a.to_string())),
        }
    }
}

/// How the pool reaches Ray.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RayConfig {
    pub target: RayTarget,
    /// Named, detached actors in `namespace`, found or started on first use and left
    /// running for the next client (the reward's actors, shared by every reward worker
    /// of an RL job); otherwise the actors belong to this run and end with it.
    pub shared: bool,
    /// The Ray namespace of shared actors.
    pub namespace: String,
}

impl RayConfig {
    /// Actors of this run only, on `target`.
    pub fn new(target: RayTarget) -> Self {
        RayConfig {
            target,
            shared: false,
            namespace: "drtc".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_and_print_back() {
        for s in ["auto", "local", "ray://10.0.0.1:10001", "10.0.0.1:6379"] {
            let t: RayTarget = s.parse().unwrap();
            assert_eq!(t.to_string(), s);
        }
        assert_eq!("auto".parse::<RayTarget>(), Ok(RayTarget::Auto));
        assert!("  ".parse::<RayTarget>().is_err());
    }
}
