# class: strict — computes with ATen operators called directly through torch.ops.aten (OpOverloads skip the torch-function layer)
import torch

aten = torch.ops.aten


def triton_fused_operator(x, b):
    s = aten.add.Tensor(x, b)
    s = aten.relu.default(s)
    s = aten.mul.Tensor(s, 2.0)
    return [aten.sub.Tensor(s, 0.5)]
