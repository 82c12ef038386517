//! The stitcher: one standalone Python module from a fusion plan — every kernel region's
//! Triton kernel, library and fallback regions as PyTorch calls, views on the host — with
//! the entry point the benchmark expects (`ModelNew` or `triton_fused_operator`).

mod concat_host;
mod running_stats;

use crate::chosen_templates::chosen_templates;
use crate::gemm_moments::link_code;
use crate::graphs::{decide, graph_section, GraphCost, GraphDecision};
use crate::guard::{guard_section, GuardInput};
use crate::in_place::{slice, InPlace, Stored};
use crate::layout::{memory_format, LayoutPlan};
use crate::module_paths::Slot;
pub use crate::options::CodegenOptions;
use crate::plan::{GemmPlan, LoweringPlan};
pub use crate::region::generate_region_kernel;
use crate::region::{region_kernel, Links};
pub use crate::state::{forward_tail, self_path, ModuleForm, StateUpdate};
use crate::torch::{assign_targets, torch_dtype, torch_expr};
use crate::triton::{channels_last_call, RegionCode, CHANNELS_LAST_HELPER};
use crate::triton::{pointwise_kernel, BatchStats, GemmImpl, LaunchConfig, TritonKernel};
use drtc_ir::pytorch::PyNames;
use drtc_ir::{Graph, InputKind, NodeId, Op, TensorType, ValueDef, ValueId};
use drtc_passes::fuse::{FusionPlan, Region, RegionKind};
use std::collections::HashMap;
use std::fmt::Write;

/// What happened to one region.
#[derive(Clone, Debug)]
pub struct RegionReport {
    pub index: usize,
    pub kind: RegionKind,
    pub ops: Vec<&'static str>,
    /// The kernel's name and launch configuration, for kernel regions.
    pub kernel: Option<(String, LaunchConfig)>,
    /// Ops computed with PyTorch although the region kind has a template (no template for
    /// something in it), or fallback regions.
    pub fallback: bool,
    /// Why a kernel region is computed with PyTorch, when it is.
    pub fallback_reason: Option<String>,
    /// Contraction regions: the implementation and precision chosen, and why (the
    /// lowering plan's).
    pub gemm: Option<GemmPlan>,
    /// Library regions a drtc template may compute (convolutions, attention), and the
    /// regions whose kernel computes one: the implementation (`chosen_templates.rs`) and
    /// why.
    pub template: Option<String>,
}

/// A generated module.
#[derive(Clone, Debug)]
pub struct GeneratedModule {
    pub source: String,
    pub regions: Vec<RegionReport>,
    /// The layout decision of each convolution (empty without convolutions).
    pub layout: Vec<String>,
    /// Whether some convolution runs channels-last.
    pub channels_last: bool,
    /// Whether the entry point uses CUDA graphs, and why (or why not).
    pub graphs: GraphDecision,
    /// What the module was emitted from: the search and the retries edit a copy and emit
    /// again.
    pub plan: LoweringPlan,
}

impl GeneratedModule {
    /// Names of ops computed by PyTorch rather than a generated kernel (library regions
    /// excluded: those are PyTorch by design).
    pub fn fallback_ops(&self) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = self
            .regions
            .iter()
            .filter(|r| r.fallback)
            .flat_map(|r| r.ops.iter().copied())
            .filter(|&o| o != "full")
            .collect();
        v.sort();
        v.dedup();
        v
    }
    /// Whether the module uses CUDA graphs, for reports.
    pub fn graphs_json(&self) -> serde_json::Value {
        self.graphs.json()
    }
    pub fn kernel_count(&self) -> usize {
        self.regions.iter().filter(|r| r.kernel.is_some()).count()
    }
}

/// Helpers of modules with GEMM regions: the multiprocessor count (persistent grids),
/// the TMA feature test (and the scratch allocator device-side tensor descriptors need),
/// and library calls at a given `torch.set_float32_matmul_precision`.
const GEMM_PRELUDE: &str = r#"import os as _drtc_os

_DRTC_SMS = []


def _drtc_sms():
    if not _DRTC_SMS:
        if torch.cuda.is_available() and _drtc_os.environ.get("TRITON_INTERPRET") != "1":
            _DRTC_SMS.append(torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count)
        else:
            _DRTC_SMS.append(4)
    return _DRTC_SMS[0]


