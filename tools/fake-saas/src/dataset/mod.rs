//! The seeded dataset: Acme, a fictional online shop selling coffee and coffee gear.
//!
//! About fifty *stories* (bugs, features, incidents, plans, handbooks) spread from
//! January 2025 to November 2026. Each story is discussed in Slack, filed in Jira
//! (project `ACME`) and/or Linear (team `ENG`), fixed in GitHub (`acme/shop`,
//! `acme/infra`, `acme/mobile-app`) with an issue and a pull request that mention the
//! ticket, and often written up in Notion. Records reference each other by key and URL.
//!
//! The later tools are derived from the same stories (see `derived.rs`): Confluence
//! postmortems, notes and copies of the Notion write-ups; Google Drive PRDs, drafts and
//! incident timelines; the support mailbox in Gmail; Zendesk tickets from customers
//! (`customers.rs` holds what they said); HubSpot companies, contacts, deals and tickets.
//! Then Salesforce accounts and cases for the business customers the bugs and incidents
//! hit; Microsoft 365 post-mortems, plan reviews, the incident register and leadership
//! mails; Asana launch tasks; Trello cards on the marketing and ops boards; Intercom
//! conversations with the customers about the bugs.
//!
//! Everything is deterministic: the same records, ids, timestamps and URLs on every run.
//! The functions below return the records per vendor, each with its citation URL.

/// Implements [`Record`] for a record type: the field holding its citation URL, the
/// field holding its update time, the vendor's names of the fields its searchable
/// text is made of, and how that text is put together.
macro_rules! impl_record {
    ($record:ty, url: $url:ident, updated: $updated:ident, searched: [$($field:literal),*],
     text: |$it:ident| $text:expr) => {
        impl $crate::dataset::Record for $record {
            const SEARCHED: &'static [&'static str] = &[$($field),*];
            fn citation_url(&self) -> &str {
                &self.$url
            }
            fn searchable_text(&self) -> String {
                let $it = self;
                $text
            }
            fn updated_unix(&self) -> i64 {
                self.$updated
            }
        }
    };
}

/// A vendor's records, built by `$build` on first use and indexed once, with their
/// two accessors: `$records()` (documented by the comment given) and `$docs()`, the
/// index of the records' searchable texts, in the same order.
macro_rules! indexed_records {
    ($(#[$comment:meta])* $records:ident, $docs:ident: $record:ty = $build:expr) => {
        static INDEXED: std::sync::LazyLock<$crate::dataset::Indexed<$record>> =
            std::sync::LazyLock::new(|| {
                $crate::dataset::Indexed::new(match $crate::dataset::corpus::chosen() {
                    Some(corpus) => <$record as $crate::dataset::FromCorpus>::from_corpus(corpus),
                    None => $build,
                })
            });

        $(#[$comment])*
        pub fn $records() -> &'static [$record] {
            &INDEXED.records
        }

        /// The records' searchable texts, pre-tokenized, in the same order.
        pub(crate) fn $docs() -> &'static $crate::search::Index {
            &INDEXED.index
        }
    };
}

mod confluence;
pub mod corpus;
mod customers;
mod derived;
mod drive;
mod gmail;
mod hubspot;
mod people;
mod stories;
mod zendesk;
// Salesforce, Microsoft 365, Asana, Trello, Intercom.
mod asana;
pub mod beir;
mod intercom;
mod microsoft;
mod salesforce;
mod trello;

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::search::Index;
use crate::time;
use people::{CHANNELS, PEOPLE};
use stories::{B, CHATTER, Kind, STORIES, Story};

pub use asana::{ASANA_WORKSPACE_GID, AsanaTask, asana_tasks, user_gid as asana_user_gid};
pub(crate) use asana::{asana_docs, asana_name_docs, gid as asana_gid};
pub(crate) use confluence::confluence_docs;
pub use confluence::{CONFLUENCE_BASE, ConfluencePage, confluence_pages};
pub(crate) use drive::drive_docs;
pub use drive::{DriveFile, MIME_DOC, MIME_PDF, MIME_SHEET, drive_files};
pub(crate) use gmail::gmail_docs;
pub use gmail::{GMAIL_ADDRESS, GmailMessage, gmail_messages};
pub(crate) use hubspot::hubspot_docs;
pub use hubspot::{HUBSPOT_PORTAL_ID, HubspotObject, hubspot_objects};
pub(crate) use intercom::intercom_docs;
pub use intercom::{
    INTERCOM_ADMIN_ID, INTERCOM_APP_ID, IntercomConversation, IntercomPart, intercom_conversations,
};
pub(crate) use microsoft::m365_docs;
pub use microsoft::{
    ENTITY_TYPES as M365_ENTITY_TYPES, INCIDENT_CHAT, LEADERSHIP_LIST, M365Item, SHAREPOINT_HOST,
    SHAREPOINT_SITE, m365_items,
};
pub(crate) use salesforce::salesforce_docs;
pub use salesforce::{
    SALESFORCE_INSTANCE, SALESFORCE_ORG_ID, SalesforceRecord, salesforce_records, salesforce_time,
};
pub use stories_public::*;
pub(crate) use trello::trello_docs;
pub use trello::{
    TRELLO_BOARDS, TrelloCard, board_id as trello_board_id, list_id as trello_list_id,
    member_id as trello_member_id, trello_cards,
};
pub use zendesk::{ZENDESK_SUBDOMAIN, ZendeskTicket, zendesk_tickets};
pub(crate) use zendesk::{organization_name as zendesk_organization_name, zendesk_docs};

