import torch
import torch.nn as nn


class Model(nn.Module):
    """A convolution, a per-channel bias, ReLU, a GroupNorm of 2 channels per group (too few for channels-last) and a scaled softmax over channels."""

    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.02)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.conv(x)
        x = torch.relu(x + self.bias)
        x = self.group_norm(x)
        return torch.softmax(x * 2.0, dim=1)


batch_size = 8
in_channels = 3
out_channels = 16
height, width = 32, 32
kernel_size = 3
num_groups = 8


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]
