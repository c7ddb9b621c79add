//! Intercom: conversations, through `POST /conversations/search`, then the
//! conversation itself (`GET /conversations/{id}`) for the best ones, so that
//! the replies and notes (where the support team names the ticket and the
//! fix) are part of the text.
//!
//! The question becomes an `OR` of `~` (contains) filters on the first
//! message's body and subject (`source.body`, `source.subject`: searchable
//! fields of a conversation), two per word (Intercom allows 15 filters in a
//! group), `AND`ed with a group of `updated_at` bounds (Unix seconds,
//! strict `>`/`<`; from 2.13 a group holds either filters or groups, not
//! both). The search has no order to ask for (its request has no `sort`),
//! so one page of the most Intercom gives (150) is ordered here: the
//! conversations whose first message holds the most of the words first,
//! the newest among equals, and the best are read in full. Citations are the inbox's conversation
//! pages; the workspace id in them comes from the `workspace_id` setting,
//! else from `GET /me` (sent with the search).

use quarry_connector_sdk::plan::terms_by_specificity;
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::text::{html_to_text, join_non_empty, truncate};
use quarry_connector_sdk::time::{from_unix, to_unix};

const API: &str = "https://api.intercom.io";
const VERSION: &str = "2.13";
/// The most conversations one page of the search holds.
const PAGE_SIZE: usize = 150;
/// Conversations read in full (one fetch each).
const MAX_BODIES: usize = 8;
/// Words searched: two filters each, at most 15 filters in a group.
const MAX_WORDS: usize = 7;

struct Intercom;

impl Connector for Intercom {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let query = search_query(&request);
        let want = request.max_results.clamp(1, PAGE_SIZE as u32) as usize;
        let (app, answer) = app_and_search(&request, search_page(&query))?;
        let mut conversations = read_page(check(answer?)?)?;
        let words = words(&request);
        conversations.sort_by_key(|c| {
            std::cmp::Reverse((words_held(c, &words), c.i64_at("/updated_at").unwrap_or(0)))
        });
        conversations.truncate(want);
        let mut picked: Vec<(usize, &Value)> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for (i, conversation) in conversations.iter().enumerate() {
            let Some(id) = conversation.str_at("/id") else {
                continue;
            };
            if !seen.insert(id)
                || !request.in_time_range(unix_time(conversation, "/updated_at").as_deref())
            {
                continue;
            }
            picked.push((i, conversation));
        }
        // The best ones in full (their parts hold the support team's
        // answers), fetched together: they do not depend on each other.
        let requests = picked
            .iter()
            .filter(|(i, _)| *i < MAX_BODIES)
            .filter_map(|(_, c)| c.str_at("/id"))
            .map(|id| {
                let url = format!(
                    "{API}/conversations/{}",
                    quarry_connector_sdk::url::segment(id)
                );
                versioned(Request::get(url))
            })
            .collect();
        let mut fulls = send_all(requests).into_iter();
        let mut documents: Vec<Document> = Vec::new();
        for (i, conversation) in picked {
            let full = match (i < MAX_BODIES).then(|| fulls.next()).flatten() {
                Some(response) => Some(check(response?)?.json::<Value>()?),
                None => None,
            };
            if let Some(doc) = to_document(full.as_ref().unwrap_or(conversation), &app) {
                documents.push(doc);
            }
        }
        Ok(documents)
    }
}

/// Every request names the API version whose shapes this code reads.
fn versioned(request: Request) -> Request {
    request.header("intercom-version", VERSION)
}

/// The conversation search: its first page, as large as Intercom allows.
fn search_page(query: &Value) -> Request {
    let body = json!({
        "query": query,
        "pagination": { "per_page": PAGE_SIZE },
    });
    versioned(Request::post(format!("{API}/conversations/search")).json(&body))
}

fn read_page(response: Response) -> Result<Vec<Value>, SearchError> {
    let response: Value = response.json()?;
    if response.get("conversations").is_none() {
        return Err(SearchError::InvalidResponse(
            "the search response has no conversations".into(),
        ));
    }
    Ok(response.array_at("/conversations").to_vec())
}

/// Intercom's errors are `{"type": "error.list", "errors": [{"code", "message"}]}`.
fn check(response: Response) -> Result<Response, SearchError> {
    if response.status < 400 {
        return Ok(response);
    }
    let body: Value = response.json().unwrap_or(Value::Null);
    let message = match (
        body.str_at("/errors/0/code"),
        body.str_at("/errors/0/message"),
    ) {
        (Some(code), Some(message)) => format!("{code}: {message}"),
        _ => response.error_message(),
    };
    Err(response.status_error(message))
}

