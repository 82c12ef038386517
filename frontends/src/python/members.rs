//! What running `__init__` records: parameters and buffers, and `nn.*` layers.

use super::args::Bound;
use drtc_ir::{InputKind, TensorType};

/// A parameter or buffer recorded while `__init__` ran, by its name inside its owner.
#[derive(Debug, Clone)]
pub struct Member {
    pub name: String,
    pub ty: TensorType,
    pub kind: InputKind,
}

/// One `nn.*` module instance.
#[derive(Debug, Clone)]
pub struct Layer {
    /// The class name without `nn.` (`Conv2d`).
    pub kind: String,
    /// The attribute it is stored under in the model (its state_dict prefix).
    pub prefix: String,
    /// The constructor arguments, bound to PyTorch's names.
    pub config: Bound,
    /// Its parameters and buffers, in state_dict order.
    pub members: Vec<Member>,
}
