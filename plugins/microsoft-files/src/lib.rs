//! SharePoint and OneDrive: files (`driveItem`) and SharePoint list items
//! (`listItem`), which Graph searches in one request, through Microsoft
//! Graph's search (`quarry_connector_sdk::microsoft`).
//!
//! A hit's text is its `summary` (the highlights, `<c0>` and `<ddd/>`
//! removed), its citation the item's `webUrl`; a time range restricts
//! `LastModifiedTime`.

use quarry_connector_sdk::microsoft::{self, Kind, resource_type, summary_text};
use quarry_connector_sdk::prelude::*;

const FILES: Kind = Kind {
    entity_types: &["driveItem", "listItem"],
    time_property: Some("LastModifiedTime"),
    max_size: 100,
};

struct MicrosoftFiles;

impl Connector for MicrosoftFiles {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        microsoft::search(&request, &[FILES], to_document)
    }
}

fn to_document(hit: &Value) -> Option<Document> {
    let resource = hit.get("resource")?;
    let id = resource.str_at("/id").or_else(|| hit.str_at("/hitId"))?;
    let title = resource
        .str_at("/name")
        .or_else(|| resource.str_at("/fields/title"))
        .or_else(|| resource.str_at("/fields/Title"))
        .unwrap_or_default();
    Some(
        Document::new(id, title, summary_text(hit), resource.str_at("/webUrl")?)
            .author(
                resource
                    .str_at("/createdBy/user/displayName")
                    .or_else(|| resource.str_at("/lastModifiedBy/user/displayName")),
            )
            .times(
                resource.str_at("/createdDateTime"),
                resource.str_at("/lastModifiedDateTime"),
            )
            .metadata(json!({
                "entity": resource_type(resource),
                "last_modified_by": resource.str_at("/lastModifiedBy/user/displayName"),
                "size": resource.i64_at("/size"),
            })),
    )
}

quarry_connector_sdk::export!(MicrosoftFiles);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_a_file() {
        let hit: Value = serde_json::from_str(r##"{"hitId":"01BYE5RZ6QN3ZWBTUFOFD3GSPGOHDJD36K","rank":1,"summary":"Incident 2025-02-03: <c0>checkout</c0> 502s<ddd/>The &quot;listener&quot; kept the old certificate<ddd/>","resource":{"@odata.type":"#microsoft.graph.driveItem","createdDateTime":"2025-02-07T10:00:00Z","lastModifiedDateTime":"2025-02-09T10:00:00Z","name":"Postmortem - checkout 502s.docx","webUrl":"https://acme.sharepoint.com/sites/Engineering/Shared%20Documents/Postmortems/Postmortem%20-%20checkout%20502s.docx","size":21000,"id":"01BYE5RZ6QN3ZWBTUFOFD3GSPGOHDJD36K","createdBy":{"user":{"displayName":"Aisha Bello"}}}}"##).unwrap();
        let doc = to_document(&hit).unwrap();
        assert_eq!(doc.title, "Postmortem - checkout 502s.docx");
        assert_eq!(
            doc.content,
            "Incident 2025-02-03: checkout 502s … The \"listener\" kept the old certificate"
        );
        assert_eq!(doc.author.as_deref(), Some("Aisha Bello"));
        assert!(
            doc.url
                .starts_with("https://acme.sharepoint.com/sites/Engineering/")
        );
        assert_eq!(doc.updated_at.as_deref(), Some("2025-02-09T10:00:00Z"));
    }

    #[test]
    fn a_list_item_is_titled_by_its_fields() {
        let hit = json!({"hitId": "7", "summary": "Severity: SEV1", "resource": {
            "@odata.type": "#microsoft.graph.listItem", "id": "5c1b", "fields": {"Title": "Checkout 502s"},
            "webUrl": "https://acme.sharepoint.com/sites/Engineering/Lists/Incident%20register/DispForm.aspx?ID=7"}});
        let doc = to_document(&hit).unwrap();
        assert_eq!(doc.title, "Checkout 502s");
        assert_eq!(doc.id, "5c1b");
    }
}
