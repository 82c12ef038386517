"""What every part of the worker shares: the device, the re-entrancy counter of the
instrumentation, error lines, GPU-fault detection."""

import math
import os

import torch

DEVICE = os.environ.get("DRTC_DEVICE", "cpu")
INTERNAL = [0]  # > 0 while the worker itself calls torch inside an instrumented region

GPU_FAULT_MARKERS = ("illegal memory access", "CUDA error", "device-side assert",
                     "unspecified launch failure", "an illegal instruction",
                     "misaligned address", "CUDA_ERROR", "cudaError")


class Failure(Exception):
    """A check failed before trials could run (import, construction, state_dict)."""

    def __init__(self, check, message):
        super().__init__(message)
        self.check = check
        self.message = message


def finite(x):
    """A float for JSON (NaN/Inf become None)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def exc_line(e):
    msg = str(e).strip().splitlines()
    first = msg[0] if msg else ""
    if len(msg) > 1:
        # CUDA and Triton errors put the useful part in the first lines
        first = " ".join(m.strip() for m in msg[:3])
    return f"{type(e).__name__}: {first}"[:500]


def is_gpu_fault(e):
    if DEVICE != "cuda":
        return False
    s = f"{type(e).__name__}: {e}"
    return any(m in s for m in GPU_FAULT_MARKERS)


def cuda_broken():
    if DEVICE != "cuda":
        return False
    try:
        torch.cuda.synchronize()
        return False
    except BaseException:
        return True


def sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def made_on_device(make, seed):
    """`make()` under `torch.manual_seed(seed)`, on CUDA with the GPU as the default device:
    a model's random initialization and `get_inputs()`'s random tensors are drawn there, not
    on the host, where large ones cost seconds per verification and per race candidate
    (`bench/results/compile_latency_h200_97d41b5.md`: level-3 task 1, 0.7 G parameters, 11 s
    of "load" per run). Whatever fails there (a constructor or `get_inputs()` that needs the
    host) is made again on the host under the same seed; running out of GPU memory is not
    retried."""
    torch.manual_seed(seed)
    if DEVICE != "cuda":
        return make()
    try:
        with torch.device(DEVICE):
            return make()
    except torch.OutOfMemoryError:
        raise
    except Exception:
        torch.manual_seed(seed)
        return make()


def build_module(make, seed):
    """A module built by `make()` under `seed` ([`made_on_device`]), on the device."""
    return made_on_device(lambda: make().to(DEVICE), seed)


def to_device(x):
    """Tensors moved to the device, inside lists and dicts too; anything else as it is."""
    if isinstance(x, torch.Tensor):
        return x.to(DEVICE)
    if isinstance(x, list):
        return [to_device(v) for v in x]
    if isinstance(x, dict):
        return {k: to_device(v) for k, v in x.items()}
    return x


def flatten(out):
    if isinstance(out, (list, tuple)):
        return list(out)
    return [out]
