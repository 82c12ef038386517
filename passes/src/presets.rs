//! The compiler's pipelines, as literal lists: one step per entry, each with the reason
//! it sits where it does. [`source`] gives the pipeline string the pass manager parses
//! (and reports print).

/// What `drtc compile --no-simplify` runs before fusion planning.
pub const CLEANUP: &[&str] = &[
    // the frontend lowers whole modules: drop what nothing reads (unused layers and
    // results), so no later step plans or compiles it
    "dce",
    // an einsum is a library call no kernel fuses with: written as sums, views, matmuls
    // and broadcast products, its contractions take the contraction template and its
    // products fuse with their neighbours
    "expand-einsum",
    // one node per distinct computation: fusion then sees each value once, and no kernel
    // computes the same thing twice
    "cse", // the duplicates cse merged away are unused now
    "dce",
];

/// What `drtc compile` runs before fusion planning by default (`--no-simplify`: [`CLEANUP`]):
/// the cleanup around the e-graph rewrites.
pub const SIMPLIFY: &[&str] = &[
    // a smaller graph is a smaller e-graph: drop dead nodes first
    "dce",
    // einsums as the contractions they compute, so the e-graph's rules see their products
    // (an attention written with einsums is one)
    "expand-einsum",
    // and merge duplicates, so each computation enters the e-graph once
    "cse",
    // one spelling per computation (identities, constant folding, clamps, layout
    // chains), so simplify's rules match whichever way the program wrote it
    "canonicalize",
    // the cost-driven rewrites (activations, linearity, reductions, softmax forms)
    "simplify",
    // the nodes the rewrites replaced are unused
    "dce",
    // rewriting can make two computations equal
    "cse",
    // and merging them leaves the duplicates unused
    "dce",
];

/// What `drtc compile` runs after cleanup (and the e-graph rewrites), just before fusion.
pub const EPILOGUE: &[&str] = &[
    // a loss op has no template of its own: written as its elementwise formula and a sum
    // or mean, it fuses into one reduction kernel (after the e-graph rewrites, which keep
    // the loss whole as one node)
    "expand-losses",
    // a scan between two flips of its dim is a reverse scan: the reduction template runs it
    // without the two copies (after the e-graph rewrites, which know only forward scans)
    "reverse-scans",
    // last, so no rewrite sees a bias-less convolution: a convolution whose only use is a
    // pointwise or reduction op is called without its bias, and the bias add joins the
    // consumer's fused kernel (one pass over the output fewer)
    "conv-bias",
    // the bias-carrying convolution it replaced is unused now
    "dce",
];

/// What the TF32 policy (`--precision tf32`) adds to [`EPILOGUE`], before `conv-bias`
/// (which then sees the convolutions they write): a 1-D or 3-D transposed convolution of
/// stride 1 computed as the convolution with the flipped kernel, cuDNN's faster path there
/// in TF32. Not under the fp32 policy: cuDNN's transposed algorithm for some shapes runs
/// without tensor cores (level-1 58), so the reference is full fp32 where the forward
/// path's TF32 product is not, and with TF32 off the forward path is the slower one on 4 of
/// the 6 probed (`bench/results/conv_transpose_probe_h100_dfac450.md`).
pub const TF32_EPILOGUE: &[&str] = &["transposed-convs"];

/// The epilogue of a compilation: [`EPILOGUE`], with [`TF32_EPILOGUE`] under the TF32
/// policy.
pub fn epilogue(tf32: bool) -> Vec<&'static str> {
    let mut steps = EPILOGUE.to_vec();
    if tf32 {
        let at = steps.iter().position(|s| *s == "conv-bias").unwrap_or(0);
        for (k, step) in TF32_EPILOGUE.iter().enumerate() {
            steps.insert(at + k, step);
        }
    }
    steps
}

/// The pipeline string of `steps` (`dce,cse,dce`).
pub fn source(steps: &[&str]) -> String {
    steps.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{registry, Step};

    #[test]
    fn presets_are_rewrites_that_parse_and_print_back() {
        let tf32 = epilogue(true);
        assert_eq!(epilogue(false), EPILOGUE);
        for steps in [CLEANUP, SIMPLIFY, EPILOGUE, &tf32] {
            let (pipeline, built) = registry::parse_and_build(&source(steps)).unwrap();
            assert_eq!(pipeline.to_string(), source(steps));
            assert!(built.iter().all(|s| matches!(s, Step::Rewrite(_))));
            // cleanup ends with dce: whatever the steps before leave unused is dropped
            assert_eq!(steps.last(), Some(&"dce"));
        }
        // the TF32 rewrites run before conv-bias
        let at = |name| tf32.iter().position(|s| *s == name).unwrap();
        assert!(at("transposed-convs") < at("conv-bias"));
    }
}
