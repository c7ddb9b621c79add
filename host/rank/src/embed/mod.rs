//! Sentence embeddings: the semantic half of the ranking, and the vectors
//! the archive indexes.
//!
//! The embedded default is all-MiniLM-L6-v2 (384 dimensions) on the CPU,
//! with int8 weights run by ONNX Runtime ([`int8`]) or, where that runtime
//! is not wanted or not available, with f32 weights run by candle
//! ([`minilm`]). Both pool as sentence-transformers does: the mean of the
//! last hidden states over the real tokens, scaled to unit length.
//! `tools/fetch-model` puts both in `models/all-minilm-l6-v2` (pinned
//! versions, verified hashes), and ONNX Runtime's library beside it.
//!
//! - this file: the [`Embedder`] trait, the per-user [`Cached`] vectors,
//!   [`HashedWords`] (deep search without a model), [`LocalModel`] (which
//!   model the server loads);
//! - [`minilm`]: the f32 model, and the tokenizing and pooling both share;
//! - [`int8`]: the int8 model.

mod int8;
mod minilm;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Result;
use serde::Deserialize;
use sha2::{Digest, Sha256};

pub use int8::MiniLmInt8;
pub use minilm::{MAX_TOKENS, MiniLm, token_counts};

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

impl<E: Embedder + ?Sized> Embedder for Box<E> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn dimensions(&self) -> usize {
        (**self).dimensions()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        (**self).embed(texts)
    }
    fn embed_for(&self, owner: &str, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        (**self).embed_for(owner, texts)
    }
    fn cached(&self, owner: &str, text: &str) -> Option<Vec<f32>> {
        (**self).cached(owner, text)
    }
    fn forget(&self, owner: &str) {
        (**self).forget(owner)
    }
    fn cached_vectors(&self) -> usize {
        (**self).cached_vectors()
    }
}

/// The folder `tools/fetch-model` fills.
pub const DEFAULT_MODEL_DIR: &str = "models/all-minilm-l6-v2";
/// ONNX Runtime's shared library, where `tools/fetch-model` puts it.
pub const DEFAULT_ONNXRUNTIME: &str = "models/onnxruntime/libonnxruntime.so";

/// The weights the local model runs with. Both are all-MiniLM-L6-v2: the
/// same tokenizer, the same 384 dimensions, nDCG@10 on ir-dbpedia 0.5106
/// (int8) against 0.5079 (f32) (`quarry-bench embedder`); the archive
/// still keeps their vectors apart (each names its own index, rebuilt on
/// a change).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// int8 weights on ONNX Runtime: integer dot products (VNNI), several
    /// times candle's f32 (`quarry-bench embedder`).
    #[default]
    Int8,
    /// f32 weights on candle: no native library.
    F32,
}

impl std::str::FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> Result<Precision, String> {
        match s {
            "int8" => Ok(Precision::Int8),
            "f32" => Ok(Precision::F32),
            other => Err(format!("unknown precision {other:?} (known: int8, f32)")),
        }
    }
}

/// The model this machine runs, as `[ranking]` configures it.
#[derive(Clone, Debug)]
pub struct LocalModel {
    pub dir: PathBuf,
    pub precision: Precision,
    /// ONNX Runtime's shared library (int8 only).
    pub onnxruntime: PathBuf,
    pub max_tokens: usize,
    /// Callers that may embed at once (the scheduler's workers): the int8
    /// model keeps one ONNX Runtime session for each.
    pub workers: usize,
}

impl LocalModel {
    /// The default model, for offline tools: int8 from the default folders.
    pub fn at(dir: &Path) -> LocalModel {
        LocalModel {
            dir: dir.to_path_buf(),
            precision: Precision::default(),
            onnxruntime: PathBuf::from(DEFAULT_ONNXRUNTIME),
            max_tokens: MAX_TOKENS,
            workers: 1,
        }
    }

    pub fn load(&self) -> Result<Box<dyn Embedder>> {
        Ok(match self.precision {
            Precision::Int8 => Box::new(MiniLmInt8::load(self)?),
            Precision::F32 => Box::new(MiniLm::load_with(&self.dir, self.max_tokens)?),
        })
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
        for token in crate::tokenize(text) {
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
            .join("../..")
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

    /// The int8 model, as `tools/fetch-model` leaves it.
    fn int8_model() -> Box<dyn Embedder> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        LocalModel {
            onnxruntime: root.join(DEFAULT_ONNXRUNTIME),
            workers: 2,
            ..LocalModel::at(&root.join(DEFAULT_MODEL_DIR))
        }
        .load()
        .expect("run tools/fetch-model first")
    }

    #[test]
    fn the_int8_model_points_where_the_f32_model_does() {
        let texts = [
            "How do I reset my password?",
            "Checkout times out for EU customers after the payment provider change",
            "Quarterly revenue grew by ten percent, driven by the enterprise plan",
            "a",
        ];
        let f32_vectors = model().embed(&texts).unwrap();
        let int8 = int8_model();
        assert_ne!(
            int8.name(),
            model().name(),
            "the archive keeps their vectors apart"
        );
        let int8_vectors = int8.embed(&texts).unwrap();
        for (a, b) in f32_vectors.iter().zip(&int8_vectors) {
            assert_eq!(b.len(), 384);
            let similarity = cosine(a, b);
            assert!(
                similarity > 0.97,
                "int8 strays from f32: cosine {similarity}"
            );
        }
    }

    #[test]
    fn an_int8_vector_depends_on_its_text_alone() {
        let int8 = int8_model();
        let alone = int8.embed(&["checkout times out"]).unwrap();
        let with_others = int8
            .embed(&[
                "Quarterly revenue grew by ten percent, driven by the enterprise plan",
                "checkout times out",
            ])
            .unwrap();
        assert_eq!(alone[0], with_others[1]);
    }

    #[test]
    fn a_missing_runtime_says_what_to_run() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let model = LocalModel {
            onnxruntime: PathBuf::from("/nonexistent/libonnxruntime.so"),
            ..LocalModel::at(&root.join(DEFAULT_MODEL_DIR))
        };
        let error = model.load().err().unwrap().to_string();
        assert!(error.contains("tools/fetch-model"), "{error}");
        assert!(error.contains("precision = \"f32\""), "{error}");
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
