#!/usr/bin/env python3
"""drtc's GEMM kernel against cuBLAS (torch.matmul / F.linear) on one GPU, in TFLOP/s.

For each shape (the L1 matmul family and the GEMM shapes of the L2 tasks), the script
writes a one-op PyTorch program, compiles it with `drtc compile --no-verify --device cuda
--precision P`, imports the module and times its `drtc_forward` with
`triton.testing.do_bench` (median, L2 flushed between calls), next to cuBLAS at
`torch.set_float32_matmul_precision("high")` (TF32) and `"highest"` (full fp32). Each
result is also checked against a float64 product of the same inputs (relative norm and
the largest elementwise relative error), so a fast wrong kernel cannot hide.

Rows (one JSON object per line in --out, a table at the end):
  cublas_tf32, cublas_fp32       torch at "high" / "highest"
  drtc_tf32                      drtc --precision tf32 (its heuristic configuration)
  drtc_fp32                      drtc --precision fp32 (tf32x3 or the library call)
  drtc_tf32_ptr                  drtc_tf32 with TMA disabled (pointer loads)
  sweep_<policy>:<config>        with --sweep: drtc at other launch configurations

Usage (on the GPU machine; DRTC is the drtc binary):
  python3 bench/gemm_vs_cublas.py --drtc ./drtc --out gemm.jsonl [--sweep] [--only NAME]
"""

import argparse
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

# (name, kind, dims): kind "mm" A[M,K] @ B[K,N]; "mm_tA" A[K,M].T @ B; "mm_tB" A @ B[N,K].T;
# "mm_tAB" both; "bmm" [b,M,K] @ [b,K,N]; "linear" x[M,K], weight [N,K] (+ bias)
SHAPES = [  # the most telling first (a --budget-s run skips the tail)
    ("L1_2_standard", "mm", dict(M=2048, N=4096, K=8192)),
    ("L2_linear_1024x8192x8192", "linear", dict(M=1024, N=8192, K=8192)),
    ("L1_1_square", "mm", dict(M=4096, N=4096, K=4096)),
    ("L2_linear_16384x4096x4096", "linear", dict(M=16384, N=4096, K=4096)),
    ("L1_17_tB", "mm_tB", dict(M=2048, N=4096, K=8192)),
    ("L1_3_bmm", "bmm", dict(b=128, M=512, N=2048, K=1024)),
    ("L1_6_large_k", "mm", dict(M=256, N=256, K=524288)),
    ("L1_8_irregular", "mm", dict(M=8205, N=5921, K=2949)),
    ("L2_linear_128x32768x32768", "linear", dict(M=128, N=32768, K=32768)),
    ("L1_7_small_k", "mm", dict(M=32768, N=32768, K=64)),
    ("L1_16_tA", "mm_tA", dict(M=2048, N=4096, K=8192)),
    ("L1_18_tAB", "mm_tAB", dict(M=2048, N=4096, K=8192)),
    ("L2_linear_2048x8192x8192", "linear", dict(M=2048, N=8192, K=8192)),
    ("L2_linear_16384x4096x2048", "linear", dict(M=16384, N=4096, K=2048)),
    ("L2_linear_32768x4096x1024", "linear", dict(M=32768, N=4096, K=1024)),
    ("L1_9_tall_skinny", "mm", dict(M=32768, N=32768, K=32)),
    ("L1_13_symmetric", "mm", dict(M=4096, N=4096, K=4096)),
]

SWEEP_SHAPES = {"L1_2_standard", "L2_linear_1024x8192x8192"}
SWEEP = [  # BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, PERSISTENT, warps, stages
    (128, 128, 32, 8, 1, 8, 3),
    (128, 256, 32, 8, 0, 8, 3),
    (128, 256, 32, 8, 1, 8, 4),
    (256, 128, 32, 8, 1, 8, 3),
    (128, 128, 64, 8, 1, 8, 3),
]


def program(kind, d):
    """A KernelBench-format program computing one product."""
    if kind == "linear":
        return f"""import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.gemm(x)

M = {d['M']}
K = {d['K']}
N = {d['N']}

def get_inputs():
    return [torch.rand(M, K)]

def get_init_inputs():
    return [K, N]
"""
    shapes = {
        "mm": ("(M, K)", "(K, N)", "torch.matmul(A, B)"),
        "mm_tA": ("(K, M)", "(K, N)", "torch.matmul(A.T, B)"),
        "mm_tB": ("(M, K)", "(N, K)", "torch.matmul(A, B.T)"),
        "mm_tAB": ("(K, M)", "(N, K)", "torch.matmul(A.T, B.T)"),
        "bmm": ("(b, M, K)", "(b, K, N)", "torch.bmm(A, B)"),
    }
    sa, sb, expr = shapes[kind]
    consts = "\n".join(f"{k} = {v}" for k, v in d.items())
    return f"""import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return {expr}

{consts}

def get_inputs():
    return [torch.rand{sa}, torch.rand{sb}]

def get_init_inputs():
    return []
"""


