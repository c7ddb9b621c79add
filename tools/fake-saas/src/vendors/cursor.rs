//! The opaque page cursors of Confluence, Jira and Drive: URL-safe base64 of
//! `{prefix}{offset}{separator}{hash of the query}`, so that a cursor continues only
//! the query it was made for. Each vendor's prefix and separator make its cursors look
//! like the real vendor's.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::dataset;

pub(crate) struct CursorFormat {
    prefix: &'static str,
    separator: &'static str,
    /// Whether the spaces around the query do not count, nor `=` padding on a cursor.
    lenient: bool,
}

impl CursorFormat {
    pub(crate) const fn new(prefix: &'static str, separator: &'static str) -> Self {
        CursorFormat {
            prefix,
            separator,
            lenient: false,
        }
    }

    /// The same format, blind to the spaces around a query and to `=` padding.
    pub(crate) const fn lenient(self) -> Self {
        CursorFormat {
            lenient: true,
            ..self
        }
    }

    /// The cursor for the page at `offset` of `query`'s results.
    pub(crate) fn encode(&self, offset: usize, query: &str) -> String {
        let (prefix, separator) = (self.prefix, self.separator);
        let hash = self.hash(query);
        URL_SAFE_NO_PAD.encode(format!("{prefix}{offset}{separator}{hash}"))
    }

    /// The offset in `cursor`, if it is a cursor of this format made for `query`.
    pub(crate) fn decode(&self, cursor: &str, query: &str) -> Option<usize> {
        let cursor = if self.lenient {
            cursor.trim_end_matches('=')
        } else {
            cursor
        };
        let text = String::from_utf8(URL_SAFE_NO_PAD.decode(cursor).ok()?).ok()?;
        let (offset, hash) = text.strip_prefix(self.prefix)?.split_once(self.separator)?;
        (hash == self.hash(query)).then_some(())?;
        offset.parse().ok()
    }

    fn hash(&self, query: &str) -> String {
        let query = if self.lenient { query.trim() } else { query };
        format!("{:016x}", dataset::fnv(query))
    }
}

#[cfg(test)]
mod tests {
    use super::CursorFormat;

    #[test]
    fn a_cursor_continues_only_its_own_query() {
        let strict = CursorFormat::new("~!!~", "~");
        assert_eq!(strict.decode(&strict.encode(12, "q"), "q"), Some(12));
        assert_eq!(strict.decode(&strict.encode(12, "q"), "r"), None);
        assert_eq!(strict.decode(&strict.encode(12, "q"), " q "), None);
        let lenient = CursorFormat::new("o=", ";q=").lenient();
        let cursor = lenient.encode(50, "x");
        assert_eq!(lenient.decode(&cursor, " x "), Some(50));
        assert_eq!(lenient.decode(&format!("{cursor}=="), "x"), Some(50));
    }
}
