//! The timing gate of one GPU: workers sharing a GPU verify and compile side by side
//! (shared passes), but a timing phase runs alone (an exclusive pass) so that no other
//! worker's kernels run on the GPU while it is measured. A waiting timer stops new shared
//! passes from starting, so timing is never starved by a stream of verifications, and a
//! shared pass gives way between its steps (`SharedPass::give_way`: a worker between trials), so a
//! timer waits for the trials in flight, not for whole verifications. A request run alone
//! (a retry after running out of memory beside other workers) waits until the
//! verifications in flight have ended, not paused (a paused one keeps its inputs, models
//! and cached blocks: level-2 65's answers, 11-30 GB a process, left a retry alone 9 MiB on
//! an H100 in `bench/results/reward_ab_h100_0a577e2.md`), and until no prepared timing
//! session holds the GPU's memory (`DeviceGate::alone`): those still time and report
//! meanwhile, while new work waits.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
struct State {
    shared: usize,
    exclusive: bool,
    waiting_exclusive: usize,
    /// Timing sessions prepared and not yet reported (their inputs and outputs in memory).
    prepared: usize,
    /// Shared passes given way to a timing (`SharedPass::give_way`), their memory held.
    paused: usize,
    waiting_alone: usize,
}

/// Shared/exclusive access to one device, preferring exclusive waiters.
#[derive(Debug, Default)]
pub struct DeviceGate {
    state: Mutex<State>,
    changed: Condvar,
}

/// Held while a worker verifies or prepares on the device.
pub struct SharedPass<'a> {
    gate: &'a DeviceGate,
}

/// Held while a worker times on the device: nothing else runs there.
pub struct ExclusivePass<'a> {
    gate: &'a DeviceGate,
}

/// Held from a timing session's preparation to its report: the session's memory.
pub struct PreparedSession<'a> {
    gate: &'a DeviceGate,
}

/// Either pass.
pub enum Pass<'a> {
    Shared(SharedPass<'a>),
    Exclusive(ExclusivePass<'a>),
}

impl DeviceGate {
    /// A pass of its own ([`DeviceGate::alone`]) when `alone`, else a shared one.
    pub fn enter(&self, alone: bool) -> Pass<'_> {
        if alone {
            Pass::Exclusive(self.alone())
        } else {
            Pass::Shared(self.shared())
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wait<'a>(&self, g: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.changed.wait(g).unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until no timing runs or waits and no request waits to run alone, then enters
    /// a shared pass (new work: a verification, a preparation).
    pub fn shared(&self) -> SharedPass<'_> {
        self.enter_shared(true)
    }

    /// A shared pass for a prepared session's report: waits for timings only (a request
    /// waiting to run alone waits for this report).
    pub fn report(&self) -> SharedPass<'_> {
        self.enter_shared(false)
    }

    /// A shared pass once no timing runs or waits (nor, with `behind_alone`, a request
    /// waiting to run alone).
    fn enter_shared(&self, behind_alone: bool) -> SharedPass<'_> {
        let mut g = self.lock();
        while g.exclusive || g.waiting_exclusive > 0 || (behind_alone && g.waiting_alone > 0) {
            g = self.wait(g);
        }
        g.shared += 1;
        SharedPass { gate: self }
    }

    /// Counts a prepared timing session until the guard drops (after its report).
    pub fn prepared(&self) -> PreparedSession<'_> {
        self.lock().prepared += 1;
        PreparedSession { gate: self }
    }

    /// The exclusive pass once every shared pass (paused ones included) and timing has
    /// ended and every prepared session too (timed and reported): the GPU's memory as free
    /// as the other workers leave it. New shared passes wait meanwhile; timings and reports
    /// do not.
    pub fn alone(&self) -> ExclusivePass<'_> {
        let mut g = self.lock();
        g.waiting_alone += 1;
        while g.exclusive || g.shared > 0 || g.paused > 0 || g.prepared > 0 {
            g = self.wait(g);
        }
        g.waiting_alone -= 1;
        g.exclusive = true;
        ExclusivePass { gate: self }
    }

    /// Waits until every shared pass and any other timing have ended, then enters the
    /// exclusive pass.
    pub fn exclusive(&self) -> ExclusivePass<'_> {
        let mut g = self.lock();
        g.waiting_exclusive += 1;
        while g.exclusive || g.shared > 0 {
            g = self.wait(g);
        }
        g.waiting_exclusive -= 1;
        g.exclusive = true;
        ExclusivePass { gate: self }
    }

    /// (shared passes, whether a timing runs): for tests and progress.
    pub fn occupancy(&self) -> (usize, bool) {
        let g = self.lock();
        (g.shared, g.exclusive)
    }
}

