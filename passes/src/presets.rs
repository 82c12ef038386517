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
    // a 1-D or 3-D transposed convolution of stride 1 is the convolution with the flipped
    // kernel, cuDNN's faster path (before conv-bias, which then sees the convolution);
    // `drtc compile` takes it back where the module fails verification (its retry ladder)
    "transposed-convs",
    // last, so no rewrite sees a bias-less convolution: a convolution whose only use is a
    // pointwise or reduction op is called without its bias, and the bias add joins the
    // consumer's fused kernel (one pass over the output fewer)
    "conv-bias",
    // the bias-carrying convolution it replaced is unused now
    "dce",
];

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
        for steps in [CLEANUP, SIMPLIFY, EPILOGUE] {
            let (pipeline, built) = registry::parse_and_build(&source(steps)).unwrap();
            assert_eq!(pipeline.to_string(), source(steps));
            assert!(built.iter().all(|s| matches!(s, Step::Rewrite(_))));
            // cleanup ends with dce: whatever the steps before leave unused is dropped
            assert_eq!(steps.last(), Some(&"dce"));
        }
        // the convolution rewrite runs before conv-bias
        let at = |name| EPILOGUE.iter().position(|s| *s == name).unwrap();
        assert!(at("transposed-convs") < at("conv-bias"));
    }
}