/// The Jira Cloud site.
pub const JIRA_SITE: &str = "https://acme.atlassian.net";
/// The Jira site's cloud id (returned by accessible-resources).
pub const JIRA_CLOUD_ID: &str = "7c4f1a2e-3b9d-4e8f-a1c6-5d2e9b0f8a34";
/// The Jira project key.
pub const JIRA_PROJECT: &str = "ACME";
/// The Linear organisation URL key.
pub const LINEAR_ORG: &str = "acme";
/// The Linear team key.
pub const LINEAR_TEAM: &str = "ENG";
/// The Slack workspace (team) id.
pub const SLACK_TEAM_ID: &str = "T0ACME123";
/// The Slack workspace domain.
pub const SLACK_DOMAIN: &str = "acme";
/// The GitHub repositories.
pub const GITHUB_REPOS: &[&str] = &["acme/shop", "acme/infra", "acme/mobile-app"];
/// The Notion workspace id.
pub const NOTION_WORKSPACE_ID: &str = "3f1b6a52-8d0e-4c7a-9b15-e2d4c6a8f901";
/// The users that can sign in to every vendor (both see the same company data).
pub const USERS: &[&str] = &["alice", "bob"];
/// Calls `$callback!` with the vendors that have a data API, as used in
/// token names (`fake-<vendor>-<user>`), then `$extra` names: the one list
/// behind [`VENDORS`] and the search declarations built in
/// (`search::BUILT_IN`, which `include_str!` needs as literals).
macro_rules! with_vendors {
    ($callback:ident $(, $extra:literal)*) => {
        $callback!(
            "github",
            "slack",
            "notion",
            "linear",
            "jira",
            "confluence",
            "google-drive",
            "gmail",
            "zendesk",
            "hubspot",
            "salesforce",
            "microsoft-365",
            "asana",
            "trello",
            "intercom",
            $($extra),*
        );
    };
}
pub(crate) use with_vendors;

macro_rules! vendor_list {
    ($($name:literal),* $(,)?) => {
        /// The vendors with a data API, as used in token names
        /// (`fake-<vendor>-<user>`).
        pub const VENDORS: &[&str] = &[$($name),*];
    };
}
// The coded vendors, then those played from data (`declared::PLAYED_FROM_DATA`).
with_vendors!(vendor_list, "google-calendar", "box", "sentry");
/// Connectors that are not named after their vendor: (connector, vendor).
/// Microsoft 365 is four connectors, split along Microsoft's permissions,
/// on one Graph.
pub const CONNECTORS_OF_VENDORS: &[(&str, &str)] = &[
    ("microsoft-files", "microsoft-365"),
    ("outlook-mail", "microsoft-365"),
    ("outlook-calendar", "microsoft-365"),
    ("microsoft-teams", "microsoft-365"),
];

/// The connectors the fake vendors serve, in [`VENDORS`]' order: each
/// vendor's own name, or the connectors [`CONNECTORS_OF_VENDORS`] gives it.
pub static CONNECTORS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
    VENDORS
        .iter()
        .flat_map(|vendor| {
            let own: Vec<&'static str> = CONNECTORS_OF_VENDORS
                .iter()
                .filter(|(_, of)| of == vendor)
                .map(|(connector, _)| *connector)
                .collect();
            if own.is_empty() { vec![*vendor] } else { own }
        })
        .collect()
});

/// The vendor (one of [`VENDORS`]) that a connector id or vendor name
/// stands for.
pub fn vendor_of(connector: &str) -> &str {
    CONNECTORS_OF_VENDORS
        .iter()
        .find(|(id, _)| *id == connector)
        .map_or(connector, |(_, vendor)| vendor)
}

/// No record is later than this.
pub const DATASET_END: &str = "2026-11-21T00:00:00Z";

mod stories_public {
    use super::*;

    /// An Acme employee.
    #[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
    pub struct Person {
        pub name: String,
        pub title: String,
        pub email: String,
        pub github_login: String,
        pub github_id: u64,
        pub slack_id: String,
        pub slack_username: String,
        pub notion_user_id: String,
        pub jira_account_id: String,
        pub linear_user_id: String,
    }

    /// A GitHub issue or pull request.
    #[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
    pub struct GithubItem {
        pub id: u64,
        pub node_id: String,
        /// `owner/name`
        pub repo: String,
        pub number: u64,
        pub title: String,
        pub body: String,
        pub user_login: String,
        pub user_id: u64,
        /// `open` or `closed`
        pub state: String,
        pub is_pull_request: bool,
        pub draft: bool,
        pub labels: Vec<String>,
        pub comments: u32,
        pub created_at: String,
        pub updated_at: String,
        pub closed_at: Option<String>,
        pub merged_at: Option<String>,
        /// The citation URL (`https://github.com/acme/shop/issues/482` or `/pull/490`).
        pub html_url: String,
        /// Slug of the story the record belongs to.
        pub story: String,
        pub created_unix: i64,
        pub updated_unix: i64,
    }

    /// A Slack message.
    #[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
    pub struct SlackMessage {
        pub iid: String,
        /// `1714650000.001200`
        pub ts: String,
        pub channel_id: String,
        pub channel_name: String,
        pub is_private: bool,
        pub user_id: String,
        pub username: String,
        pub text: String,
        /// The citation URL (`https://acme.slack.com/archives/C.../p<ts without dot>`).
        pub permalink: String,
        /// Slug of the story, or `chatter`.
        pub story: String,
        pub unix: i64,
    }

    /// One block of a Notion page body.
    #[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
    pub struct NotionBlock {
        pub id: String,
        /// `paragraph`, `heading_2` or `bulleted_list_item`
        pub block_type: String,
        pub text: String,
        /// Link of the whole text, if any.
        pub href: Option<String>,
    }

    /// A Notion page.
    #[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
    pub struct NotionPage {
        /// Dashed UUID.
        pub id: String,
        pub title: String,
        /// The citation URL (`https://www.notion.so/<Title-With-Dashes>-<id without dashes>`).
        pub url: String,
        pub created_time: String,
        pub last_edited_time: String,
        pub created_by: String,
        pub last_edited_by: String,
        pub blocks: Vec<NotionBlock>,
        pub story: String,
        pub created_unix: i64,
        pub updated_unix: i64,
    }

    impl NotionPage {
        /// The body as plain text, one block a line.
        pub fn body_text(&self) -> String {
            self.blocks
                .iter()
                .map(|b| b.text.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        }
    }

