//! One user's vector index: usearch's HNSW graph over the entries' vectors
//! (cosine, stored as f16: half the memory of f32 for a loss in similarity
//! far below what ranking can tell apart), plus, by sequence number, each
//! entry's `queried_at`, so that a date range becomes a range of sequence
//! numbers, and its chunk, so that a search returns each chunk once.
//!
//! ## One result per chunk
//!
//! A chunk is the same text from the same tool: its identity ([`Chunk`]) is
//! a digest of (connector, content). Asking one question three times
//! archives its chunks three times (the history keeps every answer); a
//! search returns each chunk once, as its newest occurrence within the
//! window (so the newest query that found it), with the best similarity of
//! its occurrences. The digest is a plain SHA-256 prefix, not a keyed MAC:
//! it is stored only inside the index, which is sealed with the user's data
//! key like the entries it is computed from.
//!
//! Each chunk's occurrences are chained, newest to oldest: `newest` gives a
//! chunk's newest sequence number, `previous` each sequence number's
//! previous occurrence. So, for a window of sequence numbers
//! `start..end`:
//! - a chunk's newest occurrence in it is found by walking back from its
//!   newest until below `end`: one step per occurrence after the window;
//! - its distinct chunks are counted by its sequence numbers whose
//!   previous occurrence is before `start` (each chunk's oldest in the
//!   window): one pass over a plain array, or a counter (`firsts`) for the
//!   whole archive, a search without dates;
//! - the graph finds the nearest vectors, not chunks: when duplicates leave
//!   fewer than the chunks asked for, it is asked again for twice as many
//!   (the exact path compares every entry of the window anyway).
//!
//! Only the chunks are stored (beside the times); the chains are derived
//! from them on load. Entries mostly reach the index in order; one that
//! comes after a later one (two queries archived in one commit reach the
//! loaded index in either order) is linked into its chunk's chain where it
//! belongs.
//!
//! The index is derived data: it is serialized, sealed with the user's data
//! key in segments, and rebuilt from the entries when missing, made by
//! another embedder, or stored before chunks were kept.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;

use anyhow::{Context, Result, anyhow, ensure};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

/// Entries in a date window up to this many are compared exhaustively:
/// exact, and faster than a filtered graph walk that rejects most nodes.
const EXACT_SEARCH_LIMIT: usize = 4096;

/// A chunk's identity: the first 8 bytes of SHA-256 over its connector and
/// content ([`chunk_of`]); never `UNSEEN`. Two distinct chunks of one
/// user share one with a probability of about n²/2⁶⁵ (3·10⁻⁸ for a million
/// entries).
pub type Chunk = u64;

/// The chunk of a sequence number whose entry the index has not seen yet
/// (a later entry reached it first).
const UNSEEN: Chunk = 0;
/// In `previous`: no earlier occurrence (or not seen yet).
const FIRST: u64 = u64::MAX;

/// The identity of the chunk `content` from `connector`.
pub fn chunk_of(connector: &str, content: &str) -> Chunk {
    let digest = Sha256::new()
        .chain_update((connector.len() as u64).to_le_bytes())
        .chain_update(connector)
        .chain_update(content)
        .finalize();
    u64::from_le_bytes(digest[..8].try_into().expect("8 bytes")).max(UNSEEN + 1)
}

pub struct UserIndex {
    index: Index,
    embedder: String,
    /// `queried_at` (ms) by sequence number; non-decreasing.
    times: Vec<i64>,
    /// The chunk by sequence number (`UNSEEN` for a gap); as long as
    /// `times`.
    chunks: Vec<Chunk>,
    /// Derived from `chunks`: the previous occurrence of each sequence
    /// number's chunk (`FIRST` if none, or unseen).
    previous: Vec<u64>,
    /// Derived from `chunks`: each chunk's newest occurrence.
    newest: HashMap<Chunk, u64, BuildHasherDefault<Prehashed>>,
    /// Sequence numbers whose `previous` is `FIRST`: the distinct chunks
    /// (an unseen one counting as one).
    firsts: u64,
    /// Vectors added since the index was last stored.
    pub unsaved: usize,
}

/// Stored before the graph in the serialized form.
#[derive(Serialize, Deserialize)]
struct Header<'a> {
    embedder: Cow<'a, str>,
    dimensions: usize,
    times: Cow<'a, [i64]>,
    /// Absent from an index stored before chunks were kept.
    #[serde(default)]
    chunks: Option<Cow<'a, [Chunk]>>,
}

