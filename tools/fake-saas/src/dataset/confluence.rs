//! Confluence: the engineering wiki. Every incident has a postmortem page
//! (timeline from the incident channel, customer impact with the Zendesk
//! tickets, follow-ups); every plan or handbook written up in Notion has a
//! copy in Confluence pointing back to it; features ship with a blog post,
//! and other stories that have a pull request or a write-up have
//! engineering notes. Texts carry the Jira keys and PR links.

use serde::{Deserialize, Serialize};

use super::derived::{Derived, derived, escape_html, plain_slack};
use super::stories::{B, Kind, Team};
use super::{JIRA_SITE, zendesk_tickets};
use crate::time;

/// A Confluence page or blog post.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ConfluencePage {
    /// Numeric content id.
    pub id: String,
    /// `page` or `blogpost`.
    pub content_type: String,
    pub space_key: String,
    pub space_name: String,
    pub title: String,
    /// The body in storage format (XHTML).
    pub body_storage: String,
    /// The body as plain text, one block a line.
    pub body_text: String,
    /// Path under the wiki (`/spaces/OPS/pages/1000123/Title`).
    pub webui: String,
    /// The citation URL (`https://acme.atlassian.net/wiki` + `webui`).
    pub url: String,
    pub author_name: String,
    pub author_account_id: String,
    pub editor_name: String,
    pub editor_account_id: String,
    /// `2025-05-02T09:14:11.000Z`
    pub created: String,
    pub updated: String,
    pub version: u32,
    pub story: String,
    pub created_unix: i64,
    pub updated_unix: i64,
}

impl_record!(ConfluencePage, url: url, updated: updated_unix, searched: ["title", "body"],
    text: |p| format!("{}\n{}", p.title, p.body_text));

/// The wiki's base URL, as `_links.base` gives it.
pub const CONFLUENCE_BASE: &str = "https://acme.atlassian.net/wiki";

indexed_records! {
    /// Confluence pages and blog posts, in creation order.
    confluence_pages, confluence_docs: ConfluencePage = build()
}

/// A body being written: storage XHTML and plain text side by side.
#[derive(Default)]
struct Body {
    xhtml: String,
    text: Vec<String>,
}

impl Body {
    fn h(&mut self, t: &str) {
        self.xhtml.push_str(&format!("<h2>{}</h2>", escape_html(t)));
        self.text.push(t.to_string());
    }
    fn p(&mut self, t: &str) {
        self.xhtml.push_str(&format!("<p>{}</p>", escape_html(t)));
        self.text.push(t.to_string());
    }
    fn list(&mut self, items: &[String]) {
        self.xhtml.push_str("<ul>");
        for i in items {
            self.xhtml.push_str(&format!("<li>{}</li>", escape_html(i)));
            self.text.push(i.clone());
        }
        self.xhtml.push_str("</ul>");
    }
    fn links(&mut self, links: &[(String, String)]) {
        if links.is_empty() {
            return;
        }
        self.xhtml.push_str("<ul>");
        for (label, url) in links {
            self.xhtml.push_str(&format!(
                "<li><a href=\"{}\">{}</a>: {}</li>",
                escape_html(url),
                escape_html(label),
                escape_html(url)
            ));
            self.text.push(format!("{label}: {url}"));
        }
        self.xhtml.push_str("</ul>");
    }
}

/// `Title: with stuff` → `Title+with+stuff` (Confluence's URL form).
fn url_title(title: &str) -> String {
    title
        .split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("+")
}

fn space(d: &Derived) -> (&'static str, &'static str) {
    match (d.story.kind, d.story.team) {
        (Kind::Incident, _) => ("OPS", "Operations"),
        (_, Team::Product | Team::Company) => ("PROD", "Product"),
        (_, Team::Platform | Team::Security | Team::Data) => ("OPS", "Operations"),
        _ => ("ENG", "Engineering"),
    }
}

