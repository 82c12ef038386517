"""Issue 10 probe: a Triton implicit-GEMM conv2d (fused epilogue) against cuDNN, per precision.

Standalone (no drtc import). It answers: should drtc compute a 2-D convolution (groups=1,
float32) with its own Triton implicit-GEMM kernel, with the pointwise epilogue fused, instead
of calling cuDNN through `torch.nn.functional.conv2d`; for which input-channel counts; and at
which `tl.dot` input precision ("ieee", "tf32x3", "tf32").

The kernel (`conv2d_igemm_kernel`) sees the convolution as a GEMM: M = N*OH*OW (m split into
n, oh, ow with ow innermost), Ngemm = Cout, K = Cin*KH*KW. The A tile [BLOCK_M, BLOCK_K] is
gathered from x with masks (padding reads 0), the B tile [BLOCK_K, BLOCK_N] from the weight,
accumulation in float32 with `tl.dot(a, b, acc, input_precision=P)`, then the epilogue (none,
+bias, +bias then relu) and a masked store. Every tensor is addressed through its strides, so
one kernel serves three layouts:

  nchw      x, w and out NCHW (contiguous); k split (ci, kh, kw), kw innermost
  nhwc_out  x, w NCHW, out channels-last (NHWC memory): stores are contiguous along Cout
  nhwc      x, w and out channels-last; k split (kh, kw, ci), ci innermost (contiguous gathers)

Offsets are int32 unless a tensor has 2**31 - 1 elements or more (then int64).

For each shape it measures (float32 inputs, seeded):

  cudnn_nchw_tf32   F.conv2d, NCHW, torch.backends.cudnn.allow_tf32 = True (PyTorch's default;
                    the reference drtc's verifier uses)
  cudnn_nchw_fp32   F.conv2d, NCHW, allow_tf32 = False
  cudnn_cl_tf32     F.conv2d, channels-last x and w, allow_tf32 = True
  cudnn_cl_fp32     F.conv2d, channels-last x and w, allow_tf32 = False
                    (each cuDNN variant is followed by the epilogue as separate PyTorch ops:
                    F.conv2d includes the bias; relu is torch.relu on its output)
  epi_relu          torch.relu on the conv output alone (the separate epilogue's cost)
  epi_bias_relu     torch.relu(y + b[:, None, None]) alone (bias and relu both unfused)
  triton_<layout>_<precision>
                    the Triton kernel, epilogue fused; for each (layout, precision) every
                    config of a small list is tried (BLOCK_M 64/128, BLOCK_N 32/64/128 capped
                    at next_pow2(Cout) but >= 16, BLOCK_K 16/32, num_warps 4/8, num_stages 2/3),
                    each in a try/except (a config that fails to compile or run, or whose
                    result is off, is recorded and skipped), screened with a few timed calls,
                    and the best one timed in full.

Accuracy of every variant: relative Frobenius error and max-abs error against a float64
convolution on the same device (x, w, b cast to float64, same epilogue), and whether it passes
torch.allclose(atol=1e-4, rtol=1e-4) against cudnn_nchw_tf32 and against the float64 result.

Timing (CUDA): CUDA events around each call, a 256 MB L2 flush before each call outside the
timed window, median of ITERS calls after WARMUP calls (KernelBench style). FLOPs are
2*N*Cout*OH*OW*Cin*KH*KW; bytes are the minimal traffic (x, w, b read once, out written once);
TFLOP/s and GB/s are those over the median time.

Each shape's row is appended to --json as soon as the shape is done (a cut-off run keeps what
finished); --budget-s stops starting new shapes after that many seconds; a markdown table is
printed at the end.

GPU (H200):
  python3 bench/conv_triton_probe.py --device cuda --json bench/results/conv_triton_probe_h200.jsonl
  python3 bench/conv_triton_probe.py --device cuda --shapes 128x3x128x128x64x3 128x8x64x64x32x3:s2p1
  python3 bench/conv_triton_probe.py --device cuda --check        # correctness of every config
CPU check (Triton interpreter; precisions are not emulated there, numpy does the dot):
  TRITON_INTERPRET=1 python3 bench/conv_triton_probe.py --device cpu --check \\
      --shapes 2x3x9x9x5x3 2x8x10x10x16x3 1x4x7x7x8x3 2x3x11x11x6x3:s2p1 1x5x9x9x7x3:s1p2d2

Shape syntax: NxCinxHxWxCoutxK[:sSpPdD] (square kernel K; stride S, padding P, dilation D;
defaults s1p0d1). `--check` compares each Triton precision with the float64 convolution
(relative Frobenius error <= 1e-5 for ieee and tf32x3, <= 5e-3 for tf32; max-abs error
<= 1e-4 * (1 + max|ref|) resp. 5e-2 * (1 + max|ref|)) for every layout, epilogue and config,
prints OK/FAIL per case and exits 1 if any failed.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import os
import re
import statistics
import sys
import time
import traceback

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

INTERPRET = os.environ.get("TRITON_INTERPRET", "0") == "1"
PRECISIONS = ("ieee", "tf32x3", "tf32")
LAYOUTS = ("nchw", "nhwc_out", "nhwc")
EPILOGUES = {"none": 0, "bias": 1, "bias_relu": 2}
INT32_LIMIT = 2**31 - 1

DEFAULT_SHAPES = [
    "128x3x128x128x64x3",
    "128x8x128x128x64x3",
    "128x16x128x128x64x3",
    "128x32x128x128x64x3",
    "128x64x128x128x64x3",
    "128x8x256x256x32x3",
]
CHECK_SHAPES = [
    "2x3x9x9x5x3",
    "2x8x10x10x16x3",
    "1x4x7x7x8x3",
    "2x3x11x11x6x3:s2p1",
    "1x5x9x9x7x3:s1p2d2",
    "2x16x6x6x40x1",
]
# --check tolerances against float64: (relative Frobenius, max-abs relative to 1 + max|ref|).
CHECK_TOL = {"ieee": (1e-5, 1e-4), "tf32x3": (1e-5, 1e-4), "tf32": (5e-3, 5e-2)}
# While searching configs, a config whose relative Frobenius error exceeds this is wrong.
SEARCH_TOL = {"ieee": 1e-4, "tf32x3": 1e-4, "tf32": 2e-2}


# --------------------------------------------------------------------------------------------
# The kernel
# --------------------------------------------------------------------------------------------


@triton.jit
def conv2d_igemm_kernel(
    x_ptr, w_ptr, b_ptr, out_ptr,
    N, C, H, W, CO, OH, OW,
    sxn, sxc, sxh, sxw,
    swo, swc, swh, sww,
    son, soc, soh, sow,
    KH: tl.constexpr, KW: tl.constexpr,
    SH: tl.constexpr, SW: tl.constexpr,
    PH: tl.constexpr, PW: tl.constexpr,
    DH: tl.constexpr, DW: tl.constexpr,
    EPILOGUE: tl.constexpr,  # 0 none, 1 bias, 2 bias then relu
    PRECISION: tl.constexpr,  # "ieee" | "tf32x3" | "tf32"
    CI_INNER: tl.constexpr,  # k = (kh*KW + kw)*C + ci instead of (ci*KH + kh)*KW + kw
    USE_INT64: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    M = N * OH * OW
    K = C * KH * KW
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(CO, BLOCK_N)
    # GROUP_M ordering: GROUP_M consecutive m tiles share each n tile (L2 reuse of x).
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_kb = tl.arange(0, BLOCK_K)
    if USE_INT64:
        offs_m = offs_m.to(tl.int64)
        offs_n = offs_n.to(tl.int64)
        offs_kb = offs_kb.to(tl.int64)
    mask_m = offs_m < M
    mask_n = offs_n < CO
    ow = offs_m % OW
    t = offs_m // OW
    oh = t % OH
    n = t // OH
    ih0 = oh * SH - PH
    iw0 = ow * SW - PW
    x_row = x_ptr + n * sxn  # [BLOCK_M] pointers to each row's image
    w_col = w_ptr + offs_n * swo  # [BLOCK_N]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + offs_kb
        mask_k = offs_k < K
        if CI_INNER:
            ci = offs_k % C
            r = offs_k // C
            kw = r % KW
            kh = r // KW
        else:
            kw = offs_k % KW
            r = offs_k // KW
            kh = r % KH
            ci = r // KH
        ih = ih0[:, None] + (kh * DH)[None, :]
        iw = iw0[:, None] + (kw * DW)[None, :]
        a_mask = (
            mask_m[:, None] & mask_k[None, :]
            & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        )
        a_ptrs = x_row[:, None] + (ci * sxc)[None, :] + ih * sxh + iw * sxw
        a = tl.load(a_ptrs, mask=a_mask, other=0.0)
        b_ptrs = w_col[None, :] + (ci * swc + kh * swh + kw * sww)[:, None]
        b = tl.load(b_ptrs, mask=mask_k[:, None] & mask_n[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)

    if EPILOGUE >= 1:
        bias = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0)
        acc = acc + bias[None, :]
    if EPILOGUE == 2:
        acc = tl.maximum(acc, 0.0)
    out_ptrs = (
        out_ptr + (n * son + oh * soh + ow * sow)[:, None] + (offs_n * soc)[None, :]
    )
    tl.store(out_ptrs, acc, mask=mask_m[:, None] & mask_n[None, :])


def out_size(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def launch_args(x, w, b, out, spec, epilogue, precision, layout, cfg, force_int64=False):
    """(grid, positional args, keyword args) of one kernel launch into `out`."""
    N, C, H, W = x.shape
    CO, _, KH, KW = w.shape
    _, _, OH, OW = out.shape
    s, p, d = spec["s"], spec["p"], spec["d"]
    use_int64 = force_int64 or max(x.numel(), w.numel(), out.numel()) >= INT32_LIMIT
    M = N * OH * OW
    grid = (triton.cdiv(M, cfg["BLOCK_M"]) * triton.cdiv(CO, cfg["BLOCK_N"]),)
    bias = b if b is not None else out  # never read when EPILOGUE == 0
    args = (x, w, bias, out, N, C, H, W, CO, OH, OW, *x.stride(), *w.stride(), *out.stride())
    kwargs = dict(
        KH=KH, KW=KW, SH=s, SW=s, PH=p, PW=p, DH=d, DW=d,
        EPILOGUE=EPILOGUES[epilogue], PRECISION=precision,
        CI_INNER=(layout == "nhwc"), USE_INT64=use_int64,
        BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"],
        GROUP_M=cfg["GROUP_M"], num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
    )
    return grid, args, kwargs


def triton_conv2d(x, w, b, out, spec, epilogue, precision, layout, cfg, force_int64=False):
    """Launch the kernel into `out` (its strides choose the stored layout)."""
    grid, args, kwargs = launch_args(x, w, b, out, spec, epilogue, precision, layout, cfg,
                                     force_int64)
    conv2d_igemm_kernel[grid](*args, **kwargs)
    return out


def _warm_worker(jobs):
    """Compile (no launch) each job into Triton's on-disk cache; runs in a spawned process."""
    done, errs = 0, []
    for args, kwargs in jobs:
        try:
            conv2d_igemm_kernel.warmup(*args, grid=(1,), **kwargs)
            done += 1
        except Exception as e:  # noqa: BLE001 - the timed launch will report it again
            errs.append(f"{type(e).__name__}: {e}"[:200])
    return done, errs