/// A match: an entry's sequence number, its chunk and its cosine
/// similarity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub seq: u64,
    pub chunk: Chunk,
    pub similarity: f32,
}

/// One hit per chunk: the best similarity of its hits, at the newest of
/// their sequence numbers. Unordered.
pub fn one_per_chunk(hits: impl IntoIterator<Item = Hit>) -> Vec<Hit> {
    let mut by_chunk: HashMap<Chunk, Hit, BuildHasherDefault<Prehashed>> = HashMap::default();
    let mut unseen = Vec::new();
    for hit in hits {
        if hit.chunk == UNSEEN {
            unseen.push(hit);
            continue;
        }
        by_chunk
            .entry(hit.chunk)
            .and_modify(|kept| {
                kept.similarity = kept.similarity.max(hit.similarity);
                kept.seq = kept.seq.max(hit.seq);
            })
            .or_insert(hit);
    }
    by_chunk.into_values().chain(unseen).collect()
}

/// Best first; ties go to the newest.
pub fn best_first(hits: &mut [Hit]) {
    hits.sort_by(|a, b| {
        b.similarity
            .total_cmp(&a.similarity)
            .then(b.seq.cmp(&a.seq))
    });
}

/// Chunks are digests already: a map of them needs no further hashing.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*byte);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = self.0.rotate_left(32) ^ n;
    }
}

impl UserIndex {
    pub fn new(embedder: &str, dimensions: usize) -> Result<UserIndex> {
        let options = IndexOptions {
            dimensions,
            metric: MetricKind::Cos,
            quantization: ScalarKind::F16,
            connectivity: 0,
            expansion_add: 0,
            expansion_search: 0,
            multi: false,
        };
        let index = Index::new(&options).map_err(|e| anyhow!("creating the index: {e}"))?;
        index
            .reserve(1024)
            .map_err(|e| anyhow!("reserving the index: {e}"))?;
        Ok(UserIndex {
            index,
            embedder: embedder.to_string(),
            times: Vec::new(),
            chunks: Vec::new(),
            previous: Vec::new(),
            newest: HashMap::default(),
            firsts: 0,
            unsaved: 0,
        })
    }

    pub fn embedder(&self) -> &str {
        &self.embedder
    }

