# Broken KernelBench candidate: right outputs from batch statistics, but BatchNorm's
# running statistics are never updated.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features)

    def forward(self, x):
        y = F.linear(x, self.linear.weight, self.linear.bias)
        mean = y.mean(0)
        var = y.var(0, unbiased=False)
        y = (y - mean) / torch.sqrt(var + self.bn.eps) * self.bn.weight + self.bn.bias
        return torch.relu(y)
