//! The symbolic interpreter: runs the straight-line Python of a program with Python numbers
//! evaluated exactly and tensors as IR values, so running `forward` builds the graph.
//!
//! Three phases: `Inputs` (running `get_inputs`: random tensors are fine, only their types
//! matter), `Init` (running `Model.__init__`: layers and parameters are recorded) and
//! `Forward` (building the graph; randomness is an error).

use super::args::Args;
use super::ast::*;
use super::emitter::{Emitter, Phase};
use super::error::{FrontendError, Span};
use super::members::Member;
use super::value::{LayerId, ObjectId, Val};
use super::{builtins, indexing, layers, operators, paths, spelling};
use drtc_ir::{InputKind, ValueId};
use std::collections::HashMap;
use std::rc::Rc;

/// How deeply user functions may call each other.
const MAX_CALL_DEPTH: usize = 64;

/// An instance of a class defined in the program (the `Model`).
#[derive(Debug, Clone)]
pub struct Object {
    pub class: Rc<ClassDef>,
    pub attrs: HashMap<String, Val>,
    /// Own parameters and buffers, in registration order.
    pub members: Vec<Member>,
    /// Child layers by attribute name, in registration order.
    pub children: Vec<(String, LayerId)>,
}

/// A variable scope: a function's locals, or the module's globals.
pub struct Scope {
    locals: HashMap<String, Val>,
    global: bool,
}

impl Scope {
    pub fn module() -> Scope {
        Scope {
            locals: HashMap::new(),
            global: true,
        }
    }
    pub fn function() -> Scope {
        Scope {
            locals: HashMap::new(),
            global: false,
        }
    }
}

/// The interpreter state: the evaluator's own (globals, objects) beside the emitter.
pub struct Interp {
    pub globals: HashMap<String, Val>,
    /// The graph under construction and what lowering reads.
    pub em: Emitter,
    pub objects: Vec<Object>,
    call_depth: usize,
}

type R<T> = Result<T, FrontendError>;

/// What running a block did.
enum Flow {
    Normal,
    Return(Val),
}

impl Interp {
    pub fn new() -> Interp {
        Interp {
            globals: HashMap::new(),
            em: Emitter::new(),
            objects: vec![],
            call_depth: 0,
        }
    }

    /// Runs the module's top-level statements (imports, constants, defs, classes).
    pub fn run_module(&mut self, module: &Module) -> R<()> {
        let mut scope = Scope::module();
        match self.exec_block(&module.body, &mut scope)? {
            Flow::Normal => Ok(()),
            Flow::Return(_) => Ok(()),
        }
    }

    // ------------------------------------------------------------ statements

    fn exec_block(&mut self, body: &[Stmt], scope: &mut Scope) -> R<Flow> {
        for stmt in body {
            if let Flow::Return(v) = self.exec(stmt, scope)? {
                return Ok(Flow::Return(v));
            }
        }
        Ok(Flow::Normal)
    }

    fn exec(&mut self, stmt: &Stmt, scope: &mut Scope) -> R<Flow> {
        match &stmt.kind {
            StmtKind::Expr(e) => {
                self.eval(e, scope)?;
            }
            StmtKind::Pass => {}
            StmtKind::Return(e) => {
                let v = match e {
                    Some(e) => self.eval(e, scope)?,
                    None => Val::None,
                };
                return Ok(Flow::Return(v));
            }
            StmtKind::Assign { targets, value } => {
                let v = self.eval(value, scope)?;
                for t in targets {
                    self.assign(t, v.clone(), scope)?;
                }
            }
            StmtKind::AnnAssign { target, value } => {
                if let Some(value) = value {
                    let v = self.eval(value, scope)?;
                    self.assign(target, v, scope)?;
                }
            }
            StmtKind::AugAssign { target, op, value } => {
                if !matches!(target.kind, ExprKind::Name(_) | ExprKind::Attr(..)) {
                    return Err(FrontendError::unsupported(
                        "augmented assignment to this target is not supported (tensors are immutable in drtc's subset)",
                        target.span.clone(),
                    ));
                }
                let cur = self.eval(target, scope)?;
                let rhs = self.eval(value, scope)?;
                let v = operators::binary(&mut self.em, *op, cur, rhs, &stmt.span)?;
                self.assign(target, v, scope)?;
            }
            StmtKind::Import(names) => {
                for (module, alias) in names {
                    match alias {
                        Some(a) => self.set_var(scope, a, Val::Path(module.as_str().into())),
                        None => {
                            let root = module.split('.').next().unwrap_or(module);
                            self.set_var(scope, root, Val::Path(root.into()));
                        }
                    }
                }
            }
            StmtKind::FromImport { module, names } => {
                for (name, alias) in names {
                    let full = format!("{module}.{name}");
                    self.set_var(
                        scope,
                        alias.as_deref().unwrap_or(name),
                        Val::Path(full.as_str().into()),
                    );
                }
            }
            StmtKind::Def(f) => self.set_var(scope, &f.name, Val::Function(f.clone())),
            StmtKind::Class(c) => self.set_var(scope, &c.name, Val::Class(c.clone())),
        }
        Ok(Flow::Normal)
    }

