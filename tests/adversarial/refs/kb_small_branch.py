# KernelBench reference with a branch scaled by a small learned parameter: at its initial
# value (1e-5) the branch is below allclose's atol, but it is part of the program and the
# parameter is learned (any state_dict may hold another value).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.gate = nn.Linear(in_features, out_features)
        self.small = nn.Parameter(torch.full((out_features,), 1e-5))

    def forward(self, x):
        main = torch.relu(self.linear(x))
        branch = self.small * torch.sigmoid(self.gate(x))
        return main + branch


batch_size = 4
in_features = 37
out_features = 24


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
