//! The symbolic interpreter: runs the straight-line Python of a program with Python numbers
//! evaluated exactly and tensors as IR values, so running `forward` builds the graph.
//!
//! Three phases: `Inputs` (running `get_inputs`: random tensors are fine, only their types
//! matter), `Init` (running `Model.__init__`: layers and parameters are recorded) and
//! `Forward` (building the graph; randomness is an error).

use super::args::Args;
use super::ast::*;
use super::error::{FrontendError, Span};
use super::layers::{self, Layer};
use super::value::{LayerId, ObjectId, PairVal, Val};
use super::{builtins, indexing, spelling};
use drtc_ir::{Attr, DType, GraphBuilder, InputKind, Op, TensorType, ValueId};
use std::collections::HashMap;
use std::rc::Rc;

/// What the interpreter is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// `get_inputs()` / `get_init_inputs()` / module constants.
    Inputs,
    /// `Model.__init__`.
    Init,
    /// `forward` / `fused_operator`: building the graph.
    Forward,
}

/// How deeply user functions may call each other.
const MAX_CALL_DEPTH: usize = 64;
/// Largest magnitude accepted for a dimension or an integer attribute: small enough that
/// the IR's size formulas (products of two such values, plus a few terms) stay in i64.
pub const MAX_DIM: i64 = 1 << 30;
/// Largest element count of one tensor.
const MAX_NUMEL: u64 = 1 << 50;

/// A parameter or buffer recorded while `__init__` ran, by its name inside its owner.
#[derive(Debug, Clone)]
pub struct Member {
    pub name: String,
    pub ty: TensorType,
    pub kind: InputKind,
}

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

/// The interpreter state.
pub struct Interp {
    pub globals: HashMap<String, Val>,
    pub builder: GraphBuilder,
    pub phase: Phase,
    pub objects: Vec<Object>,
    pub layers: Vec<Layer>,
    /// Forward phase: graph inputs of parameters and buffers, by state_dict name.
    pub params: HashMap<String, ValueId>,
    /// Types of parameters and buffers, by state_dict name (for reads during `__init__`).
    pub param_types: HashMap<String, TensorType>,
    /// Init phase: tensors made by `nn.Parameter(...)`, registered when assigned to `self`.
    pub new_params: Vec<ValueId>,
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
            builder: GraphBuilder::new("scratch"),
            phase: Phase::Inputs,
            objects: vec![],
            layers: vec![],
            params: HashMap::new(),
            param_types: HashMap::new(),
            new_params: vec![],
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

    // ------------------------------------------------------------ graph helpers

