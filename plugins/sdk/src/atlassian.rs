//! Atlassian Cloud (Jira, Confluence): an OAuth token reaches sites by cloud
//! id, and `accessible-resources` lists the sites it reaches.

use serde_json::Value;

use crate::http::Request;
use crate::json::JsonExt;
use crate::plan::{Term, any_of, terms_by_specificity};
use crate::{SearchError, SearchRequest};

/// Lists the sites an OAuth token reaches.
pub const ACCESSIBLE_RESOURCES: &str = "https://api.atlassian.com/oauth/token/accessible-resources";

/// A site the user's token reaches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    /// What the API gateway's URLs name the site by.
    pub cloud_id: String,
    /// The site's web address, without a trailing `/`.
    pub url: String,
}

/// Looks the user's site up: the one `wanted` names (its URL, name or cloud
/// id; the connection's `site` setting), else the first that grants a scope
/// containing `preferred_scope`, else the first. `product` ("Jira") names
/// the product in the error when there is none.
pub fn find_site(
    wanted: Option<&str>,
    product: &str,
    preferred_scope: Option<&str>,
) -> Result<Site, SearchError> {
    let sites: Value = Request::get(ACCESSIBLE_RESOURCES)
        .send()?
        .error_for_status()?
        .json()?;
    let sites = sites.as_array().map(Vec::as_slice).unwrap_or_default();
    let site = match wanted.filter(|w| !w.is_empty()) {
        Some(wanted) => sites.iter().find(|s| names(s, wanted)),
        None => preferred_scope
            .and_then(|scope| sites.iter().find(|s| grants(s, scope)))
            .or(sites.first()),
    };
    let site = site.ok_or_else(|| {
        SearchError::InvalidRequest(format!(
            "the token reaches no {product} site (or not the configured one)"
        ))
    })?;
    match (site.str_at("/id"), site.str_at("/url")) {
        (Some(id), Some(url)) => Ok(Site {
            cloud_id: id.to_string(),
            url: url.trim_end_matches('/').to_string(),
        }),
        _ => Err(SearchError::InvalidResponse(
            "accessible-resources entry without id or url".into(),
        )),
    }
}

/// What a JQL `text ~ "..."` or CQL `siteSearch ~ "..."` clause searches
/// for. Atlassian's text search needs every word unless told otherwise
/// ("If you combine multiple terms without specifying any Boolean
/// operators, they will be joined using AND operators"), so the phrases
/// (quoted inside the string) and the most specific terms are joined by
/// `OR`, at most [`MAX_TERMS`]; the whole query when there are none. Each
/// is stripped of the characters JQL/CQL strings and Lucene text search
/// treat specially.
pub fn search_text(request: &SearchRequest) -> String {
    let terms: Vec<Term> = terms_by_specificity(request)
        .into_iter()
        .map(|term| Term {
            // A word is one word: what escaping leaves of anything else
            // must not become a second term.
            text: if term.phrase {
                escape(&term.text)
            } else {
                escape(&term.text).replace(' ', "")
            },
            ..term
        })
        .filter(|term| !term.text.trim().is_empty())
        .collect();
    if terms.is_empty() {
        return escape(&request.query);
    }
    any_of(&terms, " OR ", MAX_TERMS, |term| {
        if term.phrase {
            format!("\\\"{}\\\"", term.text)
        } else {
            term.text.clone()
        }
    })
}

/// Terms in one text search: enough for any question, few enough that
/// the clause stays readable in an operator's log.
pub const MAX_TERMS: usize = 8;

fn escape(term: &str) -> String {
    term.chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.' | '\''))
        .collect()
}

/// Whether `wanted` is the site's URL (a trailing `/` aside), name or id.
fn names(site: &Value, wanted: &str) -> bool {
    let wanted = wanted.trim_end_matches('/');
    ["/url", "/name", "/id"]
        .iter()
        .any(|field| site.str_at(field) == Some(wanted))
}

/// Whether one of the site's scopes contains `scope` (`confluence`).
fn grants(site: &Value, scope: &str) -> bool {
    site.array_at("/scopes")
        .iter()
        .any(|s| s.as_str().is_some_and(|s| s.contains(scope)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_site_is_named_by_url_name_or_id() {
        let site = json!({"id": "c1", "name": "acme", "url": "https://acme.atlassian.net"});
        assert!(names(&site, "https://acme.atlassian.net/"));
        assert!(names(&site, "acme"));
        assert!(names(&site, "c1"));
        assert!(!names(&site, "other"));
        let scoped = json!({"scopes": ["read:confluence-content.all"]});
        assert!(grants(&scoped, "confluence"));
        assert!(!grants(&scoped, "jira"));
    }
}
