//! The split reduction strategy (few long rows: partials per column chunk, combined by
//! later kernels) verified end to end under the interpreter: a training-mode batch norm
//! and a standard deviation whose moments are computed in one pass per chunk and merged
//! with Chan's formula, with a last chunk shorter than the others.

mod support {
    pub mod compile;
}

use std::path::PathBuf;
use support::compile::{compile_file_verified, compile_verified};

#[test]
fn split_moments_verify_against_pytorch() {
    let src = compile_verified("split_rows");
    // one pass per chunk for both moments (each block merged into the running pair: a
    // one-row tile reduces a block within its warps), merged across chunks
    assert!(src.contains("wm2 = wm2 + bm2"), "{src}");
    assert!(src.contains("tl.sum(ns * dm * dm, axis=1)"), "{src}");
    // the batch norm's partial-stat stage count: sum+M2 in one stage, then the output stage
    assert!(!src.contains("drtc_k0_reduction_part5["), "{src}");
}

/// Reductions over leading dims (rows innermost in memory) take tall tiles: a training
/// batch norm over a `[1000, 96]` batch and a sum and argmax over dim 0 are split over
/// column chunks with 64 rows per program (the last chunk shorter), a max and a standard
/// deviation over dim 0 with too few columns to split use the row strategy's looped
/// passes with tall tiles; all verify against PyTorch.
#[test]
fn inner_rows_take_tall_tiles_and_verify() {
    let src = compile_verified("inner_rows");
    // tall tiles accumulate sums and moments per lane and merge the lanes once per row
    assert!(src.contains("acc1 += tl.where(mask,"), "{src}");
    assert!(src.contains("wm2 = wm2 + delta * tl.where(mask,"), "{src}");
    assert!(
        src.contains("wm2 = tl.sum(wm2, axis=1) + tl.sum(wn * rdev * rdev, axis=1)"),
        "{src}"
    );
    assert!(
        src.contains("96 rows x 1000 columns in 4 chunks of 256, 64 row(s) per program"),
        "{src}"
    );
    assert!(src.contains("BLOCK_R=64, BLOCK_C=64, BLOCK_S=4"), "{src}");
    assert!(
        src.contains("48 rows x 700 columns in 3 chunks of 256"),
        "{src}"
    );
    assert!(
        src.contains("64 rows x 300 columns, looped passes"),
        "{src}"
    );
    assert!(src.contains("BLOCK_R=32, BLOCK_C=128"), "{src}");
    assert!(src.contains("BLOCK_R=16, BLOCK_C=256"), "{src}");
}

