//! What a guest's documents must be before the host cites them.

use crate::types::Document;

/// Most bytes of one document's content.
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// Checks what a guest returned: a usable citation URL, bounded sizes, and
/// metadata that is a JSON object. Returns `None` for a document that
/// cannot be cited.
pub(super) fn validate_document(mut doc: Document, metadata: &str) -> Option<Document> {
    let url = url::Url::parse(&doc.url).ok()?;
    if !matches!(url.scheme(), "https" | "http") {
        tracing::warn!(id = %doc.id, "document dropped: its citation URL is not http(s)");
        return None;
    }
    truncate(&mut doc.content, MAX_DOCUMENT_BYTES);
    truncate(&mut doc.title, 1024);
    doc.metadata = match serde_json::from_str(metadata) {
        Ok(serde_json::Value::Object(map)) => map,
        _ if metadata.trim().is_empty() => serde_json::Map::new(),
        _ => {
            tracing::warn!(id = %doc.id, "document metadata is not a JSON object; dropped");
            serde_json::Map::new()
        }
    };
    Some(doc)
}

fn truncate(text: &mut String, max: usize) {
    if text.len() > max {
        let mut cut = max;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
}
