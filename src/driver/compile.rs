//! The compile pipeline: cleanup passes, fusion planning, code generation, stitching.
//! Verification and timing happen in the verifier; this part is pure and fast.

use drtc_backends::graphs::GraphMode;
use drtc_backends::guard::GuardOptions;
use drtc_backends::layout::LayoutChoice;
use drtc_backends::plan::LoweringPlan;
use drtc_backends::stitch::{emit_module, CodegenOptions, GeneratedModule, ModuleForm};
use drtc_backends::triton::Precision;
use drtc_ir::Graph;
use drtc_passes::fuse::{plan_fusion, FuseOptions, FusionPlan};
use drtc_passes::{presets, ManagerOptions, PassManager};
use serde_json::json;
use std::time::{Duration, Instant};

/// The cleanup pipeline run before fusion (each step's reason is in `presets`).
pub const CLEANUP_PIPELINE: &[&str] = presets::CLEANUP;

/// The pipeline with the e-graph rewrites (the default; `--no-simplify` runs the cleanup).
pub const SIMPLIFY_PIPELINE: &[&str] = presets::SIMPLIFY;

/// The rewrite of the epilogue that the retry ladder takes back (`keep_transposed`).
const TRANSPOSED_CONVS: &str = "transposed-convs";

/// Run after cleanup (and the e-graph rewrites): stride-1 transposed convolutions of 1 or
/// 3 dims become convolutions (unless `keep_transposed`), a convolution's bias moves into
/// the kernel of its consumer. A no-op on programs without them.
pub fn epilogue_pipeline(keep_transposed: bool) -> Vec<&'static str> {
    (presets::EPILOGUE.iter().copied())
        .filter(|s| !(keep_transposed && *s == TRANSPOSED_CONVS))
        .collect()
}

/// Options of one compilation.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    pub precision: Precision,
    /// Generate for Triton's CPU interpreter.
    pub interpret: bool,
    pub fuse: FuseOptions,
    /// Run the e-graph rewrites (canonicalize, simplify) before fusion.
    pub simplify: bool,
    /// The generated module's input guards.
    pub guard: GuardOptions,
    /// The layout of convolution regions.
    pub layout: LayoutChoice,
    /// Whether the module captures its forward into CUDA graphs (`--cuda-graphs`).
    pub graphs: GraphMode,
    /// Compute transposed convolutions as written, not as the convolutions they equal
    /// (the `transposed-convs` rewrite): set by the retry ladder's rewrites rung.
    pub keep_transposed: bool,
}

impl CompileOptions {
    /// The code generator's options of this compilation.
    pub fn codegen(&self) -> CodegenOptions {
        CodegenOptions {
            precision: self.precision,
            interpret: self.interpret,
            guard: self.guard.clone(),
            layout: self.layout,
            graphs: self.graphs,
        }
    }
}

/// The result of compiling one program.
pub struct Compiled {
    pub graph: Graph,
    pub plan: FusionPlan,
    pub module: GeneratedModule,
    /// Time from the loaded graph to the written source (passes, fusion, codegen).
    pub elapsed: Duration,
    /// When the e-graph rewrites or the `transposed-convs` rewrite changed the program:
    /// the graph the first of them started from.
    pub rewritten: Option<Graph>,
    /// Whether the `transposed-convs` rewrite changed the program (a GPU search races the
    /// module against the program compiled as written: `rewrite_race.rs`).
    pub transposed_convs: bool,
}

