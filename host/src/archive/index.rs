//! One user's vector index: usearch's HNSW graph over the entries' vectors
//! (cosine, stored as f16: half the memory of f32 for a loss in similarity
//! far below what ranking can tell apart), plus each entry's `queried_at`,
//! so that a date range becomes a range of sequence numbers.
//!
//! The index is derived data: it is serialized, sealed with the user's data
//! key in segments, and rebuilt from the entries when missing or made by
//! another embedder.

use anyhow::{Context, Result, anyhow, ensure};
use serde::{Deserialize, Serialize};
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

/// Entries in a date window up to this many are compared exhaustively:
/// exact, and faster than a filtered graph walk that rejects most nodes.
const EXACT_SEARCH_LIMIT: usize = 4096;

pub struct UserIndex {
    index: Index,
    embedder: String,
    /// `queried_at` (ms) by sequence number; non-decreasing.
    times: Vec<i64>,
    /// Vectors added since the index was last stored.
    pub unsaved: usize,
}

/// Stored before the graph in the serialized form.
#[derive(Serialize, Deserialize)]
struct Header {
    embedder: String,
    dimensions: usize,
    times: Vec<i64>,
}

/// A match: an entry's sequence number and its cosine similarity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub seq: u64,
    pub similarity: f32,
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

    /// The sequence numbers with a known time (every entry seen so far).
    pub fn known_times(&self) -> u64 {
        self.times.len() as u64
    }

    /// Records when entry `seq` was archived (entries arrive in order).
    pub fn set_time(&mut self, seq: u64, queried_at_ms: i64) {
        let seq = seq as usize;
        if seq >= self.times.len() {
            let fill = self.times.last().copied().unwrap_or(queried_at_ms);
            self.times.resize(seq + 1, fill);
        }
        self.times[seq] = queried_at_ms;
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
    pub fn window(&self, from_ms: Option<i64>, to_ms: Option<i64>) -> std::ops::Range<u64> {
        let start = from_ms.map_or(0, |from| self.times.partition_point(|&t| t < from));
        let end = to_ms.map_or(self.times.len(), |to| {
            self.times.partition_point(|&t| t <= to)
        });
        start as u64..end.max(start) as u64
    }

    /// The `count` entries of `window` most similar to `query`, best first;
    /// ties go to the newest.
    pub fn search(
        &self,
        query: &[f32],
        window: std::ops::Range<u64>,
        count: usize,
    ) -> Result<Vec<Hit>> {
        let width = (window.end - window.start) as usize;
        if width == 0 || count == 0 || self.index.size() == 0 {
            return Ok(Vec::new());
        }
        let mut hits = if width <= EXACT_SEARCH_LIMIT {
            self.exact(query, window)?
        } else if width as u64 == self.times.len() as u64 {
            self.graph(query, count, |_| true)?
        } else {
            let (lo, hi) = (window.start, window.end);
            self.graph(query, count, move |seq| (lo..hi).contains(&seq))?
        };
        hits.sort_by(|a, b| {
            b.similarity
                .total_cmp(&a.similarity)
                .then(b.seq.cmp(&a.seq))
        });
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
                similarity: similarity(distance),
            })
            .collect())
    }

    fn exact(&self, query: &[f32], window: std::ops::Range<u64>) -> Result<Vec<Hit>> {
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
                similarity: cosine(query, &buffer).clamp(0.0, 1.0),
            });
        }
        // Ordered and cut by the caller, like the graph's hits.
        Ok(hits)
    }

    /// Bytes of memory the graph and vectors use.
    pub fn memory_bytes(&self) -> usize {
        self.index.memory_usage() + self.times.len() * 8
    }

    /// `[u32 header length][header JSON][usearch bytes]`.
    pub fn serialize(&self) -> Result<Vec<u8>> {
        let header = serde_json::to_vec(&Header {
            embedder: self.embedder.clone(),
            dimensions: self.index.dimensions(),
            times: self.times.clone(),
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

    pub fn deserialize(bytes: &[u8]) -> Result<UserIndex> {
        ensure!(bytes.len() >= 4, "the stored index is truncated");
        let header_len = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")) as usize;
        ensure!(
            bytes.len() >= 4 + header_len,
            "the stored index is truncated"
        );
        let header: Header = serde_json::from_slice(&bytes[4..4 + header_len])
            .context("the stored index's header")?;
        let index = UserIndex::new(&header.embedder, header.dimensions)?;
        index
            .index
            .load_from_buffer(&bytes[4 + header_len..])
            .map_err(|e| anyhow!("loading the stored index: {e}"))?;
        Ok(UserIndex {
            times: header.times,
            ..index
        })
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
            index.set_time(seq as u64, 1000 * seq as i64);
            index.add(seq as u64, &unit(v)).unwrap();
        }
        let all = index.window(None, None);
        let hits = index.search(&unit(&[1.0, 0.0, 0.0]), all, 2).unwrap();
        assert_eq!(hits.iter().map(|h| h.seq).collect::<Vec<_>>(), [0, 2]);
        assert!((hits[0].similarity - 1.0).abs() < 1e-3);
        // Inclusive bounds on time: 1000..=2000 is seqs 1 and 2.
        let window = index.window(Some(1000), Some(2000));
        assert_eq!(window, 1..3);
        let hits = index.search(&unit(&[1.0, 0.0, 0.0]), window, 5).unwrap();
        assert_eq!(hits.iter().map(|h| h.seq).collect::<Vec<_>>(), [2, 1]);
        assert_eq!(index.window(Some(5000), None), 4..4);

        let back = UserIndex::deserialize(&index.serialize().unwrap()).unwrap();
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
        index.set_time(0, 0);
        index.add(0, &[1.0, 0.0]).unwrap();
        let hits = index
            .search(&[-1.0, 0.0], index.window(None, None), 1)
            .unwrap();
        assert_eq!(hits[0].similarity, 0.0);
    }
}
