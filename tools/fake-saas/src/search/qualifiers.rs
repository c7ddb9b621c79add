//! What the vendors' query syntaxes share around the free text: words cut
//! at white space with quoted strings kept whole, and `name:value`
//! qualifiers.

/// Splits a query on white space, keeping `"quoted strings"` (and `name:"quoted values"`)
/// in one piece, quotes included.
pub fn split_words(q: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_quote = false;
    for c in q.chars() {
        if c == '"' {
            in_quote = !in_quote;
            cur.push(c);
        } else if c.is_whitespace() && !in_quote {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// If `word` looks like `name:value` (name made of letters, `_` or `-`, optionally
/// negated with a leading `-`), returns `(negated, lower-case name, value without quotes)`.
pub fn qualifier(word: &str) -> Option<(bool, String, String)> {
    let (neg, w) = match word.strip_prefix('-') {
        Some(w) => (true, w),
        None => (false, word),
    };
    let i = w.find(':')?;
    let name = &w[..i];
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphabetic() || c == '_' || c == '-')
    {
        return None;
    }
    let value = w[i + 1..].trim_matches('"').to_string();
    Some((neg, name.to_ascii_lowercase(), value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words() {
        assert_eq!(
            split_words(r#"checkout repo:acme/shop "time out" label:"good first" is:pr"#),
            vec![
                "checkout",
                "repo:acme/shop",
                "\"time out\"",
                "label:\"good first\"",
                "is:pr"
            ]
        );
        assert_eq!(
            qualifier("updated:>=2025-01-01"),
            Some((false, "updated".into(), ">=2025-01-01".into()))
        );
        assert_eq!(qualifier("12:30"), None);
    }
}
