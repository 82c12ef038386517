"""What the bench probes share: the CUDA-event timing loop (the median of `calls` calls of
`fn`, each between two events and synchronized, `before()` run outside the events before
each call), an L2 flush to pass as `before`, the line naming the device and libraries, and
a program file imported as a module."""
import importlib.util
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


def l2_flush():
    """A function that evicts the L2 cache (writes a 256 MiB buffer): `before` for
    [`median_ms`]."""
    buf = torch.empty(256 * 1024 * 1024 // 4, device="cuda")
    return buf.zero_


def device_line():
    """The GPU, torch and cuDNN versions, for a probe's first line."""
    return (f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; "
            f"cuDNN {torch.backends.cudnn.version()}")


def load_program(path, name):
    """The Python file at `path` (a KernelBench program) imported as module `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
