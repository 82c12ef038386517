# Seed-format reference whose float64 run cannot get its memory (as a large program's
# float64 copy beside other workers): relu(x + b) * 3 in fp32, MemoryError in float64.
import torch


def get_inputs():
    x = torch.randn([5, 37], dtype=torch.float32)
    b = torch.randn([37], dtype=torch.float32)
    return [x, b]


def fused_operator(x, b):
    if x.dtype == torch.float64:
        raise MemoryError("out of memory (the float64 copy)")
    return [torch.relu(torch.add(x, b)) * 3.0]
