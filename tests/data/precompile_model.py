import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, c_in, c_out, groups):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3)
        self.bn = nn.BatchNorm2d(c_out)
        self.gn = nn.GroupNorm(groups, c_out)

    def forward(self, x):
        x = torch.tanh(self.bn(self.conv(x)))
        x = nn.functional.max_pool2d(x, 2)
        return self.gn(x)


def get_inputs():
    return [torch.randn(2, 3, 10, 10)]


def get_init_inputs():
    return [3, 8, 4]
