//! A Ray job's figures, as the bridge counts them: requests and busy time per actor, the
//! actors replaced, the requests retried and the failures by reason; rendered for the end
//! of `eval` and `suite`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// One actor's figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ActorFigures {
    pub actor: usize,
    /// Requests it answered (the replacements of this index included).
    pub requests: u64,
    /// Seconds it spent on them.
    pub busy_s: f64,
    /// Times the actor at this index was replaced.
    pub replaced: u64,
}

/// The whole job's figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RaySummary {
    /// `local cluster`, `cluster at ADDRESS`, ...
    pub cluster: String,
    pub device: String,
    /// Seconds since the actors were placed.
    pub wall_s: f64,
    /// Seconds it took to reach (or start) the cluster and place the actors.
    pub startup_s: f64,
    /// Requests retried on a replacement actor.
    pub retried: u64,
    /// Actor failures by reason (`actor died`, `actor hung`).
    pub failures: BTreeMap<String, u64>,
    pub actors: Vec<ActorFigures>,
}

impl RaySummary {
    /// Actors replaced over the job.
    pub fn replaced(&self) -> u64 {
        self.actors.iter().map(|a| a.replaced).sum()
    }

    /// Requests answered over the job.
    pub fn requests(&self) -> u64 {
        self.actors.iter().map(|a| a.requests).sum()
    }

    /// A few lines: the cluster, per-actor throughput, replacements and failures.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "ray: {} {} actor{} on a {} (ready in {:.1} s); {} request{} in {:.1} s ({:.2}/s)",
            self.actors.len(),
            self.device,
            if self.actors.len() == 1 { "" } else { "s" },
            self.cluster,
            self.startup_s,
            self.requests(),
            if self.requests() == 1 { "" } else { "s" },
            self.wall_s,
            self.requests() as f64 / self.wall_s.max(1e-9),
        );
        for a in &self.actors {
            let _ = write!(
                s,
                "  actor {}: {} request{}, {:.2}/s, busy {:.0}%",
                a.actor,
                a.requests,
                if a.requests == 1 { "" } else { "s" },
                a.requests as f64 / self.wall_s.max(1e-9),
                100.0 * a.busy_s / self.wall_s.max(1e-9),
            );
            if a.replaced > 0 {
                let _ = write!(
                    s,
                    ", replaced {} time{}",
                    a.replaced,
                    if a.replaced == 1 { "" } else { "s" }
                );
            }
            s.push('\n');
        }
        if self.failures.is_empty() {
            s.push_str("  actor failures: none\n");
        } else {
            let by: Vec<String> = self
                .failures
                .iter()
                .map(|(reason, n)| format!("{reason}: {n}"))
                .collect();
            let _ = writeln!(
                s,
                "  actor failures: {} ({} request{} retried on a replacement)",
                by.join(", "),
                self.retried,
                if self.retried == 1 { "" } else { "s" }
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_throughput_and_failures() {
        let s: RaySummary = serde_json::from_value(serde_json::json!({
            "cluster": "local cluster", "device": "cpu", "wall_s": 10.0, "startup_s": 4.0,
            "retried": 1,
            "failures": {"actor died": 1},
            "actors": [
                {"actor": 0, "requests": 4, "busy_s": 5.0, "replaced": 1},
                {"actor": 1, "requests": 6, "busy_s": 8.0, "replaced": 0}
            ]
        }))
        .unwrap();
        let text = s.render();
        assert!(
            text.starts_with(
                "ray: 2 cpu actors on a local cluster (ready in 4.0 s); 10 requests in 10.0 s \
                 (1.00/s)"
            ),
            "{text}"
        );
        assert!(
            text.contains("actor 0: 4 requests, 0.40/s, busy 50%, replaced 1 time"),
            "{text}"
        );
        assert!(
            text.contains("actor failures: actor died: 1 (1 request retried"),
            "{text}"
        );
    }
}
