"""The device's measured limits, the anchor of speed-of-light figures: copy bandwidth
(a 1 GiB device-to-device copy: bytes read plus bytes written over its median time) and
the matrix-product throughput cuBLAS reaches on large square GEMMs at each precision
(full fp32 on CUDA cores, TF32 and bf16 on tensor cores). Measured once per worker
process, inside an exclusive timing phase, so nothing else runs on the GPU meanwhile."""

import statistics

import torch

from .common import DEVICE

COPY_BYTES = 1 << 30
GEMM_SIZE = 8192
_measured = None


def _median_ms(fn, calls):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(calls):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def _gemm_tflops(dtype, precision):
    n = GEMM_SIZE
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    old = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision(precision)
    try:
        ms = _median_ms(lambda: torch.mm(a, b), 5)
    finally:
        torch.set_float32_matmul_precision(old)
    del a, b
    return 2.0 * n ** 3 / (ms * 1e-3) / 1e12


def device_peaks():
    """The measured limits (cached), or None off CUDA or when a measurement fails (a GPU
    too small for the buffers): speed of light is then not reported."""
    global _measured
    if _measured is not None or DEVICE != "cuda":
        return _measured
    try:
        with torch.no_grad():
            src = torch.empty(COPY_BYTES // 4, device="cuda", dtype=torch.float32)
            dst = torch.empty_like(src)
            ms = _median_ms(lambda: dst.copy_(src), 10)
            del src, dst
            bandwidth = 2.0 * COPY_BYTES / (ms * 1e-3) / 1e9
            peaks = {
                "copy_gb_s": bandwidth,
                "fp32_tflops": _gemm_tflops(torch.float32, "highest"),
                "tf32_tflops": _gemm_tflops(torch.float32, "high"),
                "bf16_tflops": _gemm_tflops(torch.bfloat16, "highest"),
                "device": torch.cuda.get_device_name(),
                "source": f"measured: {COPY_BYTES >> 30} GiB device copy, cuBLAS "
                          f"{GEMM_SIZE}^3 GEMMs",
            }
        torch.cuda.empty_cache()
    except (RuntimeError, torch.cuda.OutOfMemoryError):
        torch.cuda.empty_cache()
        return None
    _measured = peaks
    return _measured