    pub fn len(&self) -> usize {
        self.index.size()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn contains(&self, seq: u64) -> bool {
        self.index.contains(seq)
    }

    /// Whether the index has seen entry `seq` (its time and its chunk).
    pub fn seen(&self, seq: u64) -> bool {
        self.chunks
            .get(seq as usize)
            .is_some_and(|&chunk| chunk != UNSEEN)
    }

    /// Records entry `seq`: when it was archived and which chunk it holds
    /// (an entry's chunk never changes: seeing it again changes nothing).
    /// Entries arrive in order, but for two queries archived in one commit,
    /// which may reach the index in either order: the gap a later one
    /// leaves takes the last time until its own entry comes.
    pub fn set_entry(&mut self, seq: u64, queried_at_ms: i64, chunk: Chunk) {
        let at = seq as usize;
        if at >= self.times.len() {
            let fill = self.times.last().copied().unwrap_or(queried_at_ms);
            self.firsts += (at + 1 - self.times.len()) as u64;
            self.times.resize(at + 1, fill);
            self.chunks.resize(at + 1, UNSEEN);
            self.previous.resize(at + 1, FIRST);
        }
        self.times[at] = queried_at_ms;
        if self.chunks[at] == UNSEEN && chunk != UNSEEN {
            self.chunks[at] = chunk;
            self.link(seq, chunk);
        }
    }

    /// Puts `seq` (unseen until now, so counted among `firsts`) into the
    /// chain of `chunk`'s occurrences.
    fn link(&mut self, seq: u64, chunk: Chunk) {
        let Some(&newest) = self.newest.get(&chunk) else {
            // A new chunk: `seq` stays a first.
            self.newest.insert(chunk, seq);
            return;
        };
        if newest < seq {
            self.previous[seq as usize] = newest;
            self.newest.insert(chunk, seq);
        } else {
            // Out of order: before the oldest later occurrence.
            let mut later = newest;
            loop {
                let before = self.previous[later as usize];
                if before == FIRST || before < seq {
                    break;
                }
                later = before;
            }
            self.previous[seq as usize] = self.previous[later as usize];
            self.previous[later as usize] = seq;
        }
        // One of `seq` and the occurrence after it is a first no more.
        self.firsts -= 1;
    }

    pub fn add(&mut self, seq: u64, vector: &[f32]) -> Result<()> {
        if self.index.contains(seq) {
            return Ok(());
        }
        if self.index.size() + 1 > self.index.capacity() {
            let grown = (self.index.capacity() * 2).max(1024);
            self.index
                .reserve(grown)
                .map_err(|e| anyhow!("growing the index: {e}"))?;
        }
        self.index
            .add(seq, vector)
            .map_err(|e| anyhow!("adding to the index: {e}"))?;
        self.unsaved += 1;
        Ok(())
    }

    /// The sequence numbers archived within `[from_ms, to_ms]`.
    pub fn window(&self, from_ms: Option<i64>, to_ms: Option<i64>) -> Range<u64> {
        let start = from_ms.map_or(0, |from| self.times.partition_point(|&t| t < from));
        let end = to_ms.map_or(self.times.len(), |to| {
            self.times.partition_point(|&t| t <= to)
        });
        start as u64..end.max(start) as u64
    }

    /// How many distinct chunks `window` holds (indexed or not).
    pub fn distinct_within(&self, window: Range<u64>) -> u64 {
        if window.start == 0 && window.end >= self.previous.len() as u64 {
            return self.firsts;
        }
        let start = window.start;
        self.previous[window.start as usize..window.end as usize]
            .iter()
            .filter(|&&before| before == FIRST || before < start)
            .count() as u64
    }

    /// The newest occurrence before `end` of the chunk of `seq` (itself at
    /// the oldest: `seq < end`).
    fn newest_before(&self, seq: u64, end: u64) -> u64 {
        let Some(&newest) = self.newest.get(&self.chunks[seq as usize]) else {
            return seq;
        };
        // The chain holds `seq`, which is before `end`: the walk stops
        // there at the latest.
        let mut at = newest;
        while at >= end {
            match self.previous[at as usize] {
                FIRST => return seq,
                before => at = before,
            }
        }
        at
    }

    /// The `count` distinct chunks of `window` most similar to `query`,
    /// best first (ties go to the newest): each at its newest occurrence in
    /// the window (indexed or not), with the best similarity of its
    /// occurrences in the index.
    pub fn search(&self, query: &[f32], window: Range<u64>, count: usize) -> Result<Vec<Hit>> {
        let width = (window.end - window.start) as usize;
        if width == 0 || count == 0 || self.index.size() == 0 {
            return Ok(Vec::new());
        }
        let mut hits = if width <= EXACT_SEARCH_LIMIT {
            one_per_chunk(self.exact(query, window.clone())?)
        } else {
            let whole = width == self.times.len();
            let (lo, hi) = (window.start, window.end);
            let keep = move |seq: u64| whole || (lo..hi).contains(&seq);
            let mut asked = count;
            loop {
                let found = self.graph(query, asked, keep)?;
                let exhausted = found.len() < asked || asked >= width;
                let hits = one_per_chunk(found);
                if hits.len() >= count || exhausted {
                    break hits;
                }
                // Occurrences of the same chunks took places: ask again for
                // more.
                asked = asked.saturating_mul(2).min(width);
            }
        };
        for hit in &mut hits {
            hit.seq = self.newest_before(hit.seq, window.end);
        }
        best_first(&mut hits);
        hits.truncate(count);
        Ok(hits)
    }

    fn graph(&self, query: &[f32], count: usize, keep: impl Fn(u64) -> bool) -> Result<Vec<Hit>> {
        let matches = self
            .index
            .filtered_search(query, count, keep)
            .map_err(|e| anyhow!("searching the index: {e}"))?;
        Ok(matches
            .keys
            .iter()
            .zip(&matches.distances)
            .map(|(&seq, &distance)| Hit {
                seq,
                chunk: self.chunk_at(seq),
                similarity: similarity(distance),
            })
            .collect())
    }

    fn exact(&self, query: &[f32], window: Range<u64>) -> Result<Vec<Hit>> {
        let mut buffer = vec![0f32; self.index.dimensions()];
        let mut hits = Vec::new();
        for seq in window {
            if !self.index.contains(seq) {
                continue;
            }
            self.index
                .get(seq, &mut buffer)
                .map_err(|e| anyhow!("reading the index: {e}"))?;
            hits.push(Hit {
                seq,
                chunk: self.chunk_at(seq),
                similarity: cosine(query, &buffer).clamp(0.0, 1.0),
            });
        }
        // Grouped, ordered and cut by the caller, like the graph's hits.
        Ok(hits)
    }

    fn chunk_at(&self, seq: u64) -> Chunk {
        self.chunks.get(seq as usize).copied().unwrap_or(UNSEEN)
    }

    /// Bytes of memory the graph, the vectors and the per-entry tables use.
    pub fn memory_bytes(&self) -> usize {
        let per_entry = size_of::<i64>() + size_of::<Chunk>() + size_of::<u64>();
        let per_chunk = size_of::<(Chunk, u64)>() + 1;
        self.index.memory_usage()
            + self.times.len() * per_entry
            + self.newest.capacity() * per_chunk
    }

    /// `[u32 header length][header JSON][usearch bytes]`.
    pub fn serialize(&self) -> Result<Vec<u8>> {
        let header = serde_json::to_vec(&Header {
            embedder: Cow::Borrowed(&self.embedder),
            dimensions: self.index.dimensions(),
            times: Cow::Borrowed(&self.times),
            chunks: Some(Cow::Borrowed(&self.chunks)),
        })?;
        let graph_len = self.index.serialized_length();
        let mut out = Vec::with_capacity(4 + header.len() + graph_len);
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&header);
        let start = out.len();
        out.resize(start + graph_len, 0);
        self.index
            .save_to_buffer(&mut out[start..])
            .map_err(|e| anyhow!("serializing the index: {e}"))?;
        Ok(out)
    }

