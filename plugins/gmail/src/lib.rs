//! Gmail: messages, through `users/me/messages?q=...` (Gmail's own search
//! syntax; the time range as `after:`/`before:` in Unix seconds), then each
//! message's metadata (`format=metadata`: Subject, From, To, Date and the
//! snippet). The list returns only ids, so each message costs one fetch.
//!
//! Citations are `https://mail.google.com/mail/u/0/#all/{id}`: the API
//! returns no browser URL.

use quarry_connector_sdk::google::check;
use quarry_connector_sdk::page::Page;
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::text::decode_entities;
use quarry_connector_sdk::time::{from_unix, to_unix};

const MESSAGES: &str = "https://gmail.googleapis.com/gmail/v1/users/me/messages";
const HEADERS: [&str; 4] = ["Subject", "From", "To", "Date"];
const MAX_PAGES: usize = 3;
/// Messages read: each costs one fetch.
const MAX_MESSAGES: usize = 12;

struct Gmail;

impl Connector for Gmail {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let q = gmail_query(&request);
        let want = (request.max_results as usize).clamp(1, MAX_MESSAGES);
        let ids = collect_pages(want, MAX_PAGES, |token: Option<String>| {
            let url = Url::new(MESSAGES)
                .param("q", &q)
                .param("maxResults", want)
                .param_opt("pageToken", token)
                .build();
            let body: Value = check(Request::get(url).send()?)?.json()?;
            Ok(Page {
                items: body
                    .array_at("/messages")
                    .iter()
                    .filter_map(|m| m.str_at("/id").map(String::from))
                    .collect(),
                next: body.cursor_at("/nextPageToken"),
            })
        })?;
        // The messages' metadata are independent: one batch, fetched at once.
        let responses = send_all(ids.iter().map(|id| metadata_request(id)).collect());
        let mut documents = Vec::new();
        for response in responses {
            let response = response?;
            if response.status == 404 {
                continue; // deleted since the list
            }
            let message: Value = check(response)?.json()?;
            if let Some(doc) = to_document(&message)
                && request.in_time_range(doc.updated_at.as_deref())
            {
                documents.push(doc);
            }
        }
        Ok(documents)
    }
}

/// Any of the terms (`OR`), phrases quoted, spam and trash left out by
/// Gmail's default, and the time range: `after:` and `before:` take Unix
/// seconds and are exclusive, hence the second either side.
fn gmail_query(request: &SearchRequest) -> String {
    let mut q = request.keywords_or_query(" OR ");
    if request.terms.len() + request.phrases.len() > 1 {
        q = format!("({q})");
    }
    if let Some(since) = request.since.as_deref().and_then(to_unix) {
        q.push_str(&format!(" after:{}", since - 1));
    }
    if let Some(until) = request.until.as_deref().and_then(to_unix) {
        q.push_str(&format!(" before:{}", until + 1));
    }
    q
}

/// The request for one message's metadata.
fn metadata_request(id: &str) -> Request {
    let mut url = Url::new(format!(
        "{MESSAGES}/{}",
        quarry_connector_sdk::url::segment(id)
    ))
    .param("format", "metadata");
    for header in HEADERS {
        url = url.param("metadataHeaders", header);
    }
    Request::get(url.build())
}

fn header<'a>(message: &'a Value, name: &str) -> Option<&'a str> {
    message
        .array_at("/payload/headers")
        .iter()
        .find(|h| {
            h.str_at("/name")
                .is_some_and(|n| n.eq_ignore_ascii_case(name))
        })
        .and_then(|h| h.str_at("/value"))
}

/// `"Dana Smith" <dana@example.com>` → `Dana Smith`; a bare address stays.
fn display_name(from: &str) -> String {
    match from.split_once('<') {
        Some((name, address)) => {
            let name = name.trim().trim_matches('"').trim();
            if name.is_empty() {
                address.trim_end_matches('>').trim().to_string()
            } else {
                name.to_string()
            }
        }
        None => from.trim().to_string(),
    }
}

fn to_document(message: &Value) -> Option<Document> {
    let id = message.str_at("/id")?;
    let sent = message
        .str_at("/internalDate")
        .and_then(|ms| ms.parse::<i64>().ok())
        .map(|ms| from_unix(ms.div_euclid(1000)));
    let from = header(message, "From");
    Some(
        Document::new(
            id,
            header(message, "Subject").unwrap_or_default(),
            decode_entities(message.str_at("/snippet").unwrap_or_default()),
            format!("https://mail.google.com/mail/u/0/#all/{id}"),
        )
        .author(from.map(display_name))
        .times(sent.as_deref(), sent.as_deref())
        .metadata(json!({
            "thread_id": message.str_at("/threadId"),
            "from": from,
            "to": header(message, "To"),
            "labels": message.array_at("/labelIds"),
        })),
    )
}

quarry_connector_sdk::export!(Gmail);

#[cfg(test)]
mod tests {
    use quarry_connector_sdk::testing::assert_document;

    use super::*;

    #[test]
    fn maps_a_message() {
        let message: Value = serde_json::from_str(r#"{"id":"18f2a9c04b7d3e21","threadId":"18f2a9c04b7d3e21","labelIds":["INBOX","CATEGORY_PERSONAL"],"snippet":"Our checkout page returned 502 errors &ndash; we couldn&#39;t pay","sizeEstimate":5120,"historyId":"99812","internalDate":"1738575240000","payload":{"partId":"","mimeType":"multipart/alternative","filename":"","headers":[{"name":"From","value":"\"Dana Whitfield\" <dana@bluebird-cafe.example>"},{"name":"To","value":"support@acme-shop.example"},{"name":"Subject","value":"Checkout down?"},{"name":"Date","value":"Mon, 03 Feb 2025 09:34:00 +0000"}]}}"#).unwrap();
        let doc = to_document(&message).unwrap();
        let expected = Document::new(
            "18f2a9c04b7d3e21",
            "Checkout down?",
            "Our checkout page returned 502 errors &ndash; we couldn't pay",
            "https://mail.google.com/mail/u/0/#all/18f2a9c04b7d3e21",
        )
        .author(Some("Dana Whitfield"))
        .times(Some("2025-02-03T09:34:00Z"), Some("2025-02-03T09:34:00Z"));
        assert_document(&doc, &expected);
        assert!(doc.metadata.contains("\"thread_id\":\"18f2a9c04b7d3e21\""));
        assert_eq!(display_name("<a@b.example>"), "a@b.example");
        assert_eq!(display_name("a@b.example"), "a@b.example");
    }

    #[test]
    fn builds_the_query() {
        let request = SearchRequest::new("x", &["checkout", "502"], &[])
            .between(Some("2025-02-01T00:00:00Z"), Some("2025-02-28T00:00:00Z"));
        assert_eq!(
            gmail_query(&request),
            "(checkout OR 502) after:1738367999 before:1740700801"
        );
    }
}