def precompile(launches, procs):
    """Compile many configs at once in `procs` processes (the launches then load them from
    Triton's cache); tensors become torch dtypes (triton's MockTensor), ints stay as they are,
    so each compiled specialization is the one the real launch asks for."""
    import concurrent.futures
    import multiprocessing

    jobs = [(tuple(a.dtype if torch.is_tensor(a) else a for a in args), kwargs)
            for args, kwargs in launches]
    procs = max(1, min(procs, len(jobs)))
    chunks = [jobs[i::procs] for i in range(procs)]
    t0 = time.time()
    done, errs = 0, []
    try:
        with concurrent.futures.ProcessPoolExecutor(
                procs, mp_context=multiprocessing.get_context("spawn")) as ex:
            for d, e in ex.map(_warm_worker, chunks):
                done += d
                errs += e
    except Exception as e:  # noqa: BLE001 - fall back to compiling at first launch
        print(f"  precompile failed ({type(e).__name__}: {e}); compiling serially", flush=True)
        return
    print(f"  precompiled {done}/{len(jobs)} kernels in {time.time() - t0:.0f} s "
          f"({procs} processes, {len(errs)} failed)", flush=True)


def layout_tensors(x, w, layout):
    """(x, w, out memory format) for a Triton layout."""
    cl = torch.channels_last
    if layout == "nchw":
        return x, w, torch.contiguous_format
    if layout == "nhwc_out":
        return x, w, cl
    if layout == "nhwc":
        return x.contiguous(memory_format=cl), w.contiguous(memory_format=cl), cl
    raise ValueError(f"unknown layout {layout!r}")


