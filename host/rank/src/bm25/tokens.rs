//! Tokens: the words of a text, lower-cased and lightly stemmed, with the
//! parts of compounds and the character pairs of CJK runs.

use super::super::words::{is_cjk, is_long_enough, is_part_separator, stem, words};

/// The tokens of `text`: the words (same rules as the query planner's
/// terms, without stop-word removal), lower-cased and lightly stemmed, each
/// followed by its parts when it is a compound ("acme-123" gives
/// "acme-123", "acme", "123") so that "ACME-123" is found by "acme" and by
/// "ACME-123" alike. A run of Chinese, Japanese or Korean characters is
/// also cut into overlapping pairs, the usual way to match words in text
/// written without spaces.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    for word in words(text) {
        let parts = parts(&word);
        push_token(&mut tokens, &word);
        for part in parts.iter().filter(|part| **part != word) {
            push_token(&mut tokens, part);
        }
    }
    tokens
}

fn push_token(tokens: &mut Vec<String>, word: &str) {
    if is_long_enough(word) {
        tokens.push(stem(word).to_string());
    }
}

/// The distinct parts of a compound word and the character pairs of its
/// CJK runs.
fn parts(word: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    let mut add = |part: String| {
        if !part.is_empty() && !parts.contains(&part) {
            parts.push(part);
        }
    };
    if word.contains(is_part_separator) {
        word.split(is_part_separator)
            .for_each(|part| add(part.to_string()));
    }
    for run in cjk_runs(word) {
        if run.len() >= 2 {
            run.windows(2).for_each(|pair| add(pair.iter().collect()));
        }
    }
    parts
}

fn cjk_runs(word: &str) -> Vec<Vec<char>> {
    let mut runs = Vec::new();
    let mut current = Vec::new();
    for c in word.chars() {
        if is_cjk(c) {
            current.push(c);
        } else if !current.is_empty() {
            runs.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        runs.push(current);
    }
    runs
}
