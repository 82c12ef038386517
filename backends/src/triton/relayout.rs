//! The conversion of a channels-last convolution's input at its region boundary, as a
//! Triton kernel.
//!
//! `x.contiguous(memory_format=torch.channels_last)` is PyTorch's permuting copy; on the
//! H200 it moves a contiguous NCHW input at about 1.9 TB/s (a 537 MB input in 0.57 ms,
//! measured by `bench/conv_breakdown.py`), half of what a read and a write of the same
//! bytes can reach. The module's helper transposes each image's `[C, S]` matrix (S the
//! spatial size) into `[S, C]` in tiles: loads run along S, stores along C, and Triton
//! moves each tile between the two orders through shared memory. It is used only for a
//! contiguous NCHW input (the common case: the module's own input, or a value an NCHW
//! template wrote); a value that is already channels-last is returned as it is, and any
//! other strides take PyTorch's copy.

/// The Python helper (`_drtc_channels_last(x, fmt)`) and its kernel, emitted once in a
/// module that runs any convolution channels-last.
pub const CHANNELS_LAST_HELPER: &str = r#"@triton.jit
def _drtc_nchw_to_nhwc(src, dst, C, S, BLOCK_C: tl.constexpr, BLOCK_S: tl.constexpr):
    s = tl.program_id(0) * BLOCK_S + tl.arange(0, BLOCK_S)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    base = tl.program_id(2).to(tl.int64) * C * S
    mask = (c[:, None] < C) & (s[None, :] < S)
    v = tl.load(src + base + c[:, None] * S + s[None, :], mask=mask)
    tl.store(dst + base + s[None, :] * C + c[:, None], v, mask=mask)


def _drtc_channels_last(x, fmt):
    # `x.contiguous(memory_format=fmt)`: a no-op when x is channels-last already, a tiled
    # Triton transpose when x is contiguous NCHW, else PyTorch's copy
    if x.is_contiguous(memory_format=fmt):
        return x
    n, c = x.shape[0], x.shape[1]
    s = x.numel() // max(n * c, 1)
    if not x.is_contiguous() or x.numel() == 0 or n > 65535 or c * s >= 2**31:
        return x.contiguous(memory_format=fmt)
    out = torch.empty_like(x, memory_format=fmt)
    block_c = min(64, triton.next_power_of_2(c))
    block_s = max(64, min(1024, 4096 // block_c))
    grid = (triton.cdiv(s, block_s), triton.cdiv(c, block_c), n)
    _drtc_nchw_to_nhwc[grid](x, out, c, s, BLOCK_C=block_c, BLOCK_S=block_s, num_warps=4)
    return out


"#;

/// The call that converts a convolution's input `arg` to `fmt` (`torch.channels_last` or
/// `torch.channels_last_3d`).
pub fn channels_last_call(arg: &str, fmt: &str) -> String {
    format!("_drtc_channels_last({arg}, {fmt})")
}