    /// The stored index; `None` for one stored before chunks were kept
    /// (to be rebuilt from the entries).
    pub fn deserialize(bytes: &[u8]) -> Result<Option<UserIndex>> {
        ensure!(bytes.len() >= 4, "the stored index is truncated");
        let header_len = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")) as usize;
        ensure!(
            bytes.len() >= 4 + header_len,
            "the stored index is truncated"
        );
        let header: Header<'_> = serde_json::from_slice(&bytes[4..4 + header_len])
            .context("the stored index's header")?;
        let Some(chunks) = header.chunks else {
            return Ok(None);
        };
        ensure!(
            chunks.len() == header.times.len(),
            "the stored index has {} chunks for {} times",
            chunks.len(),
            header.times.len()
        );
        let mut index = UserIndex::new(&header.embedder, header.dimensions)?;
        index
            .index
            .load_from_buffer(&bytes[4 + header_len..])
            .map_err(|e| anyhow!("loading the stored index: {e}"))?;
        index.times = header.times.into_owned();
        index.chunks = chunks.into_owned();
        index.previous = vec![FIRST; index.chunks.len()];
        index.firsts = index.chunks.len() as u64;
        for seq in 0..index.chunks.len() {
            let chunk = index.chunks[seq];
            if chunk != UNSEEN {
                index.link(seq as u64, chunk);
            }
        }
        Ok(Some(index))
    }
}

