//! Concatenations without copies, verified end to end under the interpreter: the operands
//! that a kernel computes and nothing else reads are written by that kernel into their
//! slice of the result (a view of it, stored through the result's strides); the others
//! are copied into theirs.

mod support {
    pub mod compile;
}

use support::compile::compile_verified;

#[test]
fn kernel_operands_are_written_into_their_slices_and_verify() {
    let src = compile_verified("concat_in_place");
    // the result is allocated before the first placed operand's kernel, which writes a view
    let start = src.find("def drtc_forward").unwrap();
    let end = start + src[start..].find("\n    return").unwrap();
    let body = &src[start..end];
    assert!(body.contains("= torch.empty([4, 14, 5]"), "{body}");
    assert!(body.contains(".narrow(1, 0, 6)"), "{body}");
    assert!(body.contains(".narrow(1, 6, 3)"), "{body}");
    // the input operand and the operand the exp also reads are copied
    assert!(body.contains(".narrow(1, 9, 3).copy_(y)"), "{body}");
    assert_eq!(body.matches(".copy_(").count(), 2, "{body}");
    assert!(!body.contains("torch.cat("), "{body}");
    // the placed kernels store through the result's strides (70 = 14 x 5 per batch)
    assert!(src.contains(" * 70 + "), "{src}");
}
