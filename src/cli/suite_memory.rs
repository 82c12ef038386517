//! GPU memory admission for `drtc suite --jobs N` on a GPU. A task's verification holds
//! about three times its reference's peak (inputs, outputs, intermediates; 3.01x the
//! median of level 1 in `bench/results/level1_h200_2030ff2_default_vs_compile.md`), so N
//! tasks of several GiB at once run out of memory and are retried alone: with every
//! torch.compile mode on an 80 GB H100, most of level-1 19-40 did, and 38 and 39 spent
//! their whole limit waiting (`bench/results/level1_modes_h100_5761f1d_default_vs_modes.md`,
//! in git history).
//! A task reserves its estimate before its search and checks and gives it back when they
//! end (a search racing several candidates at once may hold more); it
//! waits while the reservations in flight and its own would pass the budget, unless
//! nothing is reserved (a task larger than the budget runs with the device to itself).
//! A task estimated at more than half the budget takes all of it: the estimate leaves out
//! the processes' CUDA contexts and caches, and a 17 GB-moving task (level-1 38, 39:
//! 51.5 GB estimated) beside four small ones ran out of memory, retried alone and spent
//! its limit; with this rule both verify (`bench/results/level1_modes_h100_default_vs_modes.md`).
//! Reservations are granted in the order they were asked for, so a large task is not
//! passed by a stream of small ones.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// A task's checks hold about this many times the bytes its IR moves (inputs, parameters
/// and outputs, once each): the reference's peak is at least those, verification about
/// three times the reference's (level-1 19: 12.9 GB moved, 39.8 GB verifying,
/// `bench/results/verify_memory_19_ReLU_h200.log`).
const PEAK_PER_BYTE_MOVED: u64 = 3;

/// The share of the device's memory the reservations may take (the rest: the workers' CUDA
/// contexts and allocator caches, the timing sessions' flush buffers).
const BUDGET_SHARE: f64 = 0.8;

/// The bytes reserved by tasks in flight, against a budget.
#[derive(Debug)]
pub struct MemoryBudget {
    budget: u64,
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    used: u64,
    /// Tickets handed out, and the one whose turn it is (first come, first served).
    next: u64,
    turn: u64,
}

/// Held while a task's checks run; gives its bytes back when dropped.
pub struct Reservation<'a> {
    budget: &'a MemoryBudget,
    bytes: u64,
    /// How long the task waited for it (not counted against the task's limit).
    pub waited: Duration,
}

impl MemoryBudget {
    /// A budget of `BUDGET_SHARE` of `device_bytes` (the smallest GPU's memory).
    pub fn for_device(device_bytes: u64) -> Self {
        Self::new((device_bytes as f64 * BUDGET_SHARE) as u64)
    }

    pub fn new(budget: u64) -> Self {
        MemoryBudget {
            budget,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        }
    }

    /// The estimate of a task's checks that move `bytes_moved` bytes.
    pub fn estimate(bytes_moved: u64) -> u64 {
        bytes_moved.saturating_mul(PEAK_PER_BYTE_MOVED)
    }

    /// Waits for its turn and until `bytes` fit beside the reservations in flight (or
    /// none is left), then reserves them; more than half the budget reserves all of it.
    pub fn reserve(&self, bytes: u64) -> Reservation<'_> {
        let bytes = if bytes > self.budget / 2 {
            bytes.max(self.budget)
        } else {
            bytes
        };
        let t0 = Instant::now();
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let ticket = st.next;
        st.next += 1;
        while st.turn != ticket || (st.used > 0 && st.used.saturating_add(bytes) > self.budget) {
            st = self.changed.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        st.turn += 1;
        st.used += bytes;
        self.changed.notify_all();
        Reservation {
            budget: self,
            bytes,
            waited: t0.elapsed(),
        }
    }

    /// The bytes reserved now.
    #[cfg(test)]
    fn used(&self) -> u64 {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).used
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        let mut st = self.budget.state.lock().unwrap_or_else(|p| p.into_inner());
        st.used -= self.bytes;
        self.budget.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::MemoryBudget;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    #[test]
    fn tasks_wait_while_the_budget_is_full_and_a_large_one_runs_alone() {
        let b = MemoryBudget::new(100);
        let most = AtomicU64::new(0);
        std::thread::scope(|s| {
            for bytes in [60, 50, 30, 150, 10] {
                let (b, most) = (&b, &most);
                s.spawn(move || {
                    let r = b.reserve(bytes);
                    let now = b.used();
                    // within the budget, or alone
                    assert!(now <= 100 || now == bytes, "{now} reserved with {bytes}");
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                    drop(r);
                });
            }
        });
        assert_eq!(b.used(), 0);
        assert!(most.load(Ordering::SeqCst) >= 150, "the large task ran");
    }

    #[test]
    fn a_large_task_is_not_passed_by_later_small_ones() {
        let b = MemoryBudget::new(100);
        let order = std::sync::Mutex::new(vec![]);
        let first = b.reserve(60);
        std::thread::scope(|s| {
            let (b, order) = (&b, &order);
            s.spawn(move || {
                let _r = b.reserve(90);
                order.lock().unwrap().push(90);
            });
            std::thread::sleep(Duration::from_millis(30));
            // asks after the large one; it would fit beside the first reservation now
            s.spawn(move || {
                let _r = b.reserve(20);
                order.lock().unwrap().push(20);
            });
            std::thread::sleep(Duration::from_millis(30));
            drop(first);
        });
        assert_eq!(*order.lock().unwrap(), vec![90, 20]);
    }

    #[test]
    fn a_task_over_half_the_budget_runs_with_nothing_beside_it() {
        let b = MemoryBudget::new(100);
        let large = b.reserve(60);
        assert_eq!(b.used(), 100, "more than half takes the whole budget");
        std::thread::scope(|s| {
            let small = s.spawn(|| {
                let r = b.reserve(10);
                r.waited
            });
            std::thread::sleep(Duration::from_millis(40));
            drop(large);
            assert!(small.join().unwrap() >= Duration::from_millis(30));
        });
        let half = b.reserve(50);
        assert_eq!(b.used(), 50, "half is not more than half");
        drop(half);
    }

    #[test]
    fn a_reservation_says_how_long_it_waited() {
        let b = MemoryBudget::new(100);
        let first = b.reserve(80);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| b.reserve(40).waited);
            std::thread::sleep(Duration::from_millis(50));
            drop(first);
            assert!(waiter.join().unwrap() >= Duration::from_millis(40));
        });
        assert!(b.reserve(100).waited < Duration::from_millis(40));
    }
}
