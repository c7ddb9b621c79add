//! Passages: the pieces of a record that are ranked and cited.
//!
//! A record can be a one-line chat message or a fifty-page design doc. The
//! answer cites passages, not whole records, so that an assistant gets the
//! paragraph that matters, and BM25 compares texts of similar length.

use sha2::{Digest, Sha256};

use super::words::collapse_whitespace;

/// A passage ends at the best boundary once it holds this many words...
const MIN_WORDS: usize = 100;
/// ...and never holds more.
const MAX_WORDS: usize = 160;
/// Words repeated at the start of the next passage, so that a sentence cut
/// in two still matches in one of them.
const OVERLAP_WORDS: usize = 20;
/// A passage's body never exceeds this (text without spaces, long URLs,
/// base64 blobs): it keeps the response and the embedder's input bounded.
const MAX_BYTES: usize = 1000;
/// The last passage gets at least this many new words, rather than a
/// near-copy of the one before it.
const MIN_TAIL_WORDS: usize = 40;
/// A title is repeated in every passage; a very long one is shortened so
/// that it does not crowd out the passage itself.
const MAX_TITLE_BYTES: usize = 200;

/// One passage of one record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Passage {
    /// `chnk_` + 24 hex characters, stable for the same passage of the same
    /// record of the same connector, across queries and restarts.
    pub chunk_id: String,
    /// The record's title, a newline, and the passage (or just one of them
    /// when the other is empty), whitespace collapsed.
    pub text: String,
    /// The record's position in its connector's results, as given.
    pub document_index: usize,
    /// The passage's position in its record, from 0.
    pub ordinal: usize,
}

/// Cuts a record into passages of about 100-160 words, at paragraph or
/// sentence ends where possible, with ~20 words of overlap. Each passage
/// starts with the title, so that it keeps its context when read or scored
/// alone. A record without content gives one passage made of its title.
pub fn chunk(
    connector: &str,
    document_index: usize,
    document_id: &str,
    title: &str,
    content: &str,
) -> Vec<Passage> {
    let title = collapse_whitespace(title);
    let title = shorten(&title, MAX_TITLE_BYTES);
    let words = split_words(content);
    let mut bodies: Vec<String> = passage_ranges(&words)
        .into_iter()
        .map(|(start, end)| join(&words[start..end]))
        .collect();
    if bodies.is_empty() {
        bodies.push(String::new());
    }
    bodies
        .into_iter()
        .enumerate()
        .map(|(ordinal, body)| {
            let text = with_title(title, &body);
            Passage {
                chunk_id: chunk_id(connector, document_id, &text),
                text,
                document_index,
                ordinal,
            }
        })
        .collect()
}

/// `chnk_` + the first 24 hex characters of SHA-256 over connector,
/// record id and text, NUL-separated so that no two different triples hash
/// the same input. 96 bits make a collision among a user's archive
/// negligible.
fn chunk_id(connector: &str, document_id: &str, text: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(connector.as_bytes());
    hasher.update([0]);
    hasher.update(document_id.as_bytes());
    hasher.update([0]);
    hasher.update(text.as_bytes());
    let digest = hex::encode(hasher.finalize());
    format!("chnk_{}", &digest[..24])
}

fn with_title(title: &str, body: &str) -> String {
    match (title.is_empty(), body.is_empty()) {
        (true, _) => body.to_string(),
        (false, true) => title.to_string(),
        (false, false) => format!("{title}\n{body}"),
    }
}

/// How good a place to end a passage the end of a word is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Boundary {
    None,
    Sentence,
    Paragraph,
}

#[derive(Debug)]
struct Word<'a> {
    text: &'a str,
    /// The boundary after this word.
    boundary: Boundary,
}

/// The content's whitespace-separated words, with the boundary after each:
/// a blank line ends a paragraph; a line end or sentence punctuation ends a
/// sentence. Words longer than [`MAX_BYTES`] are cut at char boundaries.
fn split_words(content: &str) -> Vec<Word<'_>> {
    let mut words: Vec<Word<'_>> = Vec::new();
    for line in content.lines() {
        if line.trim().is_empty() {
            mark_last(&mut words, Boundary::Paragraph);
            continue;
        }
        for text in line.split_whitespace() {
            let boundary = if ends_sentence(text) {
                Boundary::Sentence
            } else {
                Boundary::None
            };
            words.extend(cut_long(text, MAX_BYTES).into_iter().map(|text| Word {
                text,
                boundary: Boundary::None,
            }));
            mark_last(&mut words, boundary);
        }
        mark_last(&mut words, Boundary::Sentence);
    }
    words
}

