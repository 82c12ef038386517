"""Transposed convolutions of stride 1 as the convolutions they equal: cuDNN's transposed
path against its forward path on the same operands.

usage: python3 bench/conv_transpose_probe.py TASK.py [TASK.py ...] [--calls 10]

A transposed convolution of stride 1 (any dilation d, padding p, groups g, no output
padding) equals the convolution of its input with the kernel flipped along every spatial
dim, input and output channels swapped within each group, padding d * (k - 1) - p and the
same dilation and groups (where that padding is not negative). Per task (the first
`nn.ConvTranspose{1,2,3}d` of the reference `Model`, on the task's inputs): the CUDA-event
median of `--calls` calls, L2 flushed before each, of the transposed call and of the
equivalent convolution, each with cuDNN's TF32 off (drtc's fp32 policy) and on (PyTorch's
default), and the largest difference of the equivalent's output from the transposed one's
(TF32 off), relative to the output's largest magnitude. A probe to decide whether drtc
should lower such convolutions so, not a benchmark of record.
"""
import argparse

import torch
import torch.nn.functional as F

from cuda_timing import device_line, l2_flush, median_ms  # bench/ is on the path when run as a script
from graphs_check import cuda_task


def equivalent_weight(w, groups, dims):
    """[Cin, Cout/g, k...] (transposed) -> [Cout, Cin/g, k...] (forward), flipped."""
    cin, cout_g = w.shape[0], w.shape[1]
    k = list(w.shape[2:])
    w = w.reshape(groups, cin // groups, cout_g, *k).transpose(1, 2)
    w = w.reshape(groups * cout_g, cin // groups, *k)
    return w.flip(list(range(2, 2 + dims)))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tasks", nargs="+")
    p.add_argument("--calls", type=int, default=10)
    args = p.parse_args()
    flush = l2_flush()
    print(device_line())
    print("| task | transposed ms (TF32 off) | as a convolution ms (TF32 off) | off: ratio | "
          "transposed ms (TF32 on) | as a convolution ms (TF32 on) | on: ratio | max rel diff |")
    print("|---|---|---|---|---|---|---|---|")
    for path in args.tasks:
        name = path.rsplit("/", 1)[-1].removesuffix(".py")
        try:
            m, model = cuda_task(path)
            conv = next(c for c in model.modules()
                        if isinstance(c, (torch.nn.ConvTranspose1d, torch.nn.ConvTranspose2d,
                                          torch.nn.ConvTranspose3d)))
            dims = conv.weight.dim() - 2
            if any(s != 1 for s in conv.stride) or any(o != 0 for o in conv.output_padding):
                print(f"| {name} | not stride 1 |  |  |  |  |  |  |")
                continue
            pad = [d * (k - 1) - q for d, k, q in
                   zip(conv.dilation, conv.weight.shape[2:], conv.padding)]
            if min(pad) < 0:
                print(f"| {name} | negative equivalent padding |  |  |  |  |  |  |")
                continue
            x = next(t for t in m.get_inputs() if isinstance(t, torch.Tensor)).cuda()
            w, b = conv.weight.detach(), conv.bias
            we = equivalent_weight(w, conv.groups, dims).contiguous()
            tconv = getattr(F, f"conv_transpose{dims}d")
            fconv = getattr(F, f"conv{dims}d")

            def transposed():
                return tconv(x, w, b, 1, conv.padding, 0, conv.groups, conv.dilation)

            def forward():
                return fconv(x, we, b, 1, pad, conv.dilation, conv.groups)

            row = []
            with torch.no_grad():
                for tf32 in (False, True):
                    torch.backends.cudnn.allow_tf32 = tf32
                    a = median_ms(transposed, args.calls, flush, warmup=2)
                    c = median_ms(forward, args.calls, flush, warmup=2)
                    row += [f"{a:.4f}", f"{c:.4f}", f"{a / c:.2f}"]
                torch.backends.cudnn.allow_tf32 = False
                ref, got = transposed(), forward()
                rel = ((got - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()
            torch.backends.cudnn.allow_tf32 = True
            print(f"| {name} | " + " | ".join(row) + f" | {rel:.2e} |", flush=True)
            del model, x, w, we
            torch.cuda.empty_cache()
        except Exception as e:  # a task that fails is reported, the others still run
            print(f"| {name} | error: {type(e).__name__}: {str(e)[:80]} |  |  |  |  |  |  |",
                  flush=True)
            torch.backends.cudnn.allow_tf32 = True


if __name__ == "__main__":
    main()