    fn set_var(&mut self, scope: &mut Scope, name: &str, v: Val) {
        if scope.global {
            self.globals.insert(name.to_string(), v);
        } else {
            scope.locals.insert(name.to_string(), v);
        }
    }

    fn assign(&mut self, target: &Expr, v: Val, scope: &mut Scope) -> R<()> {
        match &target.kind {
            ExprKind::Name(n) => {
                self.set_var(scope, n, v);
                Ok(())
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                let values = self.unpack(v, items.len(), &target.span)?;
                if items.iter().any(|i| matches!(i.kind, ExprKind::Starred(_))) {
                    return Err(FrontendError::unsupported("starred assignment targets are not supported", target.span.clone()));
                }
                for (t, v) in items.iter().zip(values) {
                    self.assign(t, v, scope)?;
                }
                Ok(())
            }
            ExprKind::Attr(obj, name) => {
                let o = self.eval(obj, scope)?;
                match o {
                    Val::Object(id) => self.set_attr(id, name, v, &target.span),
                    other => Err(FrontendError::unsupported(
                        format!("cannot set attribute `{name}` on {}", other.type_name()),
                        target.span.clone(),
                    )),
                }
            }
            ExprKind::Subscript(..) => Err(FrontendError::unsupported(
                "item assignment (`x[i] = ...`) is not supported: tensors are immutable in drtc's subset",
                target.span.clone(),
            )),
            _ => Err(FrontendError::syntax("cannot assign to this expression", target.span.clone())),
        }
    }

    /// Splits a value into `n` for tuple unpacking.
    fn unpack(&mut self, v: Val, n: usize, span: &Span) -> R<Vec<Val>> {
        match v {
            Val::Tuple(items) | Val::List(items) => {
                if items.len() != n {
                    return Err(FrontendError::lowering(
                        format!("cannot unpack {} values into {n} names", items.len()),
                        span.clone(),
                    ));
                }
                Ok(items.to_vec())
            }
            Val::Pair(p) if n == 2 => Ok(vec![
                self.em.pair_part(&p, 0, span)?,
                self.em.pair_part(&p, 1, span)?,
            ]),
            other => Err(FrontendError::unsupported(
                format!("cannot unpack {} into {n} names", other.type_name()),
                span.clone(),
            )),
        }
    }

    /// `self.name = v`: layers become children, new parameters are registered.
    fn set_attr(&mut self, id: ObjectId, name: &str, v: Val, span: &Span) -> R<()> {
        let v = match v {
            Val::Layer(l) if self.em.phase == Phase::Init => {
                if !self.em.layers[l].prefix.is_empty() {
                    return Err(FrontendError::unsupported(
                        "assigning one layer to two attributes (shared modules) is not supported",
                        span.clone(),
                    ));
                }
                self.em.layers[l].prefix = name.to_string();
                for m in &self.em.layers[l].members {
                    self.em.param_types
                        .insert(format!("{name}.{}", m.name), m.ty.clone());
                }
                // like nn.Module.__setattr__: a module replaces a parameter or buffer of that
                // name, and a module of that name in place
                let obj = &mut self.objects[id];
                obj.members.retain(|m| m.name != name);
                match obj.children.iter_mut().find(|c| c.0 == name) {
                    Some(c) => c.1 = l,
                    None => obj.children.push((name.to_string(), l)),
                }
                Val::Layer(l)
            }
            Val::Tensor(t) if self.em.phase == Phase::Init && self.em.new_params.contains(&t) => {
                let obj = &mut self.objects[id];
                obj.children.retain(|c| c.0 != name);
                obj.members
                    .retain(|m| !(m.name == name && m.kind == InputKind::Buffer));
                self.register(id, name, t, InputKind::Param, span)?
            }
            Val::Tensor(t)
                if self.em.phase == Phase::Init
                    && self.objects[id]
                        .members
                        .iter()
                        .any(|m| m.name == name && m.kind == InputKind::Buffer) =>
            {
                self.register(id, name, t, InputKind::Buffer, span)?
            }
            Val::Tensor(t) if self.em.phase == Phase::Init => {
                self.check_plain(id, name, "a tensor that is not an nn.Parameter", span)?;
                Val::InitTensor(self.em.ty(t).clone())
            }
            Val::Tensor(_) if self.em.phase == Phase::Forward => {
                return Err(FrontendError::unsupported(
                    "assigning tensors to `self` attributes inside forward (module state) is not supported",
                    span.clone(),
                ))
            }
            Val::None => {
                // `self.bias = None` drops a parameter or module from the state_dict
                let obj = &mut self.objects[id];
                obj.members.retain(|m| m.name != name);
                obj.children.retain(|c| c.0 != name);
                Val::None
            }
            other => {
                self.check_plain(id, name, &other.type_name(), span)?;
                other
            }
        };
        self.objects[id].attrs.insert(name.to_string(), v);
        Ok(())
    }