/// A workspace (app) id: letters and digits.
fn workspace(setting: &str) -> Result<String, SearchError> {
    let s = setting.trim();
    if !s.is_empty() && s.len() <= 32 && s.bytes().all(|b| b.is_ascii_alphanumeric()) {
        Ok(s.to_string())
    } else {
        Err(SearchError::InvalidRequest(format!(
            "the workspace_id setting {setting:?} is not an Intercom workspace id"
        )))
    }
}

type Answer = Result<Response, SearchError>;

/// The workspace id for citations (the connection's setting, else the
/// token's, `GET /me`) and the search's answer. `/me` does not depend on
/// the search, so both go out in one batch (`/me`'s answer checked first,
/// as when they went one after the other).
fn app_and_search(
    request: &SearchRequest,
    search: Request,
) -> Result<(String, Answer), SearchError> {
    if let Some(w) = request
        .setting("workspace_id")
        .filter(|w| !w.trim().is_empty())
    {
        return Ok((workspace(w)?, search.send()));
    }
    let me = versioned(Request::get(format!("{API}/me")));
    let mut answers = send_all(vec![me, search]).into_iter();
    let me = answers.next().expect("one answer per request")?;
    let search = answers.next().expect("one answer per request");
    Ok((workspace_of_token(check(me)?)?, search))
}

/// The workspace the token belongs to, from `/me`.
fn workspace_of_token(me: Response) -> Result<String, SearchError> {
    let me: Value = me.json()?;
    me.str_at("/app/id_code")
        .map(String::from)
        .ok_or_else(|| SearchError::InvalidResponse("/me has no app.id_code".into()))
}

/// The words to look for: phrases first, then the most specific terms, at
/// most [`MAX_WORDS`].
fn words(request: &SearchRequest) -> Vec<String> {
    let mut words: Vec<String> = terms_by_specificity(request)
        .into_iter()
        .map(|term| term.text.replace('"', "").trim().to_string())
        .filter(|word| !word.is_empty())
        .collect();
    if words.is_empty() {
        words.extend(request.query.split_whitespace().map(String::from));
    }
    words.truncate(MAX_WORDS);
    words
}

/// How many of `words` a conversation's first message (its subject and
/// body) holds: the search's own answer has no order.
fn words_held(conversation: &Value, words: &[String]) -> usize {
    let text = format!(
        "{} {}",
        conversation.str_at("/source/subject").unwrap_or_default(),
        html_to_text(conversation.str_at("/source/body").unwrap_or_default())
    )
    .to_lowercase();
    words
        .iter()
        .filter(|word| text.contains(&word.to_lowercase()))
        .count()
}

fn search_query(request: &SearchRequest) -> Value {
    let mut filters = Vec::new();
    let words = words(request);
    if !words.is_empty() {
        let any: Vec<Value> = words
            .iter()
            .flat_map(|w| {
                [
                    json!({"field": "source.body", "operator": "~", "value": w}),
                    json!({"field": "source.subject", "operator": "~", "value": w}),
                ]
            })
            .collect();
        filters.push(json!({"operator": "OR", "value": any}));
    }
    let mut bounds = Vec::new();
    if let Some(since) = request.since.as_deref().and_then(to_unix) {
        bounds.push(json!({"field": "updated_at", "operator": ">", "value": since - 1}));
    }
    if let Some(until) = request.until.as_deref().and_then(to_unix) {
        bounds.push(json!({"field": "updated_at", "operator": "<", "value": until + 1}));
    }
    if bounds.is_empty() && filters.is_empty() {
        bounds.push(json!({"field": "updated_at", "operator": ">", "value": 0}));
    }
    if !bounds.is_empty() {
        filters.push(json!({"operator": "AND", "value": bounds}));
    }
    json!({"operator": "AND", "value": filters})
}

fn unix_time(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer)?.as_i64().map(from_unix)
}

/// The first message and the replies and notes, one a line, with authors.
fn content(conversation: &Value) -> String {
    let first = html_to_text(conversation.str_at("/source/body").unwrap_or_default());
    let mut lines = vec![match conversation.str_at("/source/author/name") {
        Some(name) if !first.is_empty() => format!("{name}: {first}"),
        _ => first,
    }];
    for part in conversation.array_at("/conversation_parts/conversation_parts") {
        let text = html_to_text(part.str_at("/body").unwrap_or_default());
        if text.is_empty() {
            continue;
        }
        let who = part.str_at("/author/name").unwrap_or("?");
        let note = if part.str_at("/part_type") == Some("note") {
            " (internal note)"
        } else {
            ""
        };
        lines.push(format!("{who}{note}: {text}"));
    }
    join_non_empty(lines.iter().map(String::as_str), "\n")
}

