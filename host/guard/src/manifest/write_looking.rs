//! Names that look like writes, on grants that claim to read.
//!
//! A scope marked `read_only = true` and a POST route marked
//! `kind = "query"` are claims a reviewer must believe. Two claims are
//! refused unless the manifest says why they hold, in a non-empty
//! `reviewed_read_only = "..."` beside them:
//!
//! - a read-only scope whose name has a word of [`SCOPE_WRITE_WORDS`]
//!   (`pages:write`, `Mail.ReadWrite`, `gmail.send`);
//! - a query route whose path's last segment has a word of
//!   [`ROUTE_WRITE_WORDS`] (`.../comments`, `chat.postMessage`), or has
//!   none of [`SEARCH_WORDS`] (`.../things`, `.../{id}`): a POST that reads
//!   is a search, and says so in its path.
//!
//! Names are cut into words at every character that is not a letter or a
//! digit and where a lower-case letter meets an upper-case one, then
//! lower-cased: `Files.ReadWrite.All` is `files read write all`,
//! `chat.postMessage` is `chat post message`.

/// Words that, in a scope's name, say that it grants more than reading.
pub const SCOPE_WRITE_WORDS: &[&str] = &[
    "write",
    "readwrite",
    "admin",
    "delete",
    "remove",
    "manage",
    "modify",
    "edit",
    "create",
    "update",
    "insert",
    "upload",
    "send",
    "post",
    "compose",
    "publish",
    "full",
];

/// Words that, in the last segment of a POST route's path, name a write:
/// what the request makes (a comment, a message) or what it does.
pub const ROUTE_WRITE_WORDS: &[&str] = &[
    "comment", "comments", "message", "messages", "reply", "replies", "create", "update", "delete",
    "remove", "send", "post", "upload", "write", "edit", "modify", "insert", "publish", "archive",
    "invite", "share", "import", "move",
];

/// Words of which the last segment of a query route's path must have one:
/// the shapes of a search endpoint (`/search`, `/_search`, `/query`,
/// `/v1/databases/{id}/query`, `/find`, `/lookup`).
pub const SEARCH_WORDS: &[&str] = &["search", "query", "find", "lookup"];

/// The key that carries a reviewer's reason, on a scope or a route.
pub const REVIEW_KEY: &str = "reviewed_read_only";

/// The words of a name, lower-cased (see the module's documentation).
pub fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    for part in name.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut word = String::new();
        let mut previous_lower = false;
        for c in part.chars() {
            if c.is_ascii_uppercase() && previous_lower {
                words.push(std::mem::take(&mut word));
            }
            previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            word.push(c.to_ascii_lowercase());
        }
        if !word.is_empty() {
            words.push(word);
        }
    }
    words
}

/// Why a scope marked read-only looks like a write: the word that says so.
pub fn scope_write_word(scope: &str) -> Option<String> {
    words(scope)
        .into_iter()
        .find(|w| SCOPE_WRITE_WORDS.contains(&w.as_str()))
}

/// Why a POST query route to `url` (a route pattern) looks like a write,
/// as a sentence; `None` when its last segment names a search and no write.
pub fn query_route_problem(url: &str) -> Option<String> {
    let path = url
        .split_once("://")
        .map_or(url, |(_, rest)| rest)
        .split_once('/')
        .map_or("", |(_, path)| path);
    let last = path.rsplit('/').find(|s| !s.is_empty()).unwrap_or("");
    let words = words(last);
    if let Some(word) = words
        .iter()
        .find(|w| ROUTE_WRITE_WORDS.contains(&w.as_str()))
    {
        return Some(format!(
            "its path ends in {last:?}, which names a write ({word:?})"
        ));
    }
    if !words.iter().any(|w| SEARCH_WORDS.contains(&w.as_str())) {
        return Some(format!(
            "its path ends in {last:?}, which names no search (a query route's last \
             segment says search, query, find or lookup)"
        ));
    }
    None
}

/// A reviewer's reason, when one is given and says something.
pub fn reason_given(reason: Option<&str>) -> bool {
    reason.is_some_and(|r| !r.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cut_into_words() {
        assert_eq!(
            words("Files.ReadWrite.All"),
            ["files", "read", "write", "all"]
        );
        assert_eq!(words("chat.postMessage"), ["chat", "post", "message"]);
        assert_eq!(words("read:jira-work"), ["read", "jira", "work"]);
        assert_eq!(words("_search"), ["search"]);
        assert_eq!(words("{id}"), ["id"]);
        assert_eq!(words("v2Search"), ["v2", "search"]);
    }

    #[test]
    fn scope_names_that_say_write() {
        for (scope, word) in [
            ("pages:write", "write"),
            ("Mail.ReadWrite", "write"),
            ("mail.readwrite", "readwrite"),
            ("https://www.googleapis.com/auth/gmail.send", "send"),
            ("admin:org", "admin"),
            ("full", "full"),
        ] {
            assert_eq!(scope_write_word(scope).as_deref(), Some(word), "{scope}");
        }
        for scope in [
            "search:read",
            "read:confluence-content.all",
            "https://www.googleapis.com/auth/drive.readonly",
            "Files.Read.All",
            "offline_access",
            "crm.objects.deals.read",
            "workspaces.typeahead:read",
            "rewrite_history:read",
        ] {
            assert_eq!(scope_write_word(scope), None, "{scope}");
        }
    }

    #[test]
    fn query_routes_that_say_write_or_not_search() {
        for url in [
            "https://api.hubapi.com/crm/v3/objects/tickets/search",
            "https://api.notion.com/v1/search",
            "https://api.notion.com/v1/databases/{id}/query",
            "https://graph.microsoft.com/v1.0/search/query",
            "https://es.example.com/{index}/_search",
            "https://api.example.com/comments/search",
        ] {
            assert_eq!(query_route_problem(url), None, "{url}");
        }
        for (url, needle) in [
            (
                "https://api.notion.com/v1/pages/{id}/comments",
                "names a write (\"comments\")",
            ),
            (
                "https://slack.com/api/chat.postMessage",
                "names a write (\"post\")",
            ),
            (
                "https://api.example.com/search/create",
                "names a write (\"create\")",
            ),
            ("https://api.example.com/v1/things", "names no search"),
            (
                "https://api.example.com/v1/things/{id}",
                "\"{id}\", which names no search",
            ),
            ("https://api.example.com/", "names no search"),
        ] {
            let problem = query_route_problem(url).unwrap_or_default();
            assert!(problem.contains(needle), "{url}: {problem}");
        }
    }

    #[test]
    fn a_reason_must_say_something() {
        assert!(reason_given(Some(
            "the vendor documents this scope as read-only"
        )));
        assert!(!reason_given(Some("  ")));
        assert!(!reason_given(None));
    }
}