    /// PyTorch refuses to overwrite a parameter or module with a plain value.
    fn check_plain(&self, id: ObjectId, name: &str, what: &str, span: &Span) -> R<()> {
        let obj = &self.objects[id];
        if obj.members.iter().any(|m| m.name == name) || obj.children.iter().any(|c| c.0 == name) {
            return Err(FrontendError::lowering(
                format!("cannot assign {what} to `self.{name}`, which holds a parameter, buffer or module"),
                span.clone(),
            ));
        }
        Ok(())
    }

    /// Records a parameter or buffer of object `id` (replacing one of the same name and
    /// kind in place, like PyTorch) and returns its attribute value.
    pub fn register(
        &mut self,
        id: ObjectId,
        name: &str,
        t: ValueId,
        kind: InputKind,
        span: &Span,
    ) -> R<Val> {
        if self.em.phase != Phase::Init {
            return Err(FrontendError::unsupported(
                "parameters and buffers can only be created in __init__",
                span.clone(),
            ));
        }
        let ty = self.em.ty(t).clone();
        let obj = &mut self.objects[id];
        if obj.children.iter().any(|c| c.0 == name)
            || obj.members.iter().any(|m| m.name == name && m.kind != kind)
        {
            return Err(FrontendError::lowering(
                format!("attribute `{name}` already exists as another kind of member"),
                span.clone(),
            ));
        }
        match obj.members.iter_mut().find(|m| m.name == name) {
            Some(m) => m.ty = ty.clone(),
            None => obj.members.push(Member {
                name: name.to_string(),
                ty: ty.clone(),
                kind,
            }),
        }
        self.em.param_types.insert(name.to_string(), ty);
        Ok(Val::Param(name.into()))
    }

    // ------------------------------------------------------------ expressions

