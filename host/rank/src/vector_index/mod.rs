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
mod tests;