    /// Adds a node; builder errors (shapes, attributes) become errors at `span`.
    pub fn emit(
        &mut self,
        op: Op,
        inputs: &[ValueId],
        attrs: Vec<(&'static str, Attr)>,
        span: &Span,
    ) -> R<ValueId> {
        Ok(self.emit_multi(op, inputs, attrs, span)?[0])
    }

    pub fn emit_multi(
        &mut self,
        op: Op,
        inputs: &[ValueId],
        attrs: Vec<(&'static str, Attr)>,
        span: &Span,
    ) -> R<Vec<ValueId>> {
        for (name, a) in &attrs {
            let bad = match a {
                Attr::Int(i) => i.abs() > MAX_DIM,
                Attr::Ints(v) => v.iter().any(|i| i.abs() > MAX_DIM),
                Attr::Float(x) => x.is_nan(),
                _ => false,
            };
            if bad {
                let why = if matches!(a, Attr::Float(_)) {
                    "NaN constants are not supported (IR attributes are compared by value, and NaN never equals itself)"
                } else {
                    "the value is out of the range drtc accepts (|x| <= 2^30)"
                };
                return Err(FrontendError::unsupported(
                    format!("`{}`: attribute `{name}` = {a}: {why}", op.name()),
                    span.clone(),
                ));
            }
        }
        if let Some((_, Attr::Ints(shape))) = attrs.iter().find(|(n, _)| *n == "shape") {
            let n = shape
                .iter()
                .filter(|&&d| d != -1)
                .fold(1u64, |n, &d| n.saturating_mul(d.unsigned_abs()));
            if n > MAX_NUMEL {
                return Err(FrontendError::unsupported(
                    format!(
                        "`{}`: shape {shape:?} has more than 2^50 elements",
                        op.name()
                    ),
                    span.clone(),
                ));
            }
        }
        if matches!(
            op.category(),
            drtc_ir::Category::Library | drtc_ir::Category::Window
        ) {
            for (name, a) in &attrs {
                let min = match *name {
                    "stride" | "dilation" | "kernel_size" | "output_size" | "groups" => 1,
                    "padding" | "output_padding" => 0,
                    _ => continue,
                };
                let values = match a {
                    Attr::Int(i) => vec![*i],
                    Attr::Ints(v) => v.clone(),
                    _ => vec![],
                };
                if let Some(v) = values.iter().find(|&&v| v < min) {
                    return Err(FrontendError::lowering(
                        format!("`{}`: `{name}` must be at least {min}, got {v}", op.name()),
                        span.clone(),
                    ));
                }
            }
        }
        let out = self.builder.op(op, inputs, attrs).map_err(|e| {
            let (drtc_ir::BuildError::Attr { op, message }
            | drtc_ir::BuildError::Infer { op, message }) = e;
            let text = if message.starts_with(op) {
                message
            } else {
                format!("{op}: {message}")
            };
            FrontendError::lowering(text, span.clone())
        })?;
        for &v in &out {
            self.check_type(self.builder.ty(v).clone(), span)?;
        }
        Ok(out)
    }

    /// Rejects types whose size would overflow later arithmetic.
    pub fn check_type(&self, ty: TensorType, span: &Span) -> R<TensorType> {
        let mut n: u64 = 1;
        for &d in &ty.shape {
            if !(0..=MAX_DIM).contains(&d) {
                return Err(FrontendError::lowering(
                    format!("invalid dimension {d} in shape {:?}", ty.shape),
                    span.clone(),
                ));
            }
            n = n.saturating_mul(d as u64);
        }
        if n > MAX_NUMEL {
            return Err(FrontendError::unsupported(
                format!("tensor of shape {:?} has more than 2^50 elements", ty.shape),
                span.clone(),
            ));
        }
        Ok(ty)
    }

    pub fn ty(&self, v: ValueId) -> &TensorType {
        self.builder.ty(v)
    }

    /// A new tensor of type `ty` outside the forward graph (inputs, `__init__`).
    pub fn scratch_tensor(&mut self, ty: TensorType, span: &Span) -> R<ValueId> {
        let ty = self.check_type(ty, span)?;
        Ok(self.builder.input("_", ty))
    }

    /// A Python number as a 0-dim constant, with the dtype PyTorch's promotion gives it
    /// next to a tensor of dtype `like` (a "weak" scalar: it never widens its partner).
    pub fn scalar_const(&mut self, v: &Val, like: Option<DType>, span: &Span) -> R<ValueId> {
        let (value, kind_dtype) = match v {
            Val::Bool(b) => (*b as i64 as f64, DType::Bool),
            Val::Int(i) => (*i as f64, DType::I64),
            Val::Float(x) => (*x, DType::F32),
            other => {
                return Err(FrontendError::lowering(
                    format!("expected a tensor or a number, got {}", other.type_name()),
                    span.clone(),
                ))
            }
        };
        if value.is_nan() {
            return Err(FrontendError::unsupported(
                "NaN constants are not supported (IR attributes are compared by value, and NaN never equals itself)",
                span.clone(),
            ));
        }
        let dtype = match like {
            Some(d) if d.kind() >= kind_dtype.kind() => d,
            _ => kind_dtype,
        };
        Ok(self.builder.constant(value, dtype))
    }

    /// A value that must be a tensor (parameters are read).
    pub fn tensor(&mut self, v: &Val, span: &Span) -> R<ValueId> {
        match v {
            Val::Tensor(t) => Ok(*t),
            Val::Param(_) | Val::Pair(_) | Val::InitTensor(_) => {
                let r = self.read(v.clone(), span)?;
                self.tensor(&r, span)
            }
            other => Err(FrontendError::lowering(
                format!("expected a tensor, got {}", other.type_name()),
                span.clone(),
            )),
        }
    }

    /// Resolves values that stand for tensors (parameters, (values, indices) pairs).
    pub fn read(&mut self, v: Val, span: &Span) -> R<Val> {
        match v {
            Val::Param(name) => match self.phase {
                Phase::Forward => self
                    .params
                    .get(&*name)
                    .map(|&id| Val::Tensor(id))
                    .ok_or_else(|| FrontendError::lowering(format!("parameter `{name}` is not defined"), span.clone())),
                _ => {
                    let ty = self.param_types.get(&*name).cloned().ok_or_else(|| {
                        FrontendError::lowering(format!("parameter `{name}` is not defined"), span.clone())
                    })?;
                    Ok(Val::Tensor(self.scratch_tensor(ty, span)?))
                }
            },
            Val::Pair(p) => Err(FrontendError::unsupported(
                format!("the result of `{}` is a (values, indices) pair: index it with [0]/.values or [1]/.indices", p.what),
                span.clone(),
            )),
            Val::InitTensor(ty) => Err(FrontendError::unsupported(
                format!("a tensor of type {ty} made in __init__ is used in forward but is neither an nn.Parameter nor a registered buffer"),
                span.clone(),
            )),
            other => Ok(other),
        }
    }

    /// Materializes one half of a (values, indices) pair.
    pub fn pair_part(&mut self, p: &PairVal, index: usize, span: &Span) -> R<Val> {
        let part = if index == 0 { &p.values } else { &p.indices };
        match part {
            Some((op, attrs)) => Ok(Val::Tensor(self.emit(
                *op,
                &[p.input],
                attrs.clone(),
                span,
            )?)),
            None => Err(FrontendError::unsupported(
                format!(
                    "the {} of `{}` are not in drtc's op set",
                    if index == 0 { "values" } else { "indices" },
                    p.what
                ),
                span.clone(),
            )),
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
                let v = self.binary(*op, cur, rhs, &stmt.span)?;
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
                self.pair_part(&p, 0, span)?,
                self.pair_part(&p, 1, span)?,
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
            Val::Layer(l) if self.phase == Phase::Init => {
                if !self.layers[l].prefix.is_empty() {
                    return Err(FrontendError::unsupported(
                        "assigning one layer to two attributes (shared modules) is not supported",
                        span.clone(),
                    ));
                }
                self.layers[l].prefix = name.to_string();
                for m in &self.layers[l].members {
                    self.param_types
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
            Val::Tensor(t) if self.phase == Phase::Init && self.new_params.contains(&t) => {
                let obj = &mut self.objects[id];
                obj.children.retain(|c| c.0 != name);
                obj.members
                    .retain(|m| !(m.name == name && m.kind == InputKind::Buffer));
                self.register(id, name, t, InputKind::Param, span)?
            }
            Val::Tensor(t)
                if self.phase == Phase::Init
                    && self.objects[id]
                        .members
                        .iter()
                        .any(|m| m.name == name && m.kind == InputKind::Buffer) =>
            {
                self.register(id, name, t, InputKind::Buffer, span)?
            }
            Val::Tensor(t) if self.phase == Phase::Init => {
                self.check_plain(id, name, "a tensor that is not an nn.Parameter", span)?;
                Val::InitTensor(self.ty(t).clone())
            }
            Val::Tensor(_) if self.phase == Phase::Forward => {
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
        if self.phase != Phase::Init {
            return Err(FrontendError::unsupported(
                "parameters and buffers can only be created in __init__",
                span.clone(),
            ));
        }
        let ty = self.ty(t).clone();
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
        self.param_types.insert(name.to_string(), ty);
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
                            let items = self.iterate(v, &inner.span)?;
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
                indexing::subscript(self, b, i, span)
            }
            ExprKind::Slice { .. } => Err(FrontendError::syntax(
                "a slice is only allowed inside `[...]`",
                span.clone(),
            )),
            ExprKind::Unary(op, inner) => {
                let v = self.eval(inner, scope)?;
                self.unary(*op, v, span)
            }
            ExprKind::Binary(op, l, r) => {
                let a = self.eval(l, scope)?;
                let b = self.eval(r, scope)?;
                self.binary(*op, a, b, span)
            }
            ExprKind::Compare(first, rest) => {
                let mut lhs = self.eval(first, scope)?;
                let mut result: Option<Val> = None;
                for (op, rhs_e) in rest {
                    let rhs = self.eval(rhs_e, scope)?;
                    let r = self.compare(*op, lhs.clone(), rhs.clone(), span)?;
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
                let truth = self.truthy(&a, &lhs.span)?;
                if truth == *and {
                    self.eval(rhs, scope)
                } else {
                    Ok(a)
                }
            }
            ExprKind::IfExp { cond, body, orelse } => {
                let c = self.eval(cond, scope)?;
                if self.truthy(&c, &cond.span)? {
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
                out.extend(self.iterate(v, &inner.span)?);
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

    /// The items of an iterable (`*args` in calls and displays).
    pub fn iterate(&mut self, v: Val, span: &Span) -> R<Vec<Val>> {
        match v {
            Val::Tuple(items) | Val::List(items) => Ok(items.to_vec()),
            Val::Pair(p) => Ok(vec![
                self.pair_part(&p, 0, span)?,
                self.pair_part(&p, 1, span)?,
            ]),
            other => Err(FrontendError::unsupported(
                format!("cannot iterate over {}", other.type_name()),
                span.clone(),
            )),
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

    pub fn truthy(&mut self, v: &Val, span: &Span) -> R<bool> {
        Ok(match v {
            Val::None => false,
            Val::Bool(b) => *b,
            Val::Int(i) => *i != 0,
            Val::Float(x) => *x != 0.0,
            Val::Str(s) => !s.is_empty(),
            Val::Tuple(v) | Val::List(v) => !v.is_empty(),
            Val::Tensor(_) | Val::Param(_) => {
                return Err(FrontendError::unsupported(
                    "the truth value of a tensor depends on its data, which drtc does not know while lowering",
                    span.clone(),
                ))
            }
            _ => true,
        })
    }

    fn attr(&mut self, base: Val, name: &str, span: &Span) -> R<Val> {
        match base {
            Val::Path(p) => Ok(spelling::path_attr(&format!("{p}.{name}"))),
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
            Val::Layer(id) => layers::attr(self, id, name, span),
            Val::Pair(p) => match name {
                "values" => self.pair_part(&p, 0, span),
                "indices" => self.pair_part(&p, 1, span),
                _ => Err(FrontendError::lowering(
                    format!("the result of `{}` has no attribute `{name}`", p.what),
                    span.clone(),
                )),
            },
            Val::Param(_) | Val::InitTensor(_) => {
                let t = self.read(base, span)?;
                self.attr(t, name, span)
            }
            Val::Tensor(t) => spelling::tensor_attr(self, t, name, span),
            Val::Super => Ok(Val::Method(Box::new(Val::Super), name.into())),
            other => Ok(Val::Method(Box::new(other), name.into())),
        }
    }

    // ------------------------------------------------------------ calls

    pub fn call(&mut self, f: Val, args: Args, span: &Span) -> R<Val> {
        match f {
            Val::Function(def) => self.call_function(&def, args, None, span),
            Val::Class(c) => self.instantiate(c, args, span),
            Val::Path(p) => spelling::call_path(self, &p, args, span),
            Val::Builtin(b) => builtins::call(self, b, args, span),
            Val::Layer(id) => layers::forward(self, id, args, span),
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
                    let t = self.tensor(&t, &b.span_of(key))?;
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
            Val::Tensor(t) => spelling::call_method(self, t, name, args, span),
            Val::Param(_) | Val::InitTensor(_) => {
                let t = self.read(recv, span)?;
                self.call_method(t, name, args, span)
            }
            Val::Layer(id) if name == "forward" => layers::forward(self, id, args, span),
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
        if self.phase != Phase::Init {
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

    pub fn unary(&mut self, op: UnOp, v: Val, span: &Span) -> R<Val> {
        let v = self.read(v, span)?;
        match (op, v) {
            (UnOp::Not, v) => Ok(Val::Bool(!self.truthy(&v, span)?)),
            (UnOp::Pos, v) => Ok(v),
            (UnOp::Neg, Val::Int(i)) => i.checked_neg().map(Val::Int).ok_or_else(|| overflow(span)),
            (UnOp::Neg, Val::Bool(b)) => Ok(Val::Int(-(b as i64))),
            (UnOp::Neg, Val::Float(x)) => Ok(Val::Float(-x)),
            (UnOp::Neg, Val::Tensor(t)) => {
                Ok(Val::Tensor(self.emit(Op::Neg, &[t], vec![], span)?))
            }
            (UnOp::Invert, Val::Int(i)) => Ok(Val::Int(!i)),
            (op, v) => Err(FrontendError::unsupported(
                format!("unary {op:?} on {} is not supported", v.type_name()),
                span.clone(),
            )),
        }
    }

    pub fn binary(&mut self, op: BinOp, a: Val, b: Val, span: &Span) -> R<Val> {
        let a = self.read(a, span)?;
        let b = self.read(b, span)?;
        if matches!(a, Val::Tensor(_)) || matches!(b, Val::Tensor(_)) {
            return spelling::tensor_binary(self, op, &a, &b, span);
        }
        if a.is_number() && b.is_number() {
            return py_arith(op, &a, &b, span);
        }
        match (op, &a, &b) {
            (BinOp::Add, Val::Tuple(x), Val::Tuple(y)) => {
                Ok(Val::tuple(x.iter().chain(y.iter()).cloned().collect()))
            }
            (BinOp::Add, Val::List(x), Val::List(y)) => {
                Ok(Val::list(x.iter().chain(y.iter()).cloned().collect()))
            }
            (BinOp::Add, Val::Str(x), Val::Str(y)) => Ok(Val::Str(format!("{x}{y}").into())),
            (BinOp::Mul, Val::Tuple(_) | Val::List(_), Val::Int(n))
            | (BinOp::Mul, Val::Int(n), Val::Tuple(_) | Val::List(_)) => {
                let seq = if matches!(a, Val::Int(_)) { &b } else { &a };
                let items = seq.items().unwrap_or(&[]);
                let n = (*n).max(0) as usize;
                if n.saturating_mul(items.len()) > 4096 {
                    return Err(FrontendError::unsupported(
                        "sequence repetition longer than 4096 items",
                        span.clone(),
                    ));
                }
                let out: Vec<Val> = (0..n).flat_map(|_| items.iter().cloned()).collect();
                Ok(if matches!(seq, Val::List(_)) {
                    Val::list(out)
                } else {
                    Val::tuple(out)
                })
            }
            _ => Err(FrontendError::unsupported(
                format!(
                    "operator {op:?} on {} and {} is not supported",
                    a.type_name(),
                    b.type_name()
                ),
                span.clone(),
            )),
        }
    }

    fn compare(&mut self, op: CmpOp, a: Val, b: Val, span: &Span) -> R<Val> {
        match op {
            CmpOp::Is | CmpOp::IsNot => {
                let same = match (&a, &b) {
                    (Val::None, Val::None) => true,
                    (Val::None, _) | (_, Val::None) => false,
                    (Val::Bool(x), Val::Bool(y)) => x == y,
                    _ => {
                        return Err(FrontendError::unsupported(
                            "`is` is only supported against None, True or False",
                            span.clone(),
                        ))
                    }
                };
                return Ok(Val::Bool(same == (op == CmpOp::Is)));
            }
            CmpOp::In | CmpOp::NotIn => {
                let items = b
                    .items()
                    .ok_or_else(|| {
                        FrontendError::unsupported("`in` needs a tuple or list", span.clone())
                    })?
                    .to_vec();
                let mut found = false;
                for it in items {
                    if let Val::Bool(true) = self.compare(CmpOp::Eq, a.clone(), it, span)? {
                        found = true;
                    }
                }
                return Ok(Val::Bool(found == (op == CmpOp::In)));
            }
            _ => {}
        }
        let a = self.read(a, span)?;
        let b = self.read(b, span)?;
        if matches!(a, Val::Tensor(_)) || matches!(b, Val::Tensor(_)) {
            return spelling::tensor_compare(self, op, &a, &b, span);
        }
        if let (Some(x), Some(y)) = (a.as_number(), b.as_number()) {
            return Ok(Val::Bool(match op {
                CmpOp::Eq => x == y,
                CmpOp::Ne => x != y,
                CmpOp::Lt => x < y,
                CmpOp::Le => x <= y,
                CmpOp::Gt => x > y,
                CmpOp::Ge => x >= y,
                _ => false,
            }));
        }
        match (op, &a, &b) {
            (CmpOp::Eq | CmpOp::Ne, Val::Str(x), Val::Str(y)) => {
                Ok(Val::Bool((x == y) == (op == CmpOp::Eq)))
            }
            (CmpOp::Eq | CmpOp::Ne, Val::None, _) | (CmpOp::Eq | CmpOp::Ne, _, Val::None) => {
                let same = matches!((&a, &b), (Val::None, Val::None));
                Ok(Val::Bool(same == (op == CmpOp::Eq)))
            }
            (CmpOp::Eq | CmpOp::Ne, Val::DType(x), Val::DType(y)) => {
                Ok(Val::Bool((x == y) == (op == CmpOp::Eq)))
            }
            _ => Err(FrontendError::unsupported(
                format!(
                    "comparison {op:?} of {} and {} is not supported",
                    a.type_name(),
                    b.type_name()
                ),
                span.clone(),
            )),
        }
    }
}

impl Default for Interp {
    fn default() -> Self {
        Interp::new()
    }
}

fn overflow(span: &Span) -> FrontendError {
    FrontendError::unsupported("integer arithmetic overflows 64 bits", span.clone())
}

/// Python arithmetic on numbers (ints stay exact; `/` gives a float).
pub fn py_arith(op: BinOp, a: &Val, b: &Val, span: &Span) -> R<Val> {
    let as_int = |v: &Val| match v {
        Val::Int(i) => Some(*i),
        Val::Bool(b) => Some(*b as i64),
        _ => None,
    };
    if let (Some(x), Some(y)) = (as_int(a), as_int(b)) {
        let r = match op {
            BinOp::Add => x.checked_add(y),
            BinOp::Sub => x.checked_sub(y),
            BinOp::Mul => x.checked_mul(y),
            BinOp::Div => {
                if y == 0 {
                    return Err(FrontendError::lowering("division by zero", span.clone()));
                }
                return Ok(Val::Float(x as f64 / y as f64));
            }
            BinOp::FloorDiv | BinOp::Mod => {
                if y == 0 {
                    return Err(FrontendError::lowering(
                        "integer division or modulo by zero",
                        span.clone(),
                    ));
                }
                let (q, r) = (x.checked_div(y).ok_or_else(|| overflow(span))?, x % y);
                // Python rounds the quotient toward negative infinity
                let (q, r) = if r != 0 && ((r < 0) != (y < 0)) {
                    (q - 1, r + y)
                } else {
                    (q, r)
                };
                Some(if op == BinOp::FloorDiv { q } else { r })
            }
            BinOp::Pow => {
                if y < 0 {
                    return Ok(Val::Float((x as f64).powf(y as f64)));
                }
                u32::try_from(y).ok().and_then(|e| x.checked_pow(e))
            }
            BinOp::MatMul => {
                return Err(FrontendError::lowering("`@` needs tensors", span.clone()));
            }
        };
        return r.map(Val::Int).ok_or_else(|| overflow(span));
    }
    let (x, y) = (
        a.as_number().unwrap_or(f64::NAN),
        b.as_number().unwrap_or(f64::NAN),
    );
    Ok(Val::Float(match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => {
            if y == 0.0 {
                return Err(FrontendError::lowering(
                    "float division by zero",
                    span.clone(),
                ));
            }
            x / y
        }
        BinOp::FloorDiv => {
            if y == 0.0 {
                return Err(FrontendError::lowering(
                    "float floor division by zero",
                    span.clone(),
                ));
            }
            (x / y).floor()
        }
        BinOp::Mod => {
            if y == 0.0 {
                return Err(FrontendError::lowering(
                    "float modulo by zero",
                    span.clone(),
                ));
            }
            x - (x / y).floor() * y
        }
        BinOp::Pow => x.powf(y),
        BinOp::MatMul => return Err(FrontendError::lowering("`@` needs tensors", span.clone())),
    }))
}

/// Finds a method defined in a class body.
pub fn find_method(class: &ClassDef, name: &str) -> Option<Rc<FunctionDef>> {
    class.body.iter().find_map(|s| match &s.kind {
        StmtKind::Def(f) if f.name == name => Some(f.clone()),
        _ => None,
    })
}
