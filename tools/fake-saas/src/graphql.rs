//! A small GraphQL document parser: enough to find operations, their variables and
//! selection sets, and to project a JSON value onto a selection set.

use std::collections::HashMap;

use serde_json::{Map, Value};

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Name(String),
    Var(String),
    Str(String),
    Num(String),
    Punct(char),
    Spread,
}

fn lex(src: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() || c == ',' || c == '\u{feff}' => i += 1,
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '.' => {
                if chars.get(i + 1) == Some(&'.') && chars.get(i + 2) == Some(&'.') {
                    out.push(Tok::Spread);
                    i += 3;
                } else {
                    return Err("Syntax Error: Unexpected \".\".".into());
                }
            }
            '$' => {
                i += 1;
                let s = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                out.push(Tok::Var(chars[s..i].iter().collect()));
            }
            '"' => {
                if chars.get(i + 1) == Some(&'"') && chars.get(i + 2) == Some(&'"') {
                    i += 3;
                    let mut s = String::new();
                    loop {
                        if chars.get(i) == Some(&'"')
                            && chars.get(i + 1) == Some(&'"')
                            && chars.get(i + 2) == Some(&'"')
                        {
                            i += 3;
                            break;
                        }
                        match chars.get(i) {
                            Some(ch) => s.push(*ch),
                            None => return Err("Syntax Error: Unterminated string.".into()),
                        }
                        i += 1;
                    }
                    out.push(Tok::Str(s.trim().to_string()));
                } else {
                    i += 1;
                    let mut s = String::new();
                    loop {
                        match chars.get(i) {
                            None | Some('\n') => {
                                return Err("Syntax Error: Unterminated string.".into());
                            }
                            Some('"') => {
                                i += 1;
                                break;
                            }
                            Some('\\') => {
                                let e = chars.get(i + 1).copied().unwrap_or('\\');
                                i += 2;
                                match e {
                                    'n' => s.push('\n'),
                                    't' => s.push('\t'),
                                    'r' => s.push('\r'),
                                    'b' => s.push('\u{8}'),
                                    'f' => s.push('\u{c}'),
                                    'u' => {
                                        let hex: String = chars
                                            .get(i..i + 4)
                                            .map(|h| h.iter().collect())
                                            .unwrap_or_default();
                                        i += 4;
                                        if let Some(ch) = u32::from_str_radix(&hex, 16)
                                            .ok()
                                            .and_then(char::from_u32)
                                        {
                                            s.push(ch);
                                        }
                                    }
                                    other => s.push(other),
                                }
                            }
                            Some(ch) => {
                                s.push(*ch);
                                i += 1;
                            }
                        }
                    }
                    out.push(Tok::Str(s));
                }
            }
            c if c == '-' || c.is_ascii_digit() => {
                let s = i;
                i += 1;
                while i < chars.len()
                    && (chars[i].is_ascii_digit()
                        || matches!(chars[i], '.' | 'e' | 'E' | '+' | '-'))
                {
                    i += 1;
                }
                out.push(Tok::Num(chars[s..i].iter().collect()));
            }
            c if c.is_alphabetic() || c == '_' => {
                let s = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                out.push(Tok::Name(chars[s..i].iter().collect()));
            }
            '{' | '}' | '(' | ')' | '[' | ']' | ':' | '=' | '@' | '!' | '|' | '&' => {
                out.push(Tok::Punct(c));
                i += 1;
            }
            other => return Err(format!("Syntax Error: Unexpected character \"{other}\".")),
        }
    }
    Ok(out)
}

/// An argument or variable default value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum GValue {
    Var(String),
    Lit(Value),
    List(Vec<GValue>),
    Object(Vec<(String, GValue)>),
}

impl GValue {
    /// Resolves variables.
    pub(crate) fn resolve(&self, vars: &Map<String, Value>) -> Value {
        match self {
            GValue::Var(v) => vars.get(v).cloned().unwrap_or(Value::Null),
            GValue::Lit(v) => v.clone(),
            GValue::List(l) => Value::Array(l.iter().map(|x| x.resolve(vars)).collect()),
            GValue::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, v)| (k.clone(), v.resolve(vars)))
                    .collect(),
            ),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Selection {
    Field(Field),
    Inline(Vec<Selection>),
    Spread(String),
}

