"""Times every depthwise convolution (one input channel per group) of KernelBench models in
both memory layouts, as cuDNN computes them: NCHW input and weight against channels-last
(NHWC) ones, fp32 tensors at PyTorch's default flags (the same for both sides), each call
after an L2 flush.

    python bench/depthwise_layout_probe.py MODEL.py [MODEL.py ...]

The convolutions and their input shapes come from one forward of each model on the GPU
(forward hooks on `nn.Conv2d` modules whose weight has one channel per group). Per
convolution: the shape, the bytes its input and output must move, the median of NCHW and
channels-last calls, and their ratio; last, per model, the sums. This is the measurement a
layout rule for depthwise convolutions needs (`backends/src/layout.rs`'s `auto` keeps
grouped convolutions, depthwise ones included, NCHW).
"""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_timing import device_line, l2_flush, load_program, median_ms  # noqa: E402


def depthwise_calls(path):
    mod = load_program(path, "drtc_depthwise_probe_mod")
    torch.manual_seed(0)
    model = mod.Model(*mod.get_init_inputs()).cuda()
    seen = []

    def hook(m, args, _out):
        seen.append((m, tuple(args[0].shape)))

    for m in model.modules():
        if isinstance(m, nn.Conv2d) and m.groups > 1 and m.weight.shape[1] == 1:
            m.register_forward_hook(hook)
    with torch.no_grad():
        model(*[x.cuda() if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()])
    return seen


def main():
    print(device_line())
    flush = l2_flush()
    for path in sys.argv[1:]:
        name = os.path.basename(path)
        total = [0.0, 0.0]
        for m, shape in depthwise_calls(path):
            x = torch.randn(shape, device="cuda")
            xc = x.contiguous(memory_format=torch.channels_last)
            wc = m.weight.detach().contiguous(memory_format=torch.channels_last)
            w = m.weight.detach().contiguous()
            b = None if m.bias is None else m.bias.detach()
            args = dict(stride=m.stride, padding=m.padding, dilation=m.dilation, groups=m.groups)
            with torch.no_grad():
                y = torch.nn.functional.conv2d(x, w, b, **args)
                yc = torch.nn.functional.conv2d(xc, wc, b, **args)
                same = torch.allclose(y, yc, atol=1e-5, rtol=1e-5)
                nchw = median_ms(lambda: torch.nn.functional.conv2d(x, w, b, **args), 30, flush, 3)
                cl = median_ms(lambda: torch.nn.functional.conv2d(xc, wc, b, **args), 30, flush, 3)
            total[0] += nchw
            total[1] += cl
            mb = (x.numel() + y.numel()) * 4 / 1e6
            print(f"{name} in {list(shape)} k{list(m.kernel_size)} s{list(m.stride)}: "
                  f"{mb:.1f} MB; nchw {nchw:.4f} ms, channels-last {cl:.4f} ms, "
                  f"nchw/cl {nchw / cl:.2f}; same values {same}", flush=True)
        if total[1] > 0:
            print(f"{name} total: nchw {total[0]:.4f} ms, channels-last {total[1]:.4f} ms, "
                  f"nchw/cl {total[0] / total[1]:.2f}", flush=True)


if __name__ == "__main__":
    main()
