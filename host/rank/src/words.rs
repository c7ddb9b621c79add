//! Words: how text is cut into tokens.
//!
//! Query planning and scoring share these rules so that a query term and a
//! passage word are always cut the same way: a term the planner keeps must be
//! a token the scorer can find.

/// Characters that join the parts of one token when they sit between word
/// characters: identifiers people search for (`ACME-123`, `v2.1`, `#482`,
/// `acme/shop`, `snake_case`, `bob@acme.com`, `o'brien`, `google+api`)
/// must survive whole.
fn is_joiner(c: char) -> bool {
    matches!(c, '-' | '_' | '.' | '#' | '/' | '@' | '+' | '\'' | '’')
}

/// The joiners that separate the parts of a compound token; the apostrophe
/// is not one (`don't` has no useful part `t`).
pub(crate) fn is_part_separator(c: char) -> bool {
    is_joiner(c) && !matches!(c, '\'' | '’')
}

/// Letters and digits of any script, plus the combining marks that belong
/// to a letter: a decomposed "café" (`e` + U+0301) or a Devanagari virama
/// must not cut a word in two.
pub(crate) fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || is_combining_mark(c)
}

fn is_combining_mark(c: char) -> bool {
    let code = c as u32;
    let generic = matches!(
        code,
        0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F
            | 0x200C | 0x200D
    );
    let hebrew_arabic = matches!(
        code,
        0x0591..=0x05BD | 0x05BF | 0x05C1..=0x05C2 | 0x05C4..=0x05C5 | 0x05C7 | 0x0610..=0x061A
            | 0x064B..=0x065F | 0x0670
    );
    // Indic, Sinhala, Thai and Lao write vowel signs, viramas and tone marks
    // as separate code points; only their few punctuation marks split words.
    let south_asian = (0x0900..=0x0EFF).contains(&code)
        && !matches!(
            code,
            0x0964 | 0x0965 | 0x0970 | 0x0DF4 | 0x0E4F | 0x0E5A | 0x0E5B
        );
    generic || hebrew_arabic || south_asian
}

/// Scripts written without spaces between words (Chinese, Japanese, Korean
/// syllables). A single such character is a word, unlike a single Latin
/// letter.
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(
        c as u32,
        0x1100..=0x11FF
            | 0x3040..=0x30FF
            | 0x3130..=0x318F
            | 0x31F0..=0x31FF
            | 0x3400..=0x4DBF
            | 0x4E00..=0x9FFF
            | 0xAC00..=0xD7AF
            | 0xF900..=0xFAFF
            | 0x20000..=0x2FA1F
    )
}

/// The words of `text`, lower-cased, in order, with stop words and single
/// characters still in (time expressions need "in", "7"...).
///
/// A word is a run of word characters and joiners, trimmed of joiners at
/// both ends (trailing punctuation such as `v2.1.` or `acme/shop,`), except
/// a leading `#` (`#482`, `#general`). A possessive `'s` is dropped so that
/// "Alice's" finds "Alice".
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !is_word_char(c) && !is_joiner(c))
        .filter_map(trim_joiners)
        .map(normalize)
        .filter(|word| !word.is_empty())
        .collect()
}

fn trim_joiners(piece: &str) -> Option<&str> {
    let first = piece.find(is_word_char)?;
    let start = if piece[..first].ends_with('#') {
        first - 1
    } else {
        first
    };
    let word = &piece[start..];
    let core = word.trim_end_matches(|c: char| !is_word_char(c));
    Some(with_language_suffix(word, core))
}

/// "C#", "F#", "C++": a one-letter name keeps the suffix that makes it a
/// programming language, instead of becoming a letter too short to search.
fn with_language_suffix<'a>(word: &'a str, core: &'a str) -> &'a str {
    let mut letters = core.chars();
    let one_letter = letters.next().is_some_and(char::is_alphabetic) && letters.next().is_none();
    let rest = &word[core.len()..];
    match ["++", "#"].iter().find(|suffix| rest.starts_with(**suffix)) {
        Some(suffix) if one_letter => &word[..core.len() + suffix.len()],
        _ => core,
    }
}