    /// A Linear issue.
    #[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
    pub struct LinearIssue {
        pub id: String,
        /// `ENG-123`
        pub identifier: String,
        pub number: u64,
        pub title: String,
        /// Markdown.
        pub description: String,
        /// The citation URL (`https://linear.app/acme/issue/ENG-123/slug`).
        pub url: String,
        pub created_at: String,
        pub updated_at: String,
        pub completed_at: Option<String>,
        pub creator_name: String,
        pub creator_id: String,
        pub assignee_name: String,
        pub assignee_id: String,
        pub state_name: String,
        pub state_type: String,
        pub priority: u8,
        pub priority_label: String,
        pub labels: Vec<String>,
        pub branch_name: String,
        pub story: String,
        pub created_unix: i64,
        pub updated_unix: i64,
    }

    /// A Jira issue.
    #[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
    pub struct JiraIssue {
        /// Numeric id as a string (`10482`).
        pub id: String,
        /// `ACME-123`
        pub key: String,
        pub summary: String,
        /// Plain text; paragraphs separated by blank lines (served as an ADF document).
        pub description: String,
        pub creator_display_name: String,
        pub creator_account_id: String,
        pub assignee_display_name: String,
        pub assignee_account_id: String,
        pub created: String,
        pub updated: String,
        pub resolution_date: Option<String>,
        pub status: String,
        pub status_category: String,
        pub issue_type: String,
        pub priority: String,
        pub labels: Vec<String>,
        /// The citation URL (`https://acme.atlassian.net/browse/ACME-123`).
        pub url: String,
        pub story: String,
        pub created_unix: i64,
        pub updated_unix: i64,
    }

    /// How the records of one story relate.
    #[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
    pub struct StoryInfo {
        pub slug: String,
        pub title: String,
        /// `bug`, `feature`, `incident`, `task` or `doc`
        pub kind: String,
        pub jira_key: Option<String>,
        pub linear_identifier: Option<String>,
        pub github_issue_url: Option<String>,
        pub github_pr_url: Option<String>,
        pub notion_url: Option<String>,
        pub notion_title: Option<String>,
        pub slack_permalinks: Vec<String>,
    }
}

/// A record of any vendor.
pub trait Record {
    /// The fields of the searchable text, by the vendor's names: each must be
    /// one its search declaration says the vendor searches.
    const SEARCHED: &'static [&'static str];
    /// The URL a citation should point to.
    fn citation_url(&self) -> &str;
    /// The text the fake searches (Notion: the title only).
    fn searchable_text(&self) -> String;
    /// Update time, unix seconds.
    fn updated_unix(&self) -> i64;
}

impl_record!(GithubItem, url: html_url, updated: updated_unix, searched: ["title", "body"],
    text: |i| format!("{}\n{}", i.title, i.body));
impl_record!(SlackMessage, url: permalink, updated: unix, searched: ["text"],
    text: |m| m.text.clone());
impl_record!(NotionPage, url: url, updated: updated_unix, searched: ["title"],
    text: |p| p.title.clone());
impl_record!(LinearIssue, url: url, updated: updated_unix, searched: ["title", "description"],
    text: |i| format!("{}\n{}", i.title, i.description));
impl_record!(JiraIssue, url: url, updated: updated_unix, searched: ["summary", "description"],
    text: |i| format!("{}\n{}", i.summary, i.description));

/// A vendor's records when a corpus replaces the company
/// ([`corpus::use_corpus`]): the corpus's share of the vendors it spreads
/// over, none for the others.
pub(crate) trait FromCorpus: Sized {
    fn from_corpus(_corpus: &corpus::Corpus) -> Vec<Self> {
        Vec::new()
    }
}

impl FromCorpus for ConfluencePage {
    fn from_corpus(corpus: &corpus::Corpus) -> Vec<Self> {
        corpus.confluence.clone()
    }
}

impl FromCorpus for ZendeskTicket {
    fn from_corpus(corpus: &corpus::Corpus) -> Vec<Self> {
        corpus.zendesk.clone()
    }
}

impl FromCorpus for AsanaTask {}
impl FromCorpus for DriveFile {}
impl FromCorpus for GmailMessage {}
impl FromCorpus for HubspotObject {}
impl FromCorpus for IntercomConversation {}
impl FromCorpus for M365Item {}
impl FromCorpus for SalesforceRecord {}
impl FromCorpus for TrelloCard {}

/// A vendor's records and the index of their searchable texts, in the same order.
pub(crate) struct Indexed<T> {
    pub records: Vec<T>,
    pub index: Index,
}

impl<T: Record> Indexed<T> {
    fn new(records: Vec<T>) -> Self {
        let index = index_of(&records);
        Indexed { records, index }
    }
}

/// The index of the records' searchable texts.
pub(crate) fn index_of<T: Record>(records: &[T]) -> Index {
    Index::new(records.iter().map(Record::searchable_text))
}

struct Built {
    people: Vec<Person>,
    github: Vec<GithubItem>,
    slack: Vec<SlackMessage>,
    notion: Vec<NotionPage>,
    linear: Vec<LinearIssue>,
    jira: Vec<JiraIssue>,
    stories: Vec<StoryInfo>,
    docs: Docs,
}

/// The indexes of the records' searchable texts, in the same order as the records.
pub(crate) struct Docs {
    pub github: Index,
    pub slack: Index,
    pub notion: Index,
    pub linear: Index,
    pub jira: Index,
}

static BUILT: OnceLock<Built> = OnceLock::new();

fn built() -> &'static Built {
    BUILT.get_or_init(|| match corpus::chosen() {
        Some(corpus) => from_corpus(corpus),
        None => build(),
    })
}

/// Whether the dataset has been read (a corpus can no longer be chosen).
fn built_already() -> bool {
    BUILT.get().is_some()
}

/// The first five vendors' records from a corpus; no people, stories or
/// Linear issues.
fn from_corpus(corpus: &corpus::Corpus) -> Built {
    let docs = Docs {
        github: index_of(&corpus.github),
        slack: index_of(&corpus.slack),
        notion: index_of(&corpus.notion),
        linear: index_of::<LinearIssue>(&[]),
        jira: index_of(&corpus.jira),
    };
    Built {
        people: Vec::new(),
        github: corpus.github.clone(),
        slack: corpus.slack.clone(),
        notion: corpus.notion.clone(),
        linear: Vec::new(),
        jira: corpus.jira.clone(),
        stories: Vec::new(),
        docs,
    }
}