def new_out(x, w, spec, fmt):
    N, _, H, W = x.shape
    CO, _, KH, KW = w.shape
    OH = out_size(H, KH, spec["s"], spec["p"], spec["d"])
    OW = out_size(W, KW, spec["s"], spec["p"], spec["d"])
    return torch.empty((N, CO, OH, OW), device=x.device, dtype=x.dtype).contiguous(
        memory_format=fmt
    )


def configs_for(cout, device):
    if device == "cpu":
        # The interpreter runs every program in numpy: small tiles, two configs that exercise
        # partial m, n and k tiles.
        return [
            dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=2, num_warps=4, num_stages=2),
            dict(BLOCK_M=32, BLOCK_N=16, BLOCK_K=32, GROUP_M=1, num_warps=4, num_stages=2),
        ]
    cap = max(16, triton.next_power_of_2(cout))
    bns = sorted({min(bn, cap) for bn in (32, 64, 128)})
    out = []
    for bm, bn, bk, nw, ns in itertools.product((64, 128), bns, (16, 32), (4, 8), (2, 3)):
        out.append(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=nw,
                        num_stages=ns))
    return out


def cfg_name(cfg):
    return (f"m{cfg['BLOCK_M']}n{cfg['BLOCK_N']}k{cfg['BLOCK_K']}g{cfg['GROUP_M']}"
            f"w{cfg['num_warps']}s{cfg['num_stages']}")