fn to_document(conversation: &Value, app: &str) -> Option<Document> {
    let id = conversation.str_at("/id")?;
    let first = html_to_text(conversation.str_at("/source/body").unwrap_or_default());
    let title = conversation
        .str_at("/title")
        .filter(|t| !t.is_empty())
        .or_else(|| {
            conversation
                .str_at("/source/subject")
                .filter(|s| !s.is_empty())
        })
        .map(String::from)
        .unwrap_or_else(|| truncate(first.lines().next().unwrap_or_default(), 80).to_string());
    let tags = conversation.strs_at("/tags/tags", "/name");
    let mut doc = Document::new(
        id,
        title,
        content(conversation),
        format!(
            "https://app.intercom.com/a/inbox/{app}/inbox/conversation/{}",
            quarry_connector_sdk::url::segment(id)
        ),
    )
    .author(conversation.str_at("/source/author/name"))
    .metadata(json!({
        "state": conversation.str_at("/state"),
        "tags": tags,
        "channel": conversation.str_at("/source/type"),
    }));
    doc.created_at = unix_time(conversation, "/created_at");
    doc.updated_at = unix_time(conversation, "/updated_at");
    Some(doc)
}

quarry_connector_sdk::export!(Intercom);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_a_conversation_with_its_parts() {
        let c: Value = serde_json::from_str(r#"{"type":"conversation","id":"2150000108","title":"Charged twice for the same subscription invoice","created_at":1741700000,"updated_at":1741786400,"state":"closed","tags":{"type":"tag.list","tags":[{"type":"tag","id":"1","name":"billing"}]},"source":{"type":"email","subject":"Charged twice","body":"<p>Hello,</p><p>Our card was charged twice.</p>","author":{"type":"user","id":"a1","name":"Katrin Müller","email":"katrin@example.com"}},"conversation_parts":{"type":"conversation_part.list","conversation_parts":[{"type":"conversation_part","part_type":"comment","body":"<p>Sorry, Katrin &amp; team.</p>","author":{"type":"admin","name":"Emma Dubois"}},{"type":"conversation_part","part_type":"note","body":"<p>Linked to ACME-12.</p>","author":{"type":"admin","name":"Emma Dubois"}},{"type":"conversation_part","part_type":"close","body":null,"author":{"type":"admin","name":"Emma Dubois"}}]}}"#).unwrap();
        let doc = to_document(&c, "ac3mepq7").unwrap();
        assert_eq!(doc.id, "2150000108");
        assert_eq!(doc.title, "Charged twice for the same subscription invoice");
        assert_eq!(
            doc.url,
            "https://app.intercom.com/a/inbox/ac3mepq7/inbox/conversation/2150000108"
        );
        assert_eq!(
            doc.content,
            "Katrin Müller: Hello,\nOur card was charged twice.\nEmma Dubois: Sorry, Katrin & team.\nEmma Dubois (internal note): Linked to ACME-12."
        );
        assert_eq!(doc.author.as_deref(), Some("Katrin Müller"));
        assert_eq!(doc.updated_at.as_deref(), Some("2025-03-12T13:33:20Z"));
        assert!(doc.metadata.contains("\"tags\":[\"billing\"]"));
    }

    #[test]
    fn builds_the_query() {
        let request = SearchRequest::new("q", &["charged", "twice", "invoice"], &["charged twice"])
            .between(Some("2025-03-01T00:00:00Z"), None);
        let q = search_query(&request);
        assert_eq!(q["operator"], "AND");
        assert_eq!(q["value"][0]["operator"], "OR");
        assert_eq!(q["value"][0]["value"].as_array().unwrap().len(), 4);
        assert_eq!(q["value"][0]["value"][0]["value"], "charged twice");
        assert_eq!(q["value"][0]["value"][1]["field"], "source.subject");
        // The bounds in a group of their own (a group holds filters or
        // groups, not both).
        assert_eq!(q["value"][1]["operator"], "AND");
        assert_eq!(q["value"][1]["value"][0]["value"], 1_740_787_199);
        assert!(workspace("ac3mepq7").is_ok());
        assert!(workspace("x/../y").is_err());
    }
}
