//! Passes over drtc IR.
