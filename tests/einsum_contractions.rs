//! Einsums written as contractions (`expand-einsum`), verified end to end under the
//! interpreter: no einsum is left to PyTorch, the products run in the contraction template,
//! the broadcast product of a pair that contracts nothing is a pointwise kernel, and a pair
//! that contracts two elements is one reduction kernel over the selected state only.

mod support {
    pub mod compile;
}

use support::compile::{compile_verified, forward_body};

#[test]
fn einsums_become_contraction_kernels_and_verify() {
    let src = compile_verified("einsum_contractions");
    let body = forward_body(&src);
    assert!(!body.contains("einsum"), "{body}");
    // the chunk state's product and the 4-D tensor's product are template kernels
    assert!(body.matches("_contraction[").count() == 2, "{body}");
    // the recurrence over two chunks: a product and a sum in one reduction kernel, which
    // writes only the last state (the select moved into the decay's operand)
    let recurrence = body
        .lines()
        .any(|l| l.contains("(reduction): #") && l.contains(" mul, #") && l.ends_with(" sum"));
    assert!(recurrence, "{body}");
    assert!(body.contains("torch.empty([2, 3, 16, 8]"), "{body}");
    assert!(!body.contains("torch.empty([2, 5, 3, 16, 8]"), "{body}");
    // the decay times B: one pointwise kernel reading both
    let decay_times_b = body
        .lines()
        .any(|l| l.contains("(pointwise): #") && l.ends_with(" mul") && !l.contains(", #"));
    assert!(decay_times_b, "{body}");
    // the 4-D tensor is read as a [24, 16] matrix: a view, not a copy
    assert!(body.contains("torch.reshape(t, [24, 16])"), "{body}");
}
