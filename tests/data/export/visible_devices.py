import os

import torch
import torch.nn as nn

# A test program: its input's width is 3 plus the length of CUDA_VISIBLE_DEVICES as the
# program sees it, so the exported graph says which devices the export was given.


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(2, 3 + len(os.environ.get("CUDA_VISIBLE_DEVICES", "")))]


def get_init_inputs():
    return []
