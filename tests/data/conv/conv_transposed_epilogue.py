import torch
import torch.nn as nn


class Model(nn.Module):
    """A transposed convolution (strided, dilated, padded, with output padding and a bias:
    output pixels that no input pixel reaches hold the bias alone), then a pointwise
    epilogue."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.ConvTranspose2d(
            in_channels, out_channels, (3, 2), stride=(2, 3), padding=(1, 0),
            output_padding=(1, 2), dilation=(2, 1),
        )

    def forward(self, x):
        return torch.sigmoid(self.conv(x)) - 0.25


batch_size = 2
in_channels, out_channels = 8, 6
height, width = 5, 4


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
