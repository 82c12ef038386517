import torch
import torch.nn as nn


class Model(nn.Module):
    """conv_layout_sensitive.py with the amplification written as two scalar multiplies,
    which the rewrites fold into one: the module they change is channels-last too, and
    the layout (not the rewrites) is what breaks the fp32 rule."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, bias=False)

    def forward(self, x):
        return torch.sin((self.conv(x) * 4.0) * 25000.0)


batch_size = 2
in_channels = 32
out_channels = 32
height, width = 16, 16
kernel_size = 3


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
