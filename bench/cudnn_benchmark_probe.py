"""cuDNN's algorithm choice on KernelBench convolution tasks: PyTorch's default (heuristic,
`torch.backends.cudnn.benchmark = False`) against cuDNN's own timing of its algorithms
(`benchmark = True`), the reference `Model` in eager mode on the same inputs.

usage: python3 bench/cudnn_benchmark_probe.py TASK.py [TASK.py ...] [--calls 20]

Per task: the eager forward's CUDA-event median over --calls calls, L2 flushed before each
(PyTorch's defaults otherwise: cuDNN convolutions in TF32), with the heuristic, then with
benchmark mode (its first call, the one where benchmark mode is to time the algorithms, is a
warm-up and reported apart: one no slower than the rest means nothing was seen timed), and the largest relative difference of the two outputs. A probe to decide whether
drtc's library convolutions should race benchmark mode, not a benchmark of record.
"""
import argparse
import time

import torch

from cuda_timing import device_line, l2_flush, median_ms  # bench/ is on the path when run as a script
from graphs_check import cuda_task


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tasks", nargs="+")
    p.add_argument("--calls", type=int, default=20)
    args = p.parse_args()
    flush = l2_flush()
    print(f"{device_line()}; cudnn.allow_tf32 {torch.backends.cudnn.allow_tf32}")
    print("| task | heuristic ms | benchmark ms | heuristic / benchmark | benchmark's first call ms | max rel diff |")
    print("|---|---|---|---|---|---|")
    for path in args.tasks:
        name = path.rsplit("/", 1)[-1].removesuffix(".py")
        try:
            m, model = cuda_task(path)
            inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in m.get_inputs()]
            with torch.no_grad():
                torch.backends.cudnn.benchmark = False
                ref = model(*inputs)
                heur = median_ms(lambda: model(*inputs), args.calls, before=flush)
                torch.backends.cudnn.benchmark = True
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                out = model(*inputs)
                torch.cuda.synchronize()
                first = (time.perf_counter() - t0) * 1e3
                bench = median_ms(lambda: model(*inputs), args.calls, before=flush)
                torch.backends.cudnn.benchmark = False
                diff = float((out.double() - ref.double()).abs().max() / (ref.double().abs().max() + 1e-12))
            print(f"| {name} | {heur:.4f} | {bench:.4f} | {heur / bench:.2f} | {first:.1f} | {diff:.1e} |", flush=True)
            del model, inputs, ref, out
            torch.cuda.empty_cache()
        except Exception as e:  # a task that cannot run here is reported, not fatal
            print(f"| {name} | error: {type(e).__name__}: {str(e)[:120]} | | | | |", flush=True)
            torch.backends.cudnn.benchmark = False


if __name__ == "__main__":
    main()
