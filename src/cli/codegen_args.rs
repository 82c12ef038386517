//! The code-generation options `compile`, `suite`, `stitch` and `eval` share: precision
//! policy, backend, device, guards, CUDA graphs.

use clap::ValueEnum;
use drtc_backends::graphs::GraphMode;
use drtc_backends::guard::GuardMode;
use drtc_backends::triton::Precision;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PrecisionArg {
    /// Results pass allclose(atol=rtol=1e-4) against full-fp32 PyTorch (KernelBench's
    /// rule): per GEMM region, Triton tf32x3, cuBLAS in full fp32, or Triton ieee.
    Fp32,
    /// TensorFloat-32 where the error model says the relative-norm rule (1e-3) holds; a
    /// safer precision for regions (e.g. very long K) where it would not.
    Tf32,
    /// Full fp32 products everywhere.
    Ieee,
}

impl PrecisionArg {
    /// The compile option it names.
    pub fn precision(self) -> Precision {
        match self {
            PrecisionArg::Fp32 => Precision::Fp32,
            PrecisionArg::Tf32 => Precision::Tf32,
            PrecisionArg::Ieee => Precision::Ieee,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// drtc's own Triton templates.
    Template,
    /// A language model behind an OpenAI-compatible server writes candidates; the
    /// template kernel stays a candidate, and the fastest verified one is kept.
    Llm,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FallbackArg {
    /// Write the template backend's module when the LLM server cannot be used.
    Template,
    /// Write nothing then.
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DeviceArg {
    /// Triton's CPU interpreter: correctness only.
    Cpu,
    /// A CUDA GPU: verification and timing.
    Cuda,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GuardArg {
    /// Compile again through drtc for the new activation shapes and dtypes (verified, and
    /// cached per signature in memory and under $DRTC_GUARD_CACHE or $DRTC_HOME/guard);
    /// where that is not possible, compute the reference and warn once.
    Recompile,
    /// Raise a ValueError naming the expected and the given inputs.
    Error,
    /// Compute the reference PyTorch program and warn once.
    Reference,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CudaGraphsArg {
    /// Where the cost rule says they pay: the launches they save (about 4 us each)
    /// outweigh the output copies a replay adds; never on CPU or with random ops.
    Auto,
    /// Whenever the program can be captured (no random ops; a no-op on CPU).
    On,
    /// Never: every call runs the kernels eagerly.
    Off,
}

impl CudaGraphsArg {
    pub fn mode(self) -> GraphMode {
        match self {
            CudaGraphsArg::Auto => GraphMode::Auto,
            CudaGraphsArg::On => GraphMode::On,
            CudaGraphsArg::Off => GraphMode::Off,
        }
    }
}

impl GuardArg {
    pub fn mode(self) -> GuardMode {
        match self {
            GuardArg::Recompile => GuardMode::Recompile,
            GuardArg::Error => GuardMode::Error,
            GuardArg::Reference => GuardMode::Reference,
        }
    }
}
