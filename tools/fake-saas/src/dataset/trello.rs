//! Trello, where marketing and operations keep their boards: on "Marketing",
//! an announcement card for every feature and a campaign card for every
//! launch plan; on "Ops", a customer-communication card for every incident
//! and a follow-up card for the stories that reached the warehouse, the
//! carriers or the invoices. Descriptions (Markdown) carry the Jira or Linear
//! keys, the pull requests and the Notion write-ups.

use serde::{Deserialize, Serialize};

use super::derived::{derived, token};
use super::stories::{B, Kind};
use super::{Person, people};
use crate::time;

/// A board: (name, lists as (name, for done work)).
pub const TRELLO_BOARDS: &[(&str, &[&str])] = &[
    ("Marketing", &["Ideas", "In progress", "Published"]),
    ("Ops", &["To do", "Doing", "Done"]),
];

/// A card.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct TrelloCard {
    /// 24 hex digits; the first 8 are the creation time (as Trello's are).
    pub id: String,
    pub id_short: u64,
    pub short_link: String,
    pub name: String,
    /// Markdown.
    pub desc: String,
    /// The citation URL (`https://trello.com/c/<shortLink>/<idShort>-<slug>`).
    pub url: String,
    pub board: String,
    pub board_id: String,
    pub list: String,
    pub list_id: String,
    /// (id, full name, username)
    pub members: Vec<(String, String, String)>,
    /// (name, color)
    pub labels: Vec<(String, String)>,
    /// `2025-05-02T09:14:11.000Z`
    pub date_last_activity: String,
    pub due: Option<String>,
    pub closed: bool,
    pub story: String,
    pub created_unix: i64,
    pub updated_unix: i64,
}

impl_record!(TrelloCard, url: url, updated: updated_unix, searched: ["name", "desc"],
    text: |c| format!("{}\n{}", c.name, c.desc));

indexed_records! {
    /// Cards of both boards, in creation order.
    trello_cards, trello_docs: TrelloCard = build()
}

const HEX: &[u8] = b"0123456789abcdef";
const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// A Trello object id created at `unix`.
pub(crate) fn object_id(seed: &str, unix: i64) -> String {
    format!(
        "{:08x}{}",
        unix as u32,
        token(&format!("trello:{seed}"), 16, HEX)
    )
}

/// A board's id.
pub fn board_id(board: &str) -> String {
    object_id(&format!("board:{board}"), super::parse_date("2025-01-06"))
}

/// A list's id.
pub fn list_id(board: &str, list: &str) -> String {
    object_id(
        &format!("list:{board}:{list}"),
        super::parse_date("2025-01-06") + 60,
    )
}

/// A member's id.
pub fn member_id(person: &Person) -> String {
    object_id(
        &format!("member:{}", person.email),
        super::parse_date("2024-06-01"),
    )
}

fn slug(name: &str) -> String {
    super::dashed(
        name.to_lowercase()
            .split(|c: char| !c.is_ascii_alphanumeric()),
        80,
    )
}

struct Draft {
    board: usize,
    /// 0: first list, 1: work in progress, 2: done.
    stage: usize,
    name: String,
    desc: String,
    members: Vec<&'static Person>,
    labels: Vec<(&'static str, &'static str)>,
    created: i64,
    updated: i64,
    due: Option<i64>,
    story: String,
}

