//! Choosing the op sequence of each program: uniform draws, or coverage modes that
//! guarantee every op (1 op), every ordered pair (2 ops) or balanced op frequencies
//! (longer programs).

use super::options::Selection;
use drtc_ir::Op;
use rand::seq::{IndexedRandom, SliceRandom};
use rand::Rng;

/// The op sequences of programs `0..count`, drawn with `rng` (sequential, so a seed fixes
/// them all; solving then runs in parallel).
pub fn op_sequences(
    op_set: &[Op],
    ops: usize,
    count: usize,
    selection: Selection,
    rng: &mut impl Rng,
) -> Vec<Vec<Op>> {
    if op_set.is_empty() || ops == 0 {
        return vec![vec![]; count];
    }
    let n = op_set.len();
    match selection {
        Selection::Uniform => (0..count)
            .map(|_| {
                (0..ops)
                    .map(|_| *op_set.choose(rng).expect("non-empty"))
                    .collect()
            })
            .collect(),
        Selection::Coverage if ops == 1 => (0..count).map(|i| vec![op_set[i % n]]).collect(),
        Selection::Coverage if ops == 2 => (0..count)
            .map(|i| {
                let k = i % (n * n);
                vec![op_set[k / n], op_set[k % n]]
            })
            .collect(),
        Selection::Coverage => {
            let mut deck: Vec<Op> = vec![];
            (0..count)
                .map(|_| {
                    (0..ops)
                        .map(|_| {
                            if deck.is_empty() {
                                deck = op_set.to_vec();
                                deck.shuffle(rng);
                            }
                            deck.pop().expect("refilled")
                        })
                        .collect()
                })
                .collect()
        }
    }
}
