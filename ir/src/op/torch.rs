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

#[cfg(test)]
mod tests {
    use crate::Op;
    use std::collections::HashMap;

    #[test]
    fn each_call_and_module_names_one_op() {
        let mut calls: HashMap<&str, Op> = HashMap::new();
        let mut modules: HashMap<&str, Op> = HashMap::new();
        for &op in Op::ALL {
            let t = &op.def().torch;
            for c in t.calls {
                assert!(
                    ["torch.", "F.", "Tensor."].iter().any(|p| c.starts_with(p)),
                    "`{c}` of `{op}` is not a canonical path"
                );
                if let Some(other) = calls.insert(c, op) {
                    panic!("`{c}` spells both `{other}` and `{op}`");
                }
                assert_eq!(Op::from_torch(c), Some(op));
            }
            for m in t.modules {
                if let Some(other) = modules.insert(m.name, op) {
                    panic!("nn.{} stands for both `{other}` and `{op}`", m.name);
                }
                assert_eq!(Op::from_nn_module(m.name).map(|(o, _)| o), Some(op));
            }
        }
        assert_eq!(Op::from_torch("F.relu"), Some(Op::Relu));
        assert_eq!(Op::from_torch("torch.nn.functional.relu"), None);
    }

    #[test]
    fn rows_are_consistent() {
        for &op in Op::ALL {
            let def = op.def();
            let t = &def.torch;
            assert_eq!(t.calls.is_empty(), t.params.is_empty(), "`{op}`");
            assert!(t.modules.is_empty() || !t.calls.is_empty(), "`{op}`");
            for m in t.modules {
                // a module passes its constructor arguments and settings by name
                for name in m.ctor.iter().chain(m.set.iter().map(|(n, _)| n)) {
                    assert!(
                        t.params.contains(name),
                        "nn.{} passes `{name}`, which `{op}`'s spelling does not take",
                        m.name
                    );
                }
                for (name, v) in m.set {
                    let a = def.attr(name).expect("a module sets an attribute");
                    assert!(
                        a.kind.accepts(&v.value().expect("a value")),
                        "nn.{}",
                        m.name
                    );
                }
            }
        }
    }

    #[test]
    fn defaults_come_from_the_attribute_column() {
        assert_eq!(
            Op::LeakyRelu.default_of("negative_slope"),
            crate::Attr::Float(0.01)
        );
        assert_eq!(Op::BatchNorm.default_of("eps"), crate::Attr::Float(1e-5));
    }
}
