//! Trello: cards, through `GET https://api.trello.com/1/search` with
//! `modelTypes=cards`.
//!
//! Trello authenticates with the application's key and the user's token,
//! which the host sends as the `Authorization` header the manifest names
//! (`OAuth oauth_consumer_key="...", oauth_token="..."`): the connector never
//! sees either. Trello's search needs every word of a query (each word, or
//! with `partial`, the start of one): the connector sends a few narrower
//! queries in one batch (the most specific terms, two by two) and merges
//! the cards found. Trello's search has no absolute dates (`edited:` counts days
//! back from today), so `since`/`until` are applied to `dateLastActivity`
//! here. A card's creation time is in its id; citations are the cards' `url`.

use quarry_connector_sdk::plan::{narrower_queries, search_all};
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::time::from_unix;

const SEARCH: &str = "https://api.trello.com/1/search";
const CARD_FIELDS: &str =
    "name,desc,url,dateLastActivity,idBoard,idList,idMembers,labels,closed,due";
/// Queries one question may cost.
const MAX_QUERIES: usize = 2;
/// Cards asked for when the question names a time range.
const RANGED_LIMIT: usize = 200;

struct Trello;

impl Connector for Trello {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let queries = queries(&request);
        if queries.is_empty() {
            return Ok(Vec::new());
        }
        let want = request.max_results.clamp(1, 100) as usize;
        // Trello's search has no absolute dates: with a time range, ask
        // for many more cards (up to 1,000 a page) and keep those in it.
        let ranged = request.since.is_some() || request.until.is_some();
        let limit = if ranged { RANGED_LIMIT.max(want) } else { want };
        let searches = queries
            .iter()
            .map(|query| {
                let url = Url::new(SEARCH)
                    .param("query", query)
                    .param("modelTypes", "cards")
                    .param("card_fields", CARD_FIELDS)
                    .param("cards_limit", limit)
                    .param("card_board", "true")
                    .param("card_list", "true")
                    .param("card_members", "true")
                    .param("partial", "true")
                    .build();
                Request::get(url)
            })
            .collect();
        let cards = search_all(
            searches,
            |response| {
                let body: Value = check(response)?.json()?;
                if body.get("cards").is_none() && body.get("options").is_none() {
                    return Err(SearchError::InvalidResponse(
                        "the search response has no cards".into(),
                    ));
                }
                Ok(body.array_at("/cards").to_vec())
            },
            |card| card.id_at("/id"),
            limit,
        )?;
        let mut documents: Vec<Document> = Vec::new();
        for doc in cards.iter().filter_map(to_document) {
            if request.in_time_range(doc.updated_at.as_deref())
                && !documents.iter().any(|d| d.id == doc.id)
            {
                documents.push(doc);
            }
        }
        documents.truncate(want);
        Ok(documents)
    }
}

/// The queries: narrower sets of the most specific terms, or the question
/// as typed when it has none (none when it is blank).
fn queries(request: &SearchRequest) -> Vec<String> {
    narrower_queries(request, MAX_QUERIES)
}

/// Trello's errors are plain text (`invalid token`), its 429 JSON.
fn check(response: Response) -> Result<Response, SearchError> {
    match response.status {
        401 => Err(SearchError::Unauthorized(response.error_message())),
        _ => response.error_for_status(),
    }
}

/// A card id's first eight hex digits are its creation time.
fn created_at(id: &str) -> Option<String> {
    let seconds = i64::from_str_radix(id.get(..8)?, 16).ok()?;
    (id.len() == 24).then(|| from_unix(seconds))
}

/// Markdown emphasis dropped: the host wants text.
fn plain(desc: &str) -> String {
    desc.replace("**", "").replace("__", "")
}

fn to_document(card: &Value) -> Option<Document> {
    let id = card.str_at("/id")?;
    let members = card.strs_at("/members", "/fullName");
    let mut labels = card.strs_at("/labels", "/name");
    labels.retain(|name| !name.is_empty());
    let mut doc = Document::new(
        id,
        card.string_at("/name"),
        plain(card.str_at("/desc").unwrap_or_default()),
        card.str_at("/url")?,
    )
    .times(None, card.str_at("/dateLastActivity"))
    .metadata(json!({
        "board": card.str_at("/board/name"),
        "list": card.str_at("/list/name"),
        "labels": labels,
        "members": members,
        "closed": card.bool_at("/closed"),
        "due": card.str_at("/due"),
    }));
    doc.created_at = created_at(id);
    Some(doc)
}

quarry_connector_sdk::export!(Trello);

#[cfg(test)]
mod tests {
    use quarry_connector_sdk::testing::assert_document;

    use super::*;

    #[test]
    fn maps_a_card() {
        let card: Value = serde_json::from_str(r#"{"id":"6836c1a0f1e2d3c4b5a69788","name":"Announce: Add Apple Pay to web checkout","desc":"Launch announcement for **Add Apple Pay**.\n\n**Engineering:** tracked as ACME-40.","url":"https://trello.com/c/AbCd1234/7-announce-add-apple-pay-to-web-checkout","dateLastActivity":"2025-06-27T09:00:00.000Z","idBoard":"b","idList":"l","idMembers":["m"],"labels":[{"id":"x","name":"Launch","color":"green"}],"closed":false,"due":null,"board":{"id":"b","name":"Marketing"},"list":{"id":"l","name":"Published"},"members":[{"id":"m","fullName":"Hannah Kim","username":"hannah"}]}"#).unwrap();
        let doc = to_document(&card).unwrap();
        let expected = Document::new(
            "6836c1a0f1e2d3c4b5a69788",
            "Announce: Add Apple Pay to web checkout",
            "Launch announcement for Add Apple Pay.\n\nEngineering: tracked as ACME-40.",
            "https://trello.com/c/AbCd1234/7-announce-add-apple-pay-to-web-checkout",
        )
        .times(Some("2025-05-28T07:56:16Z"), Some("2025-06-27T09:00:00Z"));
        assert_document(&doc, &expected);
        assert!(doc.metadata.contains("\"board\":\"Marketing\""));
        assert!(doc.metadata.contains("\"members\":[\"Hannah Kim\"]"));
        assert_eq!(created_at("zz"), None);
    }
}
