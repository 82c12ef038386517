//! Call arguments and their binding to a signature (PyTorch's parameter names), with typed
//! accessors that turn a wrong argument into an error pointing at it.

use super::error::{FrontendError, Span};
use super::value::Val;

/// The evaluated arguments of one call.
#[derive(Debug, Clone)]
pub struct Args {
    pub pos: Vec<(Val, Span)>,
    pub kw: Vec<(String, Val, Span)>,
    /// The whole call expression.
    pub span: Span,
}

impl Args {
    pub fn new(span: Span) -> Args {
        Args {
            pos: vec![],
            kw: vec![],
            span,
        }
    }

    /// The same arguments with `recv` as a new first positional argument (methods).
    pub fn with_receiver(mut self, recv: Val, span: Span) -> Args {
        self.pos.insert(0, (recv, span));
        self
    }

    /// Binds the arguments to `params`, PyTorch-style names in order. A name starting with
    /// `*` collects all remaining positional arguments into a tuple (`torch.rand(*size)`).
    pub fn bind(&self, func: &str, params: &[&'static str]) -> Result<Bound, FrontendError> {
        let mut vals: Vec<Option<(Val, Span)>> = vec![None; params.len()];
        let mut names: Vec<&'static str> = Vec::with_capacity(params.len());
        let mut var_index = None;
        for (i, p) in params.iter().enumerate() {
            if let Some(stripped) = p.strip_prefix('*') {
                var_index = Some(i);
                names.push(stripped);
            } else {
                names.push(p);
            }
        }
        for (next, (v, s)) in self.pos.iter().enumerate() {
            if Some(next) == var_index {
                let rest: Vec<Val> = self.pos[next..].iter().map(|(v, _)| v.clone()).collect();
                let span = s.start..self.pos.last().map_or(s.end, |l| l.1.end);
                vals[next] = Some((Val::tuple(rest), span));
                break;
            }
            if next >= params.len() {
                return Err(FrontendError::lowering(
                    format!(
                        "`{func}` takes at most {} positional arguments ({})",
                        params.len(),
                        params.join(", ")
                    ),
                    s.clone(),
                ));
            }
            vals[next] = Some((v.clone(), s.clone()));
        }
        for (name, v, s) in &self.kw {
            let Some(i) = names.iter().position(|n| n == name) else {
                return Err(FrontendError::unsupported(
                    format!(
                        "`{func}` has no argument `{name}` drtc knows (accepted: {})",
                        names.join(", ")
                    ),
                    s.clone(),
                ));
            };
            if vals[i].is_some() {
                return Err(FrontendError::lowering(
                    format!("`{func}` got argument `{name}` twice"),
                    s.clone(),
                ));
            }
            vals[i] = Some((v.clone(), s.clone()));
        }
        Ok(Bound {
            func: func.to_string(),
            names,
            vals,
            span: self.span.clone(),
        })
    }
}

/// Arguments bound to names.
#[derive(Debug, Clone)]
pub struct Bound {
    pub func: String,
    names: Vec<&'static str>,
    vals: Vec<Option<(Val, Span)>>,
    pub span: Span,
}

impl Bound {
    fn index(&self, name: &str) -> usize {
        self.names
            .iter()
            .position(|n| *n == name)
            .unwrap_or(usize::MAX)
    }

    /// The argument, if given (an explicit `None` counts as given).
    pub fn get(&self, name: &str) -> Option<&Val> {
        self.vals
            .get(self.index(name))
            .and_then(|v| v.as_ref())
            .map(|(v, _)| v)
    }

    /// The argument, treating an explicit `None` like a missing one.
    pub fn opt(&self, name: &str) -> Option<&Val> {
        self.get(name).filter(|v| !matches!(v, Val::None))
    }

    /// The span of the argument, or of the call when it was not given.
    pub fn span_of(&self, name: &str) -> Span {
        self.vals
            .get(self.index(name))
            .and_then(|v| v.as_ref())
            .map_or(self.span.clone(), |(_, s)| s.clone())
    }

    pub fn required(&self, name: &str) -> Result<&Val, FrontendError> {
        self.get(name).ok_or_else(|| {
            FrontendError::lowering(
                format!("`{}` is missing its argument `{name}`", self.func),
                self.span.clone(),
            )
        })
    }

