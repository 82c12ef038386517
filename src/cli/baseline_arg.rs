//! `--baseline`: which torch.compile modes of the reference are timed beside eager PyTorch.

use drtc::verifier::CompileMode;

/// A second baseline beside eager PyTorch: torch.compile of the reference in one mode, or
/// every mode (repeat the option or separate values with commas).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BaselineArg {
    /// torch.compile, default mode.
    Compile,
    /// torch.compile, mode="max-autotune" (Triton GEMM autotuning and CUDA graphs).
    MaxAutotune,
    /// torch.compile, mode="max-autotune-no-cudagraphs".
    MaxAutotuneNoCudagraphs,
    /// torch.compile, mode="reduce-overhead" (CUDA graphs).
    ReduceOverhead,
    /// Every mode above, timed interleaved in the same run.
    AllModes,
}

/// The modes the arguments ask for, each once, in `CompileMode::ALL`'s order.
pub fn compile_modes(args: &[BaselineArg]) -> Vec<CompileMode> {
    let asked = |m: CompileMode| {
        args.iter().any(|a| match a {
            BaselineArg::Compile => m == CompileMode::Default,
            BaselineArg::MaxAutotune => m == CompileMode::MaxAutotune,
            BaselineArg::MaxAutotuneNoCudagraphs => m == CompileMode::MaxAutotuneNoCudagraphs,
            BaselineArg::ReduceOverhead => m == CompileMode::ReduceOverhead,
            BaselineArg::AllModes => true,
        })
    };
    CompileMode::ALL.into_iter().filter(|&m| asked(m)).collect()
}

/// `eager` or the modes, as settings and tables name them (`compile` for the default mode
/// alone, as files written before the other modes existed say).
pub fn describe(modes: &[CompileMode]) -> String {
    match modes {
        [] => "eager".into(),
        [CompileMode::Default] => "compile".into(),
        _ => modes.iter().map(|m| m.name()).collect::<Vec<_>>().join(","),
    }
}

/// PyTorch's float32 matmul precision (`torch.set_float32_matmul_precision`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TorchPrecisionArg {
    /// Full fp32 matmuls.
    Highest,
    /// TF32 tensor cores for fp32 matmuls.
    High,
}

impl TorchPrecisionArg {
    pub fn name(self) -> &'static str {
        match self {
            TorchPrecisionArg::Highest => "highest",
            TorchPrecisionArg::High => "high",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_deduplicated_in_a_fixed_order() {
        use BaselineArg::*;
        assert_eq!(
            compile_modes(&[ReduceOverhead, Compile, ReduceOverhead]),
            vec![CompileMode::Default, CompileMode::ReduceOverhead]
        );
        assert_eq!(compile_modes(&[AllModes]).len(), 4);
        assert_eq!(compile_modes(&[]), vec![]);
        assert_eq!(describe(&compile_modes(&[Compile])), "compile");
        assert_eq!(
            describe(&compile_modes(&[AllModes])),
            "default,max-autotune,max-autotune-no-cudagraphs,reduce-overhead"
        );
    }
}
