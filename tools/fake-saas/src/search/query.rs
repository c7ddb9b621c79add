//! A query's free text, read as one vendor's engine reads it: words and
//! quoted phrases, joined by the engine's implicit operator, and the
//! explicit operators it understands.

use super::declaration::{Combine, Declaration, Operator};
use super::text::{is_stop_word, raw_tokens};

/// A free-text query, parsed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query {
    /// `None`: no words at all (an empty query, or only stop words), which
    /// matches every record.
    pub expr: Option<Expr>,
    /// The `AND`, `OR` and `NOT` operators written in the query.
    pub operators: usize,
}

/// What a record must contain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// One word, in the form the engine compares (stemmed).
    Word(String),
    /// Consecutive words.
    Phrase(Vec<String>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
}

/// Why an engine refuses a query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// More `AND`/`OR`/`NOT` operators than the vendor allows.
    TooManyOperators { found: usize, max: usize },
}

impl Query {
    /// A query any of `queries` satisfies (the text clauses of a query
    /// language, ranked together).
    pub fn any_of(queries: impl IntoIterator<Item = Query>) -> Query {
        let mut alternatives = Vec::new();
        let mut operators = 0;
        for query in queries {
            operators += query.operators;
            alternatives.extend(query.expr);
        }
        let expr = match alternatives.len() {
            0 => None,
            1 => alternatives.pop(),
            _ => Some(Expr::Or(alternatives)),
        };
        Query { expr, operators }
    }

    /// Whether the query has no words (it then matches every record).
    pub fn is_empty(&self) -> bool {
        self.expr.is_none()
    }

    /// Every word of [`Query::positive_terms`], phrases' words included.
    pub fn positive_words(&self) -> Vec<String> {
        self.positive_terms()
            .into_iter()
            .flat_map(|term| match term {
                Expr::Word(word) => vec![word.clone()],
                Expr::Phrase(words) => words.clone(),
                _ => Vec::new(),
            })
            .collect()
    }

    /// The words and phrases that count for a record (not under a `NOT`),
    /// each once, for ranking.
    pub fn positive_terms(&self) -> Vec<&Expr> {
        let mut terms = Vec::new();
        if let Some(expr) = &self.expr {
            expr.collect_positive(&mut terms);
        }
        terms
    }
}

impl Expr {
    fn collect_positive<'a>(&'a self, into: &mut Vec<&'a Expr>) {
        match self {
            Expr::Word(_) | Expr::Phrase(_) => {
                if !into.contains(&self) {
                    into.push(self);
                }
            }
            Expr::And(parts) | Expr::Or(parts) => {
                parts.iter().for_each(|p| p.collect_positive(into));
            }
            Expr::Not(_) => {}
        }
    }

    /// Whether a record holds the expression, `contains` deciding each word
    /// or phrase.
    pub fn holds(&self, contains: &impl Fn(&Expr) -> bool) -> bool {
        match self {
            Expr::Word(_) | Expr::Phrase(_) => contains(self),
            Expr::And(parts) => parts.iter().all(|p| p.holds(contains)),
            Expr::Or(parts) => parts.iter().any(|p| p.holds(contains)),
            Expr::Not(inner) => !inner.holds(contains),
        }
    }
}

/// One lexical piece of the query text.
#[derive(Clone, Debug, PartialEq)]
enum Piece {
    Text(String),
    Quoted(String),
    Open,
    Close,
    Keyword(Operator),
    Minus,
}

impl Declaration {
    /// Reads `text` as this engine does.
    pub fn parse(&self, text: &str) -> Result<Query, Refusal> {
        let pieces = self.lex(text);
        let operators = pieces
            .iter()
            .filter(|p| matches!(p, Piece::Keyword(_)))
            .count();
        if let Some(max) = &self.max_operators
            && operators > max.value
        {
            return Err(Refusal::TooManyOperators {
                found: operators,
                max: max.value,
            });
        }
        let mut parser = Parser {
            engine: self,
            pieces,
            at: 0,
        };
        // A `)` that closes nothing ends an alternative; what follows it
        // still counts.
        let mut parts = Vec::new();
        while parser.peek().is_some() {
            parts.extend(parser.or());
            if parser.peek() == Some(&Piece::Close) {
                parser.bump();
            }
        }
        Ok(Query {
            expr: (!parts.is_empty()).then(|| self.join(parts)),
            operators,
        })
    }

    /// Cuts the text at white space, keeping quoted stretches whole, and
    /// tells the engine's operators from words.
    fn lex(&self, text: &str) -> Vec<Piece> {
        let mut pieces = Vec::new();
        let mut word = String::new();
        let mut chars = text.chars().peekable();
        let flush = |word: &mut String, pieces: &mut Vec<Piece>| {
            if !word.is_empty() {
                pieces.push(self.classify(std::mem::take(word)));
            }
        };
        while let Some(c) = chars.next() {
            match c {
                '"' | '“' | '”' => {
                    flush(&mut word, &mut pieces);
                    let quoted: String = chars
                        .by_ref()
                        .take_while(|c| !matches!(c, '"' | '“' | '”'))
                        .collect();
                    pieces.push(if self.understands_phrases() {
                        Piece::Quoted(quoted)
                    } else {
                        Piece::Text(quoted)
                    });
                }
                '(' | ')' if self.understands(Operator::Parentheses) => {
                    flush(&mut word, &mut pieces);
                    pieces.push(if c == '(' { Piece::Open } else { Piece::Close });
                }
                '-' if word.is_empty() && self.understands(Operator::Minus) => {
                    let next_starts_a_word = chars.peek().is_some_and(|n| !n.is_whitespace());
                    if next_starts_a_word {
                        pieces.push(Piece::Minus);
                    }
                }
                c if c.is_whitespace() => flush(&mut word, &mut pieces),
                c => word.push(c),
            }
        }
        flush(&mut word, &mut pieces);
        pieces
    }