fn normalize(word: &str) -> String {
    let lower = word.to_lowercase().replace('’', "'");
    match lower.strip_suffix("'s") {
        Some(owner) if !owner.is_empty() => owner.to_string(),
        _ => lower,
    }
}

/// Whether a word can carry meaning alone: single letters and digits are
/// noise ("a", "I", the "1" of "v2.1"), a single ideograph is a word.
pub(crate) fn is_long_enough(word: &str) -> bool {
    let mut chars = word.chars();
    match (chars.next(), chars.next()) {
        (Some(_), Some(_)) => true,
        (Some(only), None) => is_cjk(only),
        _ => false,
    }
}

/// A very light plural stemmer: "timeouts" and "timeout" are the same
/// word, while "status", "class" and "bus" stay whole. It only has to be
/// consistent, because it is applied to query and passages alike.
pub(crate) fn stem(word: &str) -> &str {
    let plural = word.ends_with('s') && !word.ends_with("ss") && word.chars().count() > 3;
    if plural {
        &word[..word.len() - 1]
    } else {
        word
    }
}

/// Collapses runs of whitespace into single spaces and trims: text compared
/// or hashed must not depend on how a vendor wrapped its lines.
pub(crate) fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(text: &str) -> Vec<String> {
        words(text)
    }

    #[test]
    fn keeps_identifiers_whole() {
        assert_eq!(
            w("ACME-123, v2.1. #482 acme/shop snake_case bob@acme.com"),
            [
                "acme-123",
                "v2.1",
                "#482",
                "acme/shop",
                "snake_case",
                "bob@acme.com"
            ]
        );
    }

    #[test]
    fn strips_surrounding_punctuation() {
        assert_eq!(
            w("(hello), \"world\"! ...ok... 'quoted' --flag end."),
            ["hello", "world", "ok", "quoted", "flag", "end"]
        );
        assert_eq!(w("##heading #-x"), ["#heading", "x"]);
        assert!(w("... --- ### !!!").is_empty());
    }

    #[test]
    fn programming_languages_keep_their_suffix() {
        assert_eq!(
            w("C++ and C#, F#. c+ x+y +1"),
            ["c++", "and", "c#", "f#", "c", "x+y", "1"]
        );
        assert_eq!(w("ab++ #c#"), ["ab", "#c"]);
    }

    #[test]
    fn possessives_and_contractions() {
        assert_eq!(w("Alice's PR"), ["alice", "pr"]);
        assert_eq!(w("Bob’s doc"), ["bob", "doc"]);
        assert_eq!(w("don't O'Brien"), ["don't", "o'brien"]);
    }

    #[test]
    fn unicode_letters_are_letters() {
        assert_eq!(w("Café ÜBER naïve"), ["café", "über", "naïve"]);
        // Decomposed: e + combining acute accent.
        assert_eq!(w("cafe\u{301} menu"), ["cafe\u{301}", "menu"]);
        assert_eq!(w("検索エンジン、設計。"), ["検索エンジン", "設計"]);
        assert_eq!(w("क्षत्रिय नमस्ते।"), ["क्षत्रिय", "नमस्ते"]);
        assert_eq!(w("Привет, мир"), ["привет", "мир"]);
    }

    #[test]
    fn single_characters_are_too_short_except_ideographs() {
        assert!(!is_long_enough("a"));
        assert!(!is_long_enough("7"));
        assert!(!is_long_enough(""));
        assert!(is_long_enough("猫"));
        assert!(is_long_enough("ok"));
    }

    #[test]
    fn stems_plurals_lightly() {
        assert_eq!(stem("timeouts"), "timeout");
        assert_eq!(stem("status"), "statu"); // consistent, not pretty
        assert_eq!(stem("class"), "class");
        assert_eq!(stem("bus"), "bus");
        assert_eq!(stem("apps"), "app");
        assert_eq!(stem("cafés"), "café");
    }

    #[test]
    fn collapses_whitespace() {
        assert_eq!(collapse_whitespace("  a \n\t b  "), "a b");
        assert_eq!(collapse_whitespace(" \n "), "");
    }
}