    pub fn eval(&mut self, e: &Expr, scope: &mut Scope) -> R<Val> {
        let span = &e.span;
        match &e.kind {
            ExprKind::Name(n) => self.lookup(n, scope, span),
            ExprKind::Int(i) => Ok(Val::Int(*i)),
            ExprKind::Float(x) => Ok(Val::Float(*x)),
            ExprKind::Str(s) => Ok(Val::Str(s.as_str().into())),
            ExprKind::Bool(b) => Ok(Val::Bool(*b)),
            ExprKind::None => Ok(Val::None),
            ExprKind::Ellipsis => Ok(Val::Ellipsis),
            ExprKind::Tuple(items) => Ok(Val::tuple(self.eval_items(items, scope)?)),
            ExprKind::List(items) => Ok(Val::list(self.eval_items(items, scope)?)),
            ExprKind::Starred(_) => Err(FrontendError::syntax(
                "a starred expression is only allowed in a call or a display",
                span.clone(),
            )),
            ExprKind::Attr(base, name) => {
                let b = self.eval(base, scope)?;
                self.attr(b, name, span)
            }
            ExprKind::Call { func, args } => {
                let f = self.eval(func, scope)?;
                let mut a = Args::new(span.clone());
                for arg in args {
                    if arg.double_star {
                        return Err(FrontendError::unsupported(
                            "`**kwargs` arguments are not supported",
                            arg.span.clone(),
                        ));
                    }
                    match (&arg.name, &arg.value.kind) {
                        (None, ExprKind::Starred(inner)) => {
                            let v = self.eval(inner, scope)?;
                            let items = self.em.iterate(v, &inner.span)?;
                            for it in items {
                                a.pos.push((it, arg.span.clone()));
                            }
                        }
                        (None, _) => {
                            let v = self.eval(&arg.value, scope)?;
                            a.pos.push((v, arg.span.clone()));
                        }
                        (Some(n), _) => {
                            let v = self.eval(&arg.value, scope)?;
                            a.kw.push((n.clone(), v, arg.span.clone()));
                        }
                    }
                }
                self.call(f, a, span)
            }
            ExprKind::Subscript(base, index) => {
                let b = self.eval(base, scope)?;
                let i = self.eval_index(index, scope)?;
                indexing::subscript(&mut self.em, b, i, span)
            }
            ExprKind::Slice { .. } => Err(FrontendError::syntax(
                "a slice is only allowed inside `[...]`",
                span.clone(),
            )),
            ExprKind::Unary(op, inner) => {
                let v = self.eval(inner, scope)?;
                operators::unary(&mut self.em, *op, v, span)
            }
            ExprKind::Binary(op, l, r) => {
                let a = self.eval(l, scope)?;
                let b = self.eval(r, scope)?;
                operators::binary(&mut self.em, *op, a, b, span)
            }
            ExprKind::Compare(first, rest) => {
                let mut lhs = self.eval(first, scope)?;
                let mut result: Option<Val> = None;
                for (op, rhs_e) in rest {
                    let rhs = self.eval(rhs_e, scope)?;
                    let r = operators::compare(&mut self.em, *op, lhs.clone(), rhs.clone(), span)?;
                    result = Some(match result {
                        None => r,
                        Some(prev) => match (prev, r) {
                            (Val::Bool(a), Val::Bool(b)) => Val::Bool(a && b),
                            _ => {
                                return Err(FrontendError::unsupported(
                                    "chained comparisons of tensors are not supported",
                                    span.clone(),
                                ))
                            }
                        },
                    });
                    lhs = rhs;
                }
                Ok(result.unwrap_or(Val::Bool(true)))
            }
            ExprKind::BoolOp { and, lhs, rhs } => {
                let a = self.eval(lhs, scope)?;
                let truth = operators::truthy(&a, &lhs.span)?;
                if truth == *and {
                    self.eval(rhs, scope)
                } else {
                    Ok(a)
                }
            }
            ExprKind::IfExp { cond, body, orelse } => {
                let c = self.eval(cond, scope)?;
                if operators::truthy(&c, &cond.span)? {
                    self.eval(body, scope)
                } else {
                    self.eval(orelse, scope)
                }
            }
        }
    }

    fn eval_items(&mut self, items: &[Expr], scope: &mut Scope) -> R<Vec<Val>> {
        let mut out = vec![];
        for it in items {
            if let ExprKind::Starred(inner) = &it.kind {
                let v = self.eval(inner, scope)?;
                out.extend(self.em.iterate(v, &inner.span)?);
            } else {
                out.push(self.eval(it, scope)?);
            }
        }
        Ok(out)
    }

    fn eval_index(&mut self, index: &Expr, scope: &mut Scope) -> R<Val> {
        match &index.kind {
            ExprKind::Slice { lo, hi, step } => {
                let mut part = |e: &Option<Box<Expr>>, this: &mut Self| -> R<Option<i64>> {
                    match e {
                        None => Ok(None),
                        Some(e) => match this.eval(e, scope)? {
                            Val::None => Ok(None),
                            Val::Int(i) => Ok(Some(i)),
                            Val::Bool(b) => Ok(Some(b as i64)),
                            other => Err(FrontendError::unsupported(
                                format!("slice bounds must be ints, got {}", other.type_name()),
                                e.span.clone(),
                            )),
                        },
                    }
                };
                let l = part(lo, self)?;
                let h = part(hi, self)?;
                let s = part(step, self)?;
                Ok(Val::Slice(l, h, s))
            }
            ExprKind::Tuple(items) => {
                let mut out = vec![];
                for it in items {
                    out.push(self.eval_index(it, scope)?);
                }
                Ok(Val::tuple(out))
            }
            _ => self.eval(index, scope),
        }
    }

