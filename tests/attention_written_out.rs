//! Attention written out (scores materialized, softmax, product with `v`), compiled by
//! `drtc compile` on the CPU: the e-graph's attention rules write the three forms (the
//! third with einsums) as `scaled_dot_product_attention` (no kernel writes the scores),
//! with the mask as an additive one, and the module verifies against the written-out
//! reference.

mod support {
    pub mod compile;
}

use support::compile::{compile_verified, forward_body};

#[test]
fn written_out_attention_becomes_sdpa_and_verifies() {
    let src = compile_verified("attention_written_out");
    let body = forward_body(&src);
    assert_eq!(
        body.matches("scaled_dot_product_attention(").count(),
        3,
        "{body}"
    );
    // the scales: multiplied after the product, and 1 / 2.828... for the divided form
    assert!(body.contains("scale=0.25)"), "{body}");
    assert!(body.contains("scale=0.35355339059327"), "{body}");
    // no kernel computes a softmax or a product of the scores
    assert!(!body.contains("softmax"), "{body}");
    assert!(!body.contains("_contraction["), "{body}");
}
