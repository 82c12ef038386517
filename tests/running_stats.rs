//! Training-mode batch norms' running statistics, updated at the end of the forward in
//! foreach launches (`backends/src/stitch/running_stats.rs`): a batch norm applied twice
//! and one with another momentum verify against PyTorch (the verifier compares the
//! buffers after every call), the second application starting a new batch of updates.

mod support {
    pub mod compile;
}

use std::path::PathBuf;
use support::compile::{compile_file_verified, forward_body};

#[test]
fn a_batch_norm_applied_twice_updates_its_statistics_in_order() {
    let program =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/native/batch_norm_twice.py");
    let src = compile_file_verified(&program, "batch_norm_twice");
    let body = forward_body(&src);
    // no per-module update in place
    assert!(!body.contains(".mul_("), "{body}");
    // `bn`'s second update waits for the first batch: two batches, the first holding both
    // momenta (0.9 and 0.7 kept), the second `bn` alone
    assert_eq!(body.matches("torch._foreach_mul_(").count(), 3, "{body}");
    assert_eq!(
        body.matches("torch._foreach_add_([bn_num_batches_tracked")
            .count(),
        2,
        "{body}"
    );
    assert!(body.contains("], 0.7)"), "{body}");
}
