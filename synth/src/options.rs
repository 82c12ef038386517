//! Options of the synthesizer, passed in a struct (no global state).

use drtc_ir::Op;

/// How ops are chosen for each program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Selection {
    /// Each op drawn uniformly and independently from the op set.
    Uniform,
    /// Guaranteed coverage: 1 op cycles through every op, 2 ops enumerate every ordered
    /// pair, longer programs draw from shuffled decks so op frequencies stay balanced.
    Coverage,
}

/// How the solver is pushed towards varied solutions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Diversity {
    /// Random solution hints (log-uniform sizes) under CP-SAT's default search.
    Hints,
    /// Fixed search over shuffled variables with random-half value selection.
    RandomHalf,
    /// Both: random hints, then random-half search.
    Both,
    /// Only the solver's random seed changes (a baseline: synth.md saw little variety).
    SeedOnly,
}

/// Everything that shapes a synthesized program.
#[derive(Clone, Debug)]
pub struct SynthOptions {
    /// Number of ops per program.
    pub ops: usize,
    /// The ops to draw from.
    pub op_set: Vec<Op>,
    pub selection: Selection,
    /// Total FLOPs range, inclusive (the seed's default is 2^34 ..= 2^35).
    pub flops: (u64, u64),
    /// Largest rank of any tensor.
    pub max_rank: usize,
    /// Largest size of any dim.
    pub max_dim: i64,
    /// Element count of every program input: at least `.0` (2^5), of every tensor at most `.1` (2^30).
    pub numel: (u64, u64),
    /// Bound on the elements of all tensors together.
    pub max_total_elements: u64,
    /// Bound on intermediate products (FLOP terms).
    pub max_product: i64,
    /// Kernel size range of convolutions and pooling windows.
    pub kernel: (i64, i64),
    /// Structural resamples (new wiring, ranks and dims) before a program is given up.
    pub attempts: usize,
    /// How often the FLOP minimum is halved when a structure is infeasible.
    pub flop_halvings: usize,
    /// Per-solve wall-clock limit in seconds.
    pub time_limit_s: f64,
    pub diversity: Diversity,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            ops: 3,
            op_set: super::catalog::LIST_A.to_vec(),
            selection: Selection::Uniform,
            flops: (1 << 34, 1 << 35),
            max_rank: 5,
            max_dim: 8192,
            numel: (1 << 5, 1 << 30),
            max_total_elements: 4 << 30,
            max_product: 1 << 48,
            kernel: (3, 15),
            attempts: 8,
            flop_halvings: 6,
            time_limit_s: 1.0,
            diversity: Diversity::Both,
        }
    }
}

impl SynthOptions {
    /// The seed's difficulty levels 0..4 and their op counts.
    pub const LEVELS: [usize; 5] = [1, 2, 3, 5, 10];

    /// Sets the FLOP range, and scales the memory bound down with it for small programs
    /// (at most 4 elements per FLOP of the maximum, never more than the default 4 x 2^30).
    pub fn with_flops(mut self, min: u64, max: u64) -> Self {
        self.flops = (min, max);
        self.max_total_elements = (4u64 << 30).min(max.saturating_mul(4)).max(1 << 12);
        self
    }
}
