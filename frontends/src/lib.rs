//! Frontends: turn source programs into drtc IR.
