# KernelBench-format reference: BatchNorm1d (training mode) -> Linear without bias ->
# BatchNorm1d. The second BatchNorm's running_mean is exactly zero in exact arithmetic (a
# linear map of zero-mean columns), so what fp32 stores there is rounding noise.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.bn1 = nn.BatchNorm1d(features)
        self.linear = nn.Linear(features, features, bias=False)
        self.bn2 = nn.BatchNorm1d(features)

    def forward(self, x):
        return self.bn2(self.linear(self.bn1(x)))


def get_inputs():
    return [torch.randn(256, 64) * 3.0 + 1.0]


def get_init_inputs():
    return [64]
