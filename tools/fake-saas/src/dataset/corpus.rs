//! A corpus of documents in place of the fictional company: each document
//! becomes a record of one vendor (document `i` goes to vendor `i mod n`),
//! in that vendor's shape, so that a retrieval benchmark runs through the
//! real connectors against vendors that search as documented
//! (`quarry eval-live --vendors`).
//!
//! The corpus is chosen once per process, before the dataset is first
//! read; the vendors it does not name answer with no records.

use std::sync::OnceLock;

use super::{
    ConfluencePage, GithubItem, JiraIssue, NotionBlock, NotionPage, SlackMessage, ZendeskTicket,
    uuid,
};

/// One document of a corpus.
#[derive(Clone, Debug)]
pub struct CorpusDocument {
    pub title: String,
    pub text: String,
    /// When the document last changed (Unix seconds), where the corpus
    /// says (the company's own set does; BEIR's public sets do not).
    pub updated_unix: Option<i64>,
}

/// The vendors a corpus can be spread across.
pub const CORPUS_VENDORS: &[&str] = &["github", "slack", "jira", "confluence", "zendesk", "notion"];

/// A record's time where its document has none of its own.
const UNIX: i64 = 1_735_689_600;

/// The document's time, or [`UNIX`].
fn unix(d: &CorpusDocument) -> i64 {
    d.updated_unix.unwrap_or(UNIX)
}

/// The corpus chosen for this process.
pub(crate) struct Corpus {
    pub github: Vec<GithubItem>,
    pub slack: Vec<SlackMessage>,
    pub jira: Vec<JiraIssue>,
    pub confluence: Vec<ConfluencePage>,
    pub zendesk: Vec<ZendeskTicket>,
    pub notion: Vec<NotionPage>,
    /// Per document, its record's citation URL.
    pub citations: Vec<String>,
}

static CORPUS: OnceLock<Corpus> = OnceLock::new();

/// The corpus chosen for this process, if one was.
pub(crate) fn chosen() -> Option<&'static Corpus> {
    CORPUS.get()
}

/// Spreads `documents` across `vendors` (each of [`CORPUS_VENDORS`]) as
/// this process's dataset, in place of the fictional company. Returns each
/// document's citation URL, by which the connectors' documents are told
/// apart. Call it before the fake starts: the dataset is read once.
pub fn use_corpus(documents: &[CorpusDocument], vendors: &[&str]) -> anyhow::Result<Vec<String>> {
    if vendors.is_empty() {
        anyhow::bail!("a corpus needs at least one vendor");
    }
    if let Some(unknown) = vendors.iter().find(|v| !CORPUS_VENDORS.contains(v)) {
        anyhow::bail!(
            "no corpus records for vendor {unknown:?}: the vendors are {}",
            CORPUS_VENDORS.join(", ")
        );
    }
    if super::built_already() {
        anyhow::bail!("the dataset was read before the corpus was chosen");
    }
    let mut corpus = Corpus {
        github: Vec::new(),
        slack: Vec::new(),
        jira: Vec::new(),
        confluence: Vec::new(),
        zendesk: Vec::new(),
        notion: Vec::new(),
        citations: Vec::new(),
    };
    for (i, document) in documents.iter().enumerate() {
        let url = match vendors[i % vendors.len()] {
            "github" => {
                let pull_request = corpus.github.len() % 2 == 1;
                push(&mut corpus.github, github(i, document, pull_request), |r| {
                    &r.html_url
                })
            }
            "slack" => push(&mut corpus.slack, slack(i, document), |r| &r.permalink),
            "jira" => push(&mut corpus.jira, jira(i, document), |r| &r.url),
            "confluence" => push(&mut corpus.confluence, confluence(i, document), |r| &r.url),
            "zendesk" => push(&mut corpus.zendesk, zendesk(i, document), |r| &r.url),
            _ => push(&mut corpus.notion, notion(i, document), |r| &r.url),
        };
        corpus.citations.push(url);
    }
    let citations = corpus.citations.clone();
    CORPUS
        .set(corpus)
        .map_err(|_| anyhow::anyhow!("a corpus was chosen already"))?;
    Ok(citations)
}

/// A record's title: the document's, or, for a document without one (a
/// chat message, a CRM record), its opening words, as a page, an issue or
/// a ticket always has a title.
fn title(d: &CorpusDocument) -> String {
    if !d.title.trim().is_empty() {
        return d.title.clone();
    }
    let words: Vec<&str> = d.text.split_whitespace().take(8).collect();
    words.join(" ")
}

fn push<R>(records: &mut Vec<R>, record: R, url: impl Fn(&R) -> &String) -> String {
    let url = url(&record).clone();
    records.push(record);
    url
}

