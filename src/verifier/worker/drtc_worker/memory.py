"""Memory: out-of-memory errors, peak GPU memory, and releasing what a finished request
held. Verification keeps one trial's tensors at a time; this module measures what that
costs next to the reference alone (`torch.cuda.max_memory_allocated`)."""

import gc

import torch

from .common import DEVICE, cuda_broken, exc_line, is_gpu_fault

OOM_MARKERS = ("out of memory", "CUBLAS_STATUS_ALLOC_FAILED", "CUDNN_STATUS_ALLOC_FAILED",
               "can't allocate memory")  # the last: PyTorch's CPU allocator


def is_oom(e):
    """Host or device memory exhausted (not Triton's shared-memory `OutOfResources`)."""
    if isinstance(e, MemoryError):
        return True
    oom_type = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError",
                                                                    None)
    if oom_type is not None and isinstance(e, oom_type):
        return True
    s = str(e)
    return any(m in s for m in OOM_MARKERS)


def classify(e, who):
    """(check, message, fatal) for an exception raised while `who` ran. Out of memory and
    GPU faults replace the worker (a fresh process has no fragmented or broken context)."""
    if is_oom(e):
        where = f" ({peak_note()})" if DEVICE == "cuda" else ""
        return "out_of_memory", f"{who} ran out of memory: {exc_line(e)}{where}", True
    if is_gpu_fault(e) or cuda_broken():
        return "gpu_fault", f"the GPU faulted: {exc_line(e)}", True
    return "crash", f"{who} raised {exc_line(e)}", False


def reset_peak():
    if DEVICE == "cuda":
        torch.cuda.reset_peak_memory_stats()


def peak_bytes():
    if DEVICE == "cuda":
        return int(torch.cuda.max_memory_allocated())
    return None


def peak_note():
    try:
        gib = torch.cuda.max_memory_allocated() / 2**30
        total = torch.cuda.get_device_properties(0).total_memory / 2**30
        return f"peak {gib:.1f} GiB allocated of {total:.1f} GiB"
    except BaseException:
        return "peak unknown"


def release():
    """Frees what the last request left: Python cycles, then the caching allocator's
    unused blocks, so the next candidate starts from the same memory."""
    gc.collect()
    if DEVICE == "cuda":
        try:
            torch.cuda.empty_cache()
        except BaseException:
            pass  # a broken context is reported by the request that broke it


def report(reference_peak, verify_peak):
    """The `memory` field of a verification report."""
    if DEVICE != "cuda":
        return {"device": DEVICE, "reference_peak_bytes": None, "verify_peak_bytes": None,
                "ratio": None, "note": "peak memory is measured on CUDA only "
                                       "(torch.cuda.max_memory_allocated)"}
    ratio = None
    if reference_peak and verify_peak is not None:
        ratio = verify_peak / reference_peak
    return {"device": DEVICE, "reference_peak_bytes": reference_peak,
            "verify_peak_bytes": verify_peak, "ratio": ratio,
            "note": "torch.cuda.max_memory_allocated: the reference run alone on one input "
                    "set, and the whole verification (both models, one trial's inputs, "
                    "copies and outputs at a time)"}
