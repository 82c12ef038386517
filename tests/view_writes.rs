//! Kernel outputs that only a materializing chain of views reads (a channel shuffle, a
//! window partition), stored by their kernel at each element's place in the chain's
//! result, verified end to end under the interpreter: the chain's views are not emitted and
//! PyTorch makes no copy.

mod support {
    pub mod compile;
}

use support::compile::{compile_verified, forward_body};

#[test]
fn shuffles_and_partitions_are_written_in_place_and_verify() {
    let src = compile_verified("view_writes");
    let body = forward_body(&src);
    // the pointwise kernel, the batch norm's output kernel (split strategy) and the
    // softmax write the chains' results; only the lone transpose remains a view
    assert_eq!(body.matches("torch.reshape(").count(), 0, "{body}");
    assert_eq!(body.matches("torch.permute(").count(), 0, "{body}");
    assert_eq!(body.matches("torch.transpose(").count(), 1, "{body}");
    assert!(body.contains("_reduction_out["), "{body}");
    // the shuffle's store: channel c of [2, 6, 4, 4] goes to (c % 2) * 3 + c // 2
    assert!(src.contains("(i1 % 2) * 3 + i1 // 2"), "{src}");
}
