//! `--search`: how much test-time search a GPU compilation does (compile and suite).

use clap::ValueEnum;
use drtc::driver::search::SearchScope;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SearchArg {
    /// No search: the heuristic choices, verified once.
    Off,
    /// On a GPU, each GEMM region of at least 1 GFLOP races the library call against
    /// the Triton template, each reduction region of rows longer than one tile (2^24
    /// elements and more) its looped passes against cooperative rows, and a module whose
    /// cost rule turns CUDA graphs on races its replay against the eager forward; the
    /// faster verified one is kept and cached. A region's candidates are verified side by
    /// side (three workers per GPU) and timed one at a time.
    Quick,
    /// Quick, plus every kernel's reasonable launch configurations (minutes per program).
    Full,
}

impl SearchArg {
    /// The scope it names on a GPU (`None`: no search).
    pub fn scope(self) -> Option<SearchScope> {
        match self {
            SearchArg::Off => None,
            SearchArg::Quick => Some(SearchScope::Quick),
            SearchArg::Full => Some(SearchScope::Full),
        }
    }
}
