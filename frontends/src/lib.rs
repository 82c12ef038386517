//! Frontends: turn source programs into drtc IR.
pub mod synth;
