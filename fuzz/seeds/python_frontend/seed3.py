import torch


def get_inputs():
    tensor_0 = torch.randn([8, 64], dtype=torch.float32)
    return [tensor_0]


def fused_operator(tensor_0):
    tensor_1 = torch.relu(tensor_0)
    tensor_2 = torch.nn.functional.leaky_relu(tensor_0, negative_slope=0.2)
    tensor_3 = torch.sigmoid(tensor_2)
    tensor_4 = torch.tanh(tensor_1)
    tensor_5 = torch.nn.functional.silu(tensor_4)
    tensor_6 = torch.nn.functional.gelu(tensor_5)
    tensor_7 = torch.selu(tensor_6)
    tensor_8 = torch.nn.functional.hardsigmoid(tensor_7)
    tensor_9 = torch.nn.functional.softplus(tensor_8, beta=2.0, threshold=10.0)
    return [tensor_9, tensor_3]
