"""The CUDA-event timing loop the bench probes share: the median of `calls` calls of `fn`,
each between two events and synchronized, `before()` (an L2 flush, say) run outside the
events before each call."""
import statistics

import torch


def median_ms(fn, calls, before=None, warmup=0):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(calls):
        if before is not None:
            before()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)