# --------------------------------------------------------------------------------------------
# Shapes, references, errors
# --------------------------------------------------------------------------------------------

SHAPE_RE = re.compile(r"^(\d+)x(\d+)x(\d+)x(\d+)x(\d+)x(\d+)(?::((?:[spd]\d+)+))?$")


def parse_shape(text):
    m = SHAPE_RE.match(text.strip())
    if not m:
        raise argparse.ArgumentTypeError(
            f"bad shape {text!r}: want NxCinxHxWxCoutxK[:sSpPdD], e.g. 128x8x128x128x64x3:s2p1")
    N, C, H, W, CO, K = (int(g) for g in m.groups()[:6])
    spec = dict(N=N, C=C, H=H, W=W, CO=CO, K=K, s=1, p=0, d=1)
    for key, val in re.findall(r"([spd])(\d+)", m.group(7) or ""):
        spec[key] = int(val)
    if min(N, C, H, W, CO, K, spec["s"], spec["d"]) < 1:
        raise argparse.ArgumentTypeError(f"bad shape {text!r}: sizes, stride, dilation >= 1")
    for size in (H, W):
        if out_size(size, K, spec["s"], spec["p"], spec["d"]) < 1:
            raise argparse.ArgumentTypeError(f"bad shape {text!r}: empty output")
    spec["name"] = text.strip()
    return spec