/// usearch's cosine distance is `1 - cos`.
fn similarity(distance: f32) -> f32 {
    (1.0 - distance).clamp(0.0, 1.0)
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(values: &[f32]) -> Vec<f32> {
        let norm = values.iter().map(|x| x * x).sum::<f32>().sqrt();
        values.iter().map(|x| x / norm).collect()
    }

    fn seqs(hits: &[Hit]) -> Vec<u64> {
        hits.iter().map(|h| h.seq).collect()
    }

    #[test]
    fn finds_the_nearest_within_a_window_and_survives_serialization() {
        let mut index = UserIndex::new("test", 3).unwrap();
        let vectors = [
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.9, 0.1, 0.0],
            [0.0, 0.0, 1.0],
        ];
        for (seq, v) in vectors.iter().enumerate() {
            let chunk = chunk_of("github", &format!("passage {seq}"));
            index.set_entry(seq as u64, 1000 * seq as i64, chunk);
            index.add(seq as u64, &unit(v)).unwrap();
        }
        let all = index.window(None, None);
        let hits = index.search(&unit(&[1.0, 0.0, 0.0]), all, 2).unwrap();
        assert_eq!(seqs(&hits), [0, 2]);
        assert!((hits[0].similarity - 1.0).abs() < 1e-3);
        // Inclusive bounds on time: 1000..=2000 is seqs 1 and 2.
        let window = index.window(Some(1000), Some(2000));
        assert_eq!(window, 1..3);
        let hits = index.search(&unit(&[1.0, 0.0, 0.0]), window, 5).unwrap();
        assert_eq!(seqs(&hits), [2, 1]);
        assert_eq!(index.window(Some(5000), None), 4..4);

        let back = UserIndex::deserialize(&index.serialize().unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(back.len(), 4);
        assert_eq!(back.embedder(), "test");
        assert_eq!(back.window(Some(1000), Some(2000)), 1..3);
        let hits = back
            .search(&unit(&[0.0, 0.0, 1.0]), back.window(None, None), 1)
            .unwrap();
        assert_eq!(hits[0].seq, 3);
    }

    #[test]
    fn opposite_vectors_score_zero_not_negative() {
        let mut index = UserIndex::new("test", 2).unwrap();
        index.set_entry(0, 0, chunk_of("slack", "north"));
        index.add(0, &[1.0, 0.0]).unwrap();
        let hits = index
            .search(&[-1.0, 0.0], index.window(None, None), 1)
            .unwrap();
        assert_eq!(hits[0].similarity, 0.0);
    }

    #[test]
    fn a_chunk_is_its_connector_and_its_content() {
        assert_eq!(chunk_of("slack", "hello"), chunk_of("slack", "hello"));
        assert_ne!(chunk_of("slack", "hello"), chunk_of("github", "hello"));
        assert_ne!(chunk_of("slack", "hello"), chunk_of("slack", "hello!"));
        // The connector's length is part of it: no shifting text across.
        assert_ne!(chunk_of("ab", "c"), chunk_of("a", "bc"));
    }

    /// Seqs 0..6 at times 0, 1000, ..: chunk "a" at 0, 2 and 4 (the
    /// nearest), "b" at 1 and 5, "c" at 3; "a" at 4 is not indexed (queued).
    fn with_repeats(order: &[u64]) -> UserIndex {
        let mut index = UserIndex::new("test", 2).unwrap();
        let texts = ["a", "b", "a", "c", "a", "b"];
        let vectors = [
            [1.0, 0.0],
            [0.6, 0.8],
            [1.0, 0.0],
            [0.0, 1.0],
            [1.0, 0.0],
            [0.6, 0.8],
        ];
        for &seq in order {
            let at = seq as usize;
            index.set_entry(seq, 1000 * seq as i64, chunk_of("github", texts[at]));
            if seq != 4 {
                index.add(seq, &vectors[at]).unwrap();
            }
        }
        index
    }

    #[test]
    fn each_chunk_is_found_once_at_its_newest_occurrence_in_the_window() {
        for order in [[0, 1, 2, 3, 4, 5], [3, 4, 5, 0, 1, 2], [5, 2, 0, 4, 1, 3]] {
            let index = with_repeats(&order);
            let all = index.window(None, None);
            assert_eq!(index.distinct_within(all.clone()), 3, "{order:?}");
            let hits = index.search(&[1.0, 0.0], all, 5).unwrap();
            // "a" at 4 (queued, but its newest), "b" at 5, "c" at 3.
            assert_eq!(seqs(&hits), [4, 5, 3], "{order:?}");
            assert!((hits[0].similarity - 1.0).abs() < 1e-3);
            // Only the best chunk: one hit, not three of "a".
            assert_eq!(seqs(&index.search(&[1.0, 0.0], 0..6, 1).unwrap()), [4]);

            // Up to 3000 ms: "a" at 2, "b" at 1, "c" at 3.
            let window = index.window(None, Some(3000));
            assert_eq!(window, 0..4);
            assert_eq!(index.distinct_within(window.clone()), 3);
            let hits = index.search(&[1.0, 0.0], window, 5).unwrap();
            assert_eq!(seqs(&hits), [2, 1, 3], "{order:?}");
            // From 2000 to 4000 ms: "a" (2, 4) and "c".
            let window = index.window(Some(2000), Some(4000));
            assert_eq!(index.distinct_within(window.clone()), 2);
            assert_eq!(seqs(&index.search(&[1.0, 0.0], window, 5).unwrap()), [4, 3]);
            assert_eq!(index.distinct_within(1..2), 1);
            assert_eq!(index.distinct_within(4..6), 2);

            let back = UserIndex::deserialize(&index.serialize().unwrap())
                .unwrap()
                .unwrap();
            assert_eq!(back.distinct_within(back.window(None, None)), 3);
            assert_eq!(back.distinct_within(2..5), 2);
            assert_eq!(seqs(&back.search(&[1.0, 0.0], 0..4, 5).unwrap()), [2, 1, 3]);
        }
    }

    #[test]
    fn a_gap_counts_as_a_chunk_until_its_entry_comes() {
        let mut index = UserIndex::new("test", 2).unwrap();
        index.set_entry(2, 2000, chunk_of("github", "a"));
        // 0 and 1 are not seen yet: each counts as one.
        assert_eq!(index.distinct_within(0..3), 3);
        assert!(!index.seen(0) && index.seen(2));
        // A gap is stored as one, and filled after a load.
        let mut back = UserIndex::deserialize(&index.serialize().unwrap())
            .unwrap()
            .unwrap();
        back.set_entry(0, 0, chunk_of("github", "a"));
        back.set_entry(1, 1000, chunk_of("github", "b"));
        assert_eq!(back.distinct_within(0..3), 2);
        assert_eq!(back.distinct_within(0..2), 2);
        assert_eq!(back.distinct_within(1..3), 2);
        // Seeing an entry again changes nothing.
        back.set_entry(1, 1000, chunk_of("github", "b"));
        assert_eq!(back.distinct_within(0..3), 2);
    }

    #[test]
    fn the_graph_is_asked_again_when_repeats_fill_its_answer() {
        let mut index = UserIndex::new("test", 8).unwrap();
        let size = EXACT_SEARCH_LIMIT as u64 + 1000;
        let mut state = 7u64;
        let mut random = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            (state >> 33) as f32 / (1u64 << 31) as f32 - 0.5
        };
        let nearest = unit(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        for seq in 0..size {
            // The nearest chunk, asked about 200 times.
            let (text, vector) = match seq % 25 {
                0 => ("nearest".to_string(), nearest.clone()),
                _ => {
                    let v: Vec<f32> = (0..8).map(|_| random()).collect();
                    (format!("other {seq}"), unit(&v))
                }
            };
            index.set_entry(seq, seq as i64, chunk_of("jira", &text));
            index.add(seq, &vector).unwrap();
        }
        let all = index.window(None, None);
        let hits = index.search(&nearest, all.clone(), 5).unwrap();
        assert_eq!(hits.len(), 5);
        let mut chunks: Vec<Chunk> = hits.iter().map(|h| h.chunk).collect();
        chunks.sort();
        chunks.dedup();
        assert_eq!(chunks.len(), 5, "distinct chunks: {hits:?}");
        assert_eq!(hits[0].seq, (size - 1) / 25 * 25, "the newest repeat");
        let repeats = size.div_ceil(25);
        assert_eq!(index.distinct_within(all), size - repeats + 1);
        // A window of the graph's too (wider than the exact scan).
        let window = 500..size;
        let hits = index.search(&nearest, window.clone(), 5).unwrap();
        assert_eq!(hits.len(), 5);
        assert_eq!(hits[0].chunk, chunk_of("jira", "nearest"));
        let others_in_window = (500..size).filter(|s| s % 25 != 0).count() as u64;
        assert_eq!(index.distinct_within(window), others_in_window + 1);
    }

    #[test]
    fn an_index_stored_before_chunks_were_kept_is_rebuilt() {
        let index = UserIndex::new("test", 2).unwrap();
        let bytes = index.serialize().unwrap();
        let header_len = u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize;
        let mut header: serde_json::Value =
            serde_json::from_slice(&bytes[4..4 + header_len]).unwrap();
        header.as_object_mut().unwrap().remove("chunks");
        let header = serde_json::to_vec(&header).unwrap();
        let mut old = (header.len() as u32).to_le_bytes().to_vec();
        old.extend_from_slice(&header);
        old.extend_from_slice(&bytes[4 + header_len..]);
        assert!(UserIndex::deserialize(&old).unwrap().is_none());
    }
}