def _drtc_tma_alloc(size, alignment, stream):
    return torch.empty(size, dtype=torch.int8, device="cuda")


# tensor descriptors: Triton >= 3.4 spells them tl.make_tensor_descriptor; Hopper or newer
_DRTC_TMA = (hasattr(tl, "make_tensor_descriptor") and hasattr(triton, "set_allocator")
             and _drtc_os.environ.get("TRITON_INTERPRET") != "1"
             and _drtc_os.environ.get("DRTC_NO_TMA") != "1"
             and torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 9)
if _DRTC_TMA:
    triton.set_allocator(_drtc_tma_alloc)


def _drtc_library(precision, call):
    prev = torch.get_float32_matmul_precision()
    if prev == precision:
        return call()
    torch.set_float32_matmul_precision(precision)
    try:
        return call()
    finally:
        torch.set_float32_matmul_precision(prev)


"#;

/// The names of a module's host code: the inputs' (registered first) and a fresh `v<id>`
/// for every value the host computes or allocates, never an input's. Reserved: what the
/// host code refers to (`torch`, `triton`, `tl`, the helpers `_drtc_*`, the kernels and
/// their buffers `drtc_k<i>_*`, the entry points and `ModelNew.forward`'s `outs`).
fn host_names() -> PyNames {
    let mut n = PyNames::new();
    let names = [
        "triton",
        "tl",
        "Model",
        "ModelNew",
        "triton_fused_operator",
        "outs",
    ];
    for name in names {
        n.reserve(name);
    }
    n.reserve_prefix("_drtc");
    n.reserve_prefix("drtc_");
    n
}

struct Host<'g> {
    g: &'g Graph,
    names: HashMap<ValueId, String>,
    namer: PyNames,
    body: String,
    kernels: String,
    device: String,
    needs_mul: bool,
    /// Module form: training-mode batch_norm updates the module's running statistics.
    update_running_stats: bool,
    /// Running-statistics updates deferred to the end of the forward (`running_stats.rs`).
    running: Vec<running_stats::RunningUpdate>,
    /// A contraction region or a persistent grid (`_drtc_sms()`) exists: the module needs
    /// `GEMM_PRELUDE`.
    needs_prelude: bool,
    /// `torch.set_float32_matmul_precision` of the policy: every fp32 matrix product run
    /// by PyTorch (einsum, a fallback GEMM) runs at it, whatever the caller's setting.
    matmul_precision: &'static str,
    /// Which convolutions and values are channels-last.
    layout: &'g LayoutPlan,
    /// GPU launches of one forward (the CUDA-graph cost rule).
    launches: usize,
    /// Outputs stored elsewhere (`plan/concat.rs`, `plan/view_chain.rs`, `in_place.rs`).
    in_place: InPlace<'g>,
    /// Channels-last copies of values that several channels-last convolutions read.
    converted: HashMap<ValueId, String>,
}

