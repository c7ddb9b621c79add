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

    fn bool_at(&self, pointer: &str) -> Option<bool> {
        self.pointer(pointer)?.as_bool()
    }

    fn i64_at(&self, pointer: &str) -> Option<i64> {
        self.pointer(pointer)?.as_i64()
    }
}
