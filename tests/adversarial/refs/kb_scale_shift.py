# KernelBench reference: Linear, then a learned per-feature affine (scale starts at ones,
# shift at zeros, as such layers usually do), then tanh.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.ones(out_features))
        self.shift = nn.Parameter(torch.zeros(out_features))

    def forward(self, x):
        y = self.linear(x)
        return torch.tanh(y * self.scale + self.shift)


batch_size = 4
in_features = 37
out_features = 16


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
