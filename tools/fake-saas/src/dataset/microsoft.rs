//! Microsoft 365, where leadership and operations work: on the Engineering
//! SharePoint site, a Word post-mortem for every incident, a PowerPoint
//! leadership review of every plan and handbook, and the "Incident register"
//! list; in Outlook, the incident summaries and plan sign-off mails that
//! went to the leadership list, and in its calendar the post-incident
//! reviews and sign-off meetings; in Teams, the incident commander's
//! heads-up in the incident chat. Texts carry the Jira or Linear keys, the
//! pull requests and the Notion write-ups.

use serde::{Deserialize, Serialize};

use super::derived::{Derived, derived, token};
use super::people;
use super::stories::{B, Kind};

/// The SharePoint host of the tenant.
pub const SHAREPOINT_HOST: &str = "acme.sharepoint.com";
/// The Engineering site.
pub const SHAREPOINT_SITE: &str = "https://acme.sharepoint.com/sites/Engineering";
/// The leadership mailing list every mail here went to.
pub const LEADERSHIP_LIST: &str = "leadership@acme-shop.example";

/// Graph's entity types of the items.
pub const ENTITY_TYPES: &[&str] = &["driveItem", "listItem", "message", "event", "chatMessage"];
/// The incident chat every heads-up went to.
pub const INCIDENT_CHAT: &str = "19:8f3c2a91d0b44e6c9f5e7a1b2c3d4e5f@thread.v2";

/// A file, a list item, a mail, an event or a Teams message.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct M365Item {
    /// One of [`ENTITY_TYPES`].
    pub entity_type: String,
    pub id: String,
    /// File name, list item title, mail or event subject (a Teams message
    /// has none).
    pub name: String,
    /// The body: the document's text, the item's fields, the mail's,
    /// event's or message's body.
    pub text: String,
    /// The citation URL: the file's or item's `webUrl`, the mail's, event's
    /// or message's `webLink`.
    pub web_url: String,
    /// The search hit's `hitId` where it is not the resource's `id` (a
    /// Teams message's hit is named by its Outlook item).
    #[serde(default)]
    pub hit_id: Option<String>,
    pub author_name: String,
    pub author_email: String,
    /// Mail recipients: (name, address).
    pub recipients: Vec<(String, String)>,
    /// A mail's conversation, a Teams message's chat.
    pub conversation_id: Option<String>,
    /// File size in bytes (files only).
    pub size: u64,
    pub story: String,
    pub created_unix: i64,
    pub modified_unix: i64,
}

impl_record!(M365Item, url: web_url, updated: modified_unix, searched: ["name", "text"],
    text: |i| format!("{}\n{}", i.name, i.text));

indexed_records! {
    /// Files, list items and mails, in creation order.
    m365_items, m365_docs: M365Item = build()
}

