"""A bound on the seconds a call may run, by the process's interval timer: when it rings,
`OutOfTime` is raised wherever the main thread is in Python code (a C call that has not
returned leaves it pending until it does: a bound on host code, not on a kernel). Used by
the dry run of an untrusted answer's host code (`precompile.py`) and by the first call of a
torch.compile baseline (`timing.py`, `compile_budget_s`)."""

import signal
import threading


class OutOfTime(BaseException):
    """The call ran past its seconds (raised by the timer). A BaseException, so that the
    bounded code's own `except Exception` does not swallow it."""


def within(seconds, fn):
    """`fn()`, interrupted by `OutOfTime` after `seconds`. Unbounded where `seconds` is
    None or 0, or off the main thread (the timer's signal goes to the main thread only)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        return fn()

    def out_of_time(signum, frame):
        raise OutOfTime()

    previous = signal.signal(signal.SIGALRM, out_of_time)
    signal.setitimer(signal.ITIMER_REAL, max(0.1, float(seconds)))
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
