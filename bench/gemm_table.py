#!/usr/bin/env python3
"""Markdown table of bench/gemm_vs_cublas.py's JSON lines (and the end-to-end lines of
bench/gpu_gemm_call.sh).  usage: gemm_table.py GEMM.jsonl E2E.jsonl > table.md"""
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault(r["shape"], {})[r["impl"]] = r
nan = float("nan")


def f(x):
    return "—" if x != x else f"{x:.1f}"


def g(x):
    return "—" if x != x else f"{x:.2f}"


r0 = rows[0]
print("# drtc's GEMM kernel against cuBLAS on the H200 (TFLOP/s)\n")
print(f"{r0['device']}, torch {r0['torch']}, Triton {r0['triton']}; `triton.testing.do_bench` "
      "medians (L2 flushed between calls); inputs `torch.rand` and `nn.Linear`'s own weights; "
      "every result checked against a float64 product of the same inputs.\n")
print("FLOPs = 2·M·N·K·batch. *drtc* = what `drtc compile` emits by default under that policy; "
      "*best* = the fastest launch configuration tried (`--sweep`: first two shapes only). "
      "cuBLAS tf32 / fp32 = `torch.set_float32_matmul_precision('high' / 'highest')`.\n")
print("| shape | M×N×K (batch) | cuBLAS tf32 | drtc tf32 | ratio | best | cuBLAS fp32 | drtc fp32 "
      "| fp32 impl | ratio | best | tf32 rel err | fp32 rel err |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for name, rs in by.items():
    def tf(k):
        return rs.get(k, {}).get("tflops", nan)

    def best(prefix, d):
        v = [x.get("tflops", nan) for k, x in rs.items() if k == d or k.startswith(prefix)]
        v = [a for a in v if a == a]
        return max(v) if v else nan

    a = rs.get("cublas_tf32", {})
    dims = f"{a.get('M')}×{a.get('N')}×{a.get('K')}" + (f" ({a['b']})" if a.get("b") else "")
    ct, cf, dt, df = tf("cublas_tf32"), tf("cublas_fp32"), tf("drtc_tf32"), tf("drtc_fp32")
    bt, bf = best("sweep_tf32:", "drtc_tf32"), best("sweep_fp32:", "drtc_fp32")

    def err(k):
        e = rs.get(k, {}).get("rel_err")
        return f"{e:.1e}" if e is not None else ("failed: " + rs[k]["error"][:40]
                                                 if rs.get(k, {}).get("error") else "—")
    print(f"| {name} | {dims} | {f(ct)} | {f(dt)} | {g(dt / ct)} | {g(bt / ct)} | {f(cf)} | "
          f"{f(df)} | {rs.get('drtc_fp32', {}).get('choice', '')} | {g(df / cf)} | {g(bf / cf)} | "
          f"{err('drtc_tf32')} | {err('drtc_fp32')} |")
if len(sys.argv) > 2:
    print("\nEnd to end: `drtc compile --device cuda` (verified on 5 fresh trials with the "
          "policy's rule, CUDA events, 256 MB L2 flush, interleaved; eager = PyTorch's defaults, "
          "full-fp32 matmuls).\n")
    print("| task | policy | GEMM impl | verified (rule) | max rel-norm | eager ms | drtc ms |")
    print("|---|---|---|---|---|---|---|")
    for line in open(sys.argv[2]):
        r = json.loads(line)
        s = r.get("summary") or ""
        rel = s.split("max rel-norm error ")[1].split(";")[0] if "max rel-norm" in s else ""
        rule = "allclose 1e-4" if r["policy"] == "fp32" else "rel-norm"
        impl = ", ".join(x["implementation"] for x in r["gemm"])
        print(f"| {r['task']} | {r['policy']}{' --search' if r['search'] else ''} | {impl} | "
              f"{r['verified']} ({rule}) | {rel} | {r['eager_ms']:.3f} | {r['drtc_ms']:.3f} |")
