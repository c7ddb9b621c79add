//! What the vendors' query languages (Confluence's CQL, Jira's JQL, Drive's `q`) have
//! in common: the tokens, and `OR` / `AND` / `NOT` / parentheses over clauses.
//!
//! Each language says, through [`Language`], which characters its tokens may hold,
//! how its errors read and how one clause is parsed; the rest is here, once.

use std::marker::PhantomData;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Word(String),
    Str(String),
    Op(String),
    LParen,
    RParen,
    Comma,
}

/// A boolean combination of one language's clauses.
#[derive(Clone, Debug)]
pub(crate) enum Expr<C> {
    And(Box<Expr<C>>, Box<Expr<C>>),
    Or(Box<Expr<C>>, Box<Expr<C>>),
    Not(Box<Expr<C>>),
    Clause(C),
}

impl<C> Expr<C> {
    /// Whether the expression holds, `holds` deciding each clause (`AND` and `OR`
    /// short-circuit).
    pub(crate) fn eval(&self, holds: &impl Fn(&C) -> bool) -> bool {
        match self {
            Expr::And(a, b) => a.eval(holds) && b.eval(holds),
            Expr::Or(a, b) => a.eval(holds) || b.eval(holds),
            Expr::Not(a) => !a.eval(holds),
            Expr::Clause(c) => holds(c),
        }
    }

    /// Calls `visit` on every clause with whether it counts positively: under an
    /// even number of `NOT`s when `positive` is true at the top.
    pub(crate) fn for_each_clause(&self, positive: bool, visit: &mut impl FnMut(&C, bool)) {
        match self {
            Expr::And(a, b) | Expr::Or(a, b) => {
                a.for_each_clause(positive, visit);
                b.for_each_clause(positive, visit);
            }
            Expr::Not(a) => a.for_each_clause(!positive, visit),
            Expr::Clause(c) => visit(c, positive),
        }
    }

    /// Whether any clause satisfies `pred`.
    pub(crate) fn any_clause(&self, pred: &impl Fn(&C) -> bool) -> bool {
        match self {
            Expr::And(a, b) | Expr::Or(a, b) => a.any_clause(pred) || b.any_clause(pred),
            Expr::Not(a) => a.any_clause(pred),
            Expr::Clause(c) => pred(c),
        }
    }
}

/// What one query language decides for itself. The defaults are those of Atlassian's
/// languages (CQL and JQL).
pub(crate) trait Language: Sized {
    type Clause;
    /// The characters that open (and close) a quoted string.
    const QUOTES: &'static [char] = &['"', '\''];
    /// Whether `~` and `!~` are operators.
    const TILDE: bool = true;
    /// Whether `,` is a token (it separates list values).
    const COMMA: bool = true;
    /// The characters besides letters and digits that a bare word may hold.
    const WORD_CHARS: &'static [char];

    /// Parses one clause at the parser's position.
    fn clause(p: &mut Parser<Self>) -> Result<Self::Clause, String>;
    /// How the language words a syntax error.
    fn syntax_error(e: SyntaxError) -> String;
}

/// The syntax errors the shared lexer and parser find.
pub(crate) enum SyntaxError<'a> {
    /// A string that is not closed, and what it held.
    Unterminated(&'a str),
    /// A `!` that does not start an operator.
    LoneBang,
    /// A character no token may start with.
    Unexpected(char),
    /// A parenthesised group that is not closed.
    MissingParen,
}

