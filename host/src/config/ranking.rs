//! Ranking: whether and how passages are embedded (the local model or an
//! operator's OpenAI-compatible endpoint), and the scheduler's sizes.

use std::path::PathBuf;

use serde::Deserialize;

use crate::rank::embed::LocalModel;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RankingConfig {
    /// Rank by meaning as well as by words (needs the embedding model).
    pub semantic: bool,
    /// Where `tools/fetch-model` put all-MiniLM-L6-v2.
    pub model_dir: PathBuf,
    /// The model's weights: `"int8"` (ONNX Runtime, the default) or
    /// `"f32"` (candle, no native library).
    pub precision: Precision,
    /// ONNX Runtime's shared library, for `precision = "int8"`.
    pub onnxruntime: PathBuf,
    /// Most passages embedded per query (each connector's best first).
    pub embed_budget: usize,
    /// Passage vectors kept in memory, by content hash.
    pub cache_entries: usize,
    /// From a query's start, the time by which it answers with the vectors
    /// it has (it waits at least 150 ms after its last connector).
    /// Passages the model did not reach are placed on the model's scale by
    /// their words and say `"ranking": "keyword"`.
    pub answer_budget_ms: u64,
    /// Texts are cut at this many tokens before embedding.
    pub max_tokens: usize,
    /// Threads that run the model, each one batch at a time on one core
    /// (default: one per core).
    pub embed_workers: usize,
    /// Passages per batch a worker embeds.
    pub embed_batch: usize,
    /// What embeds: `"local"` (the model above, on this machine's CPU) or
    /// `"endpoint"` (an OpenAI-compatible embeddings endpoint,
    /// `[ranking.endpoint]`, with the local model as its fallback).
    pub embedder: EmbedderKind,
    pub endpoint: Option<EndpointConfig>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbedderKind {
    #[default]
    Local,
    Endpoint,
}

pub use crate::rank::embed::Precision;

/// The remote embedder's section is the remote embedder's own type: the
/// configuration depends on the ranking, never the other way.
pub use crate::rank::remote::EndpointConfig;

impl Default for RankingConfig {
    fn default() -> Self {
        RankingConfig {
            semantic: true,
            model_dir: PathBuf::from(crate::rank::embed::DEFAULT_MODEL_DIR),
            precision: Precision::default(),
            onnxruntime: PathBuf::from(crate::rank::embed::DEFAULT_ONNXRUNTIME),
            embed_budget: 300,
            cache_entries: 50_000,
            answer_budget_ms: 2_500,
            max_tokens: crate::rank::embed::MAX_TOKENS,
            embed_workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            embed_batch: crate::rank::scheduler::DEFAULT_BATCH,
            embedder: EmbedderKind::Local,
            endpoint: None,
        }
    }
}

impl RankingConfig {
    /// The local model as configured.
    pub fn local_model(&self) -> LocalModel {
        LocalModel {
            dir: self.model_dir.clone(),
            precision: self.precision,
            onnxruntime: self.onnxruntime.clone(),
            max_tokens: self.max_tokens,
            workers: self.embed_workers,
        }
    }
}
