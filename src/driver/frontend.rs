//! Which frontend reads a Python program: the native parser (straight-line KernelBench
//! and seed programs, no Python needed), the torch.export frontend (whole models: `if`,
//! `for`, `nn.Sequential`, recurrent layers), or `auto`: native when it accepts the
//! program, export otherwise.

/// The `--frontend` choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Frontend {
    /// drtc's own parser of the Python subset.
    Native,
    /// torch.export in drtc's Python environment, imported from ATen.
    Export,
    /// Native when it accepts the program, export otherwise.
    #[default]
    Auto,
}

impl Frontend {
    pub fn name(self) -> &'static str {
        match self {
            Frontend::Native => "native",
            Frontend::Export => "export",
            Frontend::Auto => "auto",
        }
    }
}

/// The frontend that read a program, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontendUsed {
    Native,
    Export,
}

impl FrontendUsed {
    pub fn name(self) -> &'static str {
        match self {
            FrontendUsed::Native => "native",
            FrontendUsed::Export => "export",
        }
    }
}