#[derive(Clone, Debug)]
pub(crate) struct Field {
    pub alias: Option<String>,
    pub name: String,
    pub args: Vec<(String, GValue)>,
    pub selections: Vec<Selection>,
}

impl Field {
    pub(crate) fn key(&self) -> &str {
        self.alias.as_deref().unwrap_or(&self.name)
    }
    pub(crate) fn arg(&self, name: &str) -> Option<&GValue> {
        self.args.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Operation {
    /// `query`, `mutation` or `subscription`.
    pub kind: String,
    pub name: Option<String>,
    pub var_defaults: Vec<(String, Option<GValue>)>,
    pub selections: Vec<Selection>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Document {
    pub operations: Vec<Operation>,
    pub fragments: HashMap<String, Vec<Selection>>,
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }
    fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }
    fn expect(&mut self, c: char) -> Result<(), String> {
        match self.next() {
            Some(Tok::Punct(p)) if p == c => Ok(()),
            other => Err(format!(
                "Syntax Error: Expected \"{c}\", found {}.",
                show(&other)
            )),
        }
    }
    fn name(&mut self) -> Result<String, String> {
        match self.next() {
            Some(Tok::Name(n)) => Ok(n),
            other => Err(format!(
                "Syntax Error: Expected Name, found {}.",
                show(&other)
            )),
        }
    }

    fn document(&mut self) -> Result<Document, String> {
        let mut doc = Document::default();
        while let Some(t) = self.peek().cloned() {
            match t {
                Tok::Punct('{') => {
                    let selections = self.selection_set()?;
                    doc.operations.push(Operation {
                        kind: "query".into(),
                        name: None,
                        var_defaults: Vec::new(),
                        selections,
                    });
                }
                Tok::Name(n) if n == "fragment" => {
                    self.next();
                    let name = self.name()?;
                    // `on Type`
                    if matches!(self.peek(), Some(Tok::Name(on)) if on == "on") {
                        self.next();
                        self.name()?;
                    }
                    self.directives()?;
                    let sel = self.selection_set()?;
                    doc.fragments.insert(name, sel);
                }
                Tok::Name(n) if n == "query" || n == "mutation" || n == "subscription" => {
                    self.next();
                    let name = match self.peek() {
                        Some(Tok::Name(_)) => Some(self.name()?),
                        _ => None,
                    };
                    let mut var_defaults = Vec::new();
                    if self.is_punct('(') {
                        self.next();
                        while !self.is_punct(')') {
                            let var = match self.next() {
                                Some(Tok::Var(v)) => v,
                                other => {
                                    return Err(format!(
                                        "Syntax Error: Expected \"$\", found {}.",
                                        show(&other)
                                    ));
                                }
                            };
                            self.expect(':')?;
                            self.type_ref()?;
                            let default = if self.is_punct('=') {
                                self.next();
                                Some(self.value()?)
                            } else {
                                None
                            };
                            self.directives()?;
                            var_defaults.push((var, default));
                        }
                        self.expect(')')?;
                    }
                    self.directives()?;
                    let selections = self.selection_set()?;
                    doc.operations.push(Operation {
                        kind: n,
                        name,
                        var_defaults,
                        selections,
                    });
                }
                other => {
                    return Err(format!(
                        "Syntax Error: Unexpected {}.",
                        show(&Some(other.clone()))
                    ));
                }
            }
        }
        if doc.operations.is_empty() && doc.fragments.is_empty() {
            return Err("Syntax Error: Unexpected <EOF>.".into());
        }
        Ok(doc)
    }

    fn type_ref(&mut self) -> Result<(), String> {
        if self.is_punct('[') {
            self.next();
            self.type_ref()?;
            self.expect(']')?;
        } else {
            self.name()?;
        }
        if self.is_punct('!') {
            self.next();
        }
        Ok(())
    }

    fn directives(&mut self) -> Result<(), String> {
        while self.is_punct('@') {
            self.next();
            self.name()?;
            if self.is_punct('(') {
                self.arguments()?;
            }
        }
        Ok(())
    }

    fn arguments(&mut self) -> Result<Vec<(String, GValue)>, String> {
        self.expect('(')?;
        let mut args = Vec::new();
        while !self.is_punct(')') {
            let n = self.name()?;
            self.expect(':')?;
            args.push((n, self.value()?));
        }
        self.expect(')')?;
        Ok(args)
    }

    fn value(&mut self) -> Result<GValue, String> {
        match self.next() {
            Some(Tok::Var(v)) => Ok(GValue::Var(v)),
            Some(Tok::Str(s)) => Ok(GValue::Lit(Value::String(s))),
            Some(Tok::Num(n)) => Ok(GValue::Lit(
                serde_json::from_str(&n).unwrap_or(Value::String(n)),
            )),
            Some(Tok::Name(n)) => Ok(GValue::Lit(match n.as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                "null" => Value::Null,
                _ => Value::String(n),
            })),
            Some(Tok::Punct('[')) => {
                let mut l = Vec::new();
                while !self.is_punct(']') {
                    if self.peek().is_none() {
                        return Err("Syntax Error: Unexpected <EOF>.".into());
                    }
                    l.push(self.value()?);
                }
                self.next();
                Ok(GValue::List(l))
            }
            Some(Tok::Punct('{')) => {
                let mut o = Vec::new();
                while !self.is_punct('}') {
                    let n = self.name()?;
                    self.expect(':')?;
                    o.push((n, self.value()?));
                }
                self.next();
                Ok(GValue::Object(o))
            }
            other => Err(format!("Syntax Error: Unexpected {}.", show(&other))),
        }
    }

