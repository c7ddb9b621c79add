//! Intercom, the chat in the shop and the app: a conversation for every
//! problem customers wrote about (the customer's first message, then the
//! support team's replies and internal notes with the Jira or Linear key and
//! the fix), and a second one from another shopper for the problems at the
//! till.

use serde::{Deserialize, Serialize};

use super::customers::{CUSTOMERS, Who, contact, shopper};
use super::derived::{derived, end_limit, escape_html, token};
use super::people;
use super::stories::{Kind, Team};

/// The workspace (app) id, as in the inbox's URLs.
pub const INTERCOM_APP_ID: &str = "ac3mepq7";
/// The admin id of the support lead (Emma Dubois), who answers.
pub const INTERCOM_ADMIN_ID: &str = "7391524";

/// One part of a conversation after its first message.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct IntercomPart {
    pub id: String,
    /// `comment`, `note` or `close`.
    pub part_type: String,
    /// HTML; empty for `close`.
    pub body: String,
    pub author_id: String,
    pub author_name: String,
    pub author_email: String,
    /// `admin` or `user`.
    pub author_type: String,
    pub created_unix: i64,
}

/// A conversation.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct IntercomConversation {
    /// Numeric.
    pub id: String,
    pub title: Option<String>,
    /// The first message's subject (e-mails); empty for chats.
    pub subject: String,
    /// The first message, HTML.
    pub body: String,
    /// The first message as plain text (what `source.body` searches).
    pub body_text: String,
    /// `conversation` (chat) or `email`.
    pub delivered_via: String,
    pub author_id: String,
    pub author_name: String,
    pub author_email: String,
    /// `open` or `closed`.
    pub state: String,
    pub tags: Vec<String>,
    pub parts: Vec<IntercomPart>,
    /// The citation URL (`https://app.intercom.com/a/inbox/<app>/inbox/conversation/<id>`).
    pub url: String,
    pub story: String,
    pub created_unix: i64,
    pub updated_unix: i64,
}

impl_record!(IntercomConversation, url: url, updated: updated_unix,
    searched: ["source.subject", "source.body"],
text: |c| format!("{}\n{}", c.subject, c.body_text));

indexed_records! {
    /// Conversations, by id (= by creation time).
    intercom_conversations, intercom_docs: IntercomConversation = build()
}

const HEX: &[u8] = b"0123456789abcdef";

fn paragraphs(lines: &[&str]) -> String {
    lines
        .iter()
        .map(|l| format!("<p>{}</p>", escape_html(l)))
        .collect()
}

