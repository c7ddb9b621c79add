//! Prometheus metrics, served at `/metrics` (outside `/v1`).

use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::connectors::ErrorKind;

type Labels = Vec<(&'static str, String)>;

pub struct Metrics {
    registry: Registry,
    requests: Family<Labels, Counter>,
    request_seconds: Family<Labels, Histogram>,
    connector_calls: Family<Labels, Counter>,
    connector_seconds: Family<Labels, Histogram>,
    stage_seconds: Family<Labels, Histogram>,
    ranked_chunks: Family<Labels, Counter>,
    memory: MemoryGauges,
}

/// What the process keeps in memory, set at each scrape.
#[derive(Default)]
struct MemoryGauges {
    loaded_indexes: Gauge,
    index_bytes: Gauge,
    cached_vectors: Gauge,
    heap_allocated: Gauge,
    heap_resident: Gauge,
}

impl MemoryGauges {
    fn register(&self, registry: &mut Registry) {
        registry.register(
            "archive_loaded_indexes",
            "Users whose deep-search index is in memory",
            self.loaded_indexes.clone(),
        );
        registry.register(
            "archive_index_bytes",
            "Memory used by the loaded deep-search indexes",
            self.index_bytes.clone(),
        );
        registry.register(
            "embedding_cache_vectors",
            "Vectors the embedding cache keeps (bounded by [ranking] cache_entries)",
            self.cached_vectors.clone(),
        );
        registry.register(
            "heap_allocated_bytes",
            "Bytes the process's allocator has handed out and not had back (a leak grows this)",
            self.heap_allocated.clone(),
        );
        registry.register(
            "heap_resident_bytes",
            "Bytes of memory the allocator holds from the system",
            self.heap_resident.clone(),
        );
    }
}

/// jemalloc's allocated and resident bytes (the `quarry` binary's
/// allocator), as of now; none when the binary uses the system's.
#[cfg(feature = "system-allocator")]
fn heap_figures() -> Option<(usize, usize)> {
    None
}

/// jemalloc's allocated and resident bytes (the `quarry` binary's
/// allocator), as of now; none when the binary uses the system's.
#[cfg(not(feature = "system-allocator"))]
fn heap_figures() -> Option<(usize, usize)> {
    use tikv_jemalloc_ctl::{epoch, stats};
    // The figures are a snapshot taken when the epoch advances.
    epoch::advance().ok()?;
    Some((
        stats::allocated::read().ok()?,
        stats::resident::read().ok()?,
    ))
}

fn seconds_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("quarry");
        let requests = Family::<Labels, Counter>::default();
        let request_seconds = Family::<Labels, Histogram>::new_with_constructor(
            seconds_histogram as fn() -> Histogram,
        );
        let connector_calls = Family::<Labels, Counter>::default();
        let connector_seconds = Family::<Labels, Histogram>::new_with_constructor(
            seconds_histogram as fn() -> Histogram,
        );
        let stage_seconds = Family::<Labels, Histogram>::new_with_constructor(
            seconds_histogram as fn() -> Histogram,
        );
        registry.register(
            "http_requests",
            "API requests by route and status",
            requests.clone(),
        );
        registry.register(
            "http_request_seconds",
            "API request latency by route",
            request_seconds.clone(),
        );
        registry.register(
            "connector_calls",
            "Connector calls by connector and outcome",
            connector_calls.clone(),
        );
        registry.register(
            "connector_call_seconds",
            "Connector call latency",
            connector_seconds.clone(),
        );
        registry.register(
            "query_stage_seconds",
            "Time spent per stage of /v1/query",
            stage_seconds.clone(),
        );
        let ranked_chunks = Family::<Labels, Counter>::default();
        registry.register(
            "ranked_chunks",
            "Chunks returned by /v1/query by how they were ranked: semantic (by the model) or \
             keyword (the model did not reach them within the answer budget: load degrades here)",
            ranked_chunks.clone(),
        );
        let memory = MemoryGauges::default();
        memory.register(&mut registry);
        Metrics {
            memory,
            ranked_chunks,
            registry,
            requests,
            request_seconds,
            connector_calls,
            connector_seconds,
            stage_seconds,
        }
    }
}

impl Metrics {
    pub fn observe_request(&self, route: &'static str, status: u16, elapsed: Duration) {
        self.requests
            .get_or_create(&vec![
                ("route", route.to_string()),
                ("status", status.to_string()),
            ])
            .inc();
        self.request_seconds
            .get_or_create(&vec![("route", route.to_string())])
            .observe(elapsed.as_secs_f64());
    }

    pub fn observe_connector(&self, connector: &str, error: Option<ErrorKind>, elapsed: Duration) {
        let outcome = match error {
            None => "ok".to_string(),
            Some(kind) => serde_json::to_value(kind)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
        };
        self.connector_calls
            .get_or_create(&vec![
                ("connector", connector.to_string()),
                ("outcome", outcome),
            ])
            .inc();
        self.connector_seconds
            .get_or_create(&vec![("connector", connector.to_string())])
            .observe(elapsed.as_secs_f64());
    }

    /// Time of one stage of a query: `auth_limits`, `connectors`, `ranking`, `archive`.
    pub fn observe_stage(&self, stage: &'static str, elapsed: Duration) {
        self.stage_seconds
            .get_or_create(&vec![("stage", stage.to_string())])
            .observe(elapsed.as_secs_f64());
    }

    /// How a query's returned chunks were ranked.
    pub fn observe_ranking(&self, semantic: u64, keyword: u64) {
        for (method, count) in [("semantic", semantic), ("keyword", keyword)] {
            self.ranked_chunks
                .get_or_create(&vec![("ranking", method.to_string())])
                .inc_by(count);
        }
    }

    pub fn set_memory_use(&self, used: crate::archive::MemoryUse) {
        let gauge = |g: &Gauge, v: usize| g.set(i64::try_from(v).unwrap_or(i64::MAX));
        gauge(&self.memory.loaded_indexes, used.loaded_indexes);
        gauge(&self.memory.index_bytes, used.index_bytes);
        gauge(&self.memory.cached_vectors, used.cached_vectors);
        if let Some((allocated, resident)) = heap_figures() {
            gauge(&self.memory.heap_allocated, allocated);
            gauge(&self.memory.heap_resident, resident);
        }
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut text = String::new();
        encode(&mut text, &self.registry).expect("writing to a String does not fail");
        text
    }
}
