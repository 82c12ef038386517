//! drtc as a library: the parts of the driver that the CLI, the compiler's search and the
//! tests share. The compile driver and the verifier (Python worker pool, verification,
//! timing, device discovery).

pub mod dataset;
pub mod driver;
pub mod verifier;
