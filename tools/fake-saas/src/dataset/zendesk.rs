//! Zendesk: the tickets customers opened about the bugs and incidents (one
//! per [`VOICES`](super::customers::VOICES) entry, a second one from another
//! shopper for the checkout and billing stories, and a few more "where is my
//! order" tickets). Each description is the customer's message followed by
//! the support agent's internal summary with the Jira key and the fix.

use serde::{Deserialize, Serialize};

use super::customers::{CUSTOMERS, Who, contact, shopper};
use super::derived::derived;
use super::people;
use super::stories::{Kind, Team};
use crate::time;

/// The Zendesk account's subdomain.
pub const ZENDESK_SUBDOMAIN: &str = "acme";

/// A support ticket.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ZendeskTicket {
    pub id: u64,
    pub subject: String,
    /// The first comment (the customer's message), then the agent's summary.
    pub description: String,
    /// `new`, `open`, `pending` or `solved`
    pub status: String,
    /// `low`, `normal`, `high` or `urgent`
    pub priority: String,
    /// `problem`, `incident` or `question`
    pub ticket_type: String,
    pub tags: Vec<String>,
    pub requester_id: u64,
    pub requester_name: String,
    pub requester_email: String,
    pub assignee_id: u64,
    pub organization_id: Option<u64>,
    /// `2025-05-02T09:14:11Z`
    pub created_at: String,
    pub updated_at: String,
    /// The citation URL (`https://acme.zendesk.com/agent/tickets/4001`).
    pub url: String,
    pub story: String,
    pub created_unix: i64,
    pub updated_unix: i64,
}

impl_record!(ZendeskTicket, url: url, updated: updated_unix,
    searched: ["subject", "description", "tags", "requester"],
text: |t| {
    let tags = t.tags.join(" ");
    format!("{}\n{}\n{}\n{}", t.subject, t.description, tags, t.requester_name)
});

/// The support agent every ticket is assigned to (Emma Dubois).
pub const ZENDESK_AGENT_ID: u64 = 381_200_001;

indexed_records! {
    /// Zendesk tickets, by id (= by creation time).
    zendesk_tickets, zendesk_docs: ZendeskTicket = build()
}

/// The Zendesk organization id of a business customer.
pub(crate) fn organization_id(customer: usize) -> u64 {
    360_000_100 + customer as u64 * 17
}

fn user_id(email: &str) -> u64 {
    381_300_000 + super::fnv(email) % 600_000
}

struct Draft {
    slug: String,
    subject: String,
    description: String,
    open: bool,
    priority: &'static str,
    ticket_type: &'static str,
    tags: Vec<String>,
    requester: (String, String),
    organization: Option<u64>,
    created: i64,
    updated: i64,
}

fn build() -> Vec<ZendeskTicket> {
    let agent = &people()[super::people::EMMA];
    let mut drafts = Vec::new();
    for d in derived() {
        let Some((who, subject, message)) = super::customers::voice(&d.info.slug) else {
            continue;
        };
        let s = d.story;
        let (requester, organization) = match who {
            Who::Business(c) => (contact(c), Some(organization_id(c))),
            Who::Shopper => (shopper(&d.info.slug), None),
        };
        let refs = d.refs_sentence();
        let summary = if refs.is_empty() {
            format!(
                "Internal note ({}): known issue \"{}\". Reply with the macro for this topic.",
                agent.name, s.title
            )
        } else {
            format!(
                "Internal note ({}): escalated to engineering, \"{}\", {}.",
                agent.name, s.title, refs
            )
        };
        let mut tags = vec![s.team.label().to_string()];
        tags.push(
            match s.kind {
                Kind::Incident => "incident",
                Kind::Feature => "feature_request",
                _ => "bug",
            }
            .into(),
        );
        if let Some(j) = d.jira {
            tags.push(format!("jira_{}", j.key.to_lowercase().replace('-', "_")));
        }
        let (priority, ticket_type) = match s.kind {
            Kind::Incident => ("urgent", "incident"),
            Kind::Bug if organization.is_some() => ("high", "problem"),
            Kind::Bug => ("normal", "problem"),
            _ => ("normal", "question"),
        };
        let created = d.start + 1800 + (d.h % 5400) as i64;
        let updated = if s.open {
            d.at(d.end, 1800)
        } else {
            d.at(d.end, 4 * 3600)
        };
        drafts.push(Draft {
            slug: d.info.slug.clone(),
            subject: subject.to_string(),
            description: format!("{message}\n\n{summary}"),
            open: s.open,
            priority,
            ticket_type,
            tags: tags.clone(),
            requester,
            organization,
            created,
            updated: updated.max(created + 600),
        });
        // A second shopper for the stories at the till.
        let at_the_till = matches!(s.team, Team::Checkout | Team::Billing | Team::Payments)
            && matches!(s.kind, Kind::Bug | Kind::Incident);
        if at_the_till {
            let second = shopper(&format!("{}:2", d.info.slug));
            let created = created + 3 * 3600 + (d.h % 3600) as i64;
            drafts.push(Draft {
                slug: d.info.slug.clone(),
                subject: format!("Re: {subject}"),
                description: format!(
                    "Same problem here. {}\n\n{summary}",
                    message.split(". ").next().unwrap_or(message)
                ),
                open: s.open,
                priority: "normal",
                ticket_type,
                tags,
                requester: second,
                organization: None,
                created,
                updated: updated.max(created + 600),
            });
        }
        if d.info.slug == "support-delayed-shipments" {
            for (n, place) in ["Madrid", "Hamburg", "Glasgow"].iter().enumerate() {
                let created = created + (n as i64 + 1) * 86400;
                drafts.push(Draft {
                    slug: d.info.slug.clone(),
                    subject: format!("Delayed shipment to {place}"),
                    description: format!(
                        "My order to {place} is a week late and the carrier tracking shows no movement. Please check with the warehouse.\n\n{summary}"
                    ),
                    open: false,
                    priority: "normal",
                    ticket_type: "question",
                    tags: vec!["support".into(), "shipping_delay".into()],
                    requester: shopper(&format!("delayed:{place}")),
                    organization: None,
                    created,
                    updated: d.at(created, 2 * 86400),
                });
            }
        }
    }
    drafts.sort_by(|a, b| a.created.cmp(&b.created).then(a.subject.cmp(&b.subject)));
    drafts
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            let id = 4001 + i as u64;
            ZendeskTicket {
                id,
                subject: t.subject,
                description: t.description,
                status: if t.open { "open" } else { "solved" }.into(),
                priority: t.priority.into(),
                ticket_type: t.ticket_type.into(),
                tags: t.tags,
                requester_id: user_id(&t.requester.1),
                requester_name: t.requester.0,
                requester_email: t.requester.1,
                assignee_id: ZENDESK_AGENT_ID,
                organization_id: t.organization,
                created_at: time::rfc3339(t.created),
                updated_at: time::rfc3339(t.updated),
                url: format!("https://{ZENDESK_SUBDOMAIN}.zendesk.com/agent/tickets/{id}"),
                story: t.slug,
                created_unix: t.created,
                updated_unix: t.updated,
            }
        })
        .collect()
}

/// The organization name of an organization id.
pub(crate) fn organization_name(id: u64) -> Option<&'static str> {
    (0..CUSTOMERS.len())
        .find(|c| organization_id(*c) == id)
        .map(|c| CUSTOMERS[c].0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_voice_has_a_ticket() {
        for voice in super::super::customers::VOICES.iter() {
            let slug = &voice.story;
            assert!(
                super::zendesk_tickets().iter().any(|t| t.story == *slug),
                "{slug}"
            );
        }
    }
}