def make_inputs(spec, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(spec["N"], spec["C"], spec["H"], spec["W"], generator=g)
    fan_in = spec["C"] * spec["K"] * spec["K"]
    bound = 1.0 / math.sqrt(fan_in)  # nn.Conv2d's default init range
    w = (torch.rand(spec["CO"], spec["C"], spec["K"], spec["K"], generator=g) * 2 - 1) * bound
    b = (torch.rand(spec["CO"], generator=g) * 2 - 1) * bound
    return x.to(device), w.to(device), b.to(device)


def apply_epilogue(y, epilogue):
    return torch.relu(y) if epilogue == "bias_relu" else y


def torch_conv(x, w, b, spec, epilogue):
    y = F.conv2d(x, w, b if epilogue != "none" else None, stride=spec["s"], padding=spec["p"],
                 dilation=spec["d"])
    return apply_epilogue(y, epilogue)


@contextlib.contextmanager
def cudnn_tf32(enabled):
    old = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32 = old


def errors(y, ref64, ref_a):
    """rel Frobenius and max-abs vs float64, allclose vs float64 and vs cudnn_nchw_tf32."""
    yd = y.double()
    diff = yd - ref64
    ref_norm = ref64.norm().item()
    rel = diff.norm().item() / ref_norm if ref_norm > 0 else diff.norm().item()
    row = dict(rel_fro=rel, max_abs=diff.abs().max().item(),
               allclose_f64=bool(torch.allclose(yd, ref64, atol=1e-4, rtol=1e-4)))
    if ref_a is not None:
        row["allclose_ref"] = bool(torch.allclose(y.float(), ref_a, atol=1e-4, rtol=1e-4))
    del yd, diff
    return row


# --------------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------------


class Timer:
    def __init__(self, device, warmup, iters):
        self.device, self.warmup, self.iters = device, warmup, iters
        self.flush_buf = (torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")
                          if device == "cuda" else None)

    def median_ms(self, fn, iters=None, warmup=None):
        iters = self.iters if iters is None else iters
        warmup = self.warmup if warmup is None else warmup
        for _ in range(warmup):
            fn()
        if self.device != "cuda":
            times = []
            for _ in range(iters):
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e3)
            return statistics.median(times)
        torch.cuda.synchronize()
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(iters)]
        for start, end in events:
            self.flush_buf.zero_()  # 256 MB write: L2 holds nothing of the inputs
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in events)


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


# --------------------------------------------------------------------------------------------
# One shape
# --------------------------------------------------------------------------------------------


def shape_costs(spec):
    N, C, CO, K = spec["N"], spec["C"], spec["CO"], spec["K"]
    OH = out_size(spec["H"], K, spec["s"], spec["p"], spec["d"])
    OW = out_size(spec["W"], K, spec["s"], spec["p"], spec["d"])
    flops = 2 * N * CO * OH * OW * C * K * K
    nbytes = 4 * (N * C * spec["H"] * spec["W"] + CO * C * K * K + CO + N * CO * OH * OW)
    return flops, nbytes, OH, OW


def rate(row, flops, nbytes):
    ms = row.get("ms")
    if ms:
        row["tflops"] = flops / (ms * 1e-3) / 1e12
        row["gbps"] = nbytes / (ms * 1e-3) / 1e9