    fn lookup(&mut self, name: &str, scope: &Scope, span: &Span) -> R<Val> {
        if !scope.global {
            if let Some(v) = scope.locals.get(name) {
                return Ok(v.clone());
            }
        }
        if let Some(v) = self.globals.get(name) {
            return Ok(v.clone());
        }
        if let Some(b) = builtins::lookup(name) {
            return Ok(b);
        }
        Err(FrontendError::lowering(
            format!("name `{name}` is not defined"),
            span.clone(),
        ))
    }

    fn attr(&mut self, base: Val, name: &str, span: &Span) -> R<Val> {
        match base {
            Val::Path(p) => Ok(paths::path_attr(&format!("{p}.{name}"))),
            Val::Object(id) => {
                if let Some(v) = self.objects[id].attrs.get(name) {
                    return Ok(v.clone());
                }
                if find_method(&self.objects[id].class, name).is_some()
                    || name == "register_buffer"
                    || name == "register_parameter"
                {
                    return Ok(Val::Method(Box::new(Val::Object(id)), name.into()));
                }
                Err(FrontendError::lowering(
                    format!(
                        "`{}` object has no attribute `{name}`",
                        self.objects[id].class.name
                    ),
                    span.clone(),
                ))
            }
            Val::Layer(id) => layers::attr(&mut self.em, id, name, span),
            Val::Pair(p) => match name {
                "values" => self.em.pair_part(&p, 0, span),
                "indices" => self.em.pair_part(&p, 1, span),
                _ => Err(FrontendError::lowering(
                    format!("the result of `{}` has no attribute `{name}`", p.what),
                    span.clone(),
                )),
            },
            Val::Param(_) | Val::InitTensor(_) => {
                let t = self.em.read(base, span)?;
                self.attr(t, name, span)
            }
            Val::Tensor(t) => spelling::tensor_attr(&mut self.em, t, name, span),
            Val::Super => Ok(Val::Method(Box::new(Val::Super), name.into())),
            other => Ok(Val::Method(Box::new(other), name.into())),
        }
    }

    // ------------------------------------------------------------ calls

    pub fn call(&mut self, f: Val, args: Args, span: &Span) -> R<Val> {
        match f {
            Val::Function(def) => self.call_function(&def, args, None, span),
            Val::Class(c) => self.instantiate(c, args, span),
            Val::Path(p) => paths::call_path(&mut self.em, &p, args, span),
            Val::Builtin(b) => builtins::call(&mut self.em, b, args, span),
            Val::Layer(id) => layers::forward(&mut self.em, id, args, span),
            Val::Method(recv, name) => self.call_method(*recv, &name, args, span),
            other => Err(FrontendError::lowering(
                format!("{} is not callable", other.type_name()),
                span.clone(),
            )),
        }
    }

    fn call_method(&mut self, recv: Val, name: &str, args: Args, span: &Span) -> R<Val> {
        match recv {
            Val::Object(id) => match name {
                "register_buffer" | "register_parameter" => {
                    let b = args.bind(
                        name,
                        &[
                            "name",
                            if name == "register_buffer" {
                                "tensor"
                            } else {
                                "param"
                            },
                            "persistent",
                        ],
                    )?;
                    let Some(Val::Str(n)) = b.get("name").cloned() else {
                        return Err(FrontendError::lowering(
                            format!("`{name}` needs a string name"),
                            span.clone(),
                        ));
                    };
                    let key = if name == "register_buffer" {
                        "tensor"
                    } else {
                        "param"
                    };
                    if !b.bool("persistent", true)? {
                        return Err(FrontendError::unsupported(
                            "non-persistent buffers are not supported",
                            span.clone(),
                        ));
                    }
                    let t = b.required(key)?.clone();
                    let t = self.em.tensor(&t, &b.span_of(key))?;
                    let kind = if name == "register_buffer" {
                        InputKind::Buffer
                    } else {
                        InputKind::Param
                    };
                    let v = self.register(id, &n, t, kind, span)?;
                    self.objects[id].attrs.insert(n.to_string(), v);
                    Ok(Val::None)
                }
                _ => {
                    let class = self.objects[id].class.clone();
                    let def = find_method(&class, name).ok_or_else(|| {
                        FrontendError::lowering(
                            format!("`{}` has no method `{name}`", class.name),
                            span.clone(),
                        )
                    })?;
                    self.call_function(&def, args, Some(Val::Object(id)), span)
                }
            },
            Val::Super => match name {
                "__init__" => Ok(Val::None),
                _ => Err(FrontendError::unsupported(
                    format!("`super().{name}` is not supported"),
                    span.clone(),
                )),
            },
            Val::Tensor(t) => spelling::call_method(&mut self.em, t, name, args, span),
            Val::Param(_) | Val::InitTensor(_) => {
                let t = self.em.read(recv, span)?;
                self.call_method(t, name, args, span)
            }
            Val::Layer(id) if name == "forward" => layers::forward(&mut self.em, id, args, span),
            other => Err(FrontendError::unsupported(
                format!("method `{name}` of {} is not supported", other.type_name()),
                span.clone(),
            )),
        }
    }