def flops(kind, d):
    return 2.0 * d["M"] * d["N"] * d["K"] * d.get("b", 1)


def load(path, tag):
    spec = importlib.util.spec_from_file_location(f"bench_{tag}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


LAUNCH = re.compile(r"BLOCK_M=\d+, BLOCK_N=\d+, BLOCK_K=\d+, GROUP_M=\d+, PERSISTENT=\d+, "
                    r"num_warps=\d+, num_stages=\d+")
GRID = re.compile(r"\[\(min\((\d+), _drtc_sms\(\)\),\)\]|\[\((\d+),\)\]")


def with_config(source, cfg, d, kind):
    """The module's launch at another configuration (the kernel is generic over these
    constexprs: exactly what `drtc compile --search` tries)."""
    bm, bn, bk, gm, pers, w, s = cfg
    launch = (f"BLOCK_M={bm}, BLOCK_N={bn}, BLOCK_K={bk}, GROUP_M={gm}, PERSISTENT={pers}, "
              f"num_warps={w}, num_stages={s}")
    tiles = math.ceil(d["M"] / bm) * math.ceil(d["N"] / bn) * d.get("b", 1)
    grid = f"min({tiles}, _drtc_sms())" if pers else str(tiles)
    out = LAUNCH.sub(launch, source)
    out = re.sub(r"NUM_PROGS=(min\(\d+, _drtc_sms\(\)\)|\d+),", f"NUM_PROGS={grid},", out)
    out = GRID.sub(f"[({grid},)]", out)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--drtc", required=True, help="the drtc binary")
    ap.add_argument("--out", required=True, help="JSON lines, one per measurement")
    ap.add_argument("--sweep", action="store_true", help="also try other launch configs")
    ap.add_argument("--only", action="append", default=[], help="shape names containing this")
    ap.add_argument("--budget-s", type=float, default=1e9, help="stop starting new shapes after")
    args = ap.parse_args()

    import torch
    import triton
    from triton.testing import do_bench

    t_start = time.time()
    dev = torch.cuda.get_device_name(0)
    work = tempfile.mkdtemp(prefix="drtc_gemm_bench_")
    out = open(args.out, "a")
    table = []

    def emit(row):
        row.update(device=dev, torch=torch.__version__, triton=triton.__version__)
        out.write(json.dumps(row) + "\n")
        out.flush()
        table.append(row)
        print(f"{row['shape']:28s} {row['impl']:34s} {row.get('ms', float('nan')):9.4f} ms "
              f"{row.get('tflops', float('nan')):7.1f} TFLOP/s  rel {row.get('rel_err', -1):.1e} "
              f"maxrel {row.get('max_rel', -1):.1e} {row.get('error', '')}", flush=True)

    for name, kind, d in SHAPES:
        if args.only and not any(o in name for o in args.only):
            continue
        if time.time() - t_start > args.budget_s:
            print(f"budget spent: skipping {name}", flush=True)
            continue
        fl = flops(kind, d)
        src = os.path.join(work, f"{name}.py")
        with open(src, "w") as f:
            f.write(program(kind, d))
        ref_mod = load(src, name + "_ref")
        torch.manual_seed(0)
        init = ref_mod.get_init_inputs()
        model = ref_mod.Model(*init).cuda()
        inputs = [x.cuda() for x in ref_mod.get_inputs()]
        with torch.no_grad():
            if kind == "linear":
                exact = torch.nn.functional.linear(inputs[0].double(), model.gemm.weight.double(),
                                                   model.gemm.bias.double())
            else:
                exact = model(*[x.double() for x in inputs])
        exact_norm = float(torch.linalg.vector_norm(exact))

        def check(y):
            diff = (y.double() - exact)
            rel = float(torch.linalg.vector_norm(diff)) / (1e-6 + exact_norm)
            max_rel = float((diff.abs() / (exact.abs() + 1e-6)).max())
            ok_1e4 = bool(torch.allclose(y.double(), exact, atol=1e-4, rtol=1e-4))
            return rel, max_rel, ok_1e4

        def measure(impl, fn, extra=None):
            row = {"shape": name, "kind": kind, **d, "impl": impl, "flops": fl}
            row.update(extra or {})
            try:
                with torch.no_grad():
                    y = fn()
                    torch.cuda.synchronize()
                    row["rel_err"], row["max_rel"], row["allclose_1e-4_vs_fp64"] = check(y)
                    del y
                    ms = do_bench(fn, warmup=25, rep=100, return_mode="median")
                row["ms"] = ms
                row["tflops"] = fl / (ms * 1e-3) / 1e12
            except Exception as e:  # a variant that fails to compile or run is a result
                row["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:200]}"
            emit(row)

        for prec, label in (("high", "cublas_tf32"), ("highest", "cublas_fp32")):
            torch.set_float32_matmul_precision(prec)
            measure(label, lambda: model(*inputs))
        torch.set_float32_matmul_precision("highest")
        for policy in ("tf32", "fp32"):
            gen = os.path.join(work, f"{name}_{policy}.py")
            rep = os.path.join(work, f"{name}_{policy}.json")
            r = subprocess.run([args.drtc, "compile", src, "-o", gen, "--no-verify", "--device",
                                "cuda", "--precision", policy, "--report", rep],
                               capture_output=True, text=True)
            if r.returncode != 0:
                emit({"shape": name, "impl": f"drtc_{policy}", "error": r.stderr[-300:]})
                continue
            report = json.load(open(rep))
            gemm = [x["gemm"] for x in report["regions"] if x.get("gemm")]
            choice = gemm[0]["implementation"] if gemm else "none"
            cfg = report["regions"][0].get("kernel") or {}
            mod = load(gen, f"{name}_{policy}")
            cand = mod.ModelNew(*init).cuda()
            cand.load_state_dict(model.state_dict())
            extra = {"choice": choice, "config": cfg.get("config"),
                     "reason": gemm[0]["reason"] if gemm else None, "tma": mod._DRTC_TMA}
            measure(f"drtc_{policy}", lambda: cand(*inputs), extra)
            if policy == "tf32" and mod._DRTC_TMA:
                mod._DRTC_TMA = False
                measure("drtc_tf32_ptr", lambda: cand(*inputs), dict(extra, tma=False))
                mod._DRTC_TMA = True
            if args.sweep and name in SWEEP_SHAPES and choice.startswith("triton"):
                source = open(gen).read()
                for c in SWEEP:
                    if time.time() - t_start > args.budget_s:
                        break
                    vpath = os.path.join(work, f"{name}_sweep_{'_'.join(map(str, c))}.py")
                    with open(vpath, "w") as f:
                        f.write(with_config(source, c, d, kind))
                    vm = load(vpath, os.path.basename(vpath)[:-3])
                    vc = vm.ModelNew(*init).cuda()
                    vc.load_state_dict(model.state_dict())
                    label = f"sweep_{policy}:" + "/".join(map(str, c))
                    measure(label, lambda: vc(*inputs), dict(extra, config=label))
                    del vc, vm
            del cand, mod
        del model, inputs, exact
        torch.cuda.empty_cache()

    # the summary: drtc against cuBLAS at equal precision (TFLOP/s); "drtc" is what
    # `drtc compile` emits by default, "best" the fastest launch configuration tried
    print("\nshape                        cuBLAS-tf32  drtc-tf32  best-tf32  ratio  best | "
          "cuBLAS-fp32  drtc-fp32  best-fp32  ratio  best")
    by = {}
    for r in table:
        by.setdefault(r["shape"], {})[r["impl"]] = r
    nan = float("nan")

    def best(rs, prefix, default):
        vals = [v.get("tflops", nan) for k, v in rs.items()
                if k == default or k.startswith(prefix)]
        vals = [v for v in vals if v == v]
        return max(vals) if vals else nan

    for name, rs in by.items():
        def tf(k):
            return rs.get(k, {}).get("tflops", nan)
        bt = best(rs, "sweep_tf32:", "drtc_tf32")
        bf = best(rs, "sweep_fp32:", "drtc_fp32")
        ct, cf = tf("cublas_tf32"), tf("cublas_fp32")
        print(f"{name:28s} {ct:11.1f} {tf('drtc_tf32'):10.1f} {bt:10.1f} "
              f"{tf('drtc_tf32') / ct:6.2f} {bt / ct:5.2f} | {cf:11.1f} {tf('drtc_fp32'):10.1f} "
              f"{bf:10.1f} {tf('drtc_fp32') / cf:6.2f} {bf / cf:5.2f}")
    print(f"\n{time.time() - t_start:.0f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
