//! One built entry of a pipeline: a rewrite ([`Pass`]) or an analysis ([`Analysis`]).
//! The registry builds steps from pipeline strings; the pass manager runs them, verifying
//! after rewrites only (an analysis cannot change the graph).

use crate::{Analysis, Pass};

/// A pipeline entry, built.
pub enum Step {
    /// Rewrites the graph; the manager verifies after it.
    Rewrite(Box<dyn Pass>),
    /// Reads the graph and reports; the graph is unchanged.
    Analysis(Box<dyn Analysis>),
}

impl Step {
    /// The name used in pipeline strings.
    pub fn name(&self) -> &'static str {
        match self {
            Step::Rewrite(p) => p.name(),
            Step::Analysis(a) => a.name(),
        }
    }
}

impl From<Box<dyn Pass>> for Step {
    fn from(pass: Box<dyn Pass>) -> Step {
        Step::Rewrite(pass)
    }
}

impl From<Box<dyn Analysis>> for Step {
    fn from(analysis: Box<dyn Analysis>) -> Step {
        Step::Analysis(analysis)
    }
}