    /// Calls a function defined in the program; `this` is bound to `self` for methods.
    pub fn call_function(
        &mut self,
        def: &Rc<FunctionDef>,
        args: Args,
        this: Option<Val>,
        span: &Span,
    ) -> R<Val> {
        if self.call_depth >= MAX_CALL_DEPTH {
            return Err(FrontendError::unsupported(
                format!("calls nested deeper than {MAX_CALL_DEPTH} (recursion is not supported)"),
                span.clone(),
            ));
        }
        let mut scope = Scope::function();
        let mut pos = args.pos.into_iter();
        let mut kw = args.kw;
        for (i, p) in def.params.iter().enumerate() {
            let value = if i == 0 && this.is_some() {
                this.clone()
            } else {
                match p.kind {
                    ParamKind::VarArgs => Some(Val::tuple(pos.by_ref().map(|(v, _)| v).collect())),
                    ParamKind::KwArgs => {
                        if let Some((n, _, s)) = kw.first() {
                            return Err(FrontendError::unsupported(
                                format!(
                                    "keyword argument `{n}` passed to `**kwargs` is not supported"
                                ),
                                s.clone(),
                            ));
                        }
                        Some(Val::None)
                    }
                    ParamKind::Normal => {
                        let from_kw = kw
                            .iter()
                            .position(|(n, _, _)| *n == p.name)
                            .map(|k| kw.remove(k).1);
                        match (pos.next(), from_kw) {
                            (Some(_), Some(_)) => {
                                return Err(FrontendError::lowering(
                                    format!(
                                        "`{}` got multiple values for argument `{}`",
                                        def.name, p.name
                                    ),
                                    span.clone(),
                                ))
                            }
                            (Some((v, _)), None) => Some(v),
                            (None, Some(v)) => Some(v),
                            (None, None) => None,
                        }
                    }
                }
            };
            let value = match value {
                Some(v) => v,
                None => match &p.default {
                    Some(d) => {
                        let mut g = Scope::module();
                        self.eval(d, &mut g)?
                    }
                    None => {
                        return Err(FrontendError::lowering(
                            format!("`{}` is missing its argument `{}`", def.name, p.name),
                            span.clone(),
                        ))
                    }
                },
            };
            scope.locals.insert(p.name.clone(), value);
        }
        if let Some((v, s)) = pos.next() {
            let _ = v;
            return Err(FrontendError::lowering(
                format!("`{}` got too many positional arguments", def.name),
                s,
            ));
        }
        if let Some((n, _, s)) = kw.first() {
            return Err(FrontendError::lowering(
                format!("`{}` got an unexpected keyword argument `{n}`", def.name),
                s.clone(),
            ));
        }
        self.call_depth += 1;
        let r = self.exec_block(&def.body, &mut scope);
        self.call_depth -= 1;
        match r? {
            Flow::Return(v) => Ok(v),
            Flow::Normal => Ok(Val::None),
        }
    }

    fn instantiate(&mut self, class: Rc<ClassDef>, args: Args, span: &Span) -> R<Val> {
        if self.em.phase != Phase::Init {
            return Err(FrontendError::unsupported(
                format!(
                    "creating `{}` objects outside of model construction is not supported",
                    class.name
                ),
                span.clone(),
            ));
        }
        let id = self.objects.len();
        self.objects.push(Object {
            class: class.clone(),
            attrs: HashMap::new(),
            members: vec![],
            children: vec![],
        });
        if let Some(init) = find_method(&class, "__init__") {
            self.call_function(&init, args, Some(Val::Object(id)), span)?;
        }
        Ok(Val::Object(id))
    }

    // ------------------------------------------------------------ operators
}

impl Default for Interp {
    fn default() -> Self {
        Interp::new()
    }
}

/// Finds a method defined in a class body.
pub fn find_method(class: &ClassDef, name: &str) -> Option<Rc<FunctionDef>> {
    class.body.iter().find_map(|s| match &s.kind {
        StmtKind::Def(f) if f.name == name => Some(f.clone()),
        _ => None,
    })
}
