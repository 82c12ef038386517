//! The syntax tree of the Python subset. Every node keeps its source span.

use super::error::Span;
use std::rc::Rc;

/// A parsed file.
#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    pub body: Vec<Stmt>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StmtKind {
    Expr(Expr),
    /// `a = b = value` (every target gets the value).
    Assign {
        targets: Vec<Expr>,
        value: Expr,
    },
    /// `x += value`.
    AugAssign {
        target: Expr,
        op: BinOp,
        value: Expr,
    },
    /// `x: T = value` (the annotation is ignored).
    AnnAssign {
        target: Expr,
        value: Option<Expr>,
    },
    Return(Option<Expr>),
    Pass,
    /// `import a.b as c`: (dotted module, alias).
    Import(Vec<(String, Option<String>)>),
    /// `from a.b import c as d`.
    FromImport {
        module: String,
        names: Vec<(String, Option<String>)>,
    },
    Def(Rc<FunctionDef>),
    Class(Rc<ClassDef>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct FunctionDef {
    pub name: String,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    Normal,
    /// `*args`
    VarArgs,
    /// `**kwargs`
    KwArgs,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub kind: ParamKind,
    pub default: Option<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClassDef {
    pub name: String,
    pub bases: Vec<Expr>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    MatMul,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Pos,
    Not,
    Invert,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Is,
    IsNot,
    In,
    NotIn,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Name(String),
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    None,
    Ellipsis,
    Tuple(Vec<Expr>),
    List(Vec<Expr>),
    Attr(Box<Expr>, String),
    Call {
        func: Box<Expr>,
        args: Vec<Arg>,
    },
    /// `value[index]`; a multi-dimensional index is a `Tuple`.
    Subscript(Box<Expr>, Box<Expr>),
    /// `lo:hi:step` inside a subscript.
    Slice {
        lo: Option<Box<Expr>>,
        hi: Option<Box<Expr>>,
        step: Option<Box<Expr>>,
    },
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// A comparison chain `a < b <= c`.
    Compare(Box<Expr>, Vec<(CmpOp, Expr)>),
    /// `a and b` (true) / `a or b` (false).
    BoolOp {
        and: bool,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `body if cond else orelse`.
    IfExp {
        cond: Box<Expr>,
        body: Box<Expr>,
        orelse: Box<Expr>,
    },
    /// `*value` in a call or a display.
    Starred(Box<Expr>),
}

/// One argument of a call: positional, keyword, `*args` (`Starred` value) or `**kwargs`.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    pub name: Option<String>,
    pub value: Expr,
    pub double_star: bool,
    pub span: Span,
}