def run_shape(spec, args, timer):
    dev = args.device
    epi = args.epilogue
    flops, nbytes, OH, OW = shape_costs(spec)
    result = dict(shape=spec["name"], spec={k: spec[k] for k in "NCHWK" if k in spec}
                  | {"Cout": spec["CO"], "OH": OH, "OW": OW, "stride": spec["s"],
                     "padding": spec["p"], "dilation": spec["d"]},
                  epilogue=epi, device=dev, flops=flops, bytes=nbytes,
                  torch=torch.__version__, triton=triton.__version__, variants={})
    if dev == "cuda":
        result["gpu"] = torch.cuda.get_device_name()
    x, w, b = make_inputs(spec, dev, args.seed)
    ref64 = torch_conv(x.double(), w.double(), b.double(), spec, epi)
    with cudnn_tf32(True):
        ref_a = torch_conv(x, w, b, spec, epi)
    sync(dev)
    V = result["variants"]

    # cuDNN baselines: conv (with bias) then the epilogue as separate PyTorch ops.
    cl = torch.channels_last
    xcl, wcl = x.contiguous(memory_format=cl), w.contiguous(memory_format=cl)
    for name, xx, ww, tf32 in (("cudnn_nchw_tf32", x, w, True), ("cudnn_nchw_fp32", x, w, False),
                               ("cudnn_cl_tf32", xcl, wcl, True), ("cudnn_cl_fp32", xcl, wcl,
                                                                   False)):
        row = {}
        try:
            with cudnn_tf32(tf32):
                y = torch_conv(xx, ww, b, spec, epi)
                row.update(errors(y, ref64, ref_a))
                del y
                row["ms"] = timer.median_ms(lambda: torch_conv(xx, ww, b, spec, epi))
                if epi != "none":
                    row["conv_only_ms"] = timer.median_ms(
                        lambda: F.conv2d(xx, ww, None, stride=spec["s"], padding=spec["p"],
                                         dilation=spec["d"]))
        except Exception as e:  # noqa: BLE001 - record and go on
            row["error"] = f"{type(e).__name__}: {e}"[:400]
        rate(row, flops, nbytes)
        V[name] = row
        print(f"  {name:24s} {fmt_row(row)}", flush=True)

    # The epilogue alone, as the separate kernels a cuDNN path would launch.
    y = ref_a.clone()
    ycl = y.contiguous(memory_format=cl)
    ob = 4 * y.numel()
    for name, fn in (("epi_relu", lambda: torch.relu(y)),
                     ("epi_relu_cl", lambda: torch.relu(ycl)),
                     ("epi_bias_relu", lambda: torch.relu(y + b[:, None, None]))):
        row = {"ms": timer.median_ms(fn)}
        row["gbps"] = 2 * ob / (row["ms"] * 1e-3) / 1e9
        V[name] = row
        print(f"  {name:24s} {row['ms']:.4f} ms  {row['gbps']:.0f} GB/s", flush=True)
    del y, ycl

    # Triton: per (layout, precision), search the configs.
    bb = b if epi != "none" else None
    if dev == "cuda" and args.compile_jobs > 0:
        launches = []
        for layout in args.layouts:
            xx, ww, fmt = layout_tensors(x, w, layout)
            out = new_out(xx, ww, spec, fmt)
            for prec in args.precisions:
                for cfg in configs_for(spec["CO"], dev):
                    launches.append(launch_args(xx, ww, bb, out, spec, epi, prec, layout,
                                                cfg)[1:])
            del out, xx, ww
        precompile(launches, args.compile_jobs)
    for layout in args.layouts:
        xx, ww, fmt = layout_tensors(x, w, layout)
        out = new_out(xx, ww, spec, fmt)
        for prec in args.precisions:
            name = f"triton_{layout}_{prec}"
            tried = []
            best = None
            for cfg in configs_for(spec["CO"], dev):
                entry = {"config": cfg_name(cfg)}
                try:
                    triton_conv2d(xx, ww, bb, out, spec, epi, prec, layout, cfg)
                    sync(dev)
                    err = errors(out, ref64, None)["rel_fro"]
                    entry["rel_fro"] = err
                    if not err <= SEARCH_TOL[prec]:
                        entry["error"] = f"wrong result: rel_fro {err:.3e}"
                    else:
                        entry["screen_ms"] = timer.median_ms(
                            lambda: triton_conv2d(xx, ww, bb, out, spec, epi, prec, layout,
                                                  cfg),
                            iters=args.screen_iters, warmup=1)
                        if best is None or entry["screen_ms"] < best[1]["screen_ms"]:
                            best = (cfg, entry)
                except Exception as e:  # noqa: BLE001 - one failing config is recorded
                    entry["error"] = f"{type(e).__name__}: {e}"[:300]
                tried.append(entry)
            row = {"configs_tried": len(tried),
                   "configs_failed": sum("error" in t for t in tried),
                   "failures": [t for t in tried if "error" in t][:8]}
            if best is None:
                row["error"] = "no config ran correctly"
            else:
                cfg = best[0]
                row["config"] = cfg_name(cfg)
                row["config_dict"] = cfg
                triton_conv2d(xx, ww, bb, out, spec, epi, prec, layout, cfg)
                sync(dev)
                row.update(errors(out, ref64, ref_a))
                row["ms"] = timer.median_ms(
                    lambda: triton_conv2d(xx, ww, bb, out, spec, epi, prec, layout, cfg))
                row["screen"] = sorted(
                    ({"config": t["config"], "ms": t["screen_ms"]} for t in tried
                     if "screen_ms" in t), key=lambda t: t["ms"])[:5]
            rate(row, flops, nbytes)
            V[name] = row
            print(f"  {name:24s} {fmt_row(row)}", flush=True)
        del out, xx, ww
    del x, w, b, ref64, ref_a, xcl, wcl
    if dev == "cuda":
        torch.cuda.empty_cache()
    return result


