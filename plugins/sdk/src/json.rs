//! Reading vendor JSON without a struct for every shape.

use serde_json::Value;

/// Lookups by JSON pointer (`/fields/summary`) that default instead of fail:
/// vendors omit fields freely, and a missing optional field is not an error.
pub trait JsonExt {
    /// The string at `pointer`, if there is one.
    fn str_at(&self, pointer: &str) -> Option<&str>;
    /// The string at `pointer`, or `""`.
    fn string_at(&self, pointer: &str) -> String {
        self.str_at(pointer).unwrap_or_default().to_string()
    }
    /// The array at `pointer`, or an empty slice.
    fn array_at(&self, pointer: &str) -> &[Value];
    /// The string at `field` (a pointer into each element) of every element
    /// of the array at `pointer` that has one: the names of a record's
    /// labels, say.
    fn strs_at(&self, pointer: &str, field: &str) -> Vec<&str> {
        self.array_at(pointer)
            .iter()
            .filter_map(|element| element.str_at(field))
            .collect()
    }
    /// A next-page token or cursor at `pointer`: `None` when it is missing or
    /// empty, as some vendors send `""` on the last page.
    fn cursor_at(&self, pointer: &str) -> Option<String> {
        self.str_at(pointer)
            .filter(|cursor| !cursor.is_empty())
            .map(String::from)
    }
    /// An identifier at `pointer`, whether the vendor writes it as a string
    /// or a number (Zendesk's ticket ids), as text; empty when missing.
    fn id_at(&self, pointer: &str) -> String {
        match self.value_at(pointer) {
            Some(Value::String(id)) => id.clone(),
            Some(Value::Number(id)) => id.to_string(),
            _ => String::new(),
        }
    }
    fn value_at(&self, pointer: &str) -> Option<&Value>;
    fn bool_at(&self, pointer: &str) -> Option<bool>;
    fn i64_at(&self, pointer: &str) -> Option<i64>;
}

impl JsonExt for Value {
    fn str_at(&self, pointer: &str) -> Option<&str> {
        self.pointer(pointer)?.as_str()
    }

    fn array_at(&self, pointer: &str) -> &[Value] {
        self.pointer(pointer)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    fn value_at(&self, pointer: &str) -> Option<&Value> {
        self.pointer(pointer)
    }

    fn bool_at(&self, pointer: &str) -> Option<bool> {
        self.pointer(pointer)?.as_bool()
    }

    fn i64_at(&self, pointer: &str) -> Option<i64> {
        self.pointer(pointer)?.as_i64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lists_of_names_and_cursors() {
        let body = serde_json::json!({
            "labels": [{"name": "bug"}, {"color": "red"}, {"name": "p1"}],
            "next": "",
            "after": "abc",
        });
        assert_eq!(body.strs_at("/labels", "/name"), vec!["bug", "p1"]);
        assert!(body.strs_at("/missing", "/name").is_empty());
        assert_eq!(body.cursor_at("/after").as_deref(), Some("abc"));
        assert_eq!(body.cursor_at("/next"), None);
        assert_eq!(body.cursor_at("/missing"), None);
    }
}