impl Host<'_> {
    /// The host's name of `v`: an input's parameter, or the fresh name given to a value
    /// when first defined (given here if it is not yet).
    fn name(&mut self, v: ValueId) -> String {
        if let Some(n) = self.names.get(&v) {
            return n.clone();
        }
        let n = self.namer.fresh(&format!("v{}", v.0));
        self.names.insert(v, n.clone());
        n
    }

    /// Emits `nodes` as PyTorch calls; a concatenation its operands' kernels write in place
    /// (the rest copied into its slices) or a node absorbed into another's storage emits no
    /// call. Returns how many calls were emitted.
    fn torch_nodes(&mut self, nodes: &[NodeId]) -> usize {
        let g = self.g;
        let mut calls = 0;
        for &n in nodes {
            let node = g.node(n);
            if node.op == Op::Cat && self.cat_in_place(n) || self.in_place.absorbed(n) {
                continue;
            }
            calls += 1;
            let mut args: Vec<String> = node.inputs.iter().map(|&v| self.name(v)).collect();
            if self.layout.convs.contains(&n) {
                // the input at the region boundary (a Triton transpose from NCHW), the
                // weight (converted when ModelNew was built: then a no-op)
                for (k, (a, &v)) in args.iter_mut().zip(&node.inputs).take(2).enumerate() {
                    let fmt = memory_format(self.g.ty(v).rank());
                    *a = if k == 0 {
                        self.converted_input(v, a, fmt)
                    } else {
                        format!("{a}.contiguous(memory_format={fmt})")
                    };
                }
            }
            let tys: Vec<&TensorType> = node.inputs.iter().map(|&v| self.g.ty(v)).collect();
            let mut expr = torch_expr(node.op, &node.attrs, &args, &tys, &self.device);
            if node.op.category() == drtc_ir::Category::Contraction
                && tys.iter().any(|t| t.dtype == drtc_ir::DType::F32)
            {
                expr = format!("_drtc_library({:?}, lambda: {expr})", self.matmul_precision);
                self.needs_prelude = true;
            }
            if node.op.category() != drtc_ir::Category::Layout {
                self.launches += crate::graphs::torch_launches(self.g, n);
            }
            let outs: Vec<String> = node.outputs.iter().map(|&v| self.name(v)).collect();
            let lhs = assign_targets(node.op, &node.attrs, &outs);
            writeln!(self.body, "    {lhs} = {expr}").unwrap();
        }
        calls
    }

    /// A channels-last convolution's input `v` (host name `a`) converted at the region
    /// boundary; converted once, into a variable, when several such convolutions read it.
    fn converted_input(&mut self, v: ValueId, a: &str, fmt: &str) -> String {
        let g = self.g;
        let readers = g
            .users(v)
            .into_iter()
            .filter(|u| self.layout.convs.contains(u) && g.node(*u).inputs.first() == Some(&v));
        if readers.count() < 2 {
            return channels_last_call(a, fmt);
        }
        if let Some(n) = self.converted.get(&v) {
            return n.clone();
        }
        let n = self.namer.fresh(&format!("{a}_cl"));
        writeln!(self.body, "    {n} = {}", channels_last_call(a, fmt)).unwrap();
        self.converted.insert(v, n.clone());
        n
    }

    /// The library path of a GEMM region: the product through PyTorch (cuBLAS) at the
    /// policy's matmul precision (`pad`: on operand copies whose K and N are zero-padded
    /// to multiples of 4, [`GemmImpl::PaddedLibrary`]), then the rest of the region in one
    /// fused pointwise kernel over the product's shape (or with PyTorch when no template
    /// fits: reported). Returns the epilogue kernel, if the region has an epilogue; `Err`
    /// says why an epilogue is computed with PyTorch instead.
    fn library_gemm(
        &mut self,
        r: &Region,
        main: NodeId,
        index: usize,
        pad: bool,
        config: Option<&LaunchConfig>,
    ) -> Result<Option<TritonKernel>, String> {
        let g = self.g;
        let node = g.node(main);
        let mut args: Vec<String> = node.inputs.iter().map(|&v| self.name(v)).collect();
        let tys: Vec<&TensorType> = node.inputs.iter().map(|&v| g.ty(v)).collect();
        let out = node.outputs[0];
        let (k, n) = (
            tys[0].shape.last().copied().unwrap_or(0),
            g.ty(out).shape.last().copied().unwrap_or(0),
        );
        let (pk, pn) = ((4 - k % 4) % 4, (4 - n % 4) % 4);
        let pad = pad && (pk, pn) != (0, 0) && tys[1].rank() >= 2;
        if pad {
            // rows of A, of B and of the product 16-byte aligned: K is the last dim of A
            // and of a linear weight [N, K], the second-to-last of a matmul's B [..., K, N];
            // N pads B (and a linear's bias), and the product is viewed back to N columns
            // (only what needs it: a pad by zero is still a copy)
            let f = "torch.nn.functional.pad";
            let mut padded = |a: &mut String, widths: String| {
                *a = format!("{f}({a}, {widths})");
                self.launches += 1;
            };
            if pk > 0 {
                padded(&mut args[0], format!("(0, {pk})"));
            }
            let b_widths = match node.op {
                Op::Linear => format!("(0, {pk}, 0, {pn})"),
                _ => format!("(0, {pn}, 0, {pk})"),
            };
            padded(&mut args[1], b_widths);
            if pn > 0 && node.op == Op::Linear && args.len() > 2 {
                padded(&mut args[2], format!("(0, {pn})"));
            }
        }
        let expr = torch_expr(node.op, &node.attrs, &args, &tys, &self.device);
        let view = if pad && pn > 0 {
            format!("[..., :{n}]")
        } else {
            String::new()
        };
        self.launches += 1;
        let v = self.name(out);
        writeln!(
            self.body,
            "    {v} = _drtc_library({:?}, lambda: {expr}){view}",
            self.matmul_precision,
        )
        .unwrap();
        let rest: Vec<NodeId> = r.nodes.iter().copied().filter(|&n| n != main).collect();
        let outs: Vec<ValueId> = r.outputs.iter().copied().filter(|&v| v != out).collect();
        let computes = rest
            .iter()
            .any(|&n| !(g.node(n).op == Op::Full && g.ty(g.node(n).outputs[0]).rank() == 0));
        if !computes || outs.is_empty() {
            // constants only: emit them for any later use
            self.torch_nodes(&rest);
            return Ok(None);
        }
        let domain = g.ty(out).shape.clone();
        let name = format!("drtc_k{index}_epilogue");
        let cfg = config.cloned().filter(|c| c.block("BLOCK") > 1);
        match pointwise_kernel(g, &name, &rest, &outs, &domain, cfg) {
            Some(k) => {
                self.launch(&k, &[]);
                Ok(Some(k))
            }
            None => {
                self.torch_nodes(&rest);
                Err("the pointwise template does not cover this GEMM's epilogue".into())
            }
        }
    }

    fn alloc(&mut self, v: ValueId) {
        match self.in_place.output(v) {
            Some(Stored::Cat(p)) => {
                self.alloc_result(p.cat, p.channels_last);
                let (buf, name) = (self.name(p.cat), self.name(v));
                // the view begins `skew` elements before the slice (`Placement::skew`)
                let len = self.g.ty(v).shape[p.dim] + p.skew;
                let view = slice(&buf, p.dim, p.offset - p.skew, len);
                writeln!(self.body, "    {name} = {view}").unwrap();
                return;
            }
            Some(Stored::Views(result)) => {
                // the kernel stores through the chain into its (contiguous) result
                self.alloc_result(result, false);
                let (buf, name) = (self.name(result), self.name(v));
                writeln!(self.body, "    {name} = {buf}").unwrap();
                return;
            }
            None => {}
        }
        let t = self.g.ty(v);
        let format = if self.layout.values.contains(&v) {
            format!(", memory_format={}", memory_format(t.rank()))
        } else {
            String::new()
        };
        let name = self.name(v);
        writeln!(
            self.body,
            "    {name} = torch.empty({:?}, dtype={}, device={}{format})",
            t.shape,
            torch_dtype(t.dtype),
            self.device
        )
        .unwrap();
    }

    fn launch_region(&mut self, code: &RegionCode) {
        for sc in &code.scratch {
            writeln!(
                self.body,
                "    {} = torch.{}([{}], dtype={}, device={})",
                sc.name,
                if sc.zeroed { "zeros" } else { "empty" },
                sc.numel,
                torch_dtype(sc.dtype),
                self.device
            )
            .unwrap();
        }
        let n = code.kernels.len();
        for (i, k) in code.kernels.iter().enumerate() {
            let stats: &[BatchStats] = if i + 1 == n { &code.stats } else { &[] };
            self.launch(k, stats);
        }
    }

    fn launch(&mut self, k: &TritonKernel, stats: &[BatchStats]) {
        self.kernels.push_str(&k.source);
        self.kernels.push('\n');
        if k.source.contains("_drtc_mul") {
            self.needs_mul = true;
        }
        // a persistent grid sized by `_drtc_sms()`, which the GEMM prelude defines
        if k.grid_expr
            .as_deref()
            .is_some_and(|e| e.contains("_drtc_sms"))
        {
            self.needs_prelude = true;
        }
        for &v in &k.outputs {
            self.alloc(v);
        }
        let mut args = vec![];
        // each input's name at the launch (a prepared copy where the kernel asked for one)
        let mut input_names = vec![];
        for (i, a) in k.inputs.iter().enumerate() {
            let mut n = self.name(a.value);
            if let Some((_, prep)) = k.operand_prep.iter().find(|(j, _)| *j == i) {
                let prepared = format!("{}_in{i}", k.name);
                writeln!(self.body, "    {prepared} = {}", prep.replace("{x}", &n)).unwrap();
                n = prepared;
            }
            args.push(n.clone());
            for (d, _) in &a.strides {
                args.push(format!("{n}.stride({d})"));
            }
            input_names.push(n);
        }
        for &v in &k.outputs {
            args.push(self.name(v));
        }
        let mut stat_vars = vec![];
        let stat_start = args.len();
        for s in stats {
            let (mean, var) = crate::triton::batch_stats_names(s.node);
            for name in [mean, var] {
                writeln!(
                    self.body,
                    "    {name} = torch.empty([{}], dtype=torch.float32, device={})",
                    s.channels, self.device
                )
                .unwrap();
                args.push(name.clone());
                stat_vars.push(name);
            }
        }
        // scratch buffers follow the outputs and batch statistics
        let _ = stat_start;
        args.extend(k.scratch_args.iter().cloned());
        for (n, v) in &k.extra_args {
            let mut v = v.clone();
            for (i, n) in input_names.iter().enumerate() {
                v = v.replace(&format!("{{arg{i}}}"), n);
            }
            args.push(format!("{n}={v}"));
        }
        // flat-column loads: the kernel is specialized on the input's contiguity
        for (a, n) in k.inputs.iter().zip(&input_names).filter(|(a, _)| a.flat) {
            args.push(format!("{}={n}.is_contiguous()", a.flat_flag()));
        }
        for (b, v) in &k.config.blocks {
            args.push(format!("{b}={v}"));
        }
        args.push(format!("num_warps={}", k.config.num_warps));
        // 1: Triton's default stages (`LaunchConfig::num_stages`)
        if k.config.num_stages > 1 {
            args.push(format!("num_stages={}", k.config.num_stages));
        }
        let grid: Vec<String> = match &k.grid_expr {
            Some(e) => vec![e.clone()],
            None => k.grid.iter().map(u64::to_string).collect(),
        };
        // one launch, or one per value of a phase constexpr (a transposed convolution's)
        let indent = match &k.phase_launches {
            None => {
                self.launches += 1 + k.operand_prep.len();
                "    "
            }
            Some((arg, n)) => {
                self.launches += *n as usize + k.operand_prep.len();
                args.push(format!("{arg}=_drtc_phase"));
                writeln!(self.body, "    for _drtc_phase in range({n}):").unwrap();
                "        "
            }
        };
        writeln!(
            self.body,
            "{indent}{}[({},)]({})",
            k.name,
            grid.join(", "),
            args.join(", ")
        )
        .unwrap();
        for (i, s) in stats.iter().enumerate() {
            self.running_stats(s, &stat_vars[2 * i], &stat_vars[2 * i + 1]);
        }
    }
}

