//! Choosing the op sequence of each program: uniform draws, or coverage modes that
//! guarantee every op (1 op), every ordered pair (2 ops) or balanced op frequencies
//! (longer programs).
//!
//! With a FLOP floor, a program needs at least one op that has FLOPs (`carriers`): draws
//! are restricted to sequences holding one (uniform over those sequences), so a set of
//! layout ops alone is never drawn. One-op coverage cycles through the carriers only.

use super::options::Selection;
use drtc_ir::Op;
use rand::seq::{IndexedRandom, SliceRandom};
use rand::Rng;

/// The op sequences of programs `0..count`, drawn with `rng` (sequential, so a seed fixes
/// them all; solving then runs in parallel). `carriers`, when given, are the ops of the set
/// that have FLOPs: every sequence then holds at least one of them. It must hold at least
/// one op of `op_set` (the caller says why a run cannot start otherwise).
pub fn op_sequences(
    op_set: &[Op],
    ops: usize,
    count: usize,
    selection: Selection,
    carriers: Option<&[Op]>,
    rng: &mut impl Rng,
) -> Vec<Vec<Op>> {
    let carries = |op: &Op| carriers.is_none_or(|c| c.contains(op));
    let usable: Vec<Op> = op_set.iter().copied().filter(carries).collect();
    if op_set.is_empty() || usable.is_empty() || ops == 0 {
        return vec![vec![]; count];
    }
    let ok = |seq: &[Op]| seq.iter().any(carries);
    let n = op_set.len();
    match selection {
        Selection::Uniform => (0..count)
            .map(|_| loop {
                // rejection: uniform over the sequences holding a carrier
                let seq: Vec<Op> = (0..ops)
                    .map(|_| *op_set.choose(rng).expect("non-empty"))
                    .collect();
                if ok(&seq) {
                    break seq;
                }
            })
            .collect(),
        Selection::Coverage if ops == 1 => {
            (0..count).map(|i| vec![usable[i % usable.len()]]).collect()
        }
        Selection::Coverage if ops == 2 => {
            let pairs: Vec<[Op; 2]> = (0..n * n)
                .map(|k| [op_set[k / n], op_set[k % n]])
                .filter(|p| ok(p))
                .collect();
            (0..count)
                .map(|i| pairs[i % pairs.len()].to_vec())
                .collect()
        }
        Selection::Coverage => {
            let mut deck: Vec<Op> = vec![];
            (0..count)
                .map(|_| {
                    let mut seq: Vec<Op> = (0..ops)
                        .map(|_| {
                            if deck.is_empty() {
                                deck = op_set.to_vec();
                                deck.shuffle(rng);
                            }
                            deck.pop().expect("refilled")
                        })
                        .collect();
                    if !ok(&seq) {
                        let at = rng.random_range(0..ops);
                        seq[at] = *usable.choose(rng).expect("non-empty");
                    }
                    seq
                })
                .collect()
        }
    }
}
