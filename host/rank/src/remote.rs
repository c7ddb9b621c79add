//! An operator's embeddings endpoint as the embedder: the OpenAI-compatible
//! `POST /v1/embeddings` that text-embeddings-inference, vLLM and Ollama
//! serve, for operators whose CPUs cannot embed fast enough.
//!
//! What leaves the machine: the text of every passage a query ranks, every
//! question, every deep-search term and every archived chunk the indexer
//! embeds, sent to the configured URL (with the configured API key). Use an
//! endpoint you run, or trust with that data.
//!
//! A request has a timeout and is retried on timeouts, connection errors,
//! 429 and 5xx; then the batch fails, and the embedding scheduler switches
//! the live query that needed it to the local model (see
//! [`super::scheduler`]). The vectors are normalised here, so that a dot
//! product is a cosine whatever the server does.

use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;
use serde_json::json;

use super::embed::Embedder;

pub struct RemoteEmbedder {
    client: reqwest::Client,
    /// The calls are async; the scheduler's workers are plain threads.
    runtime: tokio::runtime::Handle,
    url: String,
    model: String,
    api_key: Option<String>,
    dimensions: usize,
    retries: u32,
    /// `endpoint:<model>`: an archive index records it, and is rebuilt when
    /// the operator changes the model.
    name: String,
}

#[derive(Deserialize)]
struct EmbeddingsResponse {
    data: Vec<EmbeddingItem>,
}

#[derive(Deserialize)]
struct EmbeddingItem {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

/// An OpenAI-compatible `POST /v1/embeddings` (text-embeddings-inference,
/// vLLM, Ollama, ...). Every text that is ranked or archived is sent to it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointConfig {
    /// The full URL, such as `https://tei.internal/v1/embeddings`.
    pub url: String,
    /// The `model` sent with each request.
    pub model: String,
    /// The length of the model's vectors.
    pub dimensions: usize,
    /// The environment variable that holds the API key (sent as a bearer
    /// token), if the endpoint needs one.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Time allowed for one request.
    #[serde(default = "default_endpoint_timeout_ms")]
    pub timeout_ms: u64,
    /// Further attempts after a timeout, a connection error, 429 or 5xx.
    #[serde(default = "default_endpoint_retries")]
    pub retries: u32,
}

impl EndpointConfig {
    /// Time allowed for one request.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }
}

fn default_endpoint_timeout_ms() -> u64 {
    2_000
}

fn default_endpoint_retries() -> u32 {
    2
}

/// Why one attempt failed, and whether another may succeed.
enum Attempt {
    Retry(anyhow::Error),
    Fail(anyhow::Error),
}

impl RemoteEmbedder {
    /// Must be called within the tokio runtime that will run the calls.
    /// `client` is the host's outbound client for this endpoint, with
    /// [`EndpointConfig::timeout`] as its request timeout.
    pub fn new(config: &EndpointConfig, client: reqwest::Client) -> Result<RemoteEmbedder> {
        let url = reqwest::Url::parse(&config.url)
            .with_context(|| format!("ranking.endpoint.url {:?} is not a URL", config.url))?;
        if !matches!(url.scheme(), "https" | "http") {
            bail!("ranking.endpoint.url must be an https:// (or http://) URL");
        }
        if config.model.is_empty() || config.dimensions == 0 {
            bail!("ranking.endpoint needs a model and its dimensions");
        }
        let api_key = match &config.api_key_env {
            Some(variable) => Some(std::env::var(variable).with_context(|| {
                format!("ranking.endpoint.api_key_env names {variable}, which is not set")
            })?),
            None => None,
        };
        Ok(RemoteEmbedder {
            client,
            runtime: tokio::runtime::Handle::current(),
            url: url.to_string(),
            model: config.model.clone(),
            api_key,
            dimensions: config.dimensions,
            retries: config.retries,
            name: format!("endpoint:{}", config.model),
        })
    }

    async fn embed_async(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut attempt = 0;
        loop {
            match self.attempt(texts).await {
                Ok(vectors) => return Ok(vectors),
                Err(Attempt::Retry(error)) if attempt < self.retries => {
                    attempt += 1;
                    tracing::debug!(
                        error = format!("{error:#}"),
                        attempt,
                        "embeddings endpoint; retrying"
                    );
                    tokio::time::sleep(Duration::from_millis(50 << attempt.min(6))).await;
                }
                Err(Attempt::Retry(error) | Attempt::Fail(error)) => {
                    return Err(error.context(format!("the embeddings endpoint {}", self.url)));
                }
            }
        }
    }

    async fn attempt(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Attempt> {
        let mut request = self
            .client
            .post(&self.url)
            .json(&json!({"model": self.model, "input": texts}));
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|e| Attempt::Retry(e.into()))?;
        let status = response.status();
        if status.as_u16() == 429 || status.is_server_error() {
            return Err(Attempt::Retry(anyhow!("answered {status}")));
        }
        if !status.is_success() {
            return Err(Attempt::Fail(anyhow!("answered {status}")));
        }
        let body: EmbeddingsResponse = response
            .json()
            .await
            .map_err(|e| Attempt::Retry(anyhow!("an unreadable answer: {e}")))?;
        self.vectors(body, texts.len()).map_err(Attempt::Fail)
    }