/// Acme's employees.
pub fn people() -> &'static [Person] {
    &built().people
}
/// GitHub issues and pull requests, ordered by repository and number.
pub fn github_items() -> &'static [GithubItem] {
    &built().github
}
/// Slack messages, in time order.
pub fn slack_messages() -> &'static [SlackMessage] {
    &built().slack
}
/// Notion pages, in creation order.
pub fn notion_pages() -> &'static [NotionPage] {
    &built().notion
}
/// Linear issues, by number.
pub fn linear_issues() -> &'static [LinearIssue] {
    &built().linear
}
/// Jira issues, by key number.
pub fn jira_issues() -> &'static [JiraIssue] {
    &built().jira
}
/// The stories and the records that belong to each.
pub fn stories() -> &'static [StoryInfo] {
    &built().stories
}
pub(crate) fn docs() -> &'static Docs {
    &built().docs
}

/// Number of records per vendor: (github, slack, notion, linear, jira).
pub fn counts() -> (usize, usize, usize, usize, usize) {
    (
        github_items().len(),
        slack_messages().len(),
        notion_pages().len(),
        linear_issues().len(),
        jira_issues().len(),
    )
}

// ---------------------------------------------------------------------------------------
// Deterministic helpers

pub(crate) fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    mix(h)
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

/// A version-4-shaped UUID derived from a seed string.
pub(crate) fn uuid(seed: &str) -> String {
    let a = fnv(seed);
    let b = mix(a ^ 0x5851f42d4c957f2d);
    let hex = format!("{a:016x}{b:016x}");
    let mut h: Vec<char> = hex.chars().collect();
    h[12] = '4';
    h[16] = ['8', '9', 'a', 'b'][(b & 3) as usize];
    let s: String = h.into_iter().collect();
    format!(
        "{}-{}-{}-{}-{}",
        &s[0..8],
        &s[8..12],
        &s[12..16],
        &s[16..20],
        &s[20..32]
    )
}

/// `words` joined by dashes (empty ones skipped), up to the first word that would make
/// the text longer than `max_len`.
pub(crate) fn dashed<'a>(words: impl IntoIterator<Item = &'a str>, max_len: usize) -> String {
    let mut out = String::new();
    for word in words.into_iter().filter(|w| !w.is_empty()) {
        if out.len() + word.len() > max_len {
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(word);
    }
    out
}

/// `Q3 launch plan` → `Q3-launch-plan`.
pub(crate) fn dashed_title(title: &str) -> String {
    dashed(title.split(|c: char| !c.is_alphanumeric()), usize::MAX)
}

fn linear_slug(title: &str) -> String {
    dashed(dashed_title(title).to_lowercase().split('-'), 60)
}

fn notion_url(title: &str, id: &str) -> String {
    format!(
        "https://www.notion.so/{}-{}",
        dashed_title(title),
        id.replace('-', "")
    )
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Bug => "bug",
        Kind::Feature => "feature",
        Kind::Incident => "incident",
        Kind::Task => "task",
        Kind::Doc => "doc",
    }
}

fn person(i: usize) -> Person {
    let (name, login, gid, sid, suser, title) = PEOPLE[i];
    let first = suser;
    let last = name
        .split(' ')
        .next_back()
        .unwrap_or(name)
        .to_lowercase()
        .replace('ó', "o")
        .replace('á', "a");
    Person {
        name: name.to_string(),
        title: title.to_string(),
        email: format!("{first}.{last}@acme-shop.example"),
        github_login: login.to_string(),
        github_id: gid,
        slack_id: sid.to_string(),
        slack_username: suser.to_string(),
        notion_user_id: uuid(&format!("notion-user:{login}")),
        jira_account_id: format!("712020:{}", uuid(&format!("jira-user:{login}"))),
        linear_user_id: uuid(&format!("linear-user:{login}")),
    }
}

fn channel(name: &str) -> (&'static str, &'static str, bool) {
    *CHANNELS
        .iter()
        .find(|c| c.1 == name)
        .unwrap_or_else(|| panic!("unknown channel {name}"))
}

fn parse_date(s: &str) -> i64 {
    time::parse(s)
        .unwrap_or_else(|| panic!("bad date {s}"))
        .start
}

fn slack_ts(unix: i64, seed: &str) -> String {
    format!("{unix}.{:06}", fnv(seed) % 1_000_000)
}

/// A message `author` wrote in `channel_name` at `unix`, in `story`; `seed` makes its
/// ids (the same seed, the same ids).
fn slack_message(
    channel_name: &str,
    author: &Person,
    unix: i64,
    seed: &str,
    text: String,
    story: &str,
) -> SlackMessage {
    let (channel_id, channel_name, is_private) = channel(channel_name);
    let ts = slack_ts(unix, &format!("ts:{seed}"));
    SlackMessage {
        iid: uuid(&format!("slack-iid:{seed}")),
        permalink: permalink(channel_id, &ts),
        ts,
        channel_id: channel_id.into(),
        channel_name: channel_name.into(),
        is_private,
        user_id: author.slack_id.clone(),
        username: author.slack_username.clone(),
        text,
        story: story.into(),
        unix,
    }
}

fn permalink(channel_id: &str, ts: &str) -> String {
    format!(
        "https://{SLACK_DOMAIN}.slack.com/archives/{channel_id}/p{}",
        ts.replace('.', "")
    )
}

// ---------------------------------------------------------------------------------------
// The builder

struct Keys {
    jira: Option<(u64, String)>,
    linear: Option<(u64, String)>,
    issue: Option<(u64, String)>,
    pr: Option<(u64, String)>,
    notion: Option<(String, String)>,
}

impl Keys {
    fn ticket(&self) -> Option<&str> {
        self.jira
            .as_ref()
            .or(self.linear.as_ref())
            .map(|k| k.1.as_str())
    }
}

fn jira_url(key: &str) -> String {
    format!("{JIRA_SITE}/browse/{key}")
}

