//! Text helpers: vendors return markup; the host wants plain text.

/// The longest prefix of `text` of at most `max` bytes, cut at a character
/// boundary.
pub fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}

/// Joins non-empty parts with `sep`.
pub fn join_non_empty<'a>(parts: impl IntoIterator<Item = &'a str>, sep: &str) -> String {
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(sep)
}

/// Keyword query text: the terms and quoted phrases, joined with `sep`
/// (a space for AND-by-default engines, `" OR "` where supported).
pub fn keywords(terms: &[String], phrases: &[String], sep: &str) -> String {
    let mut parts: Vec<String> = phrases
        .iter()
        .map(|p| format!("\"{}\"", p.replace('"', "")))
        .collect();
    parts.extend(
        terms
            .iter()
            .filter(|t| !phrases.iter().any(|p| p.contains(t.as_str())))
            .cloned(),
    );
    parts.join(sep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_on_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "h");
        assert_eq!(truncate("abc", 10), "abc");
    }

    #[test]
    fn keywords_put_phrases_first() {
        let terms = vec![
            "checkout".to_string(),
            "timeout".to_string(),
            "eu".to_string(),
        ];
        let phrases = vec!["checkout timeout".to_string()];
        assert_eq!(
            keywords(&terms, &phrases, " OR "),
            "\"checkout timeout\" OR eu"
        );
    }
}
