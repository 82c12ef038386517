import torch


def get_inputs():
    return [
        torch.randn([4, 8], dtype=torch.float32),
        torch.randn([8], dtype=torch.float32),
    ]


def fused_operator(x, w):
    tensor_0 = torch.mul(x, w)
    tensor_1 = torch.sigmoid(tensor_0)
    return [tensor_1]
