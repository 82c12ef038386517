//! Speed of light: the work a program must do, counted once from its IR (the bytes that
//! must move: every graph input, parameters included, read once and every output written
//! once; the FLOPs of its nodes, split into matrix products that tensor cores can run and
//! the rest), and the least time that work needs on a device with the given measured
//! limits. A module's achieved fraction is that time over its measured time.

use crate::verifier::DevicePeaks;
use drtc_backends::triton::Precision;
use drtc_ir::{Category, DType, Graph};
use serde::{Deserialize, Serialize};

/// The work of one program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Work {
    /// Graph inputs (activations, parameters, buffers) plus outputs, once each.
    pub bytes: u64,
    /// FLOPs of contractions and library calls (matrix products, convolutions).
    pub tensor_flops: u64,
    /// Every other node's FLOPs (CUDA cores).
    pub other_flops: u64,
    /// A contraction reads 16-bit floats (its tensor-core peak is the bf16 one).
    pub half_products: bool,
    /// The program's family: the heaviest op category present (contraction, library,
    /// normalization, window, reduction, pointwise, layout, creation, in that order).
    pub family: String,
}

/// Categories from the heaviest down; a program's family is the first one it holds.
const FAMILY_ORDER: [Category; 8] = [
    Category::Contraction,
    Category::Library,
    Category::Normalization,
    Category::Window,
    Category::Reduction,
    Category::Pointwise,
    Category::Layout,
    Category::Creation,
];

impl Work {
    pub fn of(g: &Graph) -> Work {
        let size = |v: &drtc_ir::ValueId| g.value(*v).ty.size_bytes();
        let bytes = g
            .inputs()
            .iter()
            .chain(g.outputs())
            .map(size)
            .fold(0u64, u64::saturating_add);
        let (mut tensor_flops, mut other_flops, mut half_products) = (0u64, 0u64, false);
        let mut present = Vec::new();
        for &n in g.body() {
            let node = g.node(n);
            let category = node.op.def().category;
            let ins: Vec<_> = node.inputs.iter().map(|v| &g.value(*v).ty).collect();
            let outs: Vec<_> = node
                .outputs
                .iter()
                .map(|v| g.value(*v).ty.clone())
                .collect();
            let flops = node.op.flops(&ins, &outs, &node.attrs);
            if matches!(category, Category::Contraction | Category::Library) {
                tensor_flops = tensor_flops.saturating_add(flops);
                half_products |= ins
                    .iter()
                    .any(|t| matches!(t.dtype, DType::F16 | DType::BF16));
            } else {
                other_flops = other_flops.saturating_add(flops);
            }
            present.push(category);
        }
        let family = FAMILY_ORDER
            .into_iter()
            .find(|c| present.contains(c))
            .map_or("empty", |c| c.name())
            .to_string();
        Work {
            bytes,
            tensor_flops,
            other_flops,
            half_products,
            family,
        }
    }

    /// The least time this work needs on a device with `peaks` under the precision
    /// policy: the larger of moving the bytes at the copy bandwidth and doing the FLOPs at
    /// the peaks (matrix products at the policy's tensor-core or CUDA-core peak, the rest
    /// at the fp32 peak).
    pub fn speed_of_light(&self, peaks: &DevicePeaks, policy: Precision) -> SpeedOfLight {
        let (peak_name, peak) = product_peak(peaks, policy, self.half_products);
        let memory_ms = self.bytes as f64 / (peaks.copy_gb_s * 1e9) * 1e3;
        let compute_ms = (self.tensor_flops as f64 / (peak * 1e12)
            + self.other_flops as f64 / (peaks.fp32_tflops * 1e12))
            * 1e3;
        SpeedOfLight {
            time_ms: memory_ms.max(compute_ms),
            memory_ms,
            compute_ms,
            bound: if memory_ms >= compute_ms {
                "memory"
            } else {
                "compute"
            }
            .into(),
            product_peak: peak_name.into(),
            product_tflops: peak,
        }
    }
}

/// The peak that matrix products run at under a policy: bf16 for 16-bit operands; TF32
/// under `tf32`; full fp32 under `ieee`; under `fp32` (results at full-fp32 accuracy) the
/// faster of full-fp32 products and three TF32 products per product (tf32x3).
fn product_peak(peaks: &DevicePeaks, policy: Precision, half: bool) -> (&'static str, f64) {
    if half {
        return ("bf16", peaks.bf16_tflops);
    }
    match policy {
        Precision::Tf32 => ("tf32", peaks.tf32_tflops),
        Precision::Ieee => ("fp32", peaks.fp32_tflops),
        Precision::Fp32 if peaks.tf32_tflops / 3.0 > peaks.fp32_tflops => {
            ("tf32/3 (tf32x3)", peaks.tf32_tflops / 3.0)
        }
        Precision::Fp32 => ("fp32", peaks.fp32_tflops),
    }
}

/// The least time a program's work needs, and what bounds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeedOfLight {
    pub time_ms: f64,
    pub memory_ms: f64,
    pub compute_ms: f64,
    /// `memory` or `compute`: which of the two is larger.
    pub bound: String,
    /// The peak matrix products were counted at, and its TFLOP/s.
    pub product_peak: String,
    pub product_tflops: f64,
}

impl SpeedOfLight {
    /// Speed of light over a measured time (1.0 is the limit).
    pub fn fraction(&self, measured_ms: f64) -> f64 {
        self.time_ms / measured_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peaks() -> DevicePeaks {
        DevicePeaks {
            copy_gb_s: 4000.0,
            fp32_tflops: 50.0,
            tf32_tflops: 400.0,
            bf16_tflops: 800.0,
            device: "test".into(),
            source: "test".into(),
        }
    }

    fn graph(text: &str) -> Graph {
        drtc_ir::parse(text).expect("parses")
    }

    #[test]
    fn a_pointwise_op_moves_its_input_and_output_and_is_memory_bound() {
        let g = graph(
            "graph @g(%x: f32[1024, 1024]) {\n  %0 = relu(%x) : f32[1024, 1024]\n  return %0\n}\n",
        );
        let w = Work::of(&g);
        assert_eq!(w.bytes, 2 * 1024 * 1024 * 4);
        assert_eq!(w.tensor_flops, 0);
        assert_eq!(w.family, "pointwise");
        let sol = w.speed_of_light(&peaks(), Precision::Fp32);
        assert_eq!(sol.bound, "memory");
        let expected = (8.0 * 1024.0 * 1024.0) / 4e12 * 1e3;
        assert!((sol.time_ms - expected).abs() < 1e-12, "{sol:?}");
        assert!((sol.fraction(2.0 * expected) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn a_large_matmul_is_compute_bound_at_the_policys_peak() {
        let g = graph(
            "graph @g(%a: f32[4096, 4096], %b: f32[4096, 4096]) {\n  %0 = matmul(%a, %b) : f32[4096, 4096]\n  return %0\n}\n",
        );
        let w = Work::of(&g);
        assert_eq!(w.family, "contraction");
        assert_eq!(w.tensor_flops, 2 * 4096u64.pow(3));
        let fp32 = w.speed_of_light(&peaks(), Precision::Fp32);
        assert_eq!(fp32.bound, "compute");
        assert_eq!(fp32.product_peak, "tf32/3 (tf32x3)");
        let tf32 = w.speed_of_light(&peaks(), Precision::Tf32);
        assert!((fp32.compute_ms / tf32.compute_ms - 3.0).abs() < 1e-9);
        let ieee = w.speed_of_light(&peaks(), Precision::Ieee);
        assert_eq!(ieee.product_peak, "fp32");
    }
}
