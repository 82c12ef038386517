import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed convolutions of stride 1: a padded 3-D one with a bias under a ReLU, and a
    dilated, grouped and padded 1-D one without a bias (both computed as convolutions with
    the flipped kernel), and a 2-D one (kept transposed)."""

    def __init__(self):
        super().__init__()
        self.ct3 = nn.ConvTranspose3d(4, 6, (3, 2, 3), padding=(0, 1, 2))
        self.ct1 = nn.ConvTranspose1d(8, 6, 3, padding=1, dilation=2, groups=2, bias=False)
        self.ct2 = nn.ConvTranspose2d(4, 5, 3, padding=1)

    def forward(self, x, y, z):
        return torch.relu(self.ct3(x)), self.ct1(y), self.ct2(z)


def get_inputs():
    return [torch.randn(2, 4, 3, 5, 6), torch.randn(2, 8, 10), torch.randn(2, 4, 7, 6)]


def get_init_inputs():
    return []