fn build() -> Vec<ConfluencePage> {
    let mut pages = Vec::new();
    for (i, d) in derived().iter().enumerate() {
        let s = d.story;
        let links = d.links();
        let mut body = Body::default();
        // The page's title and type, when it was created, and how long
        // after the story's end (or its creation, if later) it was last
        // edited: a blog post never is.
        let (title, content_type, created, edited_after) = match s.kind {
            Kind::Incident => {
                body.h("Summary");
                body.p(s.desc);
                body.h("Timeline (UTC)");
                let lines: Vec<String> = d
                    .timeline()
                    .into_iter()
                    .map(|(t, who, text)| {
                        let (_, _, _, hh, mm, _) = time::parts(t);
                        format!("{hh:02}:{mm:02} {who}: {text}")
                    })
                    .collect();
                body.list(&lines);
                body.h("Customer impact");
                let tickets: Vec<(String, String)> = zendesk_tickets()
                    .iter()
                    .filter(|t| t.story == d.info.slug)
                    .map(|t| (format!("Zendesk ticket #{}", t.id), t.url.clone()))
                    .collect();
                if tickets.is_empty() {
                    body.p("No customer reported it to support.");
                } else {
                    body.p(&format!(
                        "Support received {} ticket(s) about it:",
                        tickets.len()
                    ));
                    body.links(&tickets);
                }
                body.h("Follow-ups");
                (
                    format!("Postmortem: {}", s.title),
                    "page",
                    d.at(d.start, 26 * 3600),
                    Some(2 * 86400),
                )
            }
            Kind::Doc => {
                let Some((notion_title, blocks)) = s.notion else {
                    continue;
                };
                for b in blocks {
                    match b {
                        B::H(t) => body.h(t),
                        B::P(t) => body.p(t),
                        B::L(t) => body.list(&[t.to_string()]),
                    }
                }
                body.h("Source");
                body.p(&format!(
                    "This page is a copy for the engineering wiki. The Notion page is the source of truth: {}",
                    d.info.notion_url.clone().unwrap_or_default()
                ));
                (
                    notion_title.to_string(),
                    "page",
                    d.at(d.start, 3 * 3600),
                    Some(86400),
                )
            }
            Kind::Feature => {
                body.p(&format!("We shipped: {}.", s.title));
                body.p(s.desc);
                if let Some(pr) = d.pr {
                    body.h("How it works");
                    body.p(&plain_slack(&pr.body));
                }
                body.h("Links");
                (
                    format!("Shipped: {}", s.title),
                    "blogpost",
                    d.at(d.end, 4 * 3600),
                    None,
                )
            }
            Kind::Bug | Kind::Task => {
                if d.pr.is_none() && s.notion.is_none() {
                    continue;
                }
                body.h("Problem");
                body.p(s.desc);
                if let Some(pr) = d.pr {
                    body.h("Change");
                    body.p(&format!("{}. {}", pr.title, plain_slack(&pr.body)));
                }
                if let Some((notion_title, _)) = s.notion {
                    body.p(&format!(
                        "The write-up \"{notion_title}\" is in Notion: {}",
                        d.info.notion_url.clone().unwrap_or_default()
                    ));
                }
                body.h("Links");
                (
                    format!("Engineering notes: {}", s.title),
                    "page",
                    d.at(d.start, 5 * 3600),
                    Some(3600),
                )
            }
        };
        // Every page ends with the story's links.
        body.links(&links);
        let updated = edited_after.map_or(created, |after| d.at(d.end.max(created), after));
        let (key, space_name) = space(d);
        let id = (1_015_809 + i as u64 * 32_771 + d.h % 97).to_string();
        let webui = if content_type == "blogpost" {
            let (y, m, dd, ..) = time::parts(created);
            format!(
                "/spaces/{key}/blog/{y:04}/{m:02}/{dd:02}/{id}/{}",
                url_title(&title)
            )
        } else {
            format!("/spaces/{key}/pages/{id}/{}", url_title(&title))
        };
        let editor = if d.h & 2 == 0 { d.owner } else { d.reporter };
        let author = if s.kind == Kind::Incident {
            &super::people()[super::people::AISHA]
        } else {
            d.owner
        };
        pages.push(ConfluencePage {
            id,
            content_type: content_type.into(),
            space_key: key.into(),
            space_name: space_name.into(),
            title,
            body_storage: body.xhtml,
            // As the page reads: a line per block, blank runs collapsed.
            body_text: body
                .text
                .iter()
                .flat_map(|t| t.lines())
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join("\n"),
            url: format!("{CONFLUENCE_BASE}{webui}"),
            webui,
            author_name: author.name.clone(),
            author_account_id: author.jira_account_id.clone(),
            editor_name: editor.name.clone(),
            editor_account_id: editor.jira_account_id.clone(),
            created: time::rfc3339_millis(created, 0),
            updated: time::rfc3339_millis(updated, 0),
            version: 1 + (updated > created) as u32 * (1 + (d.h % 4) as u32),
            story: d.info.slug.clone(),
            created_unix: created,
            updated_unix: updated,
        });
    }
    pages.sort_by(|a, b| a.created_unix.cmp(&b.created_unix).then(a.id.cmp(&b.id)));
    debug_assert!(pages.iter().all(|p| p.url.starts_with(JIRA_SITE)));
    pages
}