impl SharedPass<'_> {
    /// Between two steps of this pass (a worker's trials): when a timing waits, the pass
    /// is given up until every waiting timing has run, then held again; returns how long
    /// that took (zero when nothing waited). Paused, it still counts as memory in use: a
    /// request alone waits for it to end. The worker has finished its GPU work before it
    /// asks.
    pub fn give_way(&mut self) -> Duration {
        let gate = self.gate;
        let mut g = gate.lock();
        if g.waiting_exclusive == 0 && !g.exclusive {
            return Duration::ZERO;
        }
        let started = Instant::now();
        g.shared -= 1;
        g.paused += 1;
        gate.changed.notify_all();
        while g.exclusive || g.waiting_exclusive > 0 {
            g = gate.wait(g);
        }
        g.paused -= 1;
        g.shared += 1;
        started.elapsed()
    }
}

impl Drop for SharedPass<'_> {
    fn drop(&mut self) {
        let mut g = self.gate.lock();
        g.shared -= 1;
        drop(g);
        self.gate.changed.notify_all();
    }
}

impl Drop for PreparedSession<'_> {
    fn drop(&mut self) {
        let mut g = self.gate.lock();
        g.prepared -= 1;
        drop(g);
        self.gate.changed.notify_all();
    }
}

impl Drop for ExclusivePass<'_> {
    fn drop(&mut self) {
        let mut g = self.gate.lock();
        g.exclusive = false;
        drop(g);
        self.gate.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    #[test]
    fn exclusive_passes_run_alone_and_shared_ones_together() {
        let gate = DeviceGate::default();
        let inside = AtomicUsize::new(0);
        let max_shared = AtomicUsize::new(0);
        let timing = AtomicBool::new(false);
        let overlap = AtomicBool::new(false);
        std::thread::scope(|s| {
            for i in 0..6 {
                let (gate, inside, max_shared, timing, overlap) =
                    (&gate, &inside, &max_shared, &timing, &overlap);
                s.spawn(move || {
                    for round in 0..5 {
                        if (i + round) % 3 == 0 {
                            let _t = gate.exclusive();
                            timing.store(true, Ordering::SeqCst);
                            if inside.load(Ordering::SeqCst) > 0 {
                                overlap.store(true, Ordering::SeqCst);
                            }
                            std::thread::sleep(Duration::from_millis(3));
                            timing.store(false, Ordering::SeqCst);
                        } else {
                            let _p = gate.shared();
                            if timing.load(Ordering::SeqCst) {
                                overlap.store(true, Ordering::SeqCst);
                            }
                            let n = inside.fetch_add(1, Ordering::SeqCst) + 1;
                            max_shared.fetch_max(n, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(5));
                            inside.fetch_sub(1, Ordering::SeqCst);
                        }
                    }
                });
            }
        });
        assert!(
            !overlap.load(Ordering::SeqCst),
            "a timing overlapped other work"
        );
        assert!(
            max_shared.load(Ordering::SeqCst) > 1,
            "shared passes never ran side by side"
        );
        assert_eq!(gate.occupancy(), (0, false));
    }

    #[test]
    fn a_shared_pass_gives_way_to_a_waiting_timer_between_its_steps() {
        let gate = DeviceGate::default();
        let mut long = gate.shared();
        assert_eq!(long.give_way(), Duration::ZERO);
        let timing = AtomicBool::new(false);
        let overlap = AtomicBool::new(false);
        std::thread::scope(|s| {
            let timer = s.spawn(|| {
                let _t = gate.exclusive();
                timing.store(true, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(20));
                timing.store(false, Ordering::SeqCst);
            });
            while gate.lock().waiting_exclusive == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
            // the long pass's next step: the timer runs first, and the pass is held again
            let waited = long.give_way();
            if timing.load(Ordering::SeqCst) {
                overlap.store(true, Ordering::SeqCst);
            }
            assert!(
                waited >= Duration::from_millis(15),
                "did not wait: {waited:?}"
            );
            assert_eq!(gate.occupancy(), (1, false));
            timer.join().unwrap();
        });
        assert!(!overlap.load(Ordering::SeqCst));
        drop(long);
        assert_eq!(gate.occupancy(), (0, false));
    }

    /// A request alone on its own thread, once it waits: the instant it got its pass.
    fn spawn_alone<'s>(
        s: &'s std::thread::Scope<'s, '_>,
        gate: &'s DeviceGate,
    ) -> std::thread::ScopedJoinHandle<'s, Instant> {
        let alone = s.spawn(|| {
            let _a = gate.alone();
            Instant::now()
        });
        while gate.lock().waiting_alone == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        alone
    }

    #[test]
    fn a_request_alone_waits_for_verifications_in_flight_to_end_paused_or_not() {
        let gate = DeviceGate::default();
        let mut long = gate.shared();
        std::thread::scope(|s| {
            let alone = spawn_alone(s, &gate);
            // no timing waits: the verification goes on, holding its memory
            assert_eq!(long.give_way(), Duration::ZERO);
            // a timing waits: the verification pauses for it, and the request alone still
            // waits (the paused verification's memory is in use)
            let timer = s.spawn(|| drop(gate.exclusive()));
            while gate.lock().waiting_exclusive == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
            long.give_way();
            timer.join().unwrap();
            std::thread::sleep(Duration::from_millis(10));
            assert!(
                !alone.is_finished(),
                "ran alone beside a paused verification"
            );
            let ended = Instant::now();
            drop(long);
            assert!(
                alone.join().unwrap() >= ended,
                "ran alone before the verification ended"
            );
        });
        assert_eq!(gate.occupancy(), (0, false));
    }

    #[test]
    fn a_request_alone_waits_for_prepared_sessions_which_still_time_and_report() {
        let gate = DeviceGate::default();
        let session = gate.prepared();
        std::thread::scope(|s| {
            let alone = spawn_alone(s, &gate);
            // new work waits behind the request alone
            let late = s.spawn(|| {
                let _p = gate.shared();
                Instant::now()
            });
            std::thread::sleep(Duration::from_millis(10));
            // the prepared session times and reports meanwhile
            drop(gate.exclusive());
            drop(gate.report());
            assert!(!alone.is_finished(), "ran alone beside a prepared session");
            let ended = Instant::now();
            drop(session);
            let alone_at = alone.join().unwrap();
            let late_at = late.join().unwrap();
            assert!(alone_at >= ended, "ran alone before the session ended");
            assert!(alone_at <= late_at, "new work overtook the request alone");
        });
        assert_eq!(gate.occupancy(), (0, false));
    }

    #[test]
    fn a_waiting_timer_holds_back_new_shared_passes() {
        let gate = DeviceGate::default();
        let first = gate.shared();
        std::thread::scope(|s| {
            let timer = s.spawn(|| {
                let _t = gate.exclusive();
                std::time::Instant::now()
            });
            while gate.lock().waiting_exclusive == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
            let late = s.spawn(|| {
                let _p = gate.shared();
                std::time::Instant::now()
            });
            std::thread::sleep(Duration::from_millis(20));
            drop(first);
            let timed_at = timer.join().unwrap();
            let shared_at = late.join().unwrap();
            assert!(
                timed_at <= shared_at,
                "the late shared pass overtook the timer"
            );
        });
    }
}
