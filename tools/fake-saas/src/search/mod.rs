//! How the fake vendors search: one engine, and per vendor a declaration of
//! its documented semantics.
//!
//! A vendor's fake parses what is its own (GitHub's qualifiers, Slack's
//! modifiers, JQL's clauses) and hands the free text to the engine with the
//! vendor's [`Declaration`], read from `declarations/<name>.toml`: whether
//! words combine with AND or OR, the operators the text understands, quoted
//! phrases, the fields searched, stemming, stop words, the default order,
//! page sizes and the rate limit, each with the documentation page it
//! comes from. The engine ([`Index`]) tokenizes each vendor's records once
//! and ranks matches by BM25 where the vendor orders by relevance (no
//! vendor publishes its relevance function).
//!
//! Tokens are lower-cased runs of letters and digits; a word that the
//! tokenizer cuts in several (`acme-123`) matches as a phrase.

mod declaration;
mod index;
mod qualifiers;
mod query;
mod text;

use std::collections::BTreeMap;
use std::sync::LazyLock;

pub use declaration::{Combine, Declaration, Matching, Operator, Order, PageSize, RateLimit, Rule};
pub use index::{Hit, Index, Sort, sort_hits};
pub use qualifiers::{qualifier, split_words};
pub use query::{Expr, Query, Refusal};
pub use text::{STOP_WORDS, Stemming, normalize, raw_tokens, tokenize};

/// The declarations of the vendors fake-saas plays, by name (the file's
/// name in `declarations/`: a vendor with two searches has two).
static DECLARATIONS: LazyLock<BTreeMap<&'static str, Declaration>> = LazyLock::new(|| {
    let coded = BUILT_IN
        .iter()
        .map(|(name, text)| (*name, format!("declarations/{name}.toml"), *text));
    let from_data = crate::declared::PLAYED_FROM_DATA
        .iter()
        .filter_map(|(name, files)| {
            let file = crate::declared::DECLARATION_FILE;
            let (_, text) = files.iter().find(|(f, _)| *f == file)?;
            Some((*name, format!("declared/{name}/{file}"), *text))
        });
    coded
        .chain(from_data)
        .map(|(name, file, text)| {
            let declaration =
                Declaration::from_toml(text).unwrap_or_else(|e| panic!("{file}: {e}"));
            (name, declaration)
        })
        .collect()
});

macro_rules! built_in {
    ($($name:literal),* $(,)?) => {
        const BUILT_IN: &[(&str, &str)] = &[
            $(($name, include_str!(concat!("../../declarations/", $name, ".toml")))),*
        ];
    };
}

// Every vendor's declaration, and Asana's second endpoint's.
crate::dataset::with_vendors!(built_in, "asana-typeahead");

/// A built-in declaration by name.
///
/// # Panics
/// When there is none of that name (a fake's own mistake).
pub fn declared(name: &str) -> &'static Declaration {
    DECLARATIONS
        .get(name)
        .unwrap_or_else(|| panic!("fake-saas has no search declaration {name:?}"))
}

/// Every built-in declaration, by name.
pub fn declarations() -> impl Iterator<Item = (&'static str, &'static Declaration)> {
    DECLARATIONS.iter().map(|(name, d)| (*name, d))
}

#[cfg(test)]
mod tests;