    fn wrong(&self, name: &str, what: &str, v: &Val) -> FrontendError {
        FrontendError::lowering(
            format!(
                "`{}`: argument `{name}` must be {what}, got {}",
                self.func,
                v.type_name()
            ),
            self.span_of(name),
        )
    }

    pub fn int(&self, name: &str, default: i64) -> Result<i64, FrontendError> {
        match self.opt(name) {
            None => Ok(default),
            Some(v) => self.as_int(name, v),
        }
    }

    pub fn req_int(&self, name: &str) -> Result<i64, FrontendError> {
        let v = self.required(name)?;
        self.as_int(name, v)
    }

    pub fn opt_int(&self, name: &str) -> Result<Option<i64>, FrontendError> {
        self.opt(name).map(|v| self.as_int(name, v)).transpose()
    }

    fn as_int(&self, name: &str, v: &Val) -> Result<i64, FrontendError> {
        match v {
            Val::Int(i) => Ok(*i),
            Val::Bool(b) => Ok(*b as i64),
            _ => Err(self.wrong(name, "an int", v)),
        }
    }

    pub fn float(&self, name: &str, default: f64) -> Result<f64, FrontendError> {
        match self.opt(name) {
            None => Ok(default),
            Some(v) => v.as_number().ok_or_else(|| self.wrong(name, "a number", v)),
        }
    }

    pub fn opt_float(&self, name: &str) -> Result<Option<f64>, FrontendError> {
        self.opt(name)
            .map(|v| v.as_number().ok_or_else(|| self.wrong(name, "a number", v)))
            .transpose()
    }

    pub fn bool(&self, name: &str, default: bool) -> Result<bool, FrontendError> {
        match self.opt(name) {
            None => Ok(default),
            Some(Val::Bool(b)) => Ok(*b),
            Some(Val::Int(i)) => Ok(*i != 0),
            Some(v) => Err(self.wrong(name, "a bool", v)),
        }
    }

    pub fn str(&self, name: &str, default: &str) -> Result<String, FrontendError> {
        match self.opt(name) {
            None => Ok(default.to_string()),
            Some(Val::Str(s)) => Ok(s.to_string()),
            Some(v) => Err(self.wrong(name, "a string", v)),
        }
    }

    pub fn req_ints_n(&self, name: &str, n: usize) -> Result<Vec<i64>, FrontendError> {
        let v = self.required(name)?.clone();
        if matches!(v, Val::None) {
            return Err(self.wrong(name, "an int or a tuple of ints", &v));
        }
        self.as_ints_n(name, &v, n)
    }

    pub fn as_ints_n(&self, name: &str, v: &Val, n: usize) -> Result<Vec<i64>, FrontendError> {
        match v {
            Val::Int(i) => Ok(vec![*i; n]),
            Val::Tuple(_) | Val::List(_) => {
                let items = self.as_ints(name, v)?;
                if items.len() == 1 {
                    Ok(vec![items[0]; n])
                } else if items.len() == n {
                    Ok(items)
                } else {
                    Err(FrontendError::lowering(
                        format!(
                            "`{}`: argument `{name}` needs 1 or {n} values, got {}",
                            self.func,
                            items.len()
                        ),
                        self.span_of(name),
                    ))
                }
            }
            _ => Err(self.wrong(name, "an int or a tuple of ints", v)),
        }
    }

    /// A sequence of ints (or one int, as a one-element list).
    pub fn ints(&self, name: &str) -> Result<Option<Vec<i64>>, FrontendError> {
        self.opt(name).map(|v| self.as_ints(name, v)).transpose()
    }

    pub fn as_ints(&self, name: &str, v: &Val) -> Result<Vec<i64>, FrontendError> {
        match v {
            Val::Int(i) => Ok(vec![*i]),
            Val::Tuple(items) | Val::List(items) => items
                .iter()
                .map(|x| match x {
                    Val::Int(i) => Ok(*i),
                    _ => Err(self.wrong(name, "a tuple of ints", v)),
                })
                .collect(),
            _ => Err(self.wrong(name, "an int or a tuple of ints", v)),
        }
    }
}