    /// The answer's vectors in the order of the texts, as unit vectors.
    fn vectors(&self, body: EmbeddingsResponse, count: usize) -> Result<Vec<Vec<f32>>> {
        if body.data.len() != count {
            bail!("{} vectors for {count} texts", body.data.len());
        }
        let mut vectors: Vec<Option<Vec<f32>>> = vec![None; count];
        for (position, item) in body.data.into_iter().enumerate() {
            let index = item.index.unwrap_or(position);
            if index >= count || vectors[index].is_some() {
                bail!("the answer's index {index} is out of place");
            }
            if item.embedding.len() != self.dimensions {
                bail!(
                    "a vector of {} dimensions, not the configured {}",
                    item.embedding.len(),
                    self.dimensions
                );
            }
            vectors[index] = Some(unit(item.embedding));
        }
        Ok(vectors.into_iter().flatten().collect())
    }
}

fn unit(mut vector: Vec<f32>) -> Vec<f32> {
    super::embed::normalize(&mut vector);
    vector
}

impl Embedder for RemoteEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        self.runtime.block_on(self.embed_async(texts))
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::Json;
    use axum::extract::State;
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::IntoResponse;
    use serde_json::Value;

    use super::*;
    use crate::embed::HashedWords;
    use crate::{Priority, Scheduler};

    /// A fake embeddings server: answers in reverse order with explicit
    /// indexes, after failing the first `failures` requests with 503.
    #[derive(Clone)]
    struct Fake {
        failures: usize,
        requests: Arc<AtomicUsize>,
        stall: bool,
    }

    async fn embeddings(
        State(fake): State<Fake>,
        headers: HeaderMap,
        Json(body): Json<Value>,
    ) -> axum::response::Response {
        let n = fake.requests.fetch_add(1, Ordering::SeqCst);
        if fake.stall {
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
        if n < fake.failures {
            return StatusCode::SERVICE_UNAVAILABLE.into_response();
        }
        assert_eq!(headers["authorization"], "Bearer sk-test");
        assert_eq!(body["model"], "fake-model");
        let inputs = body["input"].as_array().unwrap();
        let data: Vec<Value> = inputs
            .iter()
            .enumerate()
            .rev()
            .map(|(i, text)| {
                let length = text.as_str().unwrap().len() as f32;
                json!({"object": "embedding", "index": i, "embedding": [length, length, 0.0]})
            })
            .collect();
        Json(json!({"object": "list", "data": data, "model": "fake-model"})).into_response()
    }

    async fn serve(fake: Fake) -> SocketAddr {
        let router = axum::Router::new()
            .route("/v1/embeddings", axum::routing::post(embeddings))
            .with_state(fake);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await });
        address
    }

    fn config(address: SocketAddr) -> EndpointConfig {
        // SAFETY: tests in this module all set the same value.
        unsafe { std::env::set_var("QUARRY_TEST_EMBEDDINGS_KEY", "sk-test") };
        EndpointConfig {
            url: format!("http://{address}/v1/embeddings"),
            model: "fake-model".into(),
            dimensions: 3,
            api_key_env: Some("QUARRY_TEST_EMBEDDINGS_KEY".into()),
            timeout_ms: 300,
            retries: 2,
        }
    }

    /// The embedder with a client like the host's: the request timeout.
    fn connect(config: &EndpointConfig) -> RemoteEmbedder {
        let client = reqwest::Client::builder()
            .timeout(config.timeout())
            .build()
            .unwrap();
        RemoteEmbedder::new(config, client).unwrap()
    }

    fn fake(failures: usize, stall: bool) -> Fake {
        Fake {
            failures,
            requests: Arc::default(),
            stall,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn vectors_come_back_in_order_as_unit_vectors_after_retries() {
        let fake = fake(2, false);
        let address = serve(fake.clone()).await;
        let embedder = connect(&config(address));
        let vectors = tokio::task::spawn_blocking(move || embedder.embed(&["a", "abc"]))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            fake.requests.load(Ordering::SeqCst),
            3,
            "two 503s, then success"
        );
        let half = 0.5f32.sqrt();
        for vector in &vectors {
            assert!((vector[0] - half).abs() < 1e-6 && (vector[1] - half).abs() < 1e-6);
        }
        assert_eq!(vectors.len(), 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_silent_endpoint_times_out_and_the_query_falls_back_to_the_local_model() {
        let fake = fake(0, true);
        let address = serve(fake.clone()).await;
        let remote: Arc<dyn Embedder> = Arc::new(connect(&config(address)));
        let local: Arc<dyn Embedder> = Arc::new(HashedWords::new(8));
        let scheduler = Scheduler::start(remote, Some(local.clone()), 1, 8);
        let mut job = scheduler.job("usr_test", Priority::Live, true);
        job.submit(0, "refund policy", 0);
        job.wait(None).await;
        assert_eq!(job.model_name(), local.name());
        assert_eq!(
            job.vector(0).unwrap(),
            local.embed(&["refund policy"]).unwrap()[0]
        );
        assert_eq!(
            fake.requests.load(Ordering::SeqCst),
            3,
            "tried, then retried twice"
        );

        // The archive's work must stay in the endpoint's space: it fails.
        let error = scheduler
            .embed_all("usr_test", &["x".to_string()], Priority::Background)
            .await
            .unwrap_err();
        assert!(
            format!("{error:#}").contains("embeddings endpoint"),
            "{error:#}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_wrong_answer_is_an_error_not_a_vector() {
        let fake = fake(0, false);
        let address = serve(fake).await;
        let mut wrong = config(address);
        wrong.dimensions = 4;
        let embedder = connect(&wrong);
        let error = tokio::task::spawn_blocking(move || embedder.embed(&["a"]))
            .await
            .unwrap()
            .unwrap_err();
        assert!(
            format!("{error:#}").contains("3 dimensions, not the configured 4"),
            "{error:#}"
        );
    }
}
