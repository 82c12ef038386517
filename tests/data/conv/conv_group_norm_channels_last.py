import torch
import torch.nn as nn


class Model(nn.Module):
    """A convolution read by a group norm with 8 channels per group (continues the
    channels-last layout: its columns are walked in memory order, a group's 8 adjacent
    channels at a time) and by a channel max (an arg-free channel reduction)."""

    def __init__(self, in_channels, out_channels, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.gn = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        y = torch.nn.functional.gelu(self.conv(x))
        z = self.gn(y)
        return z * torch.amax(y, dim=1, keepdim=True)


batch_size = 3
in_channels = 3
out_channels = 32
num_groups = 4
height, width = 9, 7


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, num_groups]