fn expand(text: &str, s: &Story, k: &Keys, linear_url: &Option<String>) -> String {
    let mut out = text.to_string();
    let link = |url: &str, label: &str| format!("<{url}|{label}>");
    let missing = |what: &str| -> ! { panic!("story {}: no {what} for placeholder", s.slug) };
    if out.contains("{ticket}") {
        let t = k.ticket().unwrap_or_else(|| missing("ticket"));
        let url = if k.jira.is_some() {
            jira_url(t)
        } else {
            linear_url.clone().unwrap_or_default()
        };
        out = out.replace("{ticket}", &link(&url, t));
    }
    if out.contains("{jira}") {
        let t = &k.jira.as_ref().unwrap_or_else(|| missing("jira")).1;
        out = out.replace("{jira}", &link(&jira_url(t), t));
    }
    if out.contains("{linear}") {
        let t = &k.linear.as_ref().unwrap_or_else(|| missing("linear")).1;
        out = out.replace(
            "{linear}",
            &link(linear_url.as_deref().unwrap_or_default(), t),
        );
    }
    if out.contains("{issue}") {
        let u = &k.issue.as_ref().unwrap_or_else(|| missing("issue")).1;
        out = out.replace("{issue}", &format!("<{u}>"));
    }
    if out.contains("{pr}") {
        let u = &k.pr.as_ref().unwrap_or_else(|| missing("pr")).1;
        out = out.replace("{pr}", &format!("<{u}>"));
    }
    if out.contains("{notion}") {
        let u = &k.notion.as_ref().unwrap_or_else(|| missing("notion")).1;
        out = out.replace("{notion}", &format!("<{u}>"));
    }
    out
}

