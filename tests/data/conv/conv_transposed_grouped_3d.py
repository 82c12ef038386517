import torch
import torch.nn as nn


class Model(nn.Module):
    """A grouped 3-D transposed convolution (stride 2, padding 1, output padding 1, 2 groups
    of 2 input and 3 output channels, with a bias), then tanh."""

    def __init__(self, in_channels, out_channels, groups):
        super().__init__()
        self.conv = nn.ConvTranspose3d(
            in_channels, out_channels, 3, stride=2, padding=1, output_padding=1,
            groups=groups,
        )

    def forward(self, x):
        return torch.tanh(self.conv(x))


batch_size = 2
in_channels, out_channels, groups = 4, 6, 2
depth, height, width = 3, 4, 5


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, groups]
