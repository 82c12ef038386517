import torch
import torch.nn as nn


class Model(nn.Module):
    """A convolution whose result is amplified 1e5 times before a sine: the last-bit
    differences of another summation order (a channels-last convolution picks other
    kernels) become visible, while the NCHW call is the reference's own."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, bias=False)

    def forward(self, x):
        return torch.sin(self.conv(x) * 100000.0)


batch_size = 2
in_channels = 32
out_channels = 32
height, width = 16, 16
kernel_size = 3


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
