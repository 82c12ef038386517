//! An op's kind: its category refined to what the layers below ask of it (which template
//! family computes it, a pooling's rank, a convolution's rank), stated once per op in the
//! table (`table.rs`).
//!
//! The layers that read it: the templates' limits and the planner's region kinds
//! (`drtc_passes::fuse::support`), reduction spaces, randomness, the window template and
//! the layout pass (ranks), the synthesizer's families, examples and `drtc ops`.

use super::Category;

/// What a pooling window computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pool {
    /// `max_pool{1,2,3}d`.
    Max,
    /// `avg_pool{1,2,3}d`.
    Avg,
    /// `adaptive_avg_pool{1,2,3}d`.
    AdaptiveAvg,
}

/// The kind of an op: a refinement of [`Category`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Tensor creation (`full`).
    Creation,
    /// Elementwise with broadcasting.
    Pointwise,
    /// Reduces along dimensions to one value per row (sum, max, var, softmax).
    Reduce,
    /// Running reductions along one dim (cumsum, cummax).
    Scan,
    /// A loss: pointwise terms reduced per `reduction`.
    Loss,
    /// A normalization (batch, layer, group, instance, rms).
    Norm,
    /// A pooling window over this many trailing (spatial) dims.
    Window(Pool, usize),
    /// A matrix product with a template (matmul, bmm, linear).
    Product,
    /// A contraction called through PyTorch (einsum, attention).
    Composite,
    /// A convolution over this many spatial dims, plain or transposed: a library call.
    Conv { rank: usize, transposed: bool },
    /// An opaque ATen call.
    Opaque,
    /// A view of its input (reshape, transpose, slice): no data movement.
    View,
    /// Moves or masks data into a new tensor (flip, diag, triangles, cat, stack).
    Copy,
}

impl Kind {
    /// The category this kind refines.
    pub const fn category(self) -> Category {
        match self {
            Kind::Creation => Category::Creation,
            Kind::Pointwise => Category::Pointwise,
            Kind::Reduce | Kind::Scan | Kind::Loss => Category::Reduction,
            Kind::Norm => Category::Normalization,
            Kind::Window(..) => Category::Window,
            Kind::Product | Kind::Composite => Category::Contraction,
            Kind::Conv { .. } | Kind::Opaque => Category::Library,
            Kind::View | Kind::Copy => Category::Layout,
        }
    }

    /// The pooling and its number of spatial dims, for a pooling window.
    pub const fn pooling(self) -> Option<(Pool, usize)> {
        match self {
            Kind::Window(pool, rank) => Some((pool, rank)),
            Kind::Creation
            | Kind::Pointwise
            | Kind::Reduce
            | Kind::Scan
            | Kind::Loss
            | Kind::Norm
            | Kind::Product
            | Kind::Composite
            | Kind::Conv { .. }
            | Kind::Opaque
            | Kind::View
            | Kind::Copy => None,
        }
    }
}
