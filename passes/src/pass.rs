//! The `Pass` trait and what a pass sees besides the graph: whether it changed anything
//! ([`Changed`]) and a [`PassContext`] to report its decisions. Passes only rewrite;
//! verifying, printing and timing are the pass manager's job. [`PassInfo`] is what each
//! pass file declares about itself (name, options, constructor); the registry lists them,
//! so passes never import the registry.

use crate::options::{OptionDef, PassOptions};
use crate::PassError;
use drtc_ir::Graph;

/// Did a pass change the graph?
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Changed {
    No,
    Yes,
}

impl Changed {
    pub fn from_bool(changed: bool) -> Changed {
        if changed {
            Changed::Yes
        } else {
            Changed::No
        }
    }

    pub fn is_yes(self) -> bool {
        self == Changed::Yes
    }
}

impl From<bool> for Changed {
    fn from(changed: bool) -> Changed {
        Changed::from_bool(changed)
    }
}

impl std::ops::BitOr for Changed {
    type Output = Changed;
    fn bitor(self, rhs: Changed) -> Changed {
        Changed::from_bool(self.is_yes() || rhs.is_yes())
    }
}

/// What a running pass may use besides the graph: a log of the decisions it wants to
/// report (shown by `drtc opt --log-decisions`, kept in the pass report).
#[derive(Debug, Default)]
pub struct PassContext {
    decisions: Vec<String>,
}

impl PassContext {
    pub fn new() -> PassContext {
        PassContext::default()
    }

    /// Records one decision (`merged #4 relu into #2`), one line each.
    pub fn log(&mut self, decision: impl Into<String>) {
        self.decisions.push(decision.into());
    }

    /// The decisions recorded so far, in order.
    pub fn decisions(&self) -> &[String] {
        &self.decisions
    }

    /// Takes the decisions recorded so far, leaving the log empty.
    pub fn take_decisions(&mut self) -> Vec<String> {
        std::mem::take(&mut self.decisions)
    }
}

/// A rewrite of a graph, named as in pipeline strings.
pub trait Pass {
    /// The name used in pipeline strings (`dce`, `cse`).
    fn name(&self) -> &'static str;

    /// Rewrites `graph` in place; says whether it changed anything.
    fn run(&self, graph: &mut Graph, cx: &mut PassContext) -> Result<Changed, PassError>;
}

/// What a pass declares about itself: its name, options and constructor. Each pass file
/// has one as `INFO`; the registry lists them.
pub struct PassInfo {
    /// The name in pipeline strings.
    pub name: &'static str,
    /// One line: what the pass does.
    pub summary: &'static str,
    pub options: &'static [OptionDef],
    /// Builds the pass from checked options (all declared options present); `Err` explains
    /// a value that is well-typed but unacceptable.
    pub build: fn(&PassOptions) -> Result<Box<dyn Pass>, String>,
}