/// Compiles a loaded graph into a module of the given form.
pub fn compile_graph(
    mut graph: Graph,
    form: &ModuleForm,
    opts: &CompileOptions,
) -> Result<Compiled, String> {
    let start = Instant::now();
    let pipeline = if opts.simplify {
        SIMPLIFY_PIPELINE
    } else {
        CLEANUP_PIPELINE
    };
    let mut rewritten = None;
    let mut transposed_convs = false;
    let epilogue = epilogue_pipeline(opts.keep_transposed);
    for pipeline in [pipeline, &epilogue[..]] {
        // only the first rewritten graph is kept: no copy once there is one
        let may_take_back = (opts.simplify && pipeline == SIMPLIFY_PIPELINE)
            || pipeline.contains(&TRANSPOSED_CONVS);
        let before = (may_take_back && rewritten.is_none()).then(|| graph.clone());
        let pm = PassManager::parse(
            &presets::source(pipeline),
            ManagerOptions {
                verify_each: true,
                print_ir_after: vec![],
            },
        )
        .map_err(|e| e.to_string())?;
        let report = pm.run(&mut graph).map_err(|e| e.to_string())?;
        // the e-graph passes or the convolution rewrite changed the program: keep what
        // the first of them started from, for a retry without them if the module fails
        // verification
        let changed = report.runs.iter().any(|r| {
            matches!(r.pass, "canonicalize" | "simplify" | TRANSPOSED_CONVS) && r.changed.is_yes()
        });
        if changed && rewritten.is_none() {
            rewritten = before;
        }
        transposed_convs |= report
            .runs
            .iter()
            .any(|r| r.pass == TRANSPOSED_CONVS && r.changed.is_yes());
    }
    graph.compact();
    let plan = plan_fusion(&graph, &opts.fuse);
    // every later stage relies on the plan's invariants; checking costs about what
    // planning costs, so it always runs
    plan.verify(&graph)
        .map_err(|e| format!("internal error: invalid fusion plan: {e}"))?;
    let lowering = LoweringPlan::new(&graph, &plan, &opts.codegen());
    let module = emit_module(&graph, &plan, &lowering, form);
    Ok(Compiled {
        graph,
        plan,
        module,
        elapsed: start.elapsed(),
        rewritten,
        transposed_convs,
    })
}

impl Compiled {
    /// The same program compiled without the e-graph rewrites and with its transposed
    /// convolutions as written, when those rewrites changed it: the fallback when the
    /// rewritten module fails verification.
    pub fn without_rewrites(
        &self,
        form: &ModuleForm,
        opts: &CompileOptions,
    ) -> Option<Result<Compiled, String>> {
        let graph = self.rewritten.clone()?;
        let plain = CompileOptions {
            simplify: false,
            keep_transposed: true,
            ..opts.clone()
        };
        Some(compile_graph(graph, form, &plain))
    }

    /// Whether a GPU search races this module against the program as written: the
    /// `transposed-convs` rewrite changed it and `opts` did not already keep them.
    pub fn races_rewrite(&self, opts: &CompileOptions) -> bool {
        self.transposed_convs && !opts.keep_transposed
    }

    /// The same program with its transposed convolutions as written and every other
    /// rewrite as before, when the `transposed-convs` rewrite changed it: what a GPU search
    /// races the module against.
    pub fn as_written(
        &self,
        form: &ModuleForm,
        opts: &CompileOptions,
    ) -> Option<Result<Compiled, String>> {
        if !self.races_rewrite(opts) {
            return None;
        }
        let graph = self.rewritten.clone()?;
        let written = CompileOptions {
            keep_transposed: true,
            ..opts.clone()
        };
        Some(compile_graph(graph, form, &written))
    }

    /// The lowering plan of the compile options, before any search: what the retries
    /// edit.
    pub fn lowering(&self, opts: &CompileOptions) -> LoweringPlan {
        LoweringPlan::new(&self.graph, &self.plan, &opts.codegen())
    }

    /// The module again with every convolution in the reference's layout (NCHW): the
    /// fallback when a channels-last module fails verification (the compile options' plan
    /// with its layout edited; the search's choices are not kept).
    pub fn nchw_module(&self, form: &ModuleForm, opts: &CompileOptions) -> GeneratedModule {
        let mut lowering = self.lowering(opts);
        lowering.set_layout((&self.graph, &self.plan), LayoutChoice::Nchw);
        self.emit(&lowering, form)
    }

    /// The module `lowering` describes.
    pub fn emit(&self, lowering: &LoweringPlan, form: &ModuleForm) -> GeneratedModule {
        emit_module(&self.graph, &self.plan, lowering, form)
    }

