import torch


def get_inputs():
    tensor_0 = torch.randn([4, 16, 32], dtype=torch.float32)
    return [tensor_0]


def fused_operator(tensor_0):
    tensor_1 = torch.sum(tensor_0, dim=1, keepdim=True)
    tensor_2 = torch.mean(tensor_0, dim=2, keepdim=False)
    tensor_3 = torch.max(tensor_0, dim=1, keepdim=True).values
    tensor_4 = torch.min(tensor_0, dim=2).values
    tensor_5 = torch.argmax(tensor_0, dim=0).float()
    tensor_6 = torch.argmin(tensor_0, dim=2, keepdim=True).float()
    tensor_7 = torch.var(tensor_0, dim=1, keepdim=True)
    tensor_8 = torch.norm(tensor_0, dim=2, keepdim=True)
    tensor_9 = torch.add(tensor_1, tensor_8)
    return [tensor_9, tensor_2, tensor_3, tensor_4, tensor_5, tensor_6, tensor_7]
