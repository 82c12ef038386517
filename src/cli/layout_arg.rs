//! `--layout`: the memory layout of convolution regions (compile and suite).

use clap::ValueEnum;
use drtc_backends::layout::LayoutChoice;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LayoutArg {
    /// Channels-last for a dense (groups=1) batched 2-D/3-D convolution with at least 8
    /// output channels whose result only pointwise kernels, 2-D/3-D poolings, reductions
    /// over exactly the channels, convolutions or the output read; NCHW otherwise
    /// (ARCHITECTURE.md states the rule).
    Auto,
    /// Every convolution in PyTorch's default layout, as the reference.
    Nchw,
    /// Every batched 2-D/3-D convolution channels-last (NHWC / NDHWC), and the pointwise
    /// kernels after it walk that layout.
    ChannelsLast,
}

impl LayoutArg {
    /// The codegen choice it names.
    pub fn choice(self) -> LayoutChoice {
        match self {
            LayoutArg::Auto => LayoutChoice::Auto,
            LayoutArg::Nchw => LayoutChoice::Nchw,
            LayoutArg::ChannelsLast => LayoutChoice::ChannelsLast,
        }
    }
}
