//! Passes over drtc IR.

pub mod fuse;
