//! A recursive-descent parser for the Python subset KernelBench and seed programs use.
//!
//! Statements: imports, assignments (chained, tuple targets, augmented, annotated),
//! `return`, `pass`, expression statements (docstrings, `super().__init__()`), `def`
//! and `class`. Expressions: the usual precedence ladder from conditional expressions to
//! `**`, calls with positional/keyword/starred arguments, attributes, subscripts with
//! slices, tuples, lists. Anything else is a syntax error naming the construct. Nesting
//! is bounded so that hostile input cannot overflow the stack.

use super::ast::*;
use super::error::{FrontendError, Span};
use super::lexer::{tokenize, Tok, Token};
use std::rc::Rc;

mod expr;

/// How deeply expressions and blocks may nest before the parser gives up.
pub const MAX_DEPTH: usize = 100;

/// Parses a whole file.
pub fn parse(source: &str) -> Result<Module, FrontendError> {
    let tokens = tokenize(source)?;
    let mut p = Parser {
        tokens,
        pos: 0,
        depth: 0,
    };
    let mut body = Vec::new();
    while !p.at(&Tok::Eof) {
        if p.eat_tok(&Tok::Newline) {
            continue;
        }
        if p.at(&Tok::Indent) {
            return Err(FrontendError::syntax("unexpected indent", p.span()));
        }
        body.extend(p.statement()?);
    }
    Ok(Module { body })
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
}

type PResult<T> = Result<T, FrontendError>;

const COMPOUND_KEYWORDS: &[&str] = &[
    "if", "elif", "else", "for", "while", "with", "try", "except", "finally", "async", "match",
];
const SIMPLE_KEYWORDS: &[&str] = &[
    "del", "global", "nonlocal", "assert", "raise", "break", "continue", "yield", "await", "lambda",
];
const RESERVED: &[&str] = &[
    "def", "class", "return", "import", "from", "as", "pass", "None", "True", "False", "and", "or",
    "not", "in", "is", "if", "else", "elif", "for", "while", "with", "try", "except", "finally",
    "lambda", "del", "global", "nonlocal", "assert", "raise", "break", "continue", "yield",
    "await", "async",
];

