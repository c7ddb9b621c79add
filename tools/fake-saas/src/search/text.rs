//! Text as an engine sees it: lower-case alphanumeric tokens, each reduced
//! to the form the engine compares (its stemming).

use serde::Deserialize;

/// How much of a word's ending an engine ignores when it compares words.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Stemming {
    /// Words match exactly (case aside).
    None,
    /// A plural `s` is ignored: a token longer than 3 characters that ends
    /// in `s` (but not `ss`, `us` or `is`) loses it (`items` = `item`,
    /// `timeouts` = `timeout`). The fake's assumption where a vendor does
    /// not say.
    #[default]
    Plural,
}

impl Stemming {
    pub(crate) const ALL: [Stemming; 2] = [Stemming::None, Stemming::Plural];

    pub(crate) fn slot(self) -> usize {
        match self {
            Stemming::None => 0,
            Stemming::Plural => 1,
        }
    }

    /// The form of a lower-case `token` this engine compares.
    pub fn stem(self, token: &str) -> String {
        match self {
            Stemming::None => token.to_string(),
            Stemming::Plural => without_plural(token),
        }
    }
}

fn without_plural(token: &str) -> String {
    let long_enough = token.chars().count() > 3;
    let plural = token.ends_with('s')
        && !token.ends_with("ss")
        && !token.ends_with("us")
        && !token.ends_with("is");
    if long_enough && plural {
        token[..token.len() - 1].to_string()
    } else {
        token.to_string()
    }
}

/// Lower-cased runs of letters and digits: every other character separates.
pub fn raw_tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
}

/// The tokens of a text as an engine with the default stemming compares them.
pub fn tokenize(text: &str) -> Vec<String> {
    raw_tokens(text).map(|t| without_plural(&t)).collect()
}

/// Drops a plural `s` (see [`Stemming::Plural`]).
pub fn normalize(token: &str) -> String {
    without_plural(token)
}

/// Words that engines which ignore stop words drop from queries (never from
/// quoted phrases).
pub const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had",
    "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not",
    "of", "on", "or", "our", "should", "so", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "to", "us", "was", "we", "were", "what", "when",
    "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your",
];

pub(crate) fn is_stop_word(token: &str) -> bool {
    STOP_WORDS.binary_search(&token).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort();
        assert_eq!(sorted, STOP_WORDS);
    }

    #[test]
    fn plurals() {
        assert_eq!(
            tokenize("Items, timeouts; status class"),
            ["item", "timeout", "status", "class"]
        );
        assert_eq!(Stemming::None.stem("items"), "items");
        assert_eq!(Stemming::Plural.stem("bus"), "bus");
    }
}