    fn selection_set(&mut self) -> Result<Vec<Selection>, String> {
        self.expect('{')?;
        let mut out = Vec::new();
        while !self.is_punct('}') {
            match self.peek().cloned() {
                None => return Err("Syntax Error: Expected Name, found <EOF>.".into()),
                Some(Tok::Spread) => {
                    self.next();
                    match self.peek().cloned() {
                        Some(Tok::Name(n)) if n == "on" => {
                            self.next();
                            self.name()?;
                            self.directives()?;
                            out.push(Selection::Inline(self.selection_set()?));
                        }
                        Some(Tok::Name(n)) => {
                            self.next();
                            self.directives()?;
                            out.push(Selection::Spread(n));
                        }
                        _ => {
                            self.directives()?;
                            out.push(Selection::Inline(self.selection_set()?));
                        }
                    }
                }
                Some(_) => {
                    let first = self.name()?;
                    let (alias, name) = if self.is_punct(':') {
                        self.next();
                        (Some(first), self.name()?)
                    } else {
                        (None, first)
                    };
                    let args = if self.is_punct('(') {
                        self.arguments()?
                    } else {
                        Vec::new()
                    };
                    self.directives()?;
                    let selections = if self.is_punct('{') {
                        self.selection_set()?
                    } else {
                        Vec::new()
                    };
                    out.push(Selection::Field(Field {
                        alias,
                        name,
                        args,
                        selections,
                    }));
                }
            }
        }
        self.next();
        Ok(out)
    }
}

fn show(t: &Option<Tok>) -> String {
    match t {
        None => "<EOF>".into(),
        Some(Tok::Name(n)) => format!("Name \"{n}\""),
        Some(Tok::Var(v)) => format!("\"${v}\""),
        Some(Tok::Str(s)) => format!("String \"{s}\""),
        Some(Tok::Num(n)) => format!("Int \"{n}\""),
        Some(Tok::Punct(c)) => format!("\"{c}\""),
        Some(Tok::Spread) => "\"...\"".into(),
    }
}

/// Parses a GraphQL document.
pub(crate) fn parse(src: &str) -> Result<Document, String> {
    let toks = lex(src)?;
    Parser { toks, pos: 0 }.document()
}

impl Document {
    /// The fields of a selection set with fragments flattened.
    pub(crate) fn fields<'a>(&'a self, sel: &'a [Selection]) -> Vec<&'a Field> {
        let mut out = Vec::new();
        self.collect(sel, &mut out, 0);
        out
    }

