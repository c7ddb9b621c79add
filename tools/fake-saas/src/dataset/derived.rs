//! What the later tools' records (Confluence, Google Drive, Gmail, Zendesk,
//! HubSpot) are derived from: each story with its records in the first five
//! tools, its time span, and its cross-references.

use super::stories::{STORIES, Story};
use super::{
    DATASET_END, GithubItem, JiraIssue, LinearIssue, Person, StoryInfo, github_items, jira_issues,
    linear_issues, notion_pages, parse_date, people, slack_messages, stories,
};

/// The last instant a derived record may carry (as the core dataset).
pub(crate) fn end_limit() -> i64 {
    parse_date(DATASET_END) - 6 * 3600
}

/// One story, as the derived tools see it.
pub(crate) struct Derived {
    pub story: &'static Story,
    pub info: &'static StoryInfo,
    /// First record of the story (unix seconds).
    pub start: i64,
    /// Last change of any of its records.
    pub end: i64,
    pub jira: Option<&'static JiraIssue>,
    pub pr: Option<&'static GithubItem>,
    pub owner: &'static Person,
    pub reporter: &'static Person,
    /// The story's deterministic hash, for choices.
    pub h: u64,
}

impl Derived {
    /// The story's Linear issue, if it has one.
    pub fn linear(&self) -> Option<&'static LinearIssue> {
        linear_issues().iter().find(|l| l.story == self.info.slug)
    }

    /// The story's Jira key, else its Linear identifier.
    pub fn ticket_key(&self) -> Option<String> {
        self.jira
            .map(|j| j.key.clone())
            .or_else(|| self.linear().map(|l| l.identifier.clone()))
    }

    /// `(label, url)` of every record the story has elsewhere.
    pub fn links(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Some(j) = self.jira {
            out.push((format!("Jira {}", j.key), j.url.clone()));
        }
        if let Some(l) = self.linear() {
            out.push((format!("Linear {}", l.identifier), l.url.clone()));
        }
        if let Some(u) = &self.info.github_issue_url {
            out.push(("GitHub issue".into(), u.clone()));
        }
        if let Some(u) = &self.info.github_pr_url {
            out.push(("Pull request".into(), u.clone()));
        }
        if let Some(u) = &self.info.notion_url {
            out.push(("Notion write-up".into(), u.clone()));
        }
        out
    }

    /// One line naming the ticket and the fix, for texts people write.
    pub fn refs_sentence(&self) -> String {
        let mut parts = Vec::new();
        if let Some(j) = self.jira {
            parts.push(format!("tracked as {} ({})", j.key, j.url));
        } else if let Some(l) = self.linear() {
            parts.push(format!("tracked as {} ({})", l.identifier, l.url));
        }
        if let Some(u) = &self.info.github_pr_url {
            parts.push(format!("fixed in {u}"));
        }
        parts.join(", ")
    }

    /// `sentence` around [`Derived::refs_sentence`], or nothing when the story has
    /// no ticket and no fix.
    pub fn refs_in(&self, sentence: impl Fn(&str) -> String) -> String {
        let refs = self.refs_sentence();
        if refs.is_empty() {
            String::new()
        } else {
            sentence(&refs)
        }
    }

    /// The story's Slack messages as `(unix, author name, plain text)`.
    pub fn timeline(&self) -> Vec<(i64, String, String)> {
        slack_messages()
            .iter()
            .filter(|m| m.story == self.info.slug)
            .map(|m| {
                let who = people()
                    .iter()
                    .find(|p| p.slack_id == m.user_id)
                    .map(|p| p.name.clone())
                    .unwrap_or_else(|| m.username.clone());
                (m.unix, who, plain_slack(&m.text))
            })
            .collect()
    }

    /// `mention` of the story's Notion write-up, or nothing when it has none.
    pub fn write_up(&self, mention: impl Fn(&str) -> String) -> String {
        self.info
            .notion_url
            .as_deref()
            .map(mention)
            .unwrap_or_default()
    }

    /// A time `offset` seconds after `base`, never past the dataset's end.
    pub fn at(&self, base: i64, offset: i64) -> i64 {
        (base + offset).min(end_limit())
    }
}

/// Every story, in the order of [`stories`] (by date).
pub(crate) fn derived() -> Vec<Derived> {
    stories()
        .iter()
        .map(|info| {
            let story = STORIES
                .iter()
                .find(|s| s.slug == info.slug)
                .expect("every story info has its story");
            let slug = info.slug.as_str();
            let times = record_times(slug);
            let fallback = parse_date(story.date) + 9 * 3600;
            let start = times.iter().map(|t| t.0).min().unwrap_or(fallback);
            let end = times.iter().map(|t| t.1).max().unwrap_or(fallback);
            Derived {
                story,
                info,
                start,
                end: end.max(start),
                jira: jira_issues().iter().find(|j| j.story == slug),
                pr: github_items()
                    .iter()
                    .find(|g| g.story == slug && g.is_pull_request),
                owner: &people()[story.owner],
                reporter: &people()[story.reporter],
                h: super::fnv(slug),
            }
        })
        .collect()
}

/// When each of the story `slug`'s records in the first five tools was created and
/// last changed.
fn record_times(slug: &str) -> Vec<(i64, i64)> {
    let mut times = Vec::new();
    let mut add = |story: &str, created: i64, updated: i64| {
        if story == slug {
            times.push((created, updated));
        }
    };
    for r in github_items() {
        add(&r.story, r.created_unix, r.updated_unix);
    }
    for r in jira_issues() {
        add(&r.story, r.created_unix, r.updated_unix);
    }
    for r in linear_issues() {
        add(&r.story, r.created_unix, r.updated_unix);
    }
    for r in notion_pages() {
        add(&r.story, r.created_unix, r.updated_unix);
    }
    for m in slack_messages() {
        add(&m.story, m.unix, m.unix);
    }
    times
}

/// Slack markup to plain text: `<url|label>` → `label (url)`, `<url>` → `url`.
pub(crate) fn plain_slack(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('>') {
            Some(close) => {
                let inner = &after[..close];
                match inner.split_once('|') {
                    Some((url, label)) => out.push_str(&format!("{label} ({url})")),
                    None => out.push_str(inner),
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Escapes text for HTML/XHTML.
pub(crate) fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A deterministic id of `len` characters from `alphabet`.
pub(crate) fn token(seed: &str, len: usize, alphabet: &[u8]) -> String {
    let mut out = String::with_capacity(len);
    let mut n = 0u64;
    while out.len() < len {
        let mut r = super::fnv(&format!("{seed}#{n}"));
        for _ in 0..8 {
            if out.len() == len {
                break;
            }
            out.push(alphabet[(r % alphabet.len() as u64) as usize] as char);
            r /= alphabet.len() as u64;
        }
        n += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slack_markup_becomes_text() {
        assert_eq!(
            plain_slack("See <https://x.io/a|ACME-1> and <https://x.io/b>."),
            "See ACME-1 (https://x.io/a) and https://x.io/b."
        );
    }

    #[test]
    fn every_story_has_a_span() {
        for d in derived() {
            assert!(d.start <= d.end, "{}", d.info.slug);
            assert!(d.end <= end_limit() + 6 * 3600, "{}", d.info.slug);
        }
    }
}
