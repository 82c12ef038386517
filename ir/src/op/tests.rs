//! Inference tests for every op; values for the tricky ones are written down from
//! PyTorch's documentation formulas.
