"""Probe (no drtc): an average pool after a stride-1 convolution computed as one strided
convolution whose weight is the original weight convolved with the pool's box filter,

    avg_pool(conv(x, W, b, padding=p), k, s) == conv(x, W (*) box_k / k^d, b, stride=s, padding=p)

exact in real arithmetic. Times both forms with cuDNN's TF32 allowed (PyTorch's default)
and disallowed, and checks each against float64 (relative Frobenius error, allclose 1e-4
against the default-precision reference and against float64; accuracy on the batch's first 4 images).

    python3 bench/conv_pool_probe.py [--shapes N,C,H,W,O,K,P ...] [--json out.jsonl]
"""

import argparse
import json

import torch
import torch.nn.functional as F

from cuda_timing import median_ms  # bench/ is on the path when run as a script


def folded_weight(w, k):
    """W (*) box_k / k^2, computed in float64 and rounded once to w's dtype."""
    o, i, kh, kw = w.shape
    box = torch.full((1, 1, k, k), 1.0 / (k * k), dtype=torch.float64, device=w.device)
    w64 = w.double().reshape(o * i, 1, kh, kw)
    wf = F.conv2d(w64, box, padding=k - 1)
    return wf.reshape(o, i, kh + k - 1, kw + k - 1).to(w.dtype)


def time_ms(fn, reps=10):
    return median_ms(fn, reps, warmup=3)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", nargs="*", default=["128,8,384,384,64,3,4", "128,8,256,256,64,3,2",
                                                  "64,64,128,128,128,3,2", "32,16,128,128,32,5,2"])
    p.add_argument("--json", default=None)
    args = p.parse_args()
    out = open(args.json, "w") if args.json else None
    torch.manual_seed(0)
    for spec in args.shapes:
        n, c, h, wd, o, k, pk = map(int, spec.split(","))
        x = torch.randn(n, c, h, wd, device="cuda")
        w = torch.randn(o, c, k, k, device="cuda") / (c * k * k) ** 0.5
        b = torch.randn(o, device="cuda")
        with torch.no_grad():
            # accuracy on the first 4 images (a float64 convolution of the whole batch is slow)
            truth = F.avg_pool2d(F.conv2d(x[:4].double(), w.double(), b.double()), pk)
            ref = F.avg_pool2d(F.conv2d(x, w, b), pk)[:4]
            for tf32 in (True, False):
                torch.backends.cudnn.allow_tf32 = tf32
                wf = folded_weight(w, pk)
                variants = {
                    "conv_then_pool": lambda: F.avg_pool2d(F.conv2d(x, w, b), pk),
                    "folded_conv": lambda: F.conv2d(x, wf, b, stride=pk),
                    "folded_conv_with_fold": lambda: F.conv2d(x, folded_weight(w, pk), b, stride=pk),
                }
                for name, fn in variants.items():
                    y = fn()[:4]
                    ms = time_ms(fn)
                    rel = ((y.double() - truth).norm() / truth.norm()).item()
                    row = {"shape": spec, "variant": name, "cudnn_tf32": tf32, "ms": ms, "rel_f64": rel,
                           "allclose_ref": bool(torch.allclose(y, ref, atol=1e-4, rtol=1e-4)),
                           "allclose_f64": bool(torch.allclose(y.double(), truth, atol=1e-4, rtol=1e-4))}
                    print(f"{spec:24} {name:22} tf32={int(tf32)} {ms:8.4f} ms  rel {rel:.2e}  "
                          f"ref {'Y' if row['allclose_ref'] else 'n'}  f64 {'Y' if row['allclose_f64'] else 'n'}",
                          flush=True)
                    if out:
                        out.write(json.dumps(row) + "\n")
                        out.flush()
            torch.backends.cudnn.allow_tf32 = True
        del x, truth, ref
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