def fmt_row(row):
    if "ms" not in row:
        return f"ERROR {row.get('error', '')}"
    s = f"{row['ms']:.4f} ms"
    if "tflops" in row:
        s += f"  {row['tflops']:.2f} TFLOP/s  {row['gbps']:.0f} GB/s"
    if "rel_fro" in row:
        s += (f"  rel {row['rel_fro']:.2e}  maxabs {row['max_abs']:.2e}"
              f"  ref {'Y' if row.get('allclose_ref') else 'n'}"
              f"  f64 {'Y' if row.get('allclose_f64') else 'n'}")
    if "config" in row:
        s += f"  {row['config']}"
    return s


def markdown(results):
    lines = ["| shape | variant | ms | vs cudnn_nchw_tf32 | TFLOP/s | GB/s | rel_fro | max_abs "
             "| allclose ref | allclose f64 | config |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for res in results:
        base = res["variants"].get("cudnn_nchw_tf32", {}).get("ms")
        gf = res["flops"] / 1e9
        mb = res["bytes"] / 1e6
        first = True
        for name, row in res["variants"].items():
            shape = f"{res['shape']} ({gf:.1f} GFLOP, {mb:.0f} MB)" if first else ""
            first = False
            if "ms" not in row:
                lines.append(f"| {shape} | {name} | error | | | | | | | | "
                             f"{row.get('error', '')[:60]} |")
                continue
            speed = f"{base / row['ms']:.2f}x" if base and not name.startswith("epi") else ""

            def g(key, spec):
                return format(row[key], spec) if key in row else ""

            def yn(key):
                return "" if key not in row else ("yes" if row[key] else "NO")

            lines.append(
                f"| {shape} | {name} | {row['ms']:.4f} | {speed} | {g('tflops', '.2f')} | "
                f"{g('gbps', '.0f')} | {g('rel_fro', '.1e')} | {g('max_abs', '.1e')} | "
                f"{yn('allclose_ref')} | {yn('allclose_f64')} | {row.get('config', '')} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# --check
# --------------------------------------------------------------------------------------------


def run_check(args):
    failures = 0
    cases = 0
    for spec in args.shapes:
        x, w, b = make_inputs(spec, args.device, args.seed)
        for epi in EPILOGUES:
            ref64 = torch_conv(x.double(), w.double(), b.double(), spec, epi)
            scale = 1.0 + ref64.abs().max().item()
            for layout in args.layouts:
                xx, ww, fmt = layout_tensors(x, w, layout)
                for prec in args.precisions:
                    fro_tol, abs_tol = CHECK_TOL[prec]
                    cfgs = configs_for(spec["CO"], args.device)
                    # Every config with int32 offsets, and the first one with int64 offsets.
                    for cfg, i64 in [(c, False) for c in cfgs] + [(cfgs[0], True)]:
                        cases += 1
                        label = (f"{spec['name']:20s} {epi:9s} {layout:8s} {prec:6s} "
                                 f"{cfg_name(cfg)}{' int64' if i64 else ''}")
                        try:
                            out = new_out(xx, ww, spec, fmt)
                            out.fill_(float("nan"))  # an unwritten element shows up
                            triton_conv2d(xx, ww, b if epi != "none" else None, out, spec, epi,
                                          prec, layout, cfg, force_int64=i64)
                            sync(args.device)
                            e = errors(out, ref64, None)
                            ok = (math.isfinite(e["rel_fro"]) and e["rel_fro"] <= fro_tol
                                  and e["max_abs"] <= abs_tol * scale)
                            msg = f"rel {e['rel_fro']:.2e} maxabs {e['max_abs']:.2e}"
                        except Exception as ex:  # noqa: BLE001
                            ok = False
                            msg = f"{type(ex).__name__}: {ex}"[:300]
                        failures += not ok
                        if not ok or args.verbose:
                            print(f"{'OK  ' if ok else 'FAIL'} {label} {msg}", flush=True)
        print(f"{spec['name']}: checked", flush=True)
    print(f"{cases - failures}/{cases} cases OK" + (" (TRITON_INTERPRET=1: the interpreter "
          "does not emulate tf32; its dots are numpy float32)" if INTERPRET else ""))
    print("OK" if failures == 0 else f"FAIL ({failures} failed)")
    return 1 if failures else 0


# --------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="See the module docstring for what is measured and how.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", nargs="+", type=parse_shape, default=None,
                    help="NxCinxHxWxCoutxK[:sSpPdD] (default: a Cin sweep at N=128, 128x128; "
                         "with --check: small shapes)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--json", help="append one JSON line per shape as it finishes")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="start no new shape after this many seconds")
    ap.add_argument("--check", action="store_true",
                    help="correctness only: every Triton precision/layout/epilogue/config "
                         "against float64; exit 1 on any FAIL")
    ap.add_argument("--epilogue", choices=tuple(EPILOGUES), default="bias_relu",
                    help="fused epilogue for the timing run (default bias_relu)")
    ap.add_argument("--precisions", nargs="+", choices=PRECISIONS, default=list(PRECISIONS))
    ap.add_argument("--layouts", nargs="+", choices=LAYOUTS, default=list(LAYOUTS))
    ap.add_argument("--warmup", type=int, default=None, help="warm-up calls (default 5; cpu 1)")
    ap.add_argument("--iters", type=int, default=None, help="timed calls (default 20; cpu 2)")
    ap.add_argument("--screen-iters", type=int, default=None,
                    help="timed calls per config while searching (default 5; cpu 1)")
    ap.add_argument("--cudnn-benchmark", action="store_true",
                    help="set torch.backends.cudnn.benchmark (default: PyTorch's default, off)")
    ap.add_argument("--compile-jobs", type=int, default=min(16, os.cpu_count() or 1),
                    help="processes that compile a shape's Triton configs in parallel before "
                         "they are timed (0: compile each at its first launch)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--verbose", action="store_true", help="--check: print every case")
    args = ap.parse_args(argv)

    if args.device == "cuda" and not torch.cuda.is_available():
        ap.error("--device cuda but no CUDA device (use --device cpu with TRITON_INTERPRET=1)")
    if args.device == "cpu" and not INTERPRET:
        ap.error("--device cpu needs TRITON_INTERPRET=1 (Triton's CPU interpreter)")
    if args.shapes is None:
        args.shapes = [parse_shape(s) for s in (CHECK_SHAPES if args.check else DEFAULT_SHAPES)]
    cpu = args.device == "cpu"
    args.warmup = args.warmup if args.warmup is not None else (1 if cpu else 5)
    args.iters = args.iters if args.iters is not None else (2 if cpu else 20)
    args.screen_iters = args.screen_iters if args.screen_iters is not None else (1 if cpu else 5)
    if args.cudnn_benchmark:
        torch.backends.cudnn.benchmark = True

    if args.check:
        return run_check(args)

    t_start = time.time()
    timer = Timer(args.device, args.warmup, args.iters)
    results = []
    for spec in args.shapes:
        if args.budget_s is not None and time.time() - t_start > args.budget_s:
            print(f"budget spent: skipping {spec['name']}", flush=True)
            continue
        print(f"{spec['name']} (epilogue {args.epilogue})", flush=True)
        t0 = time.time()
        try:
            res = run_shape(spec, args, timer)
        except Exception as e:  # noqa: BLE001 - a failing shape writes an error row
            traceback.print_exc()
            res = dict(shape=spec["name"], error=f"{type(e).__name__}: {e}"[:400], variants={},
                       flops=0, bytes=0)
            if args.device == "cuda":
                torch.cuda.empty_cache()
        res["seconds"] = time.time() - t0
        results.append(res)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(res) + "\n")
                f.flush()
    print()
    print(markdown(results))
    print(f"\n{time.time() - t_start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