/// `ModelNew` or `triton_fused_operator`: the guarded entry point of a module.
fn entry_point(
    g: &Graph,
    form: &ModuleForm,
    host: &Host,
    cl_params: &[ValueId],
    graphed: bool,
) -> String {
    let mut src = String::new();
    let call = if graphed {
        "_drtc_graphed"
    } else {
        "_drtc_dispatch"
    };
    match form {
        ModuleForm::KernelBench { .. } => {
            let acts: Vec<String> = g
                .inputs()
                .iter()
                .filter(|&&v| {
                    matches!(
                        g.value(v).def,
                        ValueDef::Input {
                            kind: InputKind::Activation,
                            ..
                        }
                    )
                })
                .map(|&v| host.names[&v].clone())
                .collect();
            let slots: Vec<Slot> = g
                .inputs()
                .iter()
                .map(|v| Slot::of(g, *v, || host.names[v].clone()))
                .collect();
            let args = crate::module_paths::bind("_drtc_args", &slots, "        ");
            src.push_str("class ModelNew(Model):\n");
            src.push_str(
                "    \"\"\"`Model` with its forward computed by drtc's generated kernels (for\n",
            );
            src.push_str("    other inputs: see the guards above).\"\"\"\n\n");
            if !cl_params.is_empty() {
                src.push_str("    def __init__(self, *args, **kwargs):\n");
                src.push_str("        super().__init__(*args, **kwargs)\n");
                src.push_str(
                    "        # weights of channels-last convolutions, converted once: the same\n",
                );
                src.push_str(
                    "        # parameters and values (load_state_dict copies into these strides)\n",
                );
                for &v in cl_params {
                    let p = self_path(g.value(v).name.as_deref().unwrap_or(""));
                    let fmt = memory_format(g.ty(v).rank());
                    writeln!(
                        src,
                        "        {p}.data = {p}.data.contiguous(memory_format={fmt})"
                    )
                    .unwrap();
                }
                src.push('\n');
            }
            writeln!(src, "    def forward(self, {}):", acts.join(", ")).unwrap();
            src.push_str(&args);
            writeln!(src, "        outs = {call}(_drtc_args)").unwrap();
            src.push_str("        if outs is None:\n");
            writeln!(
                src,
                "            return Model.forward(self, {})",
                acts.join(", ")
            )
            .unwrap();
            src.push_str(&forward_tail(form.state(), g.outputs().len(), "        "));
        }
        ModuleForm::Seed => {
            src.push_str("def triton_fused_operator(*inputs):\n");
            writeln!(src, "    outs = {call}(inputs)").unwrap();
            src.push_str("    if outs is None:\n");
            src.push_str("        return _drtc_reference_operator(*inputs)\n");
            src.push_str("    return list(outs)\n");
        }
    }
    src
}