    fn understands_phrases(&self) -> bool {
        self.phrases.value
    }

    fn classify(&self, word: String) -> Piece {
        let operator = match word.as_str() {
            "OR" => Some(Operator::Or),
            "AND" => Some(Operator::And),
            "NOT" => Some(Operator::Not),
            _ => None,
        };
        match operator {
            Some(op) if self.understands(op) => Piece::Keyword(op),
            _ => Piece::Text(word),
        }
    }

    /// The words of a piece of text as terms: a word that the engine's
    /// tokenizer cuts in several (`acme-123`) must match as a phrase.
    fn term(&self, text: &str, quoted: bool) -> Option<Expr> {
        let keep = |token: &String| {
            quoted || !(*self.stop_words && (is_stop_word(token) || token.chars().count() < 2))
        };
        let tokens: Vec<String> = raw_tokens(text)
            .filter(keep)
            .map(|t| self.stemming.stem(&t))
            .collect();
        match tokens.len() {
            0 => None,
            1 => tokens.into_iter().next().map(Expr::Word),
            _ if quoted || !text.contains(char::is_whitespace) => Some(Expr::Phrase(tokens)),
            _ => Some(self.join(tokens.into_iter().map(Expr::Word).collect())),
        }
    }

    /// Juxtaposed terms, combined as the engine does by default.
    fn join(&self, mut parts: Vec<Expr>) -> Expr {
        if parts.len() == 1 {
            return parts.remove(0);
        }
        match *self.implicit {
            Combine::All => Expr::And(parts),
            Combine::Any => Expr::Or(parts),
            Combine::Phrase => match words_of_phrase(&parts) {
                Some(words) => Expr::Phrase(words),
                None => Expr::And(parts),
            },
        }
    }
}

/// The words of terms side by side, when each is a word or a phrase.
fn words_of_phrase(parts: &[Expr]) -> Option<Vec<String>> {
    let mut words = Vec::new();
    for part in parts {
        match part {
            Expr::Word(word) => words.push(word.clone()),
            Expr::Phrase(phrase) => words.extend(phrase.iter().cloned()),
            _ => return None,
        }
    }
    Some(words)
}

struct Parser<'a> {
    engine: &'a Declaration,
    pieces: Vec<Piece>,
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Piece> {
        self.pieces.get(self.at)
    }

    fn bump(&mut self) -> Option<Piece> {
        let piece = self.pieces.get(self.at).cloned();
        self.at += 1;
        piece
    }

    /// `conjunction (OR conjunction)*`
    fn or(&mut self) -> Option<Expr> {
        let mut alternatives = Vec::new();
        loop {
            if let Some(conjunction) = self.conjunction() {
                alternatives.push(conjunction);
            }
            if self.peek() == Some(&Piece::Keyword(Operator::Or)) {
                self.bump();
                continue;
            }
            break;
        }
        match alternatives.len() {
            0 => None,
            1 => alternatives.pop(),
            _ => Some(Expr::Or(alternatives)),
        }
    }

    /// Terms side by side, joined by the engine's implicit operator; runs
    /// joined by an explicit `AND` always all hold.
    fn conjunction(&mut self) -> Option<Expr> {
        let mut groups: Vec<Vec<Expr>> = vec![Vec::new()];
        let mut joined_by_and = false;
        loop {
            match self.peek() {
                None | Some(Piece::Close) | Some(Piece::Keyword(Operator::Or)) => break,
                Some(Piece::Keyword(Operator::And)) => {
                    self.bump();
                    joined_by_and = true;
                    continue;
                }
                _ => {}
            }
            let Some(term) = self.unary() else { continue };
            let current = groups.last_mut().expect("a group");
            if joined_by_and || current.is_empty() {
                current.push(term);
            } else {
                groups.push(vec![term]);
            }
            joined_by_and = false;
        }
        let parts: Vec<Expr> = groups
            .into_iter()
            .filter(|g| !g.is_empty())
            .map(|mut g| {
                if g.len() == 1 {
                    g.remove(0)
                } else {
                    Expr::And(g)
                }
            })
            .collect();
        (!parts.is_empty()).then(|| self.engine.join(parts))
    }

    /// `NOT unary | -atom | atom`; `None` for a piece that holds no word.
    fn unary(&mut self) -> Option<Expr> {
        match self.bump()? {
            Piece::Keyword(Operator::Not) | Piece::Minus => {
                self.unary().map(|e| Expr::Not(Box::new(e)))
            }
            Piece::Open => {
                let inner = self.or();
                if self.peek() == Some(&Piece::Close) {
                    self.bump();
                }
                inner
            }
            Piece::Text(text) => self.engine.term(&text, false),
            Piece::Quoted(text) => self.engine.term(&text, true),
            Piece::Close | Piece::Keyword(_) => None,
        }
    }
}
