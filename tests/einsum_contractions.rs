//! Einsums written as contractions (`expand-einsum`), verified end to end under the
//! interpreter: no einsum is left to PyTorch, the products run in the contraction template
//! and the broadcast product of a pair that contracts nothing is a pointwise kernel.

mod support {
    pub mod compile;
}

use support::compile::{compile_verified, forward_body};

#[test]
fn einsums_become_contraction_kernels_and_verify() {
    let src = compile_verified("einsum_contractions");
    let body = forward_body(&src);
    assert!(!body.contains("einsum"), "{body}");
    // the chunk state's product and the 4-D tensor's product are template kernels (the
    // small recurrence may be a library product)
    assert!(body.matches("_contraction[").count() >= 2, "{body}");
    // the decay times B: one pointwise kernel reading both
    assert!(body.contains("(pointwise): #8 mul"), "{body}");
    // the 4-D tensor is read as a [24, 16] matrix: a view, not a copy
    assert!(body.contains("torch.reshape(t, [24, 16])"), "{body}");
}
