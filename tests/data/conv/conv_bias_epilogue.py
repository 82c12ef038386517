import torch
import torch.nn as nn


class Model(nn.Module):
    """A convolution with its bias, then a pointwise epilogue with a per-channel bias."""

    def __init__(self, in_channels, out_channels, kernel_size, bias_shape, scale):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scale = scale

    def forward(self, x):
        x = self.conv(x)
        x = torch.tanh(x) * self.scale
        return torch.relu(x + self.bias)


batch_size = 2
in_channels = 3
out_channels = 16
height, width = 6, 5
kernel_size = 3
bias_shape = (out_channels, 1, 1)
scale = 1.5


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape, scale]
