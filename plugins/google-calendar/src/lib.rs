//! Google Calendar: the events of the user's primary calendar, through
//! `events.list`'s `q` (free text matched against the summary, the
//! description, the location, and the attendees' and organizer's names and
//! addresses).
//!
//! Calendar documents no operator for `q` and finds the events that match
//! every word, so a question of many words is sent as a few narrower
//! queries at once (the SDK's `narrower`), merged by event id. Its order is
//! "unspecified, stable": the host ranks. A time range bounds the events'
//! times (`timeMin` the end, `timeMax` the start), which is what a user means
//! by "the meetings last week"; recurring events come as their instances
//! (`singleEvents`), each with its own time.
//!
//! A document's time is the event's start; its link is the event's
//! `htmlLink`.

use quarry_connector_sdk::google::check;
use quarry_connector_sdk::plan::{narrower_queries, search_all};
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::time::normalize;

const EVENTS: &str = "https://www.googleapis.com/calendar/v3/calendars/primary/events";
/// Queries one question may cost (sent together: one round trip).
const MAX_QUERIES: usize = 3;
/// Events asked for per query: a page of Calendar holds up to 2,500.
const MAX_EVENTS: u32 = 100;

struct GoogleCalendar;

impl Connector for GoogleCalendar {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let want = request.max_results.clamp(1, MAX_EVENTS);
        let searches = narrower_queries(&request, MAX_QUERIES)
            .iter()
            .map(|q| Request::get(events_url(q, want, &request)))
            .collect();
        let events = search_all(
            searches,
            |response| {
                Ok(check(response)?
                    .json::<Value>()?
                    .array_at("/items")
                    .to_vec())
            },
            |event| event.string_at("/id"),
            want as usize,
        )?;
        Ok(events.iter().filter_map(to_document).collect())
    }
}

fn events_url(q: &str, want: u32, request: &SearchRequest) -> String {
    let time = |t: &Option<String>| t.as_deref().and_then(normalize);
    Url::new(EVENTS)
        .param("q", q)
        .param("singleEvents", "true")
        .param("maxResults", want)
        .param_opt("timeMin", time(&request.since))
        .param_opt("timeMax", time(&request.until))
        .build()
}

/// An event's time: `dateTime`, or `date` for an all-day event.
fn when(event: &Value, which: &str) -> Option<String> {
    let at = event
        .str_at(&format!("/{which}/dateTime"))
        .or(event.str_at(&format!("/{which}/date")))?;
    normalize(at)
}

fn to_document(event: &Value) -> Option<Document> {
    let id = event.str_at("/id")?;
    if event.str_at("/status") == Some("cancelled") {
        return None;
    }
    let start = when(event, "start");
    let attendees: Vec<&str> = event
        .array_at("/attendees")
        .iter()
        .filter_map(|a| a.str_at("/displayName").or(a.str_at("/email")))
        .collect();
    let mut content = event.string_at("/description");
    for (label, value) in [
        ("When", start.clone().unwrap_or_default()),
        ("Where", event.string_at("/location")),
        ("With", attendees.join(", ")),
    ] {
        if !value.is_empty() {
            content.push_str(&format!("\n{label}: {value}"));
        }
    }
    let organizer = event
        .str_at("/organizer/displayName")
        .or(event.str_at("/organizer/email"));
    Some(
        Document::new(
            id,
            event.string_at("/summary"),
            content.trim().to_string(),
            event.string_at("/htmlLink"),
        )
        .author(organizer)
        .times(event.str_at("/created"), start.as_deref())
        .metadata(json!({
            "start": start,
            "end": when(event, "end"),
            "location": event.str_at("/location"),
            "attendees": attendees,
            "updated": event.str_at("/updated"),
        })),
    )
}

quarry_connector_sdk::export!(GoogleCalendar);

#[cfg(test)]
mod tests {
    use quarry_connector_sdk::testing::assert_document;

    use super::*;

    #[test]
    fn maps_an_event() {
        let event: Value = serde_json::from_str(r#"{"kind":"calendar#event","id":"k2v0n4","status":"confirmed","htmlLink":"https://www.google.com/calendar/event?eid=azJ2MG40","created":"2025-02-05T12:00:00.000Z","updated":"2025-02-05T12:17:00.000Z","summary":"Postmortem review","description":"Review of the 502s.","location":"Room Havel","organizer":{"email":"aisha.bello@acme-shop.example","displayName":"Aisha Bello"},"start":{"dateTime":"2025-02-05T17:00:00+01:00","timeZone":"Europe/Berlin"},"end":{"dateTime":"2025-02-05T18:00:00+01:00"},"attendees":[{"email":"aisha.bello@acme-shop.example","displayName":"Aisha Bello","organizer":true},{"email":"tomas.herrera@acme-shop.example"}]}"#).unwrap();
        let doc = to_document(&event).unwrap();
        let expected = Document::new(
            "k2v0n4",
            "Postmortem review",
            "Review of the 502s.\nWhen: 2025-02-05T16:00:00Z\nWhere: Room Havel\nWith: Aisha Bello, tomas.herrera@acme-shop.example",
            "https://www.google.com/calendar/event?eid=azJ2MG40",
        )
        .author(Some("Aisha Bello"))
        .times(Some("2025-02-05T12:00:00Z"), Some("2025-02-05T16:00:00Z"));
        assert_document(&doc, &expected);
        let all_day: Value = serde_json::from_str(
            r#"{"id":"a1","start":{"date":"2025-03-01"},"status":"cancelled"}"#,
        )
        .unwrap();
        assert!(to_document(&all_day).is_none());
        assert_eq!(
            when(&all_day, "start").as_deref(),
            Some("2025-03-01T00:00:00Z")
        );
    }

    #[test]
    fn asks_narrower_queries_within_the_time_range() {
        let request = SearchRequest::new("x", &["checkout", "postmortem", "certificate"], &[])
            .between(Some("2025-02-01T00:00:00Z"), Some("2025-02-28"));
        let queries = narrower_queries(&request, MAX_QUERIES);
        assert!(
            queries.len() > 1 && queries.len() <= MAX_QUERIES,
            "{queries:?}"
        );
        assert!(
            queries.iter().all(|q| q.split(' ').count() <= 2),
            "{queries:?}"
        );
        let url = events_url(&queries[0], 10, &request);
        assert!(url.starts_with(EVENTS), "{url}");
        assert!(url.contains("singleEvents=true&maxResults=10"), "{url}");
        assert!(url.contains("timeMin=2025-02-01T00%3A00%3A00Z"), "{url}");
        assert!(url.contains("timeMax=2025-02-28T00%3A00%3A00Z"), "{url}");
        let none = SearchRequest::new("what is the", &[], &[]);
        assert_eq!(narrower_queries(&none, MAX_QUERIES), ["what is the"]);
    }
}