/// Cuts a query into tokens.
pub(crate) fn lex<L: Language>(s: &str) -> Result<Vec<Tok>, String> {
    let word_char = |c: char| c.is_alphanumeric() || L::WORD_CHARS.contains(&c);
    let cs: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        let next = cs.get(i + 1).copied();
        match c {
            c if c.is_whitespace() => i += 1,
            '(' => {
                out.push(Tok::LParen);
                i += 1;
            }
            ')' => {
                out.push(Tok::RParen);
                i += 1;
            }
            ',' if L::COMMA => {
                out.push(Tok::Comma);
                i += 1;
            }
            q if L::QUOTES.contains(&q) => {
                let (text, end) = quoted::<L>(&cs, i)?;
                out.push(Tok::Str(text));
                i = end;
            }
            '=' => {
                out.push(Tok::Op("=".into()));
                i += 1;
            }
            '~' if L::TILDE => {
                out.push(Tok::Op("~".into()));
                i += 1;
            }
            '!' | '>' | '<' => {
                if next == Some('=') || (c == '!' && L::TILDE && next == Some('~')) {
                    out.push(Tok::Op(format!("{c}{}", cs[i + 1])));
                    i += 2;
                } else if c == '!' {
                    return Err(L::syntax_error(SyntaxError::LoneBang));
                } else {
                    out.push(Tok::Op(c.to_string()));
                    i += 1;
                }
            }
            c if word_char(c) => {
                let start = i;
                while i < cs.len() && word_char(cs[i]) {
                    i += 1;
                }
                out.push(Tok::Word(cs[start..i].iter().collect()));
            }
            other => return Err(L::syntax_error(SyntaxError::Unexpected(other))),
        }
    }
    Ok(out)
}

/// The string opened by the quote at `open`, and the position after its closing quote.
/// A backslash keeps the next character as it is (`\"` is a quote inside the string).
fn quoted<L: Language>(cs: &[char], open: usize) -> Result<(String, usize), String> {
    let quote = cs[open];
    let mut text = String::new();
    let mut i = open + 1;
    loop {
        match cs.get(i) {
            None => return Err(L::syntax_error(SyntaxError::Unterminated(&text))),
            Some('\\') => {
                text.extend(cs.get(i + 1));
                i += 2;
            }
            Some(&c) if c == quote => return Ok((text, i + 1)),
            Some(&c) => {
                text.push(c);
                i += 1;
            }
        }
    }
}

/// Makes one expression of two: `Expr::And` or `Expr::Or`.
type Join<C> = fn(Box<Expr<C>>, Box<Expr<C>>) -> Expr<C>;

/// Reads a language's tokens: the boolean structure here, the clauses by the language.
pub(crate) struct Parser<L> {
    toks: Vec<Tok>,
    pos: usize,
    language: PhantomData<L>,
}

impl<L: Language> Parser<L> {
    pub(crate) fn new(toks: Vec<Tok>) -> Self {
        Parser {
            toks,
            pos: 0,
            language: PhantomData,
        }
    }

    pub(crate) fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    pub(crate) fn bump(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    /// Whether the next token is the keyword `k` (in any case).
    pub(crate) fn at_keyword(&self, k: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(k))
    }

    /// Whether every token has been read.
    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    /// After `ORDER BY field`: whether the order is ascending, if `ASC` or `DESC` says
    /// (and reads it).
    pub(crate) fn direction(&mut self) -> Option<bool> {
        let ascending = if self.at_keyword("asc") {
            true
        } else if self.at_keyword("desc") {
            false
        } else {
            return None;
        };
        self.bump();
        Some(ascending)
    }

    /// `a OR b OR ...`, the loosest level.
    pub(crate) fn or(&mut self) -> Result<Expr<L::Clause>, String> {
        self.joined("or", Self::and, Expr::Or)
    }

    /// `a AND b AND ...`: binds tighter than `OR`.
    fn and(&mut self) -> Result<Expr<L::Clause>, String> {
        self.joined("and", Self::not, Expr::And)
    }

    /// Operands that `keyword` joins, grouped from the left.
    fn joined(
        &mut self,
        keyword: &str,
        operand: fn(&mut Self) -> Result<Expr<L::Clause>, String>,
        join: Join<L::Clause>,
    ) -> Result<Expr<L::Clause>, String> {
        let mut e = operand(self)?;
        while self.at_keyword(keyword) {
            self.bump();
            e = join(Box::new(e), Box::new(operand(self)?));
        }
        Ok(e)
    }

    fn not(&mut self) -> Result<Expr<L::Clause>, String> {
        if self.at_keyword("not") {
            self.bump();
            return Ok(Expr::Not(Box::new(self.not()?)));
        }
        if self.peek() == Some(&Tok::LParen) {
            self.bump();
            let e = self.or()?;
            if self.bump() != Some(Tok::RParen) {
                return Err(L::syntax_error(SyntaxError::MissingParen));
            }
            return Ok(e);
        }
        Ok(Expr::Clause(L::clause(self)?))
    }
}