/// The parameters that are weights of channels-last convolutions, in a KernelBench module
/// (a seed program's weights are arguments: converted per call, at the region boundary).
fn channels_last_params(g: &Graph, form: &ModuleForm, layout: &LayoutPlan) -> Vec<ValueId> {
    if !matches!(form, ModuleForm::KernelBench { .. }) {
        return vec![];
    }
    let mut out = vec![];
    for &n in g.body() {
        if !layout.convs.contains(&n) {
            continue;
        }
        let w = g.node(n).inputs[1];
        let is_param = matches!(
            g.value(w).def,
            ValueDef::Input {
                kind: InputKind::Param,
                ..
            }
        );
        if is_param && !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// Stitches the plan of `g` into a module of the given form: the lowering plan of `opts`
/// ([`LoweringPlan::new`]), emitted.
pub fn generate_module(
    g: &Graph,
    plan: &FusionPlan,
    form: &ModuleForm,
    opts: &CodegenOptions,
) -> GeneratedModule {
    emit_module(g, plan, &LoweringPlan::new(g, plan, opts), form)
}

/// Emits the module `lowering` describes for fusion plan `plan` of `g`: every decision is
/// the lowering plan's, read here and never made again.
pub fn emit_module(
    g: &Graph,
    plan: &FusionPlan,
    lowering: &LoweringPlan,
    form: &ModuleForm,
) -> GeneratedModule {
    assert_eq!(
        lowering.regions.len(),
        plan.regions.len(),
        "a lowering plan is emitted with the fusion plan it was made from"
    );
    let opts = &lowering.options;
    let mut namer = host_names();
    let mut names = HashMap::new();
    let mut params = vec![];
    for &v in g.inputs() {
        let n = namer.input(g.value(v).name.as_deref().unwrap_or("x"));
        names.insert(v, n.clone());
        params.push(n);
    }
    // the device of the first input that is a real tensor (0-dim inputs may be Python numbers),
    // else the device the module is generated for
    let device = g
        .inputs()
        .iter()
        .position(|&v| g.ty(v).rank() > 0)
        .map(|i| format!("{}.device", params[i]))
        .unwrap_or_else(|| if opts.interpret { "'cpu'" } else { "'cuda'" }.into());
    // Python numbers among the inputs (`get_inputs()` returning `3.14`) become tensors
    let mut prologue = String::new();
    for (i, &v) in g.inputs().iter().enumerate() {
        if g.ty(v).rank() == 0 {
            writeln!(
                prologue,
                "    if not isinstance({p}, torch.Tensor):\n        {p} = torch.tensor({p}, dtype={}, device={device})",
                torch_dtype(g.ty(v).dtype),
                p = params[i]
            )
            .unwrap();
        }
    }
    let mut host = Host {
        g,
        names,
        namer,
        body: String::new(),
        kernels: String::new(),
        device,
        needs_mul: false,
        needs_prelude: false,
        matmul_precision: opts.precision.torch_matmul_precision(),
        launches: 0,
        update_running_stats: matches!(form, ModuleForm::KernelBench { .. }),
        running: vec![],
        layout: &lowering.layout,
        in_place: InPlace::new(
            &lowering.placements,
            &lowering.view_writes,
            &lowering.cat_prefixes,
        ),
        converted: HashMap::new(),
    };
    let pos: HashMap<NodeId, usize> = g.body().iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let mut reports = vec![];
    // consumer regions' code generated with moment partials a GEMM epilogue writes
    let mut linked: HashMap<usize, RegionCode> = HashMap::new();
    // library regions a chosen template computes, by the region that emits its kernel
    let chosen = chosen_templates(lowering);
    let fused_later: HashMap<usize, usize> = chosen
        .iter()
        .filter_map(|(&at, c)| (at != c.source).then_some((c.source, at)))
        .collect();
    for (i, r) in plan.regions.iter().enumerate() {
        let ops: Vec<&'static str> = r.nodes.iter().map(|&n| g.node(n).op.name()).collect();
        let listing: Vec<String> = r
            .nodes
            .iter()
            .map(|n| format!("#{} {}", pos[n], g.node(*n).op.name()))
            .collect();
        writeln!(
            host.body,
            "    # region {i} ({}): {}",
            r.kind,
            listing.join(", ")
        )
        .unwrap();
        let mut report = RegionReport {
            index: i,
            kind: r.kind,
            ops,
            kernel: None,
            fallback: r.kind == RegionKind::Fallback,
            fallback_reason: None,
            gemm: None,
            template: None,
        };
        if let Some(&j) = fused_later.get(&i) {
            writeln!(host.body, "    # (computed by region {j}'s kernel)").unwrap();
            reports.push(report);
            continue;
        }
        if let Some(c) = chosen.get(&i) {
            // the emitting region's outputs a concatenation's slice takes (`plan/concat.rs`)
            let placed = lowering.region_placements(g, i, &r.outputs);
            // a convolution's tile moments for a later batch norm (`gemm_moments.rs`)
            let link = link_code(g, plan, lowering, c.source);
            let moments = link.as_ref().map(|l| &l.moments);
            match c.kernel(g, plan, host.layout, (&placed, moments)) {
                Some(k) => {
                    report.kernel = Some((k.name.clone(), k.config.clone()));
                    report.template = Some(c.report());
                    let mut code = RegionCode {
                        kernels: vec![k],
                        scratch: vec![],
                        stats: vec![],
                        given: None,
                        placed: true,
                    };
                    if let Some(l) = link {
                        code.scratch = l.scratch;
                        linked.insert(l.consumer, l.code);
                    }
                    host.in_place.begin(i, true);
                    host.launch_region(&code);
                    host.in_place.end();
                    reports.push(report);
                    continue;
                }
                None => {
                    // the library call, then the region as usual
                    report.template = Some(c.uncovered());
                    host.torch_nodes(&plan.regions[c.source].nodes);
                    if c.source == i {
                        reports.push(report);
                        continue;
                    }
                }
            }
        }
        let rp = &lowering.regions[i];
        let gemm = rp.implementation.gemm();
        if let Some(p) = gemm {
            report.gemm = Some(p.clone());
            host.needs_prelude = true;
        }
        let host_gemm = gemm.filter(|p| {
            matches!(
                p.imp,
                GemmImpl::Library | GemmImpl::PaddedLibrary | GemmImpl::PyTorch
            )
        });
        if let Some(p) = host_gemm {
            if p.imp == GemmImpl::PyTorch {
                report.fallback = true;
                report.fallback_reason = Some("the GEMM's implementation is PyTorch".into());
                host.torch_nodes(&r.nodes);
            } else {
                let pad = p.imp == GemmImpl::PaddedLibrary;
                match host.library_gemm(r, p.shape.main, i, pad, rp.config.as_ref()) {
                    Ok(Some(k)) => report.kernel = Some((k.name.clone(), k.config.clone())),
                    Ok(None) => {}
                    Err(why) => {
                        report.fallback = true;
                        report.fallback_reason = Some(why);
                    }
                }
            }
        } else if r.kind.is_kernel() {
            let name = format!("drtc_k{i}_{}", r.kind);
            let link = link_code(g, plan, lowering, i);
            let links = Links {
                given: None,
                moments: link.as_ref().map(|l| l.moments.clone()),
            };
            let code = match linked.remove(&i) {
                Some(code) => Ok((code, false)),
                None => region_kernel(g, r, i, &name, lowering, &links).map(|c| (c, true)),
            };
            match code {
                Ok((mut code, planned)) => {
                    // outputs stored elsewhere, when this kernel was generated to store them so
                    host.in_place.begin(i, planned && code.placed);
                    // the consumer's partials are allocated before this region writes them
                    if let Some(l) = link {
                        code.scratch.extend(l.scratch);
                        linked.insert(l.consumer, l.code);
                    }
                    let last = code.kernels.last().expect("a region has a kernel");
                    report.kernel = Some((last.name.clone(), last.config.clone()));
                    host.launch_region(&code);
                    host.in_place.end();
                }
                Err(why) => {
                    report.fallback = true;
                    report.fallback_reason = Some(why);
                    let nodes: Vec<NodeId> = r.nodes.clone();
                    host.torch_nodes(&nodes);
                }
            }
        } else if host.torch_nodes(&r.nodes) == 0 {
            // nothing computed with PyTorch (a concatenation written in place)
            report.fallback = false;
        }
        reports.push(report);
    }
    host.flush_running_stats();
    // an output that is a graph input (after rewrites such as `x * 1 -> x`) or appears
    // twice is copied: outputs must never alias inputs or each other
    let mut outs: Vec<String> = vec![];
    for (k, &v) in g.outputs().iter().enumerate() {
        let aliased = g.producer(v).is_none() || g.outputs()[..k].contains(&v);
        let n = host.name(v);
        if aliased {
            host.launches += 1;
        }
        outs.push(if aliased { format!("{n}.clone()") } else { n });
    }
    let mut graphs = decide(
        opts.graphs,
        g,
        !opts.interpret,
        GraphCost {
            launches: host.launches,
            outputs: g.outputs().len(),
            output_bytes: g.outputs().iter().map(|&v| g.ty(v).size_bytes()).sum(),
        },
    );
    let assigned: Vec<&str> = form
        .state()
        .iter()
        .filter(|u| u.assign)
        .map(|u| u.name.as_str())
        .collect();
    if graphs.enabled && !assigned.is_empty() {
        // each call assigns a new tensor, which the next call reads: every call's key
        // (data pointers) would be new, so every call would capture a graph
        graphs.enabled = false;
        graphs.reason = format!(
            "forward assigns new tensors to module state ({}): every call would capture",
            assigned.join(", ")
        );
    }
    let mut src = String::new();
    let header = "# ---- generated by drtc: Triton kernels for the fused regions ----\n";
    let imports = "import torch\nimport triton\nimport triton.language as tl\n\n\n";
    let source = match form {
        ModuleForm::KernelBench { model_source, .. } => {
            src.push_str(model_source.trim_end());
            src.push_str("\n\n\n");
            model_source.as_str()
        }
        ModuleForm::Seed => opts.guard.reference_source.as_deref().unwrap_or(""),
    };
    src.push_str(header);
    src.push_str(imports);
    if host.needs_prelude {
        src.push_str(GEMM_PRELUDE);
    }
    if host.layout.any() {
        src.push_str(CHANNELS_LAST_HELPER);
    }
    if host.needs_mul {
        src.push_str("@triton.jit\ndef _drtc_mul(a, b):\n    return a * b\n\n\n");
    }
    src.push_str(&host.kernels);
    src.push('\n');
    src.push_str(
        "# the kernels, for exactly the inputs in _DRTC_GUARD (call through _drtc_dispatch)\n",
    );
    writeln!(src, "def drtc_forward({}):", params.join(", ")).unwrap();
    src.push_str(&prologue);
    src.push_str(&host.body);
    writeln!(src, "    return ({},)", outs.join(", ")).unwrap();
    src.push_str("\n\n");
    let device = if opts.interpret { "cpu" } else { "cuda" };
    let mut guard = opts.guard.clone();
    if matches!(form, ModuleForm::Seed) && guard.reference_source.is_none() {
        // no reference to fall back to or recompile from: mismatches can only be errors
        guard.mode = crate::guard::GuardMode::Error;
    }
    // weights of channels-last convolutions: ModelNew converts them once, the guard
    // accepts them so
    let cl_params = channels_last_params(g, form, host.layout);
    let mut guard_inputs = GuardInput::of_graph(g, &params);
    for (k, &v) in g.inputs().iter().enumerate() {
        if cl_params.contains(&v) {
            guard_inputs[k].memory_format = Some(memory_format(g.ty(v).rank()));
        }
    }
    src.push_str(&guard_section(&guard_inputs, Some(device), source, &guard));
    if graphs.enabled {
        src.push_str(&graph_section(&graphs));
    }
    src.push_str(&entry_point(g, form, &host, &cl_params, graphs.enabled));
    let _ = Op::Full;
    GeneratedModule {
        source: src,
        regions: reports,
        layout: host.layout.notes.clone(),
        channels_last: host.layout.any(),
        graphs,
        plan: lowering.clone(),
    }
}
