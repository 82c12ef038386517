# class: strict — computes with PyTorch in a helper thread (torch-function modes are thread-local, so the recorder on the calling thread sees nothing)
import threading

import torch


def triton_fused_operator(x, b):
    box = []
    t = threading.Thread(target=lambda: box.append(torch.relu(x + b) * 2.0 - 0.5))
    t.start()
    t.join()
    return [box[0]]