/// Half the repository's items are pull requests (`pull_request`), as a
/// repository holds both.
fn github(i: usize, d: &CorpusDocument, pull_request: bool) -> GithubItem {
    GithubItem {
        id: 9_000_000 + i as u64,
        node_id: format!("I_corpus{i}"),
        repo: "eval/corpus".into(),
        number: i as u64,
        title: title(d),
        body: d.text.clone(),
        user_login: "corpus".into(),
        user_id: 9_000_000,
        state: "open".into(),
        is_pull_request: pull_request,
        draft: false,
        labels: Vec::new(),
        comments: 0,
        created_at: crate::time::rfc3339(unix(d)),
        updated_at: crate::time::rfc3339(unix(d)),
        closed_at: None,
        merged_at: None,
        html_url: format!(
            "https://github.com/eval/corpus/{}/{i}",
            if pull_request { "pull" } else { "issues" }
        ),
        story: String::new(),
        created_unix: unix(d),
        updated_unix: unix(d),
    }
}

fn slack(i: usize, d: &CorpusDocument) -> SlackMessage {
    let ts = format!("{}.{i:06}", unix(d));
    SlackMessage {
        iid: uuid(&format!("corpus:slack:{i}")),
        ts: ts.clone(),
        channel_id: "C0CORPUS".into(),
        channel_name: "corpus".into(),
        is_private: false,
        user_id: "U0CORPUS".into(),
        username: "corpus".into(),
        text: if d.title.trim().is_empty() {
            d.text.clone()
        } else {
            format!("{}: {}", d.title, d.text)
        },
        permalink: format!(
            "https://acme.slack.com/archives/C0CORPUS/p{}",
            ts.replace('.', "")
        ),
        story: String::new(),
        unix: unix(d),
    }
}

fn jira(i: usize, d: &CorpusDocument) -> JiraIssue {
    let key = format!("EVAL-{i}");
    JiraIssue {
        id: (20_000 + i).to_string(),
        summary: title(d),
        description: d.text.clone(),
        creator_display_name: "Corpus".into(),
        creator_account_id: "corpus".into(),
        assignee_display_name: "Corpus".into(),
        assignee_account_id: "corpus".into(),
        created: crate::time::jira(unix(d)),
        updated: crate::time::jira(unix(d)),
        resolution_date: None,
        status: "To Do".into(),
        status_category: "new".into(),
        issue_type: "Task".into(),
        priority: "Medium".into(),
        labels: Vec::new(),
        url: format!("{}/browse/{key}", super::JIRA_SITE),
        key,
        story: String::new(),
        created_unix: unix(d),
        updated_unix: unix(d),
    }
}

fn confluence(i: usize, d: &CorpusDocument) -> ConfluencePage {
    let id = (3_000_000 + i).to_string();
    let webui = format!("/spaces/EVAL/pages/{id}");
    ConfluencePage {
        content_type: "page".into(),
        space_key: "EVAL".into(),
        space_name: "Corpus".into(),
        title: title(d),
        body_storage: format!("<p>{}</p>", escape(&d.text)),
        body_text: d.text.clone(),
        url: format!("{}{webui}", super::CONFLUENCE_BASE),
        webui,
        author_name: "Corpus".into(),
        author_account_id: "corpus".into(),
        editor_name: "Corpus".into(),
        editor_account_id: "corpus".into(),
        created: crate::time::rfc3339_millis(unix(d), 0),
        updated: crate::time::rfc3339_millis(unix(d), 0),
        version: 1,
        id,
        story: String::new(),
        created_unix: unix(d),
        updated_unix: unix(d),
    }
}

fn zendesk(i: usize, d: &CorpusDocument) -> ZendeskTicket {
    let id = 50_000 + i as u64;
    ZendeskTicket {
        id,
        subject: title(d),
        description: d.text.clone(),
        status: "open".into(),
        priority: "normal".into(),
        ticket_type: "question".into(),
        tags: Vec::new(),
        requester_id: 1,
        requester_name: "Corpus".into(),
        requester_email: "corpus@example.com".into(),
        assignee_id: super::zendesk::ZENDESK_AGENT_ID,
        organization_id: None,
        created_at: crate::time::rfc3339(unix(d)),
        updated_at: crate::time::rfc3339(unix(d)),
        url: format!("https://acme.zendesk.com/agent/tickets/{id}"),
        story: String::new(),
        created_unix: unix(d),
        updated_unix: unix(d),
    }
}

fn notion(i: usize, d: &CorpusDocument) -> NotionPage {
    let id = uuid(&format!("corpus:notion:{i}"));
    NotionPage {
        url: format!("https://www.notion.so/{}", id.replace('-', "")),
        blocks: vec![NotionBlock {
            id: uuid(&format!("corpus:notion:{i}:block")),
            block_type: "paragraph".into(),
            text: d.text.clone(),
            href: None,
        }],
        id,
        title: title(d),
        created_time: crate::time::rfc3339_millis(unix(d), 0),
        last_edited_time: crate::time::rfc3339_millis(unix(d), 0),
        created_by: "corpus".into(),
        last_edited_by: "corpus".into(),
        story: String::new(),
        created_unix: unix(d),
        updated_unix: unix(d),
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
