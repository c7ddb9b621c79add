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

/// What one query language decides for itself.
pub(crate) trait Language: Sized {
    type Clause;
    /// The characters that open (and close) a quoted string.
    const QUOTES: &'static [char];
    /// Whether `~` and `!~` are operators.
    const TILDE: bool;
    /// Whether `,` is a token (it separates list values).
    const COMMA: bool;
    /// The characters besides letters and digits that a bare word may hold.
    const WORD_CHARS: &'static [char];

    /// The error for a string that is not closed; `text` is what it held.
    fn unterminated(text: &str) -> String;
    /// The error for a `!` that does not start an operator.
    fn lone_bang() -> String;
    /// The error for a character no token may start with.
    fn unexpected(c: char) -> String;
    /// The error when a parenthesised group is not closed.
    fn missing_paren() -> String;
    /// Parses one clause at the parser's position.
    fn clause(p: &mut Parser<Self>) -> Result<Self::Clause, String>;
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
                    return Err(L::lone_bang());
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
            other => return Err(L::unexpected(other)),
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
            None => return Err(L::unterminated(&text)),
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

    /// `a OR b OR ...`, the loosest level.
    pub(crate) fn or(&mut self) -> Result<Expr<L::Clause>, String> {
        let mut e = self.and()?;
        while self.at_keyword("or") {
            self.bump();
            e = Expr::Or(Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }

    fn and(&mut self) -> Result<Expr<L::Clause>, String> {
        let mut e = self.not()?;
        while self.at_keyword("and") {
            self.bump();
            e = Expr::And(Box::new(e), Box::new(self.not()?));
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
                return Err(L::missing_paren());
            }
            return Ok(e);
        }
        Ok(Expr::Clause(L::clause(self)?))
    }
}
