import torch


def get_inputs():
    tensor_0 = torch.randn([2, 3, 8, 16], dtype=torch.float32)
    tensor_1 = torch.randn([16, 8], dtype=torch.float32)
    tensor_2 = torch.randn([6, 8, 5], dtype=torch.float32)
    tensor_3 = torch.randn([6, 5, 7], dtype=torch.float32)
    return [tensor_0, tensor_1, tensor_2, tensor_3]


def fused_operator(tensor_0, tensor_1, tensor_2, tensor_3):
    tensor_4 = torch.matmul(tensor_0, tensor_1)
    tensor_5 = torch.transpose(tensor_4, -2, -1)
    tensor_6 = torch.bmm(tensor_2, tensor_3)
    tensor_7 = torch.matmul(tensor_5, tensor_0)
    return [tensor_7, tensor_6]
