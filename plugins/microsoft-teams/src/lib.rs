//! Microsoft Teams chat messages (`chatMessage`), through Microsoft Graph's
//! search (`quarry_connector_sdk::microsoft`), which searches the messages
//! of the chats the signed-in user is in.
//!
//! A hit's message has no body (Microsoft: "the search Teams API doesn't
//! return all properties"): its text is the hit's `summary`, its author
//! `from`, its citation its `webLink`; a time range restricts `sent`, the
//! date property Teams' KQL documents.

use quarry_connector_sdk::microsoft::{self, Kind, sender_name, summary_text};
use quarry_connector_sdk::prelude::*;

const MESSAGES: Kind = Kind {
    entity_types: &["chatMessage"],
    time_property: Some("sent"),
    max_size: 25,
};

struct MicrosoftTeams;

impl Connector for MicrosoftTeams {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        microsoft::search(&request, &[MESSAGES], to_document)
    }
}

fn to_document(hit: &Value) -> Option<Document> {
    let resource = hit.get("resource")?;
    let id = resource.str_at("/id").or_else(|| hit.str_at("/hitId"))?;
    let author = sender_name(resource);
    // Chat messages rarely have a subject.
    let title = match (resource.str_at("/subject"), author) {
        (Some(subject), _) if !subject.trim().is_empty() => subject.to_string(),
        (_, Some(author)) => format!("Teams message from {author}"),
        _ => "Teams message".to_string(),
    };
    Some(
        Document::new(id, title, summary_text(hit), resource.str_at("/webLink")?)
            .author(author)
            .times(
                resource.str_at("/createdDateTime"),
                resource
                    .str_at("/lastModifiedDateTime")
                    .or_else(|| resource.str_at("/createdDateTime")),
            )
            .metadata(json!({
                "entity": "chatMessage",
                "chat_id": resource.str_at("/chatId"),
                "team_id": resource.str_at("/channelIdentity/teamId"),
                "channel_id": resource.str_at("/channelIdentity/channelId"),
            })),
    )
}

quarry_connector_sdk::export!(MicrosoftTeams);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_a_message_as_the_search_answers_it() {
        let hit: Value = serde_json::from_str(r##"{"hitId":"AAMkAGIwMDA5MmY0LWY5ZTgtNGY5YS04NzczLWNhNjc0ZGIyZDBjYgBGAAAAAADm35sgHbzESapJ8+BjBlhEBwDAYtphe7dsRbDrOT/HAHoKAAAAAAEpAADAYtphe7dsRbDrOT/HAHoKAAFwxQGaAAA=","rank":1,"summary":"...Test with the TDF account","resource":{"@odata.type":"microsoft.graph.chatMessage","id":"1657782060227","createdDateTime":"2022-07-14T07:01:01Z","lastModifiedDateTime":"2022-07-14T07:01:03Z","subject":"","importance":"normal","webLink":"https://outlook.office365.com/owa/?ItemID=AAMkAGIwMDA5MmY0LWY5ZTgtNGY5YS04NzczLWNhNjc0ZGIyZDBjYgBGAAAAAADm35sgHbzESapJ8%2BBjBlhEBwDAYtphe7dsRbDrOT%2FHAHoKAAAAAAEpAADAYtphe7dsRbDrOT%2FHAHoKAAFwxQGaAAA%3D&exvsurl=1&viewmodel=ReadMessageItem","from":{"emailAddress":{"name":"Goncalo Torres","address":"gtorres@contoso.com"}},"channelIdentity":{},"etag":"1657782060227","chatId":"19:bdeff6bfed7f4b159cdf7fdd61aeacaa@thread.v2"}}"##).unwrap();
        let doc = to_document(&hit).unwrap();
        assert_eq!(doc.id, "1657782060227");
        assert_eq!(doc.title, "Teams message from Goncalo Torres");
        assert_eq!(doc.content, "Test with the TDF account");
        assert_eq!(doc.author.as_deref(), Some("Goncalo Torres"));
        assert_eq!(doc.updated_at.as_deref(), Some("2022-07-14T07:01:03Z"));
        assert!(
            doc.url
                .starts_with("https://outlook.office365.com/owa/?ItemID=")
        );
    }
}
