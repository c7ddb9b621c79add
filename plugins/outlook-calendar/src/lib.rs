//! Outlook calendar events (`event`), through Microsoft Graph's search
//! (`quarry_connector_sdk::microsoft`), which searches the signed-in
//! user's primary calendar.
//!
//! A search hit's event carries no `id` and no `webLink` (Microsoft's
//! example answer: subject, start, end, type, iCalUId...): its id is the
//! hit's `hitId`, and its citation the link Outlook on the web opens an
//! event by, which is the form of the event's `webLink`
//! (`https://outlook.office365.com/owa/?itemid=<id>&exvsurl=1&path=/calendar/item`).
//! Its text is the hit's `summary`; its time its start. Graph's KQL has no
//! documented date property for events, so a time range is applied to the
//! starts here only.

use quarry_connector_sdk::microsoft::{self, Kind, summary_text};
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::text::join_non_empty;
use quarry_connector_sdk::time::normalize;
use quarry_connector_sdk::url::encode;

const EVENTS: Kind = Kind {
    entity_types: &["event"],
    time_property: None,
    max_size: 25,
};

struct OutlookCalendar;

impl Connector for OutlookCalendar {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        microsoft::search(&request, &[EVENTS], to_document)
    }
}

fn to_document(hit: &Value) -> Option<Document> {
    let resource = hit.get("resource")?;
    let id = hit.str_at("/hitId").or_else(|| resource.str_at("/id"))?;
    let url = resource.str_at("/webLink").map_or_else(
        || {
            format!(
                "https://outlook.office365.com/owa/?itemid={}&exvsurl=1&path=/calendar/item",
                encode(id)
            )
        },
        String::from,
    );
    let start = utc(resource.get("start"));
    let end = utc(resource.get("end"));
    let when = match (&start, &end) {
        (Some(start), Some(end)) => format!("{start} to {end}"),
        _ => String::new(),
    };
    let content = join_non_empty([when.as_str(), summary_text(hit).as_str()], "\n");
    Some(
        Document::new(id, resource.string_at("/subject"), content, url)
            .author(resource.str_at("/organizer/emailAddress/name"))
            .times(start.as_deref(), start.as_deref())
            .metadata(json!({
                "entity": "event",
                "end": end,
                "all_day": resource.bool_at("/isAllDay"),
                "ical_uid": resource.str_at("/iCalUId"),
            })),
    )
}

/// A `dateTimeTimeZone` in UTC as RFC 3339; `None` in another zone (the
/// search answers in UTC; a connector has no zone database to convert).
fn utc(at: Option<&Value>) -> Option<String> {
    let at = at?;
    match at.str_at("/timeZone") {
        None | Some("UTC") | Some("Etc/UTC") => normalize(at.str_at("/dateTime")?),
        Some(_) => None,
    }
}

quarry_connector_sdk::export!(OutlookCalendar);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_an_event_as_the_search_answers_it() {
        let hit: Value = serde_json::from_str(r##"{"@odata.type":"#microsoft.graph.searchHit","hitId":"AAMkADEwODY2NzllLTQ3MmEtNGRlMC05ZTUyLTE4ZDRhYmU1ZGM3NABGAAAAAAA3+iYQBnJnQabRVDelNhnzBwAejhWkAOAxQ6M4c1c9NwfrAAAAAAENAAAejhWkAOAxQ6M4c1c9NwfrAABbUZLJAAA=","rank":1,"summary":"Here is a summary of your events from last week","resource":{"@odata.type":"#microsoft.graph.event","end":{"dateTime":"2020-06-16T04:15:00Z","timeZone":"UTC"},"hasAttachments":false,"iCalUId":"040000008200E00074C5B7101A82E008000000007093FDD79B3AD60100000000000000001000000036DAA2262EB4E04DA27DA77985FB8251","isAllDay":false,"sensitivity":"Normal","start":{"dateTime":"2020-06-16T03:30:00Z","timeZone":"UTC"},"subject":"Weekly digest: Microsoft 365 changes","type":"Single"}}"##).unwrap();
        let doc = to_document(&hit).unwrap();
        assert_eq!(doc.title, "Weekly digest: Microsoft 365 changes");
        assert_eq!(
            doc.content,
            "2020-06-16T03:30:00Z to 2020-06-16T04:15:00Z\nHere is a summary of your events from last week"
        );
        assert_eq!(doc.updated_at.as_deref(), Some("2020-06-16T03:30:00Z"));
        assert!(doc.url.starts_with(
            "https://outlook.office365.com/owa/?itemid=AAMkADEwODY2NzllLTQ3MmEtNGRlMC05ZTUyLTE4ZDRhYmU1ZGM3NABGAAAAAAA3%2BiYQ"
        ));
        assert!(
            doc.url
                .ends_with("AABbUZLJAAA%3D&exvsurl=1&path=/calendar/item")
        );
    }

    #[test]
    fn a_time_in_another_zone_is_not_guessed() {
        let at =
            json!({"dateTime": "2020-06-16T03:30:00.0000000", "timeZone": "Pacific Standard Time"});
        assert_eq!(utc(Some(&at)), None);
        let at = json!({"dateTime": "2020-06-16T03:30:00.0000000", "timeZone": "UTC"});
        assert_eq!(utc(Some(&at)).as_deref(), Some("2020-06-16T03:30:00Z"));
    }
}