    /// The region summary of a compiled program, for reports: regions, kernels, fallbacks,
    /// the fusion log and the compile time.
    pub fn report_json(&self) -> serde_json::Value {
        let c = self;
        let regions: Vec<serde_json::Value> = c
        .module
        .regions
        .iter()
        .map(|r| {
            json!({
                "index": r.index,
                "kind": r.kind.name(),
                "ops": r.ops,
                "kernel": r.kernel.as_ref().map(|(n, cfg)| json!({"name": n, "config": cfg.describe()})),
                "pytorch_fallback": r.fallback,
                "fallback_reason": r.fallback_reason,
                "template": r.template,
                "gemm": r.gemm.as_ref().map(|g| json!({
                    "implementation": g.imp.describe(),
                    "m": g.shape.m, "n": g.shape.n, "k": g.shape.k, "batch": g.shape.batch,
                    "flops": g.shape.flops(),
                    "predicted_error": g.predicted_error,
                    "reason": g.reason,
                })),
            })
        })
        .collect();
        json!({
            "regions": regions,
            "kernels": c.module.kernel_count(),
            "fallback_ops": c.module.fallback_ops(),
            "conv_layouts": c.module.layout,
            "cuda_graphs": c.module.graphs_json(),
            "fusion_log": c.plan.log,
            "lowering": c.module.plan.json(),
            "compile_ms": c.elapsed.as_secs_f64() * 1e3,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drtc_ir::text;

    fn graph(src: &str) -> Graph {
        text::parse(src).unwrap()
    }

    /// The default pipeline (e-graph rewrites on) for the interpreter.
    fn interpreted() -> CompileOptions {
        CompileOptions {
            simplify: true,
            interpret: true,
            ..Default::default()
        }
    }

    fn ops(c: &Compiled) -> Vec<&str> {
        (c.graph.body().iter())
            .map(|&n| c.graph.node(n).op.name())
            .collect()
    }

    #[test]
    fn a_program_the_rewrites_changed_keeps_its_unrewritten_graph_for_the_retry() {
        // x * sigmoid(x) is silu: canonicalize/simplify change the program
        let g = graph(
            "graph @g(%x: f32[64, 64]) {\n  %0 = sigmoid(%x) : f32[64, 64]\n  %1 = mul(%x, %0) : f32[64, 64]\n  return %1\n}\n",
        );
        let opts = interpreted();
        let c = compile_graph(g.clone(), &ModuleForm::Seed, &opts).unwrap();
        assert_eq!(c.rewritten.as_ref().map(text::print), Some(text::print(&g)));
        let plain = c
            .without_rewrites(&ModuleForm::Seed, &opts)
            .unwrap()
            .unwrap();
        assert!(plain.rewritten.is_none());
        assert_eq!(ops(&c), ["silu"]);
        assert_eq!(ops(&plain), ["sigmoid", "mul"]);
    }

    #[test]
    fn a_rewritten_transposed_convolution_has_its_program_as_written_to_race() {
        let g = graph(
            "graph @g(%x: f32[2, 4, 3, 5, 6], %w: param f32[4, 6, 3, 2, 3]) {\n  %0 = conv_transpose3d(%x, %w) {stride = [1, 1, 1], padding = [0, 0, 0], output_padding = [0, 0, 0], groups = 1, dilation = [1, 1, 1]} : f32[2, 6, 5, 6, 8]\n  %1 = tanh(%0) : f32[2, 6, 5, 6, 8]\n  return %1\n}\n",
        );
        let opts = interpreted();
        let has = |c: &Compiled, op: &str| ops(c).contains(&op);
        let c = compile_graph(g, &ModuleForm::Seed, &opts).unwrap();
        assert!(c.transposed_convs && has(&c, "conv3d") && !has(&c, "conv_transpose3d"));
        let written = c.as_written(&ModuleForm::Seed, &opts).unwrap().unwrap();
        assert!(!written.transposed_convs && has(&written, "conv_transpose3d"));
        assert!(written.as_written(&ModuleForm::Seed, &opts).is_none());
        // the retry ladder's rewrites rung already keeps them: nothing to race
        let kept = CompileOptions {
            keep_transposed: true,
            ..opts
        };
        assert!(c.as_written(&ModuleForm::Seed, &kept).is_none());
    }

    #[test]
    fn a_program_the_rewrites_left_alone_has_no_retry() {
        let g =
            graph("graph @g(%x: f32[64, 64]) {\n  %0 = tanh(%x) : f32[64, 64]\n  return %0\n}\n");
        let opts = interpreted();
        let c = compile_graph(g, &ModuleForm::Seed, &opts).unwrap();
        assert!(c.rewritten.is_none() && !c.transposed_convs);
        assert!(c.without_rewrites(&ModuleForm::Seed, &opts).is_none());
        assert!(c.as_written(&ModuleForm::Seed, &opts).is_none());
    }
}
