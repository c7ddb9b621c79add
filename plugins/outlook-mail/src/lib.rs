//! Outlook mail (`message`), through Microsoft Graph's search
//! (`quarry_connector_sdk::microsoft`).
//!
//! A mail's text is its `bodyPreview` (the body's start), then the
//! highlighted fragments of its `summary` beyond it; its citation its
//! `webLink`; a time range restricts `received`.

use quarry_connector_sdk::microsoft::{self, Kind, sender_name, summary_text};
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::text::join_non_empty;

const MAIL: Kind = Kind {
    entity_types: &["message"],
    time_property: Some("received"),
    max_size: 25,
};

struct OutlookMail;

impl Connector for OutlookMail {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        microsoft::search(&request, &[MAIL], to_document)
    }
}

fn to_document(hit: &Value) -> Option<Document> {
    let resource = hit.get("resource")?;
    let id = resource.str_at("/id").or_else(|| hit.str_at("/hitId"))?;
    let summary = summary_text(hit);
    let preview = resource.str_at("/bodyPreview").unwrap_or_default().trim();
    let beyond: Vec<&str> = summary
        .split(" … ")
        .map(str::trim)
        .filter(|f| !f.is_empty() && !preview.contains(f))
        .collect();
    let content = join_non_empty(
        std::iter::once(preview).chain([beyond.join(" … ").as_str()]),
        "\n",
    );
    Some(
        Document::new(
            id,
            resource.string_at("/subject"),
            content,
            resource.str_at("/webLink")?,
        )
        .author(sender_name(resource))
        .times(
            resource
                .str_at("/sentDateTime")
                .or_else(|| resource.str_at("/createdDateTime")),
            resource
                .str_at("/receivedDateTime")
                .or_else(|| resource.str_at("/lastModifiedDateTime")),
        )
        .metadata(json!({
            "entity": "message",
            "conversation_id": resource.str_at("/conversationId"),
        })),
    )
}

quarry_connector_sdk::export!(OutlookMail);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_a_mail_its_preview_then_the_highlights_beyond_it() {
        let hit: Value = serde_json::from_str(r##"{"hitId":"AAMkAD1","summary":"","resource":{"@odata.type":"#microsoft.graph.message","id":"AAMkAD1","subject":"Incident summary","bodyPreview":"ACME-12: checkout failed for 47 minutes.","sentDateTime":"2025-02-03T16:00:00Z","receivedDateTime":"2025-02-03T16:00:01Z","webLink":"https://outlook.office365.com/owa/?ItemID=AAMkAD1&exvsurl=1&viewmodel=ReadMessageItem","from":{"emailAddress":{"name":"Marcus Olsen","address":"marcus@acme.example"}}}}"##).unwrap();
        let doc = to_document(&hit).unwrap();
        assert_eq!(doc.title, "Incident summary");
        assert_eq!(doc.content, "ACME-12: checkout failed for 47 minutes.");
        let mut hit = hit;
        hit["summary"] =
            json!("<c0>ACME-12</c0>: checkout failed<ddd/>Post-mortem: on the site<ddd/>");
        let doc = to_document(&hit).unwrap();
        assert_eq!(
            doc.content,
            "ACME-12: checkout failed for 47 minutes.\nPost-mortem: on the site"
        );
        assert_eq!(doc.author.as_deref(), Some("Marcus Olsen"));
        assert_eq!(doc.updated_at.as_deref(), Some("2025-02-03T16:00:01Z"));
        assert!(
            doc.url
                .starts_with("https://outlook.office365.com/owa/?ItemID=")
        );
    }
}