/// Percent-encodes a path segment the way SharePoint URLs show it.
pub(crate) fn encode_segment(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~()".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A file name SharePoint accepts (no `:`, `/`, `?`...).
fn file_name(title: &str, extension: &str) -> String {
    let clean: String = title
        .replace(": ", " - ")
        .chars()
        .filter(|c| {
            !matches!(
                c,
                ':' | '/' | '\\' | '?' | '*' | '"' | '<' | '>' | '|' | '#'
            )
        })
        .collect();
    format!("{clean}.{extension}")
}

const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

fn blocks_text(blocks: &[B]) -> Vec<String> {
    blocks
        .iter()
        .map(|b| match b {
            B::H(t) | B::P(t) => t.to_string(),
            B::L(t) => format!("- {t}"),
        })
        .collect()
}

/// "Tracked as ACME-12 (url), fixed in url." with a capital letter.
fn refs_line(d: &Derived) -> String {
    let refs = d.refs_sentence();
    let mut chars = refs.chars();
    match chars.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
}

struct Draft {
    entity_type: &'static str,
    name: String,
    text: String,
    folder: &'static str,
    author: &'static super::Person,
    recipients: Vec<(String, String)>,
    created: i64,
    modified: i64,
    story: String,
}

impl Draft {
    /// A mail to the leadership list, its paragraphs apart, sent (and so
    /// last changed) at `sent`.
    fn mail_to_leadership(
        subject: String,
        paragraphs: &[String],
        author: &'static super::Person,
        sent: i64,
        story: &str,
    ) -> Draft {
        Draft {
            entity_type: "message",
            name: subject,
            text: paragraphs.join("\n\n"),
            folder: "",
            author,
            recipients: vec![("Acme leadership".to_string(), LEADERSHIP_LIST.to_string())],
            created: sent,
            modified: sent,
            story: story.to_string(),
        }
    }
}

impl Draft {
    /// A meeting in the organizer's calendar, the leadership invited,
    /// starting at `start` (an hour long).
    fn meeting(
        subject: String,
        paragraphs: &[String],
        organizer: &'static super::Person,
        start: i64,
        story: &str,
    ) -> Draft {
        Draft {
            entity_type: "event",
            ..Draft::mail_to_leadership(subject, paragraphs, organizer, start, story)
        }
    }

    /// A message in the incident chat, sent at `sent`.
    fn teams_heads_up(
        text: String,
        author: &'static super::Person,
        sent: i64,
        story: &str,
    ) -> Draft {
        Draft {
            entity_type: "chatMessage",
            name: String::new(),
            text,
            folder: "",
            author,
            recipients: Vec::new(),
            created: sent,
            modified: sent,
            story: story.to_string(),
        }
    }
}

/// Outlook on the web's link to an item: mails and Teams messages open in
/// the reading view, events in the calendar.
fn outlook_link(item_id: &str, entity_type: &str) -> String {
    let id = encode_segment(item_id);
    match entity_type {
        "event" => {
            format!("https://outlook.office365.com/owa/?itemid={id}&exvsurl=1&path=/calendar/item")
        }
        _ => format!(
            "https://outlook.office365.com/owa/?ItemID={id}&exvsurl=1&viewmodel=ReadMessageItem"
        ),
    }
}

fn build() -> Vec<M365Item> {
    let cto = &people()[super::people::MARCUS];
    let mut drafts: Vec<Draft> = Vec::new();
    for d in derived() {
        let s = d.story;
        let slug = d.info.slug.clone();
        let refs = refs_line(&d);
        let notion = d.write_up(|u| format!("Write-up in Notion: {u}."));
        // Documents open with the ticket, so that it is in every summary.
        let key = d.ticket_key();
        let tagged = |title: &str| match &key {
            Some(k) => format!("[{k}] {title}"),
            None => title.to_string(),
        };
        match s.kind {
            Kind::Incident => {
                let title = s
                    .notion
                    .map_or_else(|| format!("Postmortem: {}", s.title), |n| n.0.to_string());
                let mut text = vec![
                    format!("{}. {refs}", tagged(s.title)),
                    s.desc.to_string(),
                    notion.clone(),
                ];
                if let Some((_, blocks)) = s.notion {
                    text.extend(blocks_text(blocks));
                } else {
                    text.extend(
                        d.timeline()
                            .into_iter()
                            .map(|(_, who, what)| format!("{who}: {what}")),
                    );
                }
                let created = d.at(d.end, 3600);
                drafts.push(Draft {
                    entity_type: "driveItem",
                    name: file_name(&title, "docx"),
                    text: text.join("\n"),
                    folder: "Postmortems",
                    author: d.owner,
                    recipients: Vec::new(),
                    created,
                    modified: d.at(created, 2 * 86400),
                    story: slug.clone(),
                });
                let key = key.clone().unwrap_or_else(|| "no ticket".into());
                drafts.push(Draft {
                    entity_type: "listItem",
                    name: s.title.to_string(),
                    text: [
                        format!("Ticket: {key}"),
                        format!("Severity: {}", if d.h % 3 == 0 { "SEV1" } else { "SEV2" }),
                        format!("Status: {}", if s.open { "Monitoring" } else { "Resolved" }),
                        format!("Incident commander: {}", d.owner.name),
                        format!("Summary: {}", s.desc),
                        refs.clone(),
                        notion.clone(),
                    ]
                    .join("\n"),
                    folder: "Incident register",
                    author: d.owner,
                    recipients: Vec::new(),
                    created: d.start + 1800,
                    modified: d.at(d.end, 3 * 3600),
                    story: slug.clone(),
                });
                drafts.push(Draft::teams_heads_up(
                    format!("{key}: {} {}", s.title, s.desc),
                    d.owner,
                    d.start + 600,
                    &slug,
                ));
                drafts.push(Draft::meeting(
                    format!("Post-incident review: {}", s.title),
                    &[
                        format!("Review of {key}: {}", s.desc),
                        refs.clone(),
                        "Agenda: timeline, root cause, follow-ups and owners.".into(),
                    ],
                    d.owner,
                    d.at(d.end, 2 * 86400),
                    &slug,
                ));
                drafts.push(Draft::mail_to_leadership(
                    format!("Summary: {}", s.title),
                    &[
                        format!("{key}: {}", s.desc),
                        refs.clone(),
                        notion.clone(),
                        "Customer-facing follow-ups are tracked by support; the post-mortem is on the Engineering site under Postmortems.".into(),
                        format!("Marcus\n{}", cto.title),
                    ],
                    cto,
                    d.at(d.end, 5 * 3600),
                    &slug,
                ));
            }
            Kind::Doc => {
                let Some((title, blocks)) = s.notion else {
                    continue;
                };
                let mut text = vec![
                    format!("{}. {refs}", tagged(&format!("Leadership review: {title}"))),
                    s.desc.to_string(),
                    notion.clone(),
                ];
                text.extend(blocks_text(blocks));
                let created = d.start + 86400;
                drafts.push(Draft {
                    entity_type: "driveItem",
                    name: file_name(&format!("{title} - leadership review"), "pptx"),
                    text: text.join("\n"),
                    folder: "Plans",
                    author: d.owner,
                    recipients: Vec::new(),
                    created,
                    modified: d.at(created, 4 * 86400),
                    story: slug.clone(),
                });
                drafts.push(Draft::meeting(
                    format!("Sign-off meeting: {title}"),
                    &[
                        format!("{title}: go/no-go. {}", s.desc),
                        refs.clone(),
                        notion.clone(),
                    ],
                    d.owner,
                    d.at(created, 3 * 86400),
                    &slug,
                ));
                drafts.push(Draft::mail_to_leadership(
                    format!("For sign-off: {title}"),
                    &[
                        format!("{title} is ready for sign-off. {}", s.desc),
                        refs.clone(),
                        notion.clone(),
                        "Please reply with your go/no-go by Friday.".into(),
                        d.owner.name.clone(),
                    ],
                    d.owner,
                    d.at(created, 2 * 86400),
                    &slug,
                ));
            }
            Kind::Task if slug == "black-friday-readiness" => {
                drafts.push(Draft::mail_to_leadership(
                    format!("For sign-off: {}", s.title),
                    &[
                        format!("Black Friday readiness: {}", s.desc),
                        refs.clone(),
                        notion.clone(),
                        d.owner.name.clone(),
                    ],
                    d.owner,
                    d.at(d.end, -2 * 86400),
                    &slug,
                ));
            }
            _ => {}
        }
    }
    drafts.sort_by(|a, b| a.created.cmp(&b.created).then(a.name.cmp(&b.name)));
    let mut list_ids = 0;
    drafts
        .into_iter()
        .map(|f| {
            // Teams messages have no subject: their time names them.
            let seed = match f.name.as_str() {
                "" => format!("m365:{}:{}", f.entity_type, f.created),
                name => format!("m365:{}:{name}", f.entity_type),
            };
            let outlook_id = || {
                format!(
                    "AAMkADAwATM0MDAAMS1hMGYwAEYAAA{}AAA=",
                    token(&seed, 40, B64)
                )
            };
            let mut hit_id = None;
            let (id, web_url, conversation_id) = match f.entity_type {
                "driveItem" => {
                    let id = format!("01BYE5RZ{}", token(&seed, 26, UPPER));
                    let url = format!(
                        "{SHAREPOINT_SITE}/Shared%20Documents/{}/{}",
                        encode_segment(f.folder),
                        encode_segment(&f.name)
                    );
                    (id, url, None)
                }
                "listItem" => {
                    list_ids += 1;
                    let url = format!(
                        "{SHAREPOINT_SITE}/Lists/{}/DispForm.aspx?ID={list_ids}",
                        encode_segment(f.folder)
                    );
                    (list_ids.to_string(), url, None)
                }
                "event" => {
                    let id = outlook_id();
                    let url = outlook_link(&id, "event");
                    (id, url, None)
                }
                "chatMessage" => {
                    // Teams names a message by its time in milliseconds.
                    let id = (f.created * 1000 + f.text.len() as i64 % 1000).to_string();
                    let item = outlook_id();
                    let url = outlook_link(&item, "chatMessage");
                    hit_id = Some(item);
                    (id, url, Some(INCIDENT_CHAT.to_string()))
                }
                _ => {
                    let id = outlook_id();
                    let url = outlook_link(&id, "message");
                    let conversation = format!(
                        "AAQkADAwATM0MDAAMS1{}=",
                        token(&format!("{seed}:c"), 24, B64)
                    );
                    (id, url, Some(conversation))
                }
            };
            M365Item {
                entity_type: f.entity_type.into(),
                id,
                size: if f.entity_type == "driveItem" {
                    18_000 + f.text.len() as u64 * 3
                } else {
                    0
                },
                name: f.name,
                text: f.text,
                web_url,
                hit_id,
                author_name: f.author.name.clone(),
                author_email: f.author.email.clone(),
                recipients: f.recipients,
                conversation_id,
                story: f.story,
                created_unix: f.created,
                modified_unix: f.modified.max(f.created),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_items_and_mails() {
        let items = m365_items();
        for t in ENTITY_TYPES {
            let n = items.iter().filter(|i| i.entity_type == *t).count();
            assert!(n >= 8, "{t}: {n}");
        }
        let mut urls = std::collections::HashSet::new();
        for i in items {
            assert!(urls.insert(i.web_url.clone()), "{}", i.web_url);
            assert!(!i.name.contains(':') || i.entity_type != "driveItem");
        }
        let pm = items
            .iter()
            .find(|i| i.story == "incident-lb-cert" && i.entity_type == "driveItem")
            .unwrap();
        assert!(pm.text.lines().next().unwrap().contains("ACME-"));
        assert!(pm.web_url.starts_with(
            "https://acme.sharepoint.com/sites/Engineering/Shared%20Documents/Postmortems/"
        ));
    }
}
