//! The Python subset, construct by construct: each program lowers and its IR text is
//! snapshotted, so a change in lowering shows up as a diff.

use drtc_frontends::lower;

fn ir(src: &str) -> String {
    match lower(src) {
        Ok(l) => {
            let errors: Vec<_> = drtc_ir::verify(&l.graph)
                .into_iter()
                .filter(|e| e.is_error())
                .collect();
            assert!(errors.is_empty(), "{errors:?}");
            drtc_ir::text::print(&l.graph)
        }
        Err(e) => panic!("{}", e.render("prog.py", src)),
    }
}

#[test]
fn constants_docstrings_and_arithmetic() {
    let src = r#"
"""A module docstring."""
import torch
import torch.nn as nn
import math

N = 2048 * 2 // 4   # comment
H = W = 8
depth, height = 3, N - 1020; scale = math.sqrt(2.0 / math.pi)

class Model(nn.Module):
    """Docstring."""
    def __init__(self, dim: int, eps: float = 1e-5):
        super(Model, self).__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # the new-gelu formula, written out
        y = 0.5 * x * (1.0 + torch.tanh(scale * (x + 0.044715 * torch.pow(x, 3.0))))
        m = torch.max(y, dim=self.dim)[0]
        v, i = torch.max(y, self.dim, keepdim=True)
        z = -m ** 2 + y.mean(dim=(1,)) + torch.clamp(m, min=float("-inf"), max=1.0)
        return z, i

def get_inputs():
    return [torch.rand(depth, height, H)]

def get_init_inputs():
    return [1]
"#;
    insta::assert_snapshot!(ir(src));
}

#[test]
fn layers_parameters_and_buffers() {
    let src = r#"
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, c_in, c_out, k, bias_shape):
        super().__init__()
        self.conv = nn.ConvTranspose2d(c_in, c_out, k, stride=2, padding=1, output_padding=1, groups=2)
        self.bn = nn.BatchNorm2d(c_out)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.register_buffer("scale", torch.ones(1))
        self.fc = nn.Linear(c_out, 3, bias=False)

    def forward(self, x):
        x = self.bn(self.conv(x)) + self.bias
        x = x * self.scale
        x = x.permute(0, 2, 3, 1).contiguous()
        return self.fc(x)[..., 1:3, None].view(2, -1)

def get_inputs():
    return [torch.randn(2, 4, 5, 5)]

def get_init_inputs():
    return [4, 6, 3, (6, 1, 1)]
"#;
    insta::assert_snapshot!(ir(src));
}

#[test]
fn seed_format_with_scalar_promotion() {
    let src = r#"
import torch

def get_inputs():
    tensor_0 = torch.randn([4, 8], dtype=torch.float16)
    tensor_1 = torch.randint(0, 5, (4, 8))
    return [tensor_0, tensor_1]

def fused_operator(tensor_0, tensor_1):
    tensor_2 = tensor_0 * 2.5
    tensor_3 = tensor_1 * 2.5
    tensor_4 = tensor_1 + 1
    tensor_5 = torch.argmax(tensor_2, dim=0).float()
    tensor_6 = torch.transpose(tensor_2, -2, -1)
    return [tensor_3, tensor_4, tensor_5, tensor_6]
"#;
    insta::assert_snapshot!(ir(src));
}
