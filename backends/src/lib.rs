//! Backends: turn regions of drtc IR into code.
