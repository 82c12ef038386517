"""Kernel categories and per-call attribution of a torch.profiler Chrome trace, for
bench/conv_breakdown.py (issue 10): which GPU activity belongs to which profiled call, and
what each costs per category. Plain Python (no torch): `self_test()` checks it on a
synthetic trace in the format kineto writes for CUDA activities."""

import statistics

CATEGORIES = ("conv", "triton", "layout", "other")

def kernel_category(name, triton_names=()):
    """The category of one GPU activity (kernel, memcpy, memset) by its name:

    * ``triton``: a Triton kernel: a name in `triton_names` (the `@triton.jit` functions of
      drtc's module), or a name starting with ``triton_`` (Inductor: ``triton_poi_``,
      ``triton_red_``, ``triton_per_``, ``triton_tem_``) or ``drtc_`` (drtc's kernels);
    * ``layout``: a layout conversion or copy: cuDNN's ``nchwToNhwc`` / ``nhwcToNchw``
      transforms, PyTorch's copy kernels (``direct_copy_kernel``, ``copy_kernel``, what
      `.contiguous(memory_format=...)` runs), device memcpy and memset;
    * ``conv``: a library convolution kernel (cuDNN / CUTLASS / cuDNN's engines and their
      helpers): a name containing ``conv``, ``fprop``, ``dgrad``, ``wgrad``,
      ``implicit_gemm``, ``winograd``, ``fft``, ``im2col``, ``col2im``, ``cudnn`` or
      ``cask`` (checked after ``layout``, so cuDNN's transforms stay layout);
    * ``other``: the rest (ATen elementwise and reduction kernels, cuBLAS GEMMs, ...).

    On the CPU (``--device cpu``) the "kernels" are top-level ATen ops (``aten::conv2d``
    is conv by the same rules, ``aten::copy_`` / ``aten::contiguous`` layout); Triton's
    interpreter shows as other ops there."""
    n = name.lower()
    if name in triton_names or n.startswith("triton_") or n.startswith("drtc_"):
        return "triton"
    if any(k in n for k in ("nchwtonhwc", "nhwctonchw", "direct_copy_kernel", "copy_kernel",
                            "memcpy", "memset", "aten::copy_", "aten::contiguous",
                            "aten::clone")):
        return "layout"
    if any(k in n for k in ("conv", "fprop", "dgrad", "wgrad", "implicit_gemm", "winograd",
                            "fft", "im2col", "col2im", "cudnn", "cask")):
        return "conv"
    return "other"


# --------------------------------------------------------------------------------------
# the profiler trace: which activity belongs to which call


# GPU activities (kineto writes `kernel`, `gpu_memcpy`, `gpu_memset`; older kinetos wrote
# `Kernel`, `Memcpy`, `Memset`), and the host events that launch them (`cuda_runtime`,
# `cuda_driver`; older: `Runtime`): compared in lower case
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset")
LAUNCH_CATS = ("cuda_runtime", "cuda_driver", "runtime", "driver")


def calls_from_trace(events, label_prefix, device):
    """{label: [(name, start_us, dur_us), ...]} for every `record_function` range whose
    name starts with `label_prefix`, from a Chrome trace's `traceEvents`.

    GPU: an activity belongs to the range that contains the host call that launched it
    (runtime/driver event with the same `correlation`); an activity whose launch is not in
    the trace belongs to the range that contains its own GPU interval (valid because every
    profiled call synchronizes inside its range, and the flush before it lies outside).
    Activities outside every range (the flushes, unlabelled warm-up calls) are dropped and
    counted under the key None.
    CPU: the operator calls (names with `::`: ATen, mkldnn, ...) directly inside the range,
    not nested in another one; other ranges (torch.compile's `Torch-Compiled Region`) are
    looked through."""
    ranges = sorted((e["ts"], e["ts"] + e.get("dur", 0.0), e["name"]) for e in events
                    if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                    and str(e.get("name", "")).startswith(label_prefix))
    out = {r[2]: [] for r in ranges}
    out[None] = []

    def owner(t):
        for a, b, label in ranges:  # a few dozen ranges: linear is fine
            if a <= t <= b:
                return label
        return None

    if device == "cuda":
        launches = {}
        for e in events:
            if e.get("ph") == "X" and str(e.get("cat", "")).lower() in LAUNCH_CATS:
                c = (e.get("args") or {}).get("correlation")
                if c is not None:
                    launches[c] = e["ts"]
        for e in events:
            if e.get("ph") != "X" or str(e.get("cat", "")).lower() not in GPU_CATS:
                continue
            c = (e.get("args") or {}).get("correlation")
            t = launches.get(c)
            label = owner(t) if t is not None else owner(e["ts"])
            if label is not None and t is None and owner(e["ts"] + e.get("dur", 0.0)) != label:
                label = None  # a GPU interval that crosses a range edge: not this call's
            out[label].append((e["name"], e["ts"], float(e.get("dur", 0.0))))
    else:
        ops = sorted((e["ts"], e["ts"] + e.get("dur", 0.0), e["name"]) for e in events
                     if e.get("ph") == "X" and e.get("cat") == "cpu_op"
                     and "::" in str(e.get("name", "")))
        for a, b, label in ranges:
            end = None  # the end of the last top-level op taken in this range
            for s, f, name in ops:
                if s < a or f > b:
                    continue
                if end is not None and s < end:
                    continue  # nested in the previous top-level op
                out[label].append((name, s, f - s))
                end = f
    for label in list(out):
        if label is not None:
            out[label].sort(key=lambda k: k[1])
    return out


def per_name(trace_calls, name):
    """The profiled calls of one contender (`bench:<name>:<i>` ranges)."""
    return [v for k, v in trace_calls.items()
            if k is not None and k.startswith(f"bench:{name}:")]


