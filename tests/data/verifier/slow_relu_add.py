# Correct values, slowly: every call sleeps 0.4 s first (a long verification, for the
# shared pass's giving way to timing between trials).
import time

import torch


def triton_fused_operator(x, b):
    time.sleep(0.4)
    return [torch.relu(x + b) * 3.0]