impl Parser {
    fn peek(&self) -> &Tok {
        &self.tokens[self.pos.min(self.tokens.len() - 1)].tok
    }
    fn peek_at(&self, k: usize) -> &Tok {
        &self.tokens[(self.pos + k).min(self.tokens.len() - 1)].tok
    }
    fn span(&self) -> Span {
        self.tokens[self.pos.min(self.tokens.len() - 1)]
            .span
            .clone()
    }
    fn prev_end(&self) -> usize {
        if self.pos == 0 {
            0
        } else {
            self.tokens[(self.pos - 1).min(self.tokens.len() - 1)]
                .span
                .end
        }
    }
    fn bump(&mut self) -> Token {
        let t = self.tokens[self.pos.min(self.tokens.len() - 1)].clone();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        t
    }
    fn at(&self, t: &Tok) -> bool {
        self.peek() == t
    }
    fn at_op(&self, op: &str) -> bool {
        matches!(self.peek(), Tok::Op(o) if *o == op)
    }
    fn at_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Name(n) if n == kw)
    }
    fn eat_tok(&mut self, t: &Tok) -> bool {
        if self.at(t) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn eat_op(&mut self, op: &str) -> bool {
        if self.at_op(op) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.at_kw(kw) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn describe(t: &Tok) -> String {
        match t {
            Tok::Name(n) => format!("`{n}`"),
            Tok::Int(i) => format!("number `{i}`"),
            Tok::Float(x) => format!("number `{x}`"),
            Tok::Str(_) => "a string".into(),
            Tok::Op(o) => format!("`{o}`"),
            Tok::Newline => "end of line".into(),
            Tok::Indent => "an indented block".into(),
            Tok::Dedent => "end of block".into(),
            Tok::Eof => "end of file".into(),
        }
    }
    fn expected(&self, what: &str) -> FrontendError {
        FrontendError::syntax(
            format!("expected {what}, found {}", Self::describe(self.peek())),
            self.span(),
        )
    }
    fn expect_op(&mut self, op: &str) -> PResult<Span> {
        if self.at_op(op) {
            Ok(self.bump().span)
        } else {
            Err(self.expected(&format!("`{op}`")))
        }
    }
    fn expect_name(&mut self) -> PResult<(String, Span)> {
        match self.peek().clone() {
            Tok::Name(n) if !RESERVED.contains(&n.as_str()) => {
                let s = self.bump().span;
                Ok((n, s))
            }
            _ => Err(self.expected("a name")),
        }
    }
    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(FrontendError::unsupported(
                format!("nesting deeper than {MAX_DEPTH} levels"),
                self.span(),
            ));
        }
        Ok(())
    }
    fn leave(&mut self) {
        self.depth -= 1;
    }
    /// Left-associative chains (`a + b + c`, `f()()`, `x[0][0]`) nest the tree one level per
    /// link; they count against the same depth limit.
    fn link(&mut self, chain: &mut usize) -> PResult<()> {
        *chain += 1;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(FrontendError::unsupported(
                format!("expression chain nested deeper than {MAX_DEPTH} levels"),
                self.span(),
            ));
        }
        Ok(())
    }

    // ------------------------------------------------------------ statements

    /// One line of simple statements, or one compound statement.
    fn statement(&mut self) -> PResult<Vec<Stmt>> {
        let start = self.span();
        if let Tok::Name(kw) = self.peek().clone() {
            match kw.as_str() {
                "def" => return Ok(vec![self.def()?]),
                "class" => return Ok(vec![self.class()?]),
                k if COMPOUND_KEYWORDS.contains(&k) => {
                    return Err(FrontendError::unsupported(
                        format!("`{k}` statements are not in the supported Python subset (programs must be straight-line code)"),
                        start,
                    ))
                }
                _ => {}
            }
        }
        if self.at_op("@") {
            return Err(FrontendError::unsupported(
                "decorators are not in the supported Python subset",
                start,
            ));
        }
        let mut stmts = vec![self.simple()?];
        while self.eat_op(";") {
            if self.at(&Tok::Newline) || self.at(&Tok::Eof) {
                break;
            }
            stmts.push(self.simple()?);
        }
        if !self.eat_tok(&Tok::Newline) && !self.at(&Tok::Eof) && !self.at(&Tok::Dedent) {
            return Err(self.expected("end of line"));
        }
        Ok(stmts)
    }

    fn simple(&mut self) -> PResult<Stmt> {
        let start = self.span().start;
        let kind = if let Tok::Name(kw) = self.peek().clone() {
            match kw.as_str() {
                "pass" => {
                    self.bump();
                    StmtKind::Pass
                }
                "return" => {
                    self.bump();
                    if self.at(&Tok::Newline) || self.at_op(";") || self.at(&Tok::Eof) {
                        StmtKind::Return(None)
                    } else {
                        StmtKind::Return(Some(self.expr_list()?))
                    }
                }
                "import" => {
                    self.bump();
                    let mut names = vec![];
                    loop {
                        let module = self.dotted()?;
                        let alias = if self.eat_kw("as") {
                            Some(self.expect_name()?.0)
                        } else {
                            None
                        };
                        names.push((module, alias));
                        if !self.eat_op(",") {
                            break;
                        }
                    }
                    StmtKind::Import(names)
                }
                "from" => {
                    self.bump();
                    let mut module = String::new();
                    while self.eat_op(".") {
                        module.push('.');
                    }
                    if !self.at_kw("import") {
                        module.push_str(&self.dotted()?);
                    }
                    if !self.eat_kw("import") {
                        return Err(self.expected("`import`"));
                    }
                    let paren = self.eat_op("(");
                    let mut names = vec![];
                    if self.eat_op("*") {
                        return Err(FrontendError::unsupported(
                            "`from ... import *` is not in the supported subset (name the imports)",
                            start..self.prev_end(),
                        ));
                    }
                    loop {
                        let (n, _) = self.expect_name()?;
                        let alias = if self.eat_kw("as") {
                            Some(self.expect_name()?.0)
                        } else {
                            None
                        };
                        names.push((n, alias));
                        if !self.eat_op(",") || (paren && self.at_op(")")) {
                            break;
                        }
                    }
                    if paren {
                        self.expect_op(")")?;
                    }
                    StmtKind::FromImport { module, names }
                }
                k if SIMPLE_KEYWORDS.contains(&k) => {
                    return Err(FrontendError::unsupported(
                        format!("`{k}` is not in the supported Python subset"),
                        self.span(),
                    ))
                }
                _ => self.assignment_or_expr()?,
            }
        } else {
            self.assignment_or_expr()?
        };
        Ok(Stmt {
            kind,
            span: start..self.prev_end(),
        })
    }

    fn dotted(&mut self) -> PResult<String> {
        let (mut name, _) = self.expect_name()?;
        while self.eat_op(".") {
            name.push('.');
            name.push_str(&self.expect_name()?.0);
        }
        Ok(name)
    }

    fn assignment_or_expr(&mut self) -> PResult<StmtKind> {
        let first = self.expr_list()?;
        if self.at_op(":") {
            self.bump();
            self.expr()?; // annotation, ignored
            let value = if self.eat_op("=") {
                Some(self.expr_list()?)
            } else {
                None
            };
            check_target(&first)?;
            return Ok(StmtKind::AnnAssign {
                target: first,
                value,
            });
        }
        let aug = match self.peek() {
            Tok::Op("+=") => Some(BinOp::Add),
            Tok::Op("-=") => Some(BinOp::Sub),
            Tok::Op("*=") => Some(BinOp::Mul),
            Tok::Op("/=") => Some(BinOp::Div),
            Tok::Op("//=") => Some(BinOp::FloorDiv),
            Tok::Op("%=") => Some(BinOp::Mod),
            Tok::Op("**=") => Some(BinOp::Pow),
            Tok::Op("@=") => Some(BinOp::MatMul),
            Tok::Op(o @ ("&=" | "|=" | "^=" | ">>=" | "<<=")) => {
                return Err(FrontendError::unsupported(
                    format!("the `{o}` operator is not in the supported subset"),
                    self.span(),
                ))
            }
            _ => None,
        };
        if let Some(op) = aug {
            self.bump();
            check_target(&first)?;
            let value = self.expr_list()?;
            return Ok(StmtKind::AugAssign {
                target: first,
                op,
                value,
            });
        }
        if !self.at_op("=") {
            return Ok(StmtKind::Expr(first));
        }
        let mut targets = vec![first];
        let mut value;
        loop {
            self.expect_op("=")?;
            value = self.expr_list()?;
            if !self.at_op("=") {
                break;
            }
            targets.push(value);
        }
        for t in &targets {
            check_target(t)?;
        }
        Ok(StmtKind::Assign { targets, value })
    }

    fn block(&mut self) -> PResult<Vec<Stmt>> {
        self.expect_op(":")?;
        self.enter()?;
        let body = if self.eat_tok(&Tok::Newline) {
            if !self.eat_tok(&Tok::Indent) {
                return Err(self.expected("an indented block"));
            }
            let mut body = vec![];
            while !self.at(&Tok::Dedent) && !self.at(&Tok::Eof) {
                if self.eat_tok(&Tok::Newline) {
                    continue;
                }
                if self.at(&Tok::Indent) {
                    return Err(FrontendError::syntax("unexpected indent", self.span()));
                }
                body.extend(self.statement()?);
            }
            self.eat_tok(&Tok::Dedent);
            body
        } else {
            // `def f(): return x` on one line
            self.statement()?
        };
        self.leave();
        Ok(body)
    }

    fn def(&mut self) -> PResult<Stmt> {
        let start = self.bump().span.start;
        let (name, _) = self.expect_name()?;
        self.expect_op("(")?;
        let mut params = vec![];
        while !self.at_op(")") {
            let pstart = self.span().start;
            let kind = if self.eat_op("**") {
                ParamKind::KwArgs
            } else if self.eat_op("*") {
                if self.at_op(",") {
                    return Err(FrontendError::unsupported(
                        "keyword-only parameters (a bare `*`) are not in the supported subset",
                        pstart..self.prev_end(),
                    ));
                }
                ParamKind::VarArgs
            } else if self.at_op("/") {
                return Err(FrontendError::unsupported(
                    "positional-only parameters (`/`) are not in the supported subset",
                    self.span(),
                ));
            } else {
                ParamKind::Normal
            };
            let (pname, _) = self.expect_name()?;
            if self.eat_op(":") {
                self.expr()?;
            }
            let default = if self.eat_op("=") {
                Some(self.expr()?)
            } else {
                None
            };
            params.push(Param {
                name: pname,
                kind,
                default,
                span: pstart..self.prev_end(),
            });
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(")")?;
        if self.eat_op("->") {
            self.expr()?;
        }
        let header_end = self.prev_end();
        let body = self.block()?;
        Ok(Stmt {
            kind: StmtKind::Def(Rc::new(FunctionDef {
                name,
                params,
                body,
                span: start..header_end,
            })),
            span: start..self.prev_end(),
        })
    }

    fn class(&mut self) -> PResult<Stmt> {
        let start = self.bump().span.start;
        let (name, _) = self.expect_name()?;
        let mut bases = vec![];
        if self.eat_op("(") {
            while !self.at_op(")") {
                if let (Tok::Name(_), Tok::Op("=")) = (self.peek(), self.peek_at(1)) {
                    return Err(FrontendError::unsupported(
                        "class keywords (metaclass=...) are not in the supported subset",
                        self.span(),
                    ));
                }
                bases.push(self.expr()?);
                if !self.eat_op(",") {
                    break;
                }
            }
            self.expect_op(")")?;
        }
        let header_end = self.prev_end();
        let body = self.block()?;
        Ok(Stmt {
            kind: StmtKind::Class(Rc::new(ClassDef {
                name,
                bases,
                body,
                span: start..header_end,
            })),
            span: start..self.prev_end(),
        })
    }
}

/// Checks that an expression can be assigned to (a name, attribute, subscript or tuple of them).
fn check_target(e: &Expr) -> PResult<()> {
    match &e.kind {
        ExprKind::Name(_) | ExprKind::Attr(..) | ExprKind::Subscript(..) => Ok(()),
        ExprKind::Tuple(items) | ExprKind::List(items) => items.iter().try_for_each(check_target),
        ExprKind::Starred(inner) => check_target(inner),
        _ => Err(FrontendError::syntax(
            "cannot assign to this expression",
            e.span.clone(),
        )),
    }
}
