//! Deep search: the user's archive (every passage earlier questions
//! found) searched by meaning, between optional dates. No connector is
//! called. `/v1/deep_search` and MCP's `deep_search` tool answer with
//! [`DeepSearchAnswer`].

use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::query::validate_question;
use crate::services::Services;
use quarry_guard::bodies::DeepSearchBody;
use quarry_store::random_hex;

const DEFAULT_MAX_RESULTS: i64 = 20;

/// `POST /v1/deep_search`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DeepSearchAnswer {
    pub query_id: String,
    pub query: String,
    pub archive_results: Vec<ArchiveResult>,
    pub total_matches: u64,
    pub duration_ms: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ArchiveResult {
    pub original_query_id: String,
    pub original_query: String,
    pub matched_chunk: MatchedChunk,
    pub similarity_score: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MatchedChunk {
    pub content: String,
    pub source_connector: String,
    pub queried_at: String,
}

/// Searches `user_id`'s archive as `body` asks.
pub async fn search(
    services: &Services,
    user_id: &str,
    body: DeepSearchBody,
) -> Result<DeepSearchAnswer, ApiError> {
    let (archive, metrics) = (&services.archive, &services.metrics);
    let started = Instant::now();
    let term = validate_question(&body.query)?;
    let max_results = match body.max_results.unwrap_or(DEFAULT_MAX_RESULTS) {
        n @ 1..=50 => n as usize,
        n => {
            return Err(ApiError::bad_request(format!(
                "max_results must be between 1 and 50, not {n}"
            )));
        }
    };
    let from = parse_bound("date_from", body.date_from.as_deref(), Bound::Start)?;
    let to = parse_bound("date_to", body.date_to.as_deref(), Bound::End)?;
    if let (Some(from), Some(to)) = (from, to)
        && from > to
    {
        return Err(ApiError::bad_request(
            "date_from is after date_to; the range would be empty",
        ));
    }
    let outcome = archive.search(user_id, term, from, to, max_results).await?;
    metrics.observe_stage("archive", started.elapsed());
    let archive_results = outcome
        .found
        .iter()
        .map(|found| ArchiveResult {
            original_query_id: found.entry.query_id.clone(),
            original_query: found.entry.query.clone(),
            matched_chunk: MatchedChunk {
                content: found.entry.content.clone(),
                source_connector: found.entry.connector.clone(),
                queried_at: format_ms(found.entry.queried_at_ms),
            },
            similarity_score: round4(found.similarity),
        })
        .collect();
    Ok(DeepSearchAnswer {
        query_id: format!("ds_{}", random_hex(12)),
        query: term.to_string(),
        archive_results,
        total_matches: outcome.total_matches as u64,
        duration_ms: started.elapsed().as_millis() as u64,
    })
}

#[derive(Clone, Copy)]
enum Bound {
    Start,
    End,
}

/// An ISO 8601 instant (`2026-11-01T09:30:00Z`, with any offset), a local
/// date-time taken as UTC, or a bare date: the start of that day for
/// `date_from`, its last millisecond for `date_to` (bounds are inclusive).
/// Returns Unix milliseconds.
fn parse_bound(field: &str, text: Option<&str>, bound: Bound) -> Result<Option<i64>, ApiError> {
    let Some(text) = text else {
        return Ok(None);
    };
    let text = text.trim();
    let parsed = if let Ok(instant) = text.parse::<jiff::Timestamp>() {
        Some(instant.as_millisecond())
    } else if let Ok(local) = text.parse::<jiff::civil::DateTime>()
        && text.contains('T')
    {
        local
            .to_zoned(jiff::tz::TimeZone::UTC)
            .ok()
            .map(|z| z.timestamp().as_millisecond())
    } else if let Ok(date) = text.parse::<jiff::civil::Date>() {
        let start = date
            .to_zoned(jiff::tz::TimeZone::UTC)
            .ok()
            .map(|z| z.timestamp().as_millisecond());
        match bound {
            Bound::Start => start,
            Bound::End => start.map(|ms| ms + 86_400_000 - 1),
        }
    } else {
        None
    };
    parsed.map(Some).ok_or_else(|| {
        ApiError::bad_request(format!(
            "{field} {text:?} is not an ISO 8601 date-time; use a form such as 2026-11-01T00:00:00Z"
        ))
    })
}

fn format_ms(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms).map_or_else(|_| String::new(), |t| format!("{t:.3}"))
}

fn round4(x: f32) -> f64 {
    (f64::from(x) * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_accept_instants_local_times_and_dates() {
        let at = |t, b| parse_bound("date_from", Some(t), b).unwrap().unwrap();
        assert_eq!(at("2026-11-01T00:00:00Z", Bound::Start), 1_793_491_200_000);
        assert_eq!(
            at("2026-11-01T01:00:00+01:00", Bound::Start),
            1_793_491_200_000
        );
        assert_eq!(at("2026-11-01T00:00:00", Bound::Start), 1_793_491_200_000);
        assert_eq!(at("2026-11-01", Bound::Start), 1_793_491_200_000);
        assert_eq!(
            at("2026-11-01", Bound::End),
            1_793_491_200_000 + 86_400_000 - 1
        );
        for bad in ["yesterday", "2026-13-01", "2026-11-01T25:00:00Z", ""] {
            assert!(
                parse_bound("date_to", Some(bad), Bound::End).is_err(),
                "{bad}"
            );
        }
        assert_eq!(format_ms(1_793_491_200_123), "2026-11-01T00:00:00.123Z");
    }
}