struct Draft {
    slug: String,
    title: Option<String>,
    subject: String,
    lines: Vec<String>,
    email: bool,
    author: (String, String),
    open: bool,
    tags: Vec<String>,
    /// (part type, text, from the customer)
    parts: Vec<(&'static str, String, bool)>,
    created: i64,
}

fn build() -> Vec<IntercomConversation> {
    let agent = &people()[super::people::EMMA];
    let mut drafts: Vec<Draft> = Vec::new();
    for d in derived() {
        let Some((who, subject, message)) = super::customers::voice(&d.info.slug) else {
            continue;
        };
        let s = d.story;
        let refs = d.refs_sentence();
        let key = d.ticket_key();
        let note = if refs.is_empty() {
            format!("Known issue: \"{}\". {}", s.title, s.desc)
        } else {
            format!("Linked to engineering: \"{}\", {refs}.", s.title)
        };
        let fixed = match &d.info.github_pr_url {
            Some(pr) => format!("the fix is live ({pr})"),
            None => "this is resolved now".to_string(),
        };
        let replies = |first: &str| -> Vec<(&'static str, String, bool)> {
            let mut parts = vec![
                (
                    "comment",
                    format!(
                        "Hi {first}, thanks for telling us and sorry about this. I have passed it to our engineers{}.",
                        key.as_ref()
                            .map(|k| format!(" (reference {k})"))
                            .unwrap_or_default()
                    ),
                    false,
                ),
                ("note", note.clone(), false),
            ];
            if s.open {
                parts.push((
                    "comment",
                    format!(
                        "A quick update, {first}: engineering is still working on it. We will write again as soon as it is fixed."
                    ),
                    false,
                ));
            } else {
                parts.push((
                    "comment",
                    format!(
                        "Good news, {first}: {fixed}. Let us know if anything still looks wrong."
                    ),
                    false,
                ));
                parts.push(("comment", "Thank you, all good now.".to_string(), true));
                parts.push(("close", String::new(), false));
            }
            parts
        };
        let mut tags = vec![s.team.label().to_string()];
        if s.kind == Kind::Incident {
            tags.push("incident".into());
        }
        let created = d.start + 2400 + (d.h % 3600) as i64;
        let (author, email, lines, title) = match who {
            Who::Business(c) => {
                let (name, address) = contact(c);
                (
                    (name.clone(), address),
                    true,
                    vec![
                        "Hello,".to_string(),
                        message.to_string(),
                        format!("{name}, {}", CUSTOMERS[c].0),
                    ],
                    Some(subject.to_string()),
                )
            }
            Who::Shopper => {
                let person = shopper(&format!("intercom:{}", d.info.slug));
                (
                    person,
                    false,
                    vec![format!("Hi! {message}")],
                    Some(subject.to_string()),
                )
            }
        };
        let first = author.0.split(' ').next().unwrap_or_default().to_string();
        drafts.push(Draft {
            slug: d.info.slug.clone(),
            title,
            subject: if email {
                subject.to_string()
            } else {
                String::new()
            },
            lines,
            email,
            author,
            open: s.open,
            tags: tags.clone(),
            parts: replies(&first),
            created,
        });
        let at_the_till = matches!(s.team, Team::Checkout | Team::Billing | Team::Payments)
            && matches!(s.kind, Kind::Bug | Kind::Incident);
        if at_the_till {
            let person = shopper(&format!("intercom:{}:2", d.info.slug));
            let first = person.0.split(' ').next().unwrap_or_default().to_string();
            let short = message.split(". ").next().unwrap_or(message);
            drafts.push(Draft {
                slug: d.info.slug.clone(),
                title: None,
                subject: String::new(),
                lines: vec![format!("Hello, is something wrong with the shop? {short}.")],
                email: false,
                author: person,
                open: s.open,
                tags,
                parts: replies(&first),
                created: created + 2 * 3600 + (d.h % 1800) as i64,
            });
        }
    }
    drafts.sort_by(|a, b| a.created.cmp(&b.created).then(a.lines.cmp(&b.lines)));
    drafts
        .into_iter()
        .enumerate()
        .map(|(n, c)| {
            let id = (2_150_000_011u64 + n as u64 * 97).to_string();
            let author_id = token(&format!("intercom:contact:{}", c.author.1), 24, HEX);
            let mut at = c.created;
            let parts: Vec<IntercomPart> = c
                .parts
                .iter()
                .enumerate()
                .map(|(i, (kind, text, from_customer))| {
                    at = (at + 1800 + (i as i64 * 5400)).min(end_limit());
                    let (aid, name, email, kind_of) = if *from_customer {
                        (
                            author_id.clone(),
                            c.author.0.clone(),
                            c.author.1.clone(),
                            "user",
                        )
                    } else {
                        (
                            INTERCOM_ADMIN_ID.to_string(),
                            agent.name.clone(),
                            "emma@acme-shop.example".to_string(),
                            "admin",
                        )
                    };
                    IntercomPart {
                        id: (31_000_000_000u64 + n as u64 * 10 + i as u64).to_string(),
                        part_type: kind.to_string(),
                        body: if text.is_empty() {
                            String::new()
                        } else {
                            paragraphs(&[text.as_str()])
                        },
                        author_id: aid,
                        author_name: name,
                        author_email: email,
                        author_type: kind_of.into(),
                        created_unix: at,
                    }
                })
                .collect();
            let lines: Vec<&str> = c.lines.iter().map(String::as_str).collect();
            let updated = parts.last().map_or(c.created, |p| p.created_unix);
            IntercomConversation {
                url: format!(
                    "https://app.intercom.com/a/inbox/{INTERCOM_APP_ID}/inbox/conversation/{id}"
                ),
                id,
                title: c.title,
                subject: c.subject,
                body: paragraphs(&lines),
                body_text: c.lines.join("\n"),
                delivered_via: if c.email { "email" } else { "conversation" }.into(),
                author_id,
                author_name: c.author.0,
                author_email: c.author.1,
                state: if c.open { "open" } else { "closed" }.into(),
                tags: c.tags,
                parts,
                story: c.slug,
                created_unix: c.created,
                updated_unix: updated.max(c.created),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversations_with_engineering_notes() {
        let all = intercom_conversations();
        assert!(all.len() >= 30, "{}", all.len());
        for c in all {
            assert!(c.created_unix <= c.updated_unix);
            assert!(!c.parts.is_empty());
        }
        let double = all
            .iter()
            .find(|c| c.story == "invoice-retry-double-charge" && c.delivered_via == "email")
            .unwrap();
        assert!(double.body_text.contains("charged twice"));
        assert!(double.parts.iter().any(|p| p.body.contains("ACME-")));
        assert_eq!(double.author_name, "Katrin Müller");
    }
}