    fn collect<'a>(&'a self, sel: &'a [Selection], out: &mut Vec<&'a Field>, depth: usize) {
        if depth > 20 {
            return;
        }
        for s in sel {
            match s {
                Selection::Field(f) => out.push(f),
                Selection::Inline(inner) => self.collect(inner, out, depth + 1),
                Selection::Spread(name) => {
                    if let Some(inner) = self.fragments.get(name) {
                        self.collect(inner, out, depth + 1);
                    }
                }
            }
        }
    }

    /// Projects `full` (objects carry a `__typename`) onto a selection set. Unknown
    /// fields are reported as GraphQL validation errors.
    pub(crate) fn project(&self, full: &Value, sel: &[Selection]) -> Result<Value, String> {
        match full {
            Value::Array(items) => items
                .iter()
                .map(|i| self.project(i, sel))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            Value::Object(obj) => {
                if sel.is_empty() {
                    let t = obj
                        .get("__typename")
                        .and_then(Value::as_str)
                        .unwrap_or("Object");
                    return Err(format!(
                        "Field of type \"{t}\" must have a selection of subfields."
                    ));
                }
                let mut out = Map::new();
                for f in self.fields(sel) {
                    let v = match obj.get(&f.name) {
                        Some(v) => v,
                        None => {
                            let t = obj
                                .get("__typename")
                                .and_then(Value::as_str)
                                .unwrap_or("Object");
                            return Err(format!(
                                "Cannot query field \"{}\" on type \"{t}\".",
                                f.name
                            ));
                        }
                    };
                    let pv = if f.selections.is_empty() {
                        if v.is_object()
                            || (v.is_array()
                                && v.as_array()
                                    .is_some_and(|a| a.first().is_some_and(Value::is_object)))
                        {
                            return Err(format!(
                                "Field \"{}\" of type \"{}\" must have a selection of subfields. Did you mean \"{} {{ ... }}\"?",
                                f.name,
                                v.get("__typename")
                                    .and_then(Value::as_str)
                                    .unwrap_or("Object"),
                                f.name
                            ));
                        }
                        v.clone()
                    } else if v.is_null() {
                        Value::Null
                    } else {
                        self.project(v, &f.selections)?
                    };
                    out.insert(f.key().to_string(), pv);
                }
                Ok(Value::Object(out))
            }
            other => Ok(other.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_search_query() {
        let doc = parse(
            r#"
            # search
            query Search($term: String!, $first: Int = 20, $after: String) {
              searchIssues(term: $term, first: $first, after: $after, includeComments: false) {
                nodes { ...F state { name } }
                pageInfo { hasNextPage endCursor }
              }
            }
            fragment F on IssueSearchResult { identifier t: title }
            "#,
        )
        .unwrap();
        let op = &doc.operations[0];
        assert_eq!(op.kind, "query");
        assert_eq!(op.var_defaults[1].1, Some(GValue::Lit(json!(20))));
        let fields = doc.fields(&op.selections);
        assert_eq!(fields[0].name, "searchIssues");
        assert_eq!(fields[0].arg("term"), Some(&GValue::Var("term".into())));
        let full = json!({"__typename": "X", "nodes": [{"__typename": "IssueSearchResult", "identifier": "ENG-1", "title": "T", "state": {"__typename": "S", "name": "Done", "type": "completed"}}], "pageInfo": {"__typename": "PageInfo", "hasNextPage": false, "endCursor": null}});
        let p = doc.project(&full, &fields[0].selections).unwrap();
        assert_eq!(
            p,
            json!({"nodes": [{"identifier": "ENG-1", "t": "T", "state": {"name": "Done"}}], "pageInfo": {"hasNextPage": false, "endCursor": null}})
        );
    }

    #[test]
    fn mutations_and_literals() {
        let doc = parse(r#"mutation { issueDelete(id: "x") { success } }"#).unwrap();
        assert_eq!(doc.operations[0].kind, "mutation");
        let doc =
            parse(r#"{ searchIssues(term: "checkout \"timeout\"", first: 5) { nodes { id } } }"#)
                .unwrap();
        let f = doc.fields(&doc.operations[0].selections)[0];
        assert_eq!(
            f.arg("term"),
            Some(&GValue::Lit(json!("checkout \"timeout\"")))
        );
        assert!(parse("{ a ").is_err());
    }
}