fn build() -> Built {
    let end_limit = parse_date(DATASET_END) - 6 * 3600;
    let people: Vec<Person> = (0..PEOPLE.len()).map(person).collect();
    let mut order: Vec<&Story> = STORIES.iter().collect();
    order.sort_by_key(|s| (parse_date(s.date), s.slug));

    let mut github = Vec::new();
    let mut slack = Vec::new();
    let mut notion = Vec::new();
    let mut linear = Vec::new();
    let mut jira = Vec::new();
    let mut infos = Vec::new();

    let mut jira_n = 101u64;
    let mut linear_n = 41u64;
    let mut gh_n: Vec<(&str, u64)> = vec![
        ("acme/shop", 311),
        ("acme/infra", 57),
        ("acme/mobile-app", 142),
    ];

    for s in order {
        let h = fnv(s.slug);
        let t0 = parse_date(s.date) + 8 * 3600 + ((h % 420) as i64) * 60 + (h >> 20) as i64 % 60;
        let span = s.days as i64 * 86400;
        let end = (t0 + span).min(end_limit);
        let owner = &people[s.owner];
        let reporter = &people[s.reporter];

        // Keys and numbers.
        let jira_key = s.jira.then(|| {
            let n = jira_n;
            jira_n += 3 + h % 5;
            (n, format!("{JIRA_PROJECT}-{n}"))
        });
        let linear_key = s.linear.then(|| {
            let n = linear_n;
            linear_n += 2 + (h >> 8) % 6;
            (n, format!("{LINEAR_TEAM}-{n}"))
        });
        let repo = s.team.repo();
        let counter = &mut gh_n.iter_mut().find(|r| r.0 == repo).expect("repo").1;
        let issue = s.gh_issue.then(|| {
            let n = *counter;
            *counter += 1 + (h >> 12) % 3;
            (n, format!("https://github.com/{repo}/issues/{n}"))
        });
        let pr = s.pr.map(|_| {
            let n = *counter;
            *counter += 1 + (h >> 16) % 4;
            (n, format!("https://github.com/{repo}/pull/{n}"))
        });
        let notion_page = s.notion.map(|(title, _)| {
            let id = uuid(&format!("notion-page:{}", s.slug));
            let url = notion_url(title, &id);
            (id, url)
        });
        let keys = Keys {
            jira: jira_key.clone(),
            linear: linear_key.clone(),
            issue: issue.clone(),
            pr: pr.clone(),
            notion: notion_page.clone(),
        };
        let linear_url = linear_key.as_ref().map(|(_, id)| {
            format!(
                "https://linear.app/{LINEAR_ORG}/issue/{id}/{}",
                linear_slug(s.title)
            )
        });

        // Slack messages.
        let n = s.slack.len();
        let msg_span = if s.kind == Kind::Incident {
            3 * 3600
        } else {
            span
        };
        let mut last_t = t0 - 60;
        let mut permalinks = Vec::new();
        let mut first_pr_mention = None;
        let mut first_notion_mention = None;
        let mut said: Vec<(i64, &str)> = Vec::new();
        for (i, (who, text)) in s.slack.iter().enumerate() {
            let mut t = if i == 0 {
                t0
            } else {
                let frac = i as f64 / (n - 1).max(1) as f64;
                let base = if s.kind == Kind::Incident && i == n - 1 && n > 2 {
                    (span as f64 * 0.8) as i64
                } else {
                    (msg_span as f64 * frac * frac) as i64
                };
                t0 + base + (fnv(&format!("{}:{i}", s.slug)) % 1500) as i64
            };
            t = t.max(last_t + 47).min(end_limit);
            last_t = t;
            let (chan_name, text) = match text.strip_prefix('#') {
                Some(rest) => {
                    let (c, r) = rest.split_once(' ').unwrap_or((rest, ""));
                    (c, r)
                }
                None => (s.channel.unwrap_or(s.team.channel()), *text),
            };
            said.push((t, text));
            if text.contains("{pr}") && first_pr_mention.is_none() {
                first_pr_mention = Some(t);
            }
            if text.contains("{notion}") && first_notion_mention.is_none() {
                first_notion_mention = Some(t);
            }
            let text = expand(text, s, &keys, &linear_url);
            let seed = format!("{}:{i}", s.slug);
            let message = slack_message(chan_name, &people[*who], t, &seed, text, s.slug);
            permalinks.push(message.permalink.clone());
            slack.push(message);
        }

        let open = s.open;
        // An open ticket last changed at the story's end, a closed one `delay` after.
        let last_change = |delay: i64| {
            if open {
                end
            } else {
                (end + delay).min(end_limit)
            }
        };
        // Records exist before the first Slack message that links them.
        let created_before = |default: i64, placeholders: &[&str]| -> i64 {
            said.iter()
                .find(|(_, text)| placeholders.iter().any(|p| text.contains(p)))
                .map(|(t, _)| default.min(t - 180 - (h % 600) as i64))
                .unwrap_or(default)
        };
        let labels_for = |extra: &[&str]| -> Vec<String> {
            let mut l: Vec<String> = match s.kind {
                Kind::Bug => vec!["bug".into()],
                Kind::Feature => vec!["enhancement".into()],
                Kind::Incident => vec!["bug".into(), "incident".into()],
                Kind::Task => vec!["chore".into()],
                Kind::Doc => vec!["planning".into()],
            };
            l.push(s.team.label().into());
            l.extend(extra.iter().map(|e| e.to_string()));
            l
        };

        // Jira.
        if let Some((n, key)) = &jira_key {
            let created = created_before(t0 + 1200, &["{jira}", "{ticket}"]);
            let updated = last_change(3600);
            let mut desc = vec![s.desc.to_string()];
            if let Some((_, url)) = &issue {
                desc.push(format!("GitHub issue: {url}"));
            }
            if let Some((_, url)) = &pr {
                desc.push(format!("Fix: {url}"));
            }
            if let Some((_, id)) = &linear_key {
                desc.push(format!("Engineering work is tracked in Linear as {id}."));
            }
            jira.push(JiraIssue {
                id: (10000 + n * 3 + h % 3).to_string(),
                key: key.clone(),
                summary: s.title.into(),
                description: desc.join("\n\n"),
                creator_display_name: reporter.name.clone(),
                creator_account_id: reporter.jira_account_id.clone(),
                assignee_display_name: owner.name.clone(),
                assignee_account_id: owner.jira_account_id.clone(),
                created: time::jira(created),
                updated: time::jira(updated),
                resolution_date: (!open).then(|| time::jira(end)),
                status: if open { "In Progress" } else { "Done" }.into(),
                status_category: if open { "indeterminate" } else { "done" }.into(),
                issue_type: match s.kind {
                    Kind::Bug | Kind::Incident => "Bug",
                    Kind::Feature => "Story",
                    Kind::Task => "Task",
                    Kind::Doc => "Epic",
                }
                .into(),
                priority: match s.kind {
                    Kind::Incident => "Highest",
                    Kind::Bug => "High",
                    _ => "Medium",
                }
                .into(),
                labels: labels_for(&[]),
                url: jira_url(key),
                story: s.slug.into(),
                created_unix: created,
                updated_unix: updated,
            });
        }

        // Linear.
        if let Some((n, identifier)) = &linear_key {
            let created = created_before(
                t0 + if jira_key.is_some() { 3 * 3600 } else { 1500 },
                if jira_key.is_some() {
                    &["{linear}"]
                } else {
                    &["{linear}", "{ticket}"]
                },
            );
            let updated = last_change(1800);
            let mut desc = vec![s.desc.to_string()];
            if let Some((_, key)) = &jira_key {
                desc.push(format!("Jira: [{key}]({})", jira_url(key)));
            }
            if let Some((_, url)) = &issue {
                desc.push(format!("GitHub: {url}"));
            }
            if let Some((_, url)) = &pr {
                desc.push(format!("PR: {url}"));
            }
            let (priority, label) = match s.kind {
                Kind::Incident => (1, "Urgent"),
                Kind::Bug => (2, "High"),
                Kind::Feature | Kind::Task => (3, "Medium"),
                Kind::Doc => (4, "Low"),
            };
            linear.push(LinearIssue {
                id: uuid(&format!("linear-issue:{}", s.slug)),
                identifier: identifier.clone(),
                number: *n,
                title: s.title.into(),
                description: desc.join("\n\n"),
                url: linear_url.clone().unwrap_or_default(),
                created_at: time::rfc3339_millis(created, (h % 1000) as u32),
                updated_at: time::rfc3339_millis(updated, ((h >> 10) % 1000) as u32),
                completed_at: (!open).then(|| time::rfc3339_millis(end, ((h >> 10) % 1000) as u32)),
                creator_name: reporter.name.clone(),
                creator_id: reporter.linear_user_id.clone(),
                assignee_name: owner.name.clone(),
                assignee_id: owner.linear_user_id.clone(),
                state_name: if open { "In Progress" } else { "Done" }.into(),
                state_type: if open { "started" } else { "completed" }.into(),
                priority,
                priority_label: label.into(),
                labels: labels_for(&[]),
                branch_name: format!(
                    "{}/{}-{}",
                    owner.github_login,
                    identifier.to_lowercase(),
                    linear_slug(s.title)
                        .split('-')
                        .take(5)
                        .collect::<Vec<_>>()
                        .join("-")
                ),
                story: s.slug.into(),
                created_unix: created,
                updated_unix: updated,
            });
        }

        // GitHub issue and pull request.
        let pr_created = pr.as_ref().map(|_| {
            let default = t0 + span / 2;
            let t = first_pr_mention
                .map(|m| (m - 900).min(default))
                .unwrap_or(default);
            t.max(t0 + 1800)
        });
        let pr_merged = pr_created.map(|c| (c + 3 * 3600).max(t0 + span * 9 / 10).min(end_limit));
        if let Some((num, url)) = &issue {
            let created = created_before(t0 + 2400, &["{issue}"]);
            let closed = (!open).then(|| pr_merged.map(|m| m + 40).unwrap_or(end).min(end_limit));
            let updated = closed.map(|c| c + 300).unwrap_or(end).min(end_limit);
            let mut body = s.desc.to_string();
            if let Some((_, key)) = &jira_key {
                body.push_str(&format!("\n\nJira: [{key}]({})", jira_url(key)));
            }
            if let Some((_, id)) = &linear_key {
                body.push_str(&format!("\n\nLinear: {id}"));
            }
            let reporter_gh = &people[s.reporter];
            github.push(GithubItem {
                id: 2_147_000_000 + fnv(url) % 400_000,
                node_id: format!("I_kwDOHq{:08X}", fnv(url) as u32),
                repo: repo.into(),
                number: *num,
                title: s.title.into(),
                body,
                user_login: reporter_gh.github_login.clone(),
                user_id: reporter_gh.github_id,
                state: if open { "open" } else { "closed" }.into(),
                is_pull_request: false,
                draft: false,
                labels: labels_for(&[]),
                comments: (s.slack.len() as u32 + (h % 4) as u32).saturating_sub(1),
                created_at: time::rfc3339(created),
                updated_at: time::rfc3339(updated),
                closed_at: closed.map(time::rfc3339),
                merged_at: None,
                html_url: url.clone(),
                story: s.slug.into(),
                created_unix: created,
                updated_unix: updated,
            });
        }
        if let (Some((num, url)), Some((pr_title, pr_body))) = (&pr, s.pr) {
            let created = pr_created.unwrap_or(t0);
            let merged = (!open).then(|| pr_merged.unwrap_or(end));
            let updated = merged.map(|m| m + 120).unwrap_or(end).min(end_limit);
            let title = match (&jira_key, &linear_key) {
                (Some((_, k)), _) | (None, Some((_, k))) => format!("{k}: {pr_title}"),
                _ => pr_title.to_string(),
            };
            let mut body = pr_body.to_string();
            body.push('\n');
            if let Some((n, _)) = &issue {
                body.push_str(&format!("\nFixes #{n}"));
            }
            if let Some((_, key)) = &jira_key {
                body.push_str(&format!("\nJira: {key}"));
            }
            if let Some((_, id)) = &linear_key {
                body.push_str(&format!("\nLinear: {id}"));
            }
            github.push(GithubItem {
                id: 2_147_400_000 + fnv(url) % 400_000,
                node_id: format!("PR_kwDOHq{:08X}", fnv(url) as u32),
                repo: repo.into(),
                number: *num,
                title,
                body,
                user_login: owner.github_login.clone(),
                user_id: owner.github_id,
                state: if open { "open" } else { "closed" }.into(),
                is_pull_request: true,
                draft: open,
                labels: labels_for(&[]),
                comments: ((h >> 24) % 7) as u32,
                created_at: time::rfc3339(created),
                updated_at: time::rfc3339(updated),
                closed_at: merged.map(time::rfc3339),
                merged_at: merged.map(time::rfc3339),
                html_url: url.clone(),
                story: s.slug.into(),
                created_unix: created,
                updated_unix: updated,
            });
        }

        // Notion.
        if let (Some((id, url)), Some((title, blocks))) = (&notion_page, s.notion) {
            let created = first_notion_mention
                .map(|m| m - 1800 - (h % 3600) as i64)
                .unwrap_or(t0 + 86400)
                .max(t0 - 86400);
            let edited = ((end + 86400).min(end_limit) / 60) * 60;
            let created = (created / 60) * 60;
            let mut out: Vec<NotionBlock> = Vec::new();
            let mut push = |kind: &str, text: String, href: Option<String>| {
                let i = out.len();
                out.push(NotionBlock {
                    id: uuid(&format!("notion-block:{}:{i}", s.slug)),
                    block_type: kind.into(),
                    text,
                    href,
                });
            };
            for b in blocks {
                match b {
                    B::H(t) => push("heading_2", t.to_string(), None),
                    B::P(t) => push("paragraph", t.to_string(), None),
                    B::L(t) => push("bulleted_list_item", t.to_string(), None),
                }
            }
            let mut related: Vec<(String, String)> = Vec::new();
            if let Some((_, key)) = &jira_key {
                related.push((format!("Jira: {key}"), jira_url(key)));
            }
            if let (Some((_, idf)), Some(u)) = (&linear_key, &linear_url) {
                related.push((format!("Linear: {idf}"), u.clone()));
            }
            if let Some((n, u)) = &issue {
                related.push((format!("GitHub issue {repo}#{n}"), u.clone()));
            }
            if let Some((n, u)) = &pr {
                related.push((format!("Pull request {repo}#{n}"), u.clone()));
            }
            if !related.is_empty() {
                push("heading_2", "Related".into(), None);
                for (t, u) in related {
                    push("bulleted_list_item", t, Some(u));
                }
            }
            let editor = if h & 1 == 0 { owner } else { reporter };
            notion.push(NotionPage {
                id: id.clone(),
                title: title.into(),
                url: url.clone(),
                created_time: time::rfc3339_millis(created, 0),
                last_edited_time: time::rfc3339_millis(edited, 0),
                created_by: owner.notion_user_id.clone(),
                last_edited_by: editor.notion_user_id.clone(),
                blocks: out,
                story: s.slug.into(),
                created_unix: created,
                updated_unix: edited,
            });
        }

        infos.push(StoryInfo {
            slug: s.slug.into(),
            title: s.title.into(),
            kind: kind_name(s.kind).into(),
            jira_key: jira_key.map(|k| k.1),
            linear_identifier: linear_key.map(|k| k.1),
            github_issue_url: issue.map(|k| k.1),
            github_pr_url: pr.map(|k| k.1),
            notion_url: notion_page.map(|k| k.1),
            notion_title: s.notion.map(|n| n.0.to_string()),
            slack_permalinks: permalinks,
        });
    }

    for (i, (at, chan, who, text)) in CHATTER.iter().enumerate() {
        let t = parse_date(at) + (fnv(&format!("chatter:{i}")) % 59) as i64;
        let seed = format!("chatter:{i}");
        let message = slack_message(chan, &people[*who], t, &seed, text.to_string(), "chatter");
        slack.push(message);
    }

    github.sort_by(|a, b| a.repo.cmp(&b.repo).then(a.number.cmp(&b.number)));
    slack.sort_by(|a, b| a.ts.cmp(&b.ts));
    notion.sort_by(|a, b| a.created_unix.cmp(&b.created_unix).then(a.id.cmp(&b.id)));
    linear.sort_by_key(|l| l.number);
    jira.sort_by_key(|j| j.created_unix);

    let docs = Docs {
        github: index_of(&github),
        slack: index_of(&slack),
        notion: index_of(&notion),
        linear: index_of(&linear),
        jira: index_of(&jira),
    };
    Built {
        people,
        github,
        slack,
        notion,
        linear,
        jira,
        stories: infos,
        docs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn dataset_is_consistent() {
        let (g, s, n, l, j) = counts();
        assert!(g + s + n + l + j >= 300, "{:?}", counts());
        assert!(stories().len() >= 40);
        let end = parse_date(DATASET_END);
        let start = parse_date("2025-01-01");
        let mut urls = HashSet::new();
        for r in github_items() {
            assert!(urls.insert(r.html_url.clone()));
            assert!(r.created_unix <= r.updated_unix, "{}", r.html_url);
            assert!(r.updated_unix < end && r.created_unix >= start);
        }
        for r in slack_messages() {
            assert!(urls.insert(r.permalink.clone()), "{}", r.permalink);
            assert!(r.unix < end && r.unix >= start);
            assert!(!r.text.contains('{'), "{}", r.text);
        }
        for r in notion_pages() {
            assert!(urls.insert(r.url.clone()));
            assert!(r.created_unix <= r.updated_unix);
            assert!(r.updated_unix < end);
        }
        for r in linear_issues() {
            assert!(urls.insert(r.url.clone()));
            assert!(r.updated_unix < end);
        }
        for r in jira_issues() {
            assert!(urls.insert(r.url.clone()));
            assert!(r.updated_unix < end);
            assert!(r.created_unix <= r.updated_unix);
        }
        let ids: HashSet<_> = github_items().iter().map(|g| g.id).collect();
        assert_eq!(ids.len(), github_items().len());
        let q3 = notion_pages()
            .iter()
            .find(|p| p.title == "Q3 launch plan")
            .unwrap();
        assert!(q3.url.starts_with("https://www.notion.so/Q3-launch-plan-"));
        assert_eq!(people().len(), 14);
    }

    #[test]
    fn records_exist_before_messages_link_them() {
        let mut created: Vec<(&str, i64)> = Vec::new();
        for r in github_items() {
            created.push((&r.html_url, r.created_unix));
        }
        for r in jira_issues() {
            created.push((&r.url, r.created_unix));
        }
        for r in linear_issues() {
            created.push((&r.url, r.created_unix));
        }
        for r in notion_pages() {
            created.push((&r.url, r.created_unix));
        }
        for m in slack_messages() {
            for (url, t) in &created {
                if m.text.contains(&format!("<{url}|")) || m.text.contains(&format!("<{url}>")) {
                    assert!(*t <= m.unix, "{url} created after {}", m.permalink);
                }
            }
        }
    }

    #[test]
    fn later_tools_are_derived_from_the_stories() {
        let slugs: HashSet<&str> = stories().iter().map(|s| s.slug.as_str()).collect();
        let end = parse_date(DATASET_END);
        let start = parse_date("2025-01-01");
        let mut urls: HashSet<String> = HashSet::new();
        let mut check = |url: &str, created: i64, updated: i64, story: Option<&str>| {
            assert!(urls.insert(url.to_string()), "duplicate {url}");
            assert!(created <= updated, "{url}");
            assert!(created >= start && updated < end, "{url}");
            if let Some(s) = story {
                assert!(slugs.contains(s), "{url}: {s}");
            }
        };
        for p in confluence_pages() {
            check(&p.url, p.created_unix, p.updated_unix, Some(&p.story));
        }
        for f in drive_files() {
            check(
                &f.web_view_link,
                f.created_unix,
                f.modified_unix,
                Some(&f.story),
            );
        }
        for m in gmail_messages() {
            check(&m.url, m.unix, m.unix, Some(&m.story));
        }
        for t in zendesk_tickets() {
            check(&t.url, t.created_unix, t.updated_unix, Some(&t.story));
        }
        for o in hubspot_objects() {
            check(&o.url, o.created_unix, o.updated_unix, o.story.as_deref());
        }
        let counts = [
            confluence_pages().len(),
            drive_files().len(),
            gmail_messages().len(),
            zendesk_tickets().len(),
            hubspot_objects().len(),
        ];
        assert!(counts.iter().all(|c| *c >= 25), "{counts:?}");
        // Cross-references: the double charge is in every later tool, with its Jira key.
        let key = stories()
            .iter()
            .find(|s| s.slug == "invoice-retry-double-charge")
            .and_then(|s| s.jira_key.clone())
            .unwrap();
        assert!(
            confluence_pages()
                .iter()
                .any(|p| p.body_text.contains(&key))
        );
        assert!(
            zendesk_tickets()
                .iter()
                .any(|t| t.description.contains(&key))
        );
        assert!(gmail_messages().iter().any(|m| m.snippet().contains(&key)));
        assert!(
            hubspot_objects()
                .iter()
                .any(|o| o.property("content").is_some_and(|c| c.contains(&key)))
        );
        assert!(drive_files().iter().any(|f| f.trashed));
    }

    #[test]
    fn deterministic() {
        let a = build();
        let b = build();
        assert_eq!(a.github, b.github);
        assert_eq!(a.slack, b.slack);
        assert_eq!(a.notion, b.notion);
        assert_eq!(a.jira, b.jira);
        assert_eq!(a.linear, b.linear);
    }

    /// The fake searches a record's text only in fields its vendor says it
    /// searches (Intercom's conversation `title` is not one).
    #[test]
    fn records_are_searched_in_the_declared_fields() {
        fn check<R: Record>(declaration: &str) {
            let declared = &crate::search::declared(declaration).fields;
            for field in R::SEARCHED {
                assert!(
                    declared.iter().any(|d| d == field),
                    "{declaration}: the fake searches {field}, which the declaration does not name"
                );
            }
        }
        check::<GithubItem>("github");
        check::<SlackMessage>("slack");
        check::<NotionPage>("notion");
        check::<LinearIssue>("linear");
        check::<JiraIssue>("jira");
        check::<ConfluencePage>("confluence");
        check::<DriveFile>("google-drive");
        check::<GmailMessage>("gmail");
        check::<ZendeskTicket>("zendesk");
        check::<HubspotObject>("hubspot");
        check::<SalesforceRecord>("salesforce");
        check::<M365Item>("microsoft-365");
        check::<AsanaTask>("asana");
        check::<TrelloCard>("trello");
        check::<IntercomConversation>("intercom");
    }
}
