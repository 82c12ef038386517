//! The table's torch column: how PyTorch spells an op. The Python frontend looks calls up
//! here (`Op::from_torch`), binds their arguments by these parameter names and reads the
//! attribute defaults from the table's attribute column, so a new op that PyTorch spells
//! as a plain function needs no frontend code.

use crate::attr::Default;

/// The PyTorch spellings of one op.
#[derive(Debug)]
pub struct Torch {
    /// The calls that lower to this op, by canonical path: functions (`torch.relu`,
    /// `F.relu`, `torch.special.erf`) and tensor methods (`Tensor.relu`, whose receiver binds
    /// the first parameter).
    pub calls: &'static [&'static str],
    /// PyTorch's parameter names of those calls, in positional order. The first ones are
    /// the tensor inputs (as many as the op's arity allows; the trailing optional ones may
    /// be `None`); a parameter named like one of the op's attributes sets it (its default is
    /// the table's); any other is accepted and has no effect on the value (`inplace`).
    pub params: &'static [&'static str],
    /// The `torch.nn` modules that compute this op without parameters of their own.
    pub modules: &'static [Module],
}

/// A parameter-free `torch.nn` module: calling it is the op's functional form with the
/// constructor's arguments passed by name.
#[derive(Debug)]
pub struct Module {
    /// The class name (`LeakyReLU`).
    pub name: &'static str,
    /// Constructor parameters, in positional order; each one given is passed to the
    /// functional form under the same name.
    pub ctor: &'static [&'static str],
    /// Arguments the module passes where its constructor argument of that name was not
    /// given (`nn.Flatten` flattens from dim 1, `F.flatten` from dim 0).
    pub set: &'static [(&'static str, Default)],
}

impl Torch {
    /// An op PyTorch code does not call directly (or that only composite spellings reach).
    pub const NONE: Torch = Torch {
        calls: &[],
        params: &[],
        modules: &[],
    };
}

/// Shorthands for table rows.
pub(super) mod row {
    use super::{Module, Torch};
    use crate::attr::Default;

    /// The parameters of a one-tensor function with an ignored `inplace` flag.
    pub const UNARY: &[&str] = &["input", "inplace"];

    pub const fn t(calls: &'static [&'static str], params: &'static [&'static str]) -> Torch {
        Torch {
            calls,
            params,
            modules: &[],
        }
    }
    pub const fn tm(
        calls: &'static [&'static str],
        params: &'static [&'static str],
        modules: &'static [Module],
    ) -> Torch {
        Torch {
            calls,
            params,
            modules,
        }
    }
    pub const fn nn(name: &'static str, ctor: &'static [&'static str]) -> Module {
        Module {
            name,
            ctor,
            set: &[],
        }
    }
    pub const fn nn_set(
        name: &'static str,
        ctor: &'static [&'static str],
        set: &'static [(&'static str, Default)],
    ) -> Module {
        Module { name, ctor, set }
    }
}