fn build() -> Vec<TrelloCard> {
    let marketing = &people()[super::people::HANNAH];
    let pm = &people()[super::people::SOFIA];
    let support = &people()[super::people::EMMA];
    let mut drafts: Vec<Draft> = Vec::new();
    for d in derived() {
        let s = d.story;
        let slug_ = d.info.slug.clone();
        let eng = d.refs_in(|refs| format!("**Engineering:** {refs}."));
        let notion = d.write_up(|u| format!("**Write-up:** {u}"));
        let stage = if s.open { 1 } else { 2 };
        let join = |parts: Vec<String>| {
            parts
                .into_iter()
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
                .join("\n\n")
        };
        match s.kind {
            Kind::Feature => {
                let created = d.start + 86400;
                drafts.push(Draft {
                    board: 0,
                    stage,
                    name: format!("Announce: {}", s.title),
                    desc: join(vec![
                        format!("Launch announcement for **{}**.", s.title),
                        s.desc.to_string(),
                        "- Blog post and newsletter\n- Social posts\n- In-app banner for logged-in customers".into(),
                        eng,
                        notion,
                    ]),
                    members: vec![marketing, pm],
                    labels: vec![("Launch", "green")],
                    created,
                    updated: d.at(d.end, 2 * 86400).max(created),
                    due: Some(d.at(d.end, 86400)),
                    story: slug_,
                });
            }
            Kind::Doc | Kind::Task
                if matches!(
                    slug_.as_str(),
                    "q3-launch-plan" | "marketplace-launch-plan" | "black-friday-readiness"
                ) =>
            {
                let Some((title, blocks)) = s.notion else {
                    continue;
                };
                let items: Vec<String> = blocks
                    .iter()
                    .filter_map(|b| match b {
                        B::L(t) => Some(format!("- {t}")),
                        _ => None,
                    })
                    .collect();
                let created = d.start + 2 * 86400;
                drafts.push(Draft {
                    board: 0,
                    stage,
                    name: format!("Campaign: {title}"),
                    desc: join(vec![
                        format!("Marketing campaign for the {title}. {}", s.desc),
                        items.join("\n"),
                        eng,
                        notion,
                    ]),
                    members: vec![marketing],
                    labels: vec![("Campaign", "purple")],
                    created,
                    updated: d.at(d.end, 86400).max(created),
                    due: Some(d.at(d.end, 0)),
                    story: slug_,
                });
            }
            Kind::Incident => {
                let created = d.start + 3600;
                drafts.push(Draft {
                    board: 1,
                    stage,
                    name: format!("Customer comms: {}", s.title),
                    desc: join(vec![
                        format!("Status page updates, customer emails and refunds for **{}**.", s.title),
                        s.desc.to_string(),
                        "- [x] Status page updated\n- [x] Affected customers emailed\n- [ ] Refunds and goodwill vouchers reviewed".into(),
                        eng,
                        notion,
                    ]),
                    members: vec![support, d.owner],
                    labels: vec![("Incident", "red")],
                    created,
                    updated: d.at(d.end, 6 * 3600).max(created),
                    due: None,
                    story: slug_,
                });
            }
            _ if matches!(
                slug_.as_str(),
                "warehouse-sync-emoji"
                    | "inventory-drift"
                    | "support-delayed-shipments"
                    | "uk-postcode"
                    | "refund-currency"
                    | "canada-tax"
                    | "abandoned-cart-twice"
            ) =>
            {
                let customers = super::customers::voice(&slug_)
                    .map(|(_, subject, _)| format!("Customers wrote in: \"{subject}\"."))
                    .unwrap_or_default();
                let created = d.start + 5 * 3600;
                drafts.push(Draft {
                    board: 1,
                    stage,
                    name: format!("Ops follow-up: {}", s.title),
                    desc: join(vec![
                        format!("Operations follow-up for **{}**. {}", s.title, s.desc),
                        customers,
                        eng,
                        notion,
                    ]),
                    members: vec![support],
                    labels: vec![("Ops", "yellow")],
                    created,
                    updated: d.at(d.end, 12 * 3600).max(created),
                    due: None,
                    story: slug_,
                });
            }
            _ => {}
        }
    }
    drafts.sort_by(|a, b| a.created.cmp(&b.created).then(a.name.cmp(&b.name)));
    let mut counters = [0u64; 2];
    drafts
        .into_iter()
        .map(|c| {
            counters[c.board] += 1;
            let id_short = counters[c.board];
            let (board, lists) = TRELLO_BOARDS[c.board];
            let list = lists[c.stage];
            let short_link = token(&format!("trello:short:{}", c.name), 8, ALNUM);
            let updated = c.updated.min(super::derived::end_limit()).max(c.created);
            TrelloCard {
                id: object_id(&format!("card:{}", c.name), c.created),
                url: format!(
                    "https://trello.com/c/{short_link}/{id_short}-{}",
                    slug(&c.name)
                ),
                id_short,
                short_link,
                name: c.name,
                desc: c.desc,
                board: board.into(),
                board_id: board_id(board),
                list: list.into(),
                list_id: list_id(board, list),
                members: c
                    .members
                    .iter()
                    .map(|p| (member_id(p), p.name.clone(), p.slack_username.clone()))
                    .collect(),
                labels: c
                    .labels
                    .iter()
                    .map(|(n, col)| (n.to_string(), col.to_string()))
                    .collect(),
                date_last_activity: time::rfc3339_millis(updated, 0),
                due: c.due.map(|d| time::rfc3339_millis(d, 0)),
                closed: false,
                story: c.story,
                created_unix: c.created,
                updated_unix: updated,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_on_both_boards() {
        let cards = trello_cards();
        assert!(cards.len() >= 25, "{}", cards.len());
        for board in ["Marketing", "Ops"] {
            assert!(
                cards.iter().filter(|c| c.board == board).count() >= 8,
                "{board}"
            );
        }
        for c in cards {
            assert_eq!(c.id.len(), 24);
            assert_eq!(
                i64::from_str_radix(&c.id[..8], 16).unwrap(),
                c.created_unix,
                "the id holds the creation time"
            );
            assert!(c.url.starts_with("https://trello.com/c/"));
        }
        let comms = cards
            .iter()
            .find(|c| c.story == "incident-lb-cert")
            .unwrap();
        assert!(comms.desc.contains("ACME-"));
    }
}