/// A reduction over an empty run of columns (`[3, 4, 0]` summed over dims 0 and 2) has no
/// run form: it compiles (no division by the empty size) and verifies.
#[test]
fn an_empty_reduction_compiles_and_verifies() {
    let dir = std::env::temp_dir().join(format!("drtc-empty-src-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let program = dir.join("empty.drt");
    std::fs::write(
        &program,
        "graph @z(%x: f32[3, 4, 0]) {\n  %0 = sum(%x) {dim = [0, 2], keepdim = false} : f32[4]\n  return %0\n}\n",
    )
    .unwrap();
    compile_file_verified(&program, "empty");
}

/// A linear layer's output normalized by a training-mode batch norm (split strategy): the
/// GEMM's epilogue writes each tile's column moments and the batch norm merges them, with
/// no statistics pass of its own; it verifies as a program and as a KernelBench module
/// (whose running statistics the verifier compares too), a last tile shorter than the
/// others.
#[test]
fn gemm_tile_moments_feed_the_batch_norm_and_verify() {
    let src = compile_verified("linear_batch_norm");
    assert!(src.contains("tsum = tl.sum(tv, axis=0)"), "{src}");
    assert!(
        src.contains("tl.store(drtc_k1_reduction_ws1 + offs_n * 8 + pm, tsum"),
        "{src}"
    );
    assert!(!src.contains("drtc_k1_reduction_part"), "{src}");
    let dir = std::env::temp_dir().join(format!("drtc-lin-bn-src-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("lin_bn.py");
    std::fs::write(
        &model,
        "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    \
         def __init__(self, i, o):\n        super().__init__()\n        \
         self.fc = nn.Linear(i, o)\n        self.bn = nn.BatchNorm1d(o)\n\n    \
         def forward(self, x):\n        return torch.relu(self.bn(self.fc(x) * 2.0))\n\n\n\
         def get_inputs():\n    return [torch.randn(1000, 16) * 3 + 1]\n\n\n\
         def get_init_inputs():\n    return [16, 64]\n",
    )
    .unwrap();
    let src = compile_file_verified(&model, "lin_bn");
    assert!(src.contains("tsum = tl.sum(tv, axis=0)"), "{src}");
}

/// Loss ops (`expand-losses`): smooth L1 with and without its quadratic branch, MSE without
/// reduction, KL divergence with a log target over the batch and with a target that has
/// zeros, triplet margin losses (2-norm; 1-norm with swap, summed; unreduced) become
/// reduction kernels (none left to PyTorch), and verify against PyTorch's own losses.
#[test]
fn losses_become_reduction_kernels_and_verify() {
    let program = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/losses_expanded.py");
    let src = compile_file_verified(&program, "losses_expanded");
    // the forward's regions, as its comments list them: no loss op is left in any
    let regions: Vec<&str> = src
        .lines()
        .filter(|l| l.trim_start().starts_with("# region "))
        .collect();
    assert!(!regions.is_empty(), "{src}");
    for call in ["smooth_l1_loss", "mse_loss", "kl_div", "cross_entropy"] {
        assert!(
            regions.iter().all(|r| !r.contains(call)),
            "{call} left whole: {regions:#?}"
        );
    }
    // every region is a Triton kernel, but for the views of the cross entropies' targets
    let views = regions.iter().filter(|r| r.contains("(view)")).count();
    assert_eq!(
        src.matches("@triton.jit").count(),
        regions.len() - views,
        "{regions:#?}"
    );
    assert!(src.contains("@triton.jit"), "{src}");
}

#[test]
fn softmax_likes_over_long_rows_take_one_online_pass_and_verify() {
    // rows of 9000 columns: looped passes; the row max and the sum of exponentials of
    // each softmax, log-softmax and logsumexp come from one online pass over their
    // operand, shared by those over the same operand
    let program = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/wide_softmax.py");
    let src = compile_file_verified(&program, "wide_softmax");
    assert!(src.contains("looped passes"), "{src}");
    // softmax(3x) one pass; log_softmax(x) and logsumexp(x) share one; then the output
    let online = src.matches("* tl.exp(acc").count();
    assert_eq!(online, 2, "{src}");
    assert_eq!(
        src.matches("for cstart in range(0, 9000,").count(),
        3,
        "{src}"
    );
}

#[test]
fn scans_run_in_the_reduction_template_and_verify() {
    // a masked cumsum in one pass; a cumprod and a cumsum of a softmax over rows of 9000
    // columns carried across blocks; a cumsum over dim 0 of [700, 48] with tall tiles; a
    // sum of a cumsum in a region after the scan's; two reverse cumsums (spelled with
    // flips), over long and short rows
    let src = compile_verified("scans");
    // blocks from the last, each in ascending columns, scanned from its end
    assert!(
        src.contains("cols = (8999 // BLOCK_C * BLOCK_C - cstart) + tl.arange(0, BLOCK_C)"),
        "{src}"
    );
    assert_eq!(src.matches("axis=1, reverse=True)").count(), 2, "{src}");
    assert!(
        src.contains("tl.cumsum(tl.where(mask,") && src.contains("tl.cumprod(tl.where(mask,"),
        "{src}"
    );
    // the carried scans: a running value per scan in the pass that writes the outputs
    assert_eq!(
        src.matches(" = tl.full([BLOCK_R, 1], 1.0,").count(),
        1,
        "{src}"
    );
    assert_eq!(src.matches(" = tl.zeros([BLOCK_R, 1],").count(), 3, "{src}");
    assert!(src.contains("48 rows x 700 columns"), "{src}");
    // no region left to PyTorch
    assert!(!src.contains("(fallback):"), "{src}");
    assert_eq!(src.matches("_reduction[(").count(), 6, "{src}");
}