fn mark_last(words: &mut [Word<'_>], boundary: Boundary) {
    if let Some(last) = words.last_mut() {
        last.boundary = last.boundary.max(boundary);
    }
}

fn ends_sentence(word: &str) -> bool {
    let word = word.trim_end_matches(['"', '\'', ')', ']', '}', '”', '’', '»', '」', '』']);
    word.ends_with(['.', '!', '?', '…', '。', '！', '？'])
}

/// `text` in pieces of at most `max_bytes`, cut at char boundaries.
fn cut_long(text: &str, max_bytes: usize) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while rest.len() > max_bytes {
        let cut = floor_char_boundary(rest, max_bytes);
        pieces.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    pieces.push(rest);
    pieces
}

/// The largest char boundary at or below `index` (at least one char, so
/// that cutting always progresses).
fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut cut = index.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    if cut == 0 {
        text.chars().next().map_or(0, char::len_utf8)
    } else {
        cut
    }
}

fn shorten(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        text
    } else {
        text[..floor_char_boundary(text, max_bytes)].trim_end()
    }
}

fn join(words: &[Word<'_>]) -> String {
    let texts: Vec<&str> = words.iter().map(|word| word.text).collect();
    texts.join(" ")
}

/// The `(start, end)` word ranges of the passages, in order.
fn passage_ranges(words: &[Word<'_>]) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut start = 0;
    while start < words.len() {
        let end = passage_end(words, start);
        ranges.push((start, end));
        if end == words.len() {
            break;
        }
        let overlap = OVERLAP_WORDS.min((end - start) / 4);
        start = end - overlap;
    }
    ranges
}

/// Where the passage starting at `start` ends (exclusive): all the rest if
/// it fits; otherwise the best boundary between [`MIN_WORDS`] and
/// [`MAX_WORDS`] (the latest among equals), within [`MAX_BYTES`], leaving
/// at least [`MIN_TAIL_WORDS`] for the last passage.
fn passage_end(words: &[Word<'_>], start: usize) -> usize {
    let fitting = fitting_end(words, start);
    if fitting == words.len() && fitting - start <= MAX_WORDS {
        return fitting;
    }
    let latest = fitting
        .min(start + MAX_WORDS)
        .min(words.len().saturating_sub(MIN_TAIL_WORDS))
        .max(start + 1);
    let earliest = (start + MIN_WORDS).min(latest);
    // `max_by_key` keeps the last of equal maxima: the latest best end.
    (earliest..=latest)
        .max_by_key(|end| words[end - 1].boundary)
        .unwrap_or(latest)
}

/// The largest end such that `words[start..end]`, joined by spaces, fits in
/// [`MAX_BYTES`] (at least `start + 1`: every word fits alone).
fn fitting_end(words: &[Word<'_>], start: usize) -> usize {
    let mut bytes = words[start].text.len();
    let mut end = start + 1;
    while end < words.len() && bytes + 1 + words[end].text.len() <= MAX_BYTES {
        bytes += 1 + words[end].text.len();
        end += 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentence(index: usize, length: usize) -> String {
        let words: Vec<String> = (0..length).map(|w| format!("w{index}x{w}")).collect();
        format!("{}.", words.join(" "))
    }

    fn word_count(text: &str) -> usize {
        text.split_whitespace().count()
    }

    fn body(passage: &Passage) -> &str {
        passage
            .text
            .split_once('\n')
            .map_or(&passage.text, |(_, body)| body)
    }

    #[test]
    fn a_short_record_is_one_passage_with_its_title() {
        let passages = chunk("github", 3, "issue-1", "Checkout  bug", "It  times\n out.");
        assert_eq!(passages.len(), 1);
        assert_eq!(passages[0].text, "Checkout bug\nIt times out.");
        assert_eq!(passages[0].document_index, 3);
        assert_eq!(passages[0].ordinal, 0);
    }

    #[test]
    fn no_title_no_prefix() {
        let passages = chunk("slack", 0, "ts", "", "  hello   world ");
        assert_eq!(passages[0].text, "hello world");
    }

    #[test]
    fn empty_content_gives_the_title() {
        let passages = chunk("notion", 0, "page", " Roadmap ", " \n\n ");
        assert_eq!(passages.len(), 1);
        assert_eq!(passages[0].text, "Roadmap");
        let passages = chunk("notion", 0, "page", "", "");
        assert_eq!(passages.len(), 1);
        assert_eq!(passages[0].text, "");
    }

    #[test]
    fn long_records_become_overlapping_passages_of_bounded_size() {
        let content: Vec<String> = (0..60).map(|i| sentence(i, 12)).collect();
        let content = content.join(" ");
        let passages = chunk("jira", 0, "ACME-1", "Title", &content);
        assert!(passages.len() >= 5, "{}", passages.len());
        for (ordinal, passage) in passages.iter().enumerate() {
            assert_eq!(passage.ordinal, ordinal);
            assert!(passage.text.starts_with("Title\n"));
            let words = word_count(body(passage));
            assert!(words <= MAX_WORDS, "{words}");
            if ordinal + 1 < passages.len() {
                assert!(words >= MIN_WORDS, "{words}");
                // Ends at a sentence boundary.
                assert!(body(passage).ends_with('.'));
            }
            assert!(body(passage).len() <= MAX_BYTES);
        }
        for pair in passages.windows(2) {
            let previous: Vec<&str> = body(&pair[0]).split(' ').collect();
            let next: Vec<&str> = body(&pair[1]).split(' ').collect();
            assert_eq!(
                previous[previous.len() - OVERLAP_WORDS..],
                next[..OVERLAP_WORDS]
            );
        }
        // Every word of the content is in some passage, in order.
        let mut seen: Vec<&str> = Vec::new();
        for passage in &passages {
            for word in body(passage).split(' ') {
                if !seen.contains(&word) {
                    seen.push(word);
                }
            }
        }
        assert_eq!(seen, content.split(' ').collect::<Vec<_>>());
    }

    #[test]
    fn prefers_paragraph_ends() {
        let first: Vec<String> = (0..9).map(|i| sentence(i, 12)).collect();
        let second: Vec<String> = (9..30).map(|i| sentence(i, 12)).collect();
        let content = format!("{}\n\n{}", first.join(" "), second.join(" "));
        let passages = chunk("notion", 0, "page", "", &content);
        // The first paragraph is 108 words: a passage of its own.
        assert_eq!(passages[0].text, first.join(" "));
    }

    #[test]
    fn the_last_passage_is_not_a_sliver() {
        let content: Vec<String> = (0..170).map(|i| format!("word{i}")).collect();
        let passages = chunk("slack", 0, "ts", "", &content.join(" "));
        assert_eq!(passages.len(), 2);
        let new_words = word_count(&passages[1].text) - OVERLAP_WORDS;
        assert!(new_words >= MIN_TAIL_WORDS, "{new_words}");
    }

    #[test]
    fn text_without_spaces_is_cut_at_char_boundaries() {
        let content = "検索".repeat(2000); // 12,000 bytes, no space
        let passages = chunk("notion", 0, "page", "", &content);
        assert!(passages.len() >= 12);
        let mut rebuilt = String::new();
        for passage in &passages {
            assert!(passage.text.len() <= MAX_BYTES);
            rebuilt.push_str(&passage.text);
        }
        assert_eq!(rebuilt, content);
    }

    #[test]
    fn long_words_among_short_ones_keep_passages_small() {
        let url = format!("https://example.com/{}", "a".repeat(300));
        let content: Vec<String> = (0..40).map(|i| format!("see {url}{i} now")).collect();
        let passages = chunk("github", 0, "1", "T", &content.join(" "));
        assert!(passages.len() > 10);
        for passage in &passages {
            assert!(body(passage).len() <= MAX_BYTES, "{}", body(passage).len());
        }
    }

    #[test]
    fn long_titles_are_shortened() {
        let title = "é".repeat(500);
        let passages = chunk("notion", 0, "page", &title, "body");
        let (prefix, body) = passages[0].text.split_once('\n').unwrap();
        assert!(prefix.len() <= MAX_TITLE_BYTES);
        assert!(prefix.chars().all(|c| c == 'é'));
        assert_eq!(body, "body");
    }

    #[test]
    fn chunk_ids_are_stable_and_distinct() {
        let a = chunk("github", 0, "1", "T", "same text");
        let again = chunk("github", 5, "1", "T", "same   text");
        assert_eq!(a[0].chunk_id, again[0].chunk_id);
        assert_eq!(
            a[0].chunk_id,
            "chnk_".to_string() + &sha_prefix("github\u{0}1\u{0}T\nsame text")
        );
        assert!(a[0].chunk_id.starts_with("chnk_"));
        assert_eq!(a[0].chunk_id.len(), 5 + 24);
        let other_connector = chunk("jira", 0, "1", "T", "same text");
        let other_record = chunk("github", 0, "2", "T", "same text");
        let other_text = chunk("github", 0, "1", "T", "other text");
        let ambiguous = chunk("github\u{0}1", 0, "", "T", "same text");
        let ids = [
            &a[0].chunk_id,
            &other_connector[0].chunk_id,
            &other_record[0].chunk_id,
            &other_text[0].chunk_id,
            &ambiguous[0].chunk_id,
        ];
        for (i, x) in ids.iter().enumerate() {
            for y in &ids[i + 1..] {
                assert_ne!(x, y);
            }
        }
    }

    fn sha_prefix(input: &str) -> String {
        hex::encode(Sha256::digest(input.as_bytes()))[..24].to_string()
    }

    #[test]
    fn passages_of_one_record_have_distinct_ids() {
        let content: Vec<String> = (0..50).map(|i| sentence(i, 10)).collect();
        let passages = chunk("jira", 0, "ACME-1", "T", &content.join(" "));
        let mut ids: Vec<&str> = passages.iter().map(|p| p.chunk_id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), passages.len());
    }

    #[test]
    fn sentence_ends() {
        assert!(ends_sentence("done."));
        assert!(ends_sentence("really?\""));
        assert!(ends_sentence("終わり。"));
        assert!(!ends_sentence("v2.1"));
        assert!(!ends_sentence("and"));
    }
}
