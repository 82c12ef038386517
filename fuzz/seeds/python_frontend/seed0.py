import torch


def get_inputs():
    tensor_0 = torch.randn([4, 8, 16], dtype=torch.float32)
    tensor_1 = torch.randn([8, 16], dtype=torch.float32)
    tensor_2 = torch.randn([4, 1, 16], dtype=torch.float32)
    return [tensor_0, tensor_1, tensor_2]


def fused_operator(tensor_0, tensor_1, tensor_2):
    tensor_3 = torch.add(tensor_0, tensor_1)
    tensor_4 = torch.sub(tensor_3, tensor_2)
    tensor_5 = torch.mul(tensor_4, tensor_1)
    tensor_6 = torch.div(tensor_5, tensor_2)
    tensor_7 = torch.maximum(tensor_6, tensor_0)
    tensor_8 = torch.minimum(tensor_7, tensor_2)
    tensor_9 = torch.lerp(tensor_8, tensor_0, tensor_2)
    return [tensor_9]
