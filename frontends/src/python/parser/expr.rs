//! Expressions: the precedence ladder from conditional expressions down to atoms, calls,
//! subscripts and slices, tuples and lists.

use super::{PResult, Parser, RESERVED};
use crate::python::ast::*;
use crate::python::error::FrontendError;
use crate::python::lexer::Tok;

impl Parser {
    /// `a, b, *c` (a tuple when there is a comma) or one expression.
    pub(super) fn expr_list(&mut self) -> PResult<Expr> {
        let start = self.span().start;
        let first = self.star_or_expr()?;
        if !self.at_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.ends_list() {
                break;
            }
            items.push(self.star_or_expr()?);
        }
        Ok(Expr {
            kind: ExprKind::Tuple(items),
            span: start..self.prev_end(),
        })
    }

    pub(super) fn ends_list(&self) -> bool {
        matches!(self.peek(), Tok::Newline | Tok::Eof | Tok::Dedent)
            || self.at_op("=")
            || self.at_op(")")
            || self.at_op("]")
            || self.at_op(";")
            || self.at_op(":")
    }

    pub(super) fn star_or_expr(&mut self) -> PResult<Expr> {
        if self.at_op("*") {
            let start = self.bump().span.start;
            let inner = self.bitor()?;
            return Ok(Expr {
                kind: ExprKind::Starred(Box::new(inner)),
                span: start..self.prev_end(),
            });
        }
        self.expr()
    }

    pub fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.ternary();
        self.leave();
        r
    }

    pub(super) fn ternary(&mut self) -> PResult<Expr> {
        let start = self.span().start;
        if self.at_kw("lambda") {
            return Err(FrontendError::unsupported(
                "lambda expressions are not in the supported subset",
                self.span(),
            ));
        }
        let body = self.or_test()?;
        if self.eat_kw("if") {
            let cond = self.or_test()?;
            if !self.eat_kw("else") {
                return Err(self.expected("`else`"));
            }
            let orelse = self.expr()?;
            return Ok(Expr {
                kind: ExprKind::IfExp {
                    cond: Box::new(cond),
                    body: Box::new(body),
                    orelse: Box::new(orelse),
                },
                span: start..self.prev_end(),
            });
        }
        Ok(body)
    }

    pub(super) fn or_test(&mut self) -> PResult<Expr> {
        let start = self.span().start;
        let mut lhs = self.and_test()?;
        let mut chain = 0;
        while self.eat_kw("or") {
            self.link(&mut chain)?;
            let rhs = self.and_test()?;
            lhs = Expr {
                kind: ExprKind::BoolOp {
                    and: false,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                },
                span: start..self.prev_end(),
            };
        }
        self.depth -= chain;
        Ok(lhs)
    }

    pub(super) fn and_test(&mut self) -> PResult<Expr> {
        let start = self.span().start;
        let mut lhs = self.not_test()?;
        let mut chain = 0;
        while self.eat_kw("and") {
            self.link(&mut chain)?;
            let rhs = self.not_test()?;
            lhs = Expr {
                kind: ExprKind::BoolOp {
                    and: true,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                },
                span: start..self.prev_end(),
            };
        }
        self.depth -= chain;
        Ok(lhs)
    }

    pub(super) fn not_test(&mut self) -> PResult<Expr> {
        let start = self.span().start;
        if self.eat_kw("not") {
            self.enter()?;
            let inner = self.not_test();
            self.leave();
            return Ok(Expr {
                kind: ExprKind::Unary(UnOp::Not, Box::new(inner?)),
                span: start..self.prev_end(),
            });
        }
        self.comparison()
    }

    pub(super) fn cmp_op(&mut self) -> Option<CmpOp> {
        let op = match self.peek() {
            Tok::Op("==") => CmpOp::Eq,
            Tok::Op("!=") => CmpOp::Ne,
            Tok::Op("<") => CmpOp::Lt,
            Tok::Op("<=") => CmpOp::Le,
            Tok::Op(">") => CmpOp::Gt,
            Tok::Op(">=") => CmpOp::Ge,
            Tok::Name(n) if n == "in" => CmpOp::In,
            Tok::Name(n) if n == "is" => {
                self.bump();
                return Some(if self.eat_kw("not") {
                    CmpOp::IsNot
                } else {
                    CmpOp::Is
                });
            }
            Tok::Name(n) if n == "not" && matches!(self.peek_at(1), Tok::Name(m) if m == "in") => {
                self.bump();
                self.bump();
                return Some(CmpOp::NotIn);
            }
            _ => return None,
        };
        self.bump();
        Some(op)
    }

    pub(super) fn comparison(&mut self) -> PResult<Expr> {
        let start = self.span().start;
        let first = self.bitor()?;
        let mut rest = vec![];
        while let Some(op) = self.cmp_op() {
            rest.push((op, self.bitor()?));
        }
        if rest.is_empty() {
            return Ok(first);
        }
        Ok(Expr {
            kind: ExprKind::Compare(Box::new(first), rest),
            span: start..self.prev_end(),
        })
    }

    pub(super) fn bitor(&mut self) -> PResult<Expr> {
        let e = self.arith()?;
        for op in ["|", "&", "^", "<<", ">>"] {
            if self.at_op(op) {
                return Err(FrontendError::unsupported(
                    format!("the bitwise operator `{op}` is not in the supported subset"),
                    self.span(),
                ));
            }
        }
        Ok(e)
    }

    pub(super) fn arith(&mut self) -> PResult<Expr> {
        let start = self.span().start;
        let mut lhs = self.term()?;
        let mut chain = 0;
        loop {
            let op = if self.eat_op("+") {
                BinOp::Add
            } else if self.eat_op("-") {
                BinOp::Sub
            } else {
                break;
            };
            self.link(&mut chain)?;
            let rhs = self.term()?;
            lhs = Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span: start..self.prev_end(),
            };
        }
        self.depth -= chain;
        Ok(lhs)
    }

    pub(super) fn term(&mut self) -> PResult<Expr> {
        let start = self.span().start;
        let mut lhs = self.factor()?;
        let mut chain = 0;
        loop {
            let op = match self.peek() {
                Tok::Op("*") => BinOp::Mul,
                Tok::Op("/") => BinOp::Div,
                Tok::Op("//") => BinOp::FloorDiv,
                Tok::Op("%") => BinOp::Mod,
                Tok::Op("@") => BinOp::MatMul,
                _ => break,
            };
            self.bump();
            self.link(&mut chain)?;
            let rhs = self.factor()?;
            lhs = Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span: start..self.prev_end(),
            };
        }
        self.depth -= chain;
        Ok(lhs)
    }

    pub(super) fn factor(&mut self) -> PResult<Expr> {
        let start = self.span().start;
        let op = match self.peek() {
            Tok::Op("-") => Some(UnOp::Neg),
            Tok::Op("+") => Some(UnOp::Pos),
            Tok::Op("~") => Some(UnOp::Invert),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            self.enter()?;
            let inner = self.factor();
            self.leave();
            return Ok(Expr {
                kind: ExprKind::Unary(op, Box::new(inner?)),
                span: start..self.prev_end(),
            });
        }
        self.power()
    }

    pub(super) fn power(&mut self) -> PResult<Expr> {
        let start = self.span().start;
        let base = self.primary()?;
        if self.eat_op("**") {
            self.enter()?;
            let exp = self.factor();
            self.leave();
            return Ok(Expr {
                kind: ExprKind::Binary(BinOp::Pow, Box::new(base), Box::new(exp?)),
                span: start..self.prev_end(),
            });
        }
        Ok(base)
    }

    pub(super) fn primary(&mut self) -> PResult<Expr> {
        let start = self.span().start;
        let mut e = self.atom()?;
        let mut chain = 0;
        loop {
            if self.at_op(".") || self.at_op("(") || self.at_op("[") {
                self.link(&mut chain)?;
            }
            if self.eat_op(".") {
                let (name, _) = self.expect_name()?;
                e = Expr {
                    kind: ExprKind::Attr(Box::new(e), name),
                    span: start..self.prev_end(),
                };
            } else if self.at_op("(") {
                self.bump();
                let args = self.call_args()?;
                e = Expr {
                    kind: ExprKind::Call {
                        func: Box::new(e),
                        args,
                    },
                    span: start..self.prev_end(),
                };
            } else if self.at_op("[") {
                self.bump();
                let index = self.subscript()?;
                self.expect_op("]")?;
                e = Expr {
                    kind: ExprKind::Subscript(Box::new(e), Box::new(index)),
                    span: start..self.prev_end(),
                };
            } else {
                break;
            }
        }
        self.depth -= chain;
        Ok(e)
    }

    pub(super) fn call_args(&mut self) -> PResult<Vec<Arg>> {
        let mut args = vec![];
        let mut seen_keyword = false;
        while !self.at_op(")") {
            let astart = self.span().start;
            if self.eat_op("**") {
                let value = self.expr()?;
                args.push(Arg {
                    name: None,
                    value,
                    double_star: true,
                    span: astart..self.prev_end(),
                });
                seen_keyword = true;
            } else if let (Tok::Name(n), Tok::Op("=")) =
                (self.peek().clone(), self.peek_at(1).clone())
            {
                self.bump();
                self.bump();
                let value = self.expr()?;
                args.push(Arg {
                    name: Some(n),
                    value,
                    double_star: false,
                    span: astart..self.prev_end(),
                });
                seen_keyword = true;
            } else {
                let value = self.star_or_expr()?;
                if seen_keyword && !matches!(value.kind, ExprKind::Starred(_)) {
                    return Err(FrontendError::syntax(
                        "positional argument follows keyword argument",
                        value.span,
                    ));
                }
                if self.at_kw("for") {
                    return Err(FrontendError::unsupported(
                        "generator expressions are not in the supported subset",
                        self.span(),
                    ));
                }
                args.push(Arg {
                    name: None,
                    value,
                    double_star: false,
                    span: astart..self.prev_end(),
                });
            }
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(")")?;
        Ok(args)
    }

    /// The inside of `[...]`: one index, or a tuple of indices, each possibly a slice.
    pub(super) fn subscript(&mut self) -> PResult<Expr> {
        let start = self.span().start;
        let first = self.slice_item()?;
        if !self.at_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.at_op("]") {
                break;
            }
            items.push(self.slice_item()?);
        }
        Ok(Expr {
            kind: ExprKind::Tuple(items),
            span: start..self.prev_end(),
        })
    }

    pub(super) fn slice_item(&mut self) -> PResult<Expr> {
        let start = self.span().start;
        let lo = if self.at_op(":") {
            None
        } else {
            Some(Box::new(self.star_or_expr()?))
        };
        if !self.eat_op(":") {
            return lo.map(|b| *b).ok_or_else(|| self.expected("an index"));
        }
        let bound_end = |p: &Self| p.at_op(":") || p.at_op("]") || p.at_op(",");
        let hi = if bound_end(self) {
            None
        } else {
            Some(Box::new(self.expr()?))
        };
        let step = if self.eat_op(":") {
            if self.at_op("]") || self.at_op(",") {
                None
            } else {
                Some(Box::new(self.expr()?))
            }
        } else {
            None
        };
        Ok(Expr {
            kind: ExprKind::Slice { lo, hi, step },
            span: start..self.prev_end(),
        })
    }

    pub(super) fn atom(&mut self) -> PResult<Expr> {
        let start = self.span().start;
        let tok = self.peek().clone();
        let kind = match tok {
            Tok::Name(n) => match n.as_str() {
                "None" => {
                    self.bump();
                    ExprKind::None
                }
                "True" => {
                    self.bump();
                    ExprKind::Bool(true)
                }
                "False" => {
                    self.bump();
                    ExprKind::Bool(false)
                }
                "lambda" => {
                    return Err(FrontendError::unsupported(
                        "lambda expressions are not in the supported subset",
                        self.span(),
                    ))
                }
                "await" | "yield" => {
                    return Err(FrontendError::unsupported(
                        format!("`{n}` is not in the supported subset"),
                        self.span(),
                    ))
                }
                _ if RESERVED.contains(&n.as_str()) => return Err(self.expected("an expression")),
                _ => {
                    self.bump();
                    ExprKind::Name(n)
                }
            },
            Tok::Int(i) => {
                self.bump();
                ExprKind::Int(i)
            }
            Tok::Float(x) => {
                self.bump();
                ExprKind::Float(x)
            }
            Tok::Str(s) => {
                self.bump();
                let mut s = s;
                // adjacent literals concatenate
                while let Tok::Str(more) = self.peek().clone() {
                    self.bump();
                    s.push_str(&more);
                }
                ExprKind::Str(s)
            }
            Tok::Op("...") => {
                self.bump();
                ExprKind::Ellipsis
            }
            Tok::Op("(") => {
                self.bump();
                self.enter()?;
                let r = self.paren_body(start);
                self.leave();
                return r;
            }
            Tok::Op("[") => {
                self.bump();
                self.enter()?;
                let mut items = vec![];
                while !self.at_op("]") {
                    items.push(self.star_or_expr()?);
                    if self.at_kw("for") {
                        self.leave();
                        return Err(FrontendError::unsupported(
                            "list comprehensions are not in the supported subset",
                            self.span(),
                        ));
                    }
                    if !self.eat_op(",") {
                        break;
                    }
                }
                self.leave();
                self.expect_op("]")?;
                ExprKind::List(items)
            }
            Tok::Op("{") => {
                return Err(FrontendError::unsupported(
                    "dict and set displays are not in the supported subset",
                    self.span(),
                ))
            }
            _ => return Err(self.expected("an expression")),
        };
        Ok(Expr {
            kind,
            span: start..self.prev_end(),
        })
    }

    pub(super) fn paren_body(&mut self, start: usize) -> PResult<Expr> {
        if self.eat_op(")") {
            return Ok(Expr {
                kind: ExprKind::Tuple(vec![]),
                span: start..self.prev_end(),
            });
        }
        let first = self.star_or_expr()?;
        if self.at_kw("for") {
            return Err(FrontendError::unsupported(
                "generator expressions are not in the supported subset",
                self.span(),
            ));
        }
        if self.eat_op(")") {
            if matches!(first.kind, ExprKind::Starred(_)) {
                return Err(FrontendError::syntax(
                    "cannot use a starred expression here",
                    first.span,
                ));
            }
            // parenthesized expression: keep the inner node, widen its span
            return Ok(Expr {
                kind: first.kind,
                span: start..self.prev_end(),
            });
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.at_op(")") {
                break;
            }
            items.push(self.star_or_expr()?);
        }
        self.expect_op(")")?;
        Ok(Expr {
            kind: ExprKind::Tuple(items),
            span: start..self.prev_end(),
        })
    }
}