def summarize_calls(calls, triton_names):
    """Per-call sums per category, medians over the calls, and the names seen."""
    per = {c: [] for c in CATEGORIES}
    total, counts, spans = [], [], []
    names = {}
    for acts in calls:
        sums = dict.fromkeys(CATEGORIES, 0.0)
        for name, start, dur in acts:
            cat = kernel_category(name, triton_names)
            sums[cat] += dur / 1e3
            key = (name, cat)
            names[key] = names.get(key, 0.0) + dur / 1e3
        for c in CATEGORIES:
            per[c].append(sums[c])
        total.append(sum(sums.values()))
        counts.append(len(acts))
        if acts:
            spans.append((max(s + d for _, s, d in acts) - min(s for _, s, _ in acts)) / 1e3)
    n = max(len(calls), 1)
    top = sorted(names.items(), key=lambda kv: -kv[1])[:12]
    return {
        "calls": len(calls),
        "kernels_per_call": statistics.median(counts) if counts else 0,
        "kernels_per_call_min_max": [min(counts), max(counts)] if counts else None,
        "ms": {c: statistics.median(v) if v else 0.0 for c, v in per.items()},
        "kernel_ms": statistics.median(total) if total else 0.0,
        "span_ms": statistics.median(spans) if spans else 0.0,
        "top_kernels": [{"name": k[0][:160], "category": k[1], "ms_per_call": v / n}
                        for k, v in top],
    }


def self_test():
    """A synthetic Chrome trace in the format kineto writes for CUDA activities: two
    labelled calls, a flush kernel before each (outside the ranges), kernels linked to
    their launches by `correlation` (one Triton kernel launched through the driver API,
    one memcpy), one kernel without a launch event (attributed by its GPU interval)."""
    ev = []
    corr = [0]

    def launch(t, api="cudaLaunchKernel", cat="cuda_runtime"):
        corr[0] += 1
        ev.append({"ph": "X", "cat": cat, "name": api, "ts": t, "dur": 3,
                   "args": {"correlation": corr[0]}})
        return corr[0]

    def gpu(name, t, dur, c, cat="kernel"):
        ev.append({"ph": "X", "cat": cat, "name": name, "ts": t, "dur": dur,
                   "args": {"correlation": c, "stream": 7}})

    base = 1000.0
    for i in range(2):
        t = base + i * 1000
        gpu("at::native::vectorized_elementwise_kernel<4, FillFunctor<float>>", t + 5, 50,
            launch(t))  # the flush, launched before the range
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"bench:drtc:{i}",
                   "ts": t + 100, "dur": 800})
        gpu("cudnn::engines_precompiled::nchwToNhwcKernel", t + 130, 20, launch(t + 110))
        gpu("sm90_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc", t + 160, 300,
            launch(t + 120))
        gpu("drtc_k2_pointwise", t + 500, 100, launch(t + 130, "cuLaunchKernel", "cuda_driver"))
        gpu("Memcpy DtoD (Device -> Device)", t + 610, 10, launch(t + 140, "cudaMemcpyAsync"),
            "gpu_memcpy")
        gpu("unlinked_kernel", t + 650, 40, 999999 + i)  # no launch event in the trace
    calls = calls_from_trace(ev, "bench:", "cuda")
    assert sorted(k for k in calls if k) == ["bench:drtc:0", "bench:drtc:1"], calls.keys()
    assert len(calls[None]) == 2 and all("Fill" in a[0] for a in calls[None]), calls[None]
    s = summarize_calls(per_name(calls, "drtc"), {"drtc_k2_pointwise"})
    assert s["kernels_per_call"] == 5, s
    want = {"conv": 0.300, "triton": 0.100, "layout": 0.030, "other": 0.040}
    for k, v in want.items():
        assert abs(s["ms"][k] - v) < 1e-9, (k, s["ms"])
    assert abs(s["kernel_ms"] - 0.470) < 1e-9 and abs(s["span_ms"] - 0.560) < 1e-9, s
    cases = {
        "triton_poi_fused_convolution_relu_0": "triton",
        "triton_red_fused_native_group_norm_1": "triton",
        "cudnn::ops::nhwcToNchwKernel<float, float, float, true, false>": "layout",
        "void at::native::elementwise_kernel<128, 2, direct_copy_kernel_cuda>": "layout",
        "sm90_xmma_dgrad_implicit_gemm_indexed_tf32f32": "conv",
        "cutlass3x_sm90_sptensorop_s64x128x8tf32gemm_conv_fprop": "conv",
        "void cudnn::winograd_nonfused::winogradForwardFilter4x4": "conv",
        "void implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, false>": "conv",
        "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32": "other",
        "void at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>>": "other",
        "aten::conv2d": "conv", "aten::copy_": "layout", "aten::add": "other",
    }
    for name, cat in cases.items():
        assert kernel_category(name) == cat, (name, kernel_category(name), cat)
    # the CPU form: top-level operator calls in each range, through torch.compile's region
    cpu = [{"ph": "X", "cat": "user_annotation", "name": "bench:compile:0", "ts": 0, "dur": 100},
           {"ph": "X", "cat": "cpu_op", "name": "Torch-Compiled Region: 0/0", "ts": 1, "dur": 90},
           {"ph": "X", "cat": "cpu_op", "name": "aten::convolution", "ts": 2, "dur": 50},
           {"ph": "X", "cat": "cpu_op", "name": "aten::mkldnn_convolution", "ts": 3, "dur": 40},
           {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 60, "dur": 10},
           {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "ts": 150, "dur": 10}]
    c = calls_from_trace(cpu, "bench:", "cpu")
    assert [a[0] for a in c["bench:compile:0"]] == ["aten::convolution", "aten::add"], c
    assert c[None] == [], c
