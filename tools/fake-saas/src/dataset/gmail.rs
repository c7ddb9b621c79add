//! Gmail: the support mailbox. Business customers write about the bugs that
//! hit them and support answers with the Jira key, the fix and the Zendesk
//! ticket; shoppers write about incidents and get the postmortem; Stripe
//! writes about the payments work, and engineers forward it with the ticket.

use serde::{Deserialize, Serialize};

use super::confluence_pages;
use super::customers::{CUSTOMERS, Who, contact, shopper, voice};
use super::derived::derived;
use super::stories::Kind;
use super::{people, zendesk_tickets};
use crate::time;

/// The mailbox the fake's users read.
pub const GMAIL_ADDRESS: &str = "support@acme-shop.example";

/// One message.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct GmailMessage {
    /// 16 hex digits.
    pub id: String,
    /// The id of the thread's first message.
    pub thread_id: String,
    pub from_name: String,
    pub from_email: String,
    pub to: String,
    pub subject: String,
    /// Plain text.
    pub body: String,
    pub labels: Vec<String>,
    pub story: String,
    /// Unix seconds (the API's `internalDate` is in milliseconds).
    pub unix: i64,
    /// The citation URL (`https://mail.google.com/mail/u/0/#all/<id>`).
    pub url: String,
}

impl GmailMessage {
    /// The `From` header.
    pub fn from_header(&self) -> String {
        format!("\"{}\" <{}>", self.from_name, self.from_email)
    }

    /// The API's `snippet`: the start of the body, HTML-escaped as Gmail does.
    pub fn snippet(&self) -> String {
        let flat: String = self.body.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut cut = flat.len().min(200);
        while !flat.is_char_boundary(cut) {
            cut -= 1;
        }
        flat[..cut]
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;")
    }

    /// The `Date` header (RFC 2822).
    pub fn date_header(&self) -> String {
        const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
        const MONTHS: [&str; 12] = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        let (y, m, d, hh, mm, ss) = time::parts(self.unix);
        let weekday = DAYS[self.unix.div_euclid(86400).rem_euclid(7) as usize];
        format!(
            "{weekday}, {d:02} {} {y} {hh:02}:{mm:02}:{ss:02} +0000",
            MONTHS[(m - 1) as usize]
        )
    }
}

impl_record!(GmailMessage, url: url, updated: unix, searched: ["subject", "from", "to", "body"],
    text: |m| format!("{}\n{}\n{}\n{}\n{}", m.subject, m.from_name, m.from_email, m.to, m.body));

indexed_records! {
    /// The mailbox's messages, oldest first.
    gmail_messages, gmail_docs: GmailMessage = build()
}

struct Draft {
    thread: usize,
    from: (String, String),
    to: String,
    subject: String,
    body: String,
    sent: bool,
    story: String,
    unix: i64,
}

/// What Stripe wrote about the payments stories: (slug, subject, body).
const STRIPE: &[(&str, &str, &str)] = &[
    (
        "stripe-paymentintents",
        "Action required: move your integration to Payment Intents",
        "Your account still creates payments with the Charges API. Strong Customer Authentication requires 3-D Secure for most European card payments: migrate to the Payment Intents API so that payments needing authentication do not fail.",
    ),
    (
        "incident-webhook-backlog",
        "Resolved: delayed webhook deliveries",
        "Between 09:10 and 12:05 UTC some webhook events were delivered with delays of up to three hours. All delayed events have now been delivered. Payments themselves were processed normally.",
    ),
    (
        "apple-pay",
        "Apple Pay domain verified for acme-shop.example",
        "The domain acme-shop.example is now verified for Apple Pay on the web. You can show the Apple Pay button in your checkout.",
    ),
    (
        "stripe-connect-payouts",
        "Your Connect platform profile was approved",
        "Your platform profile for Stripe Connect was reviewed and approved. You can now onboard connected accounts and send payouts to your sellers.",
    ),
];

fn build() -> Vec<GmailMessage> {
    let agent = &people()[super::people::EMMA];
    let agent_from = (agent.name.clone(), GMAIL_ADDRESS.to_string());
    let mut drafts: Vec<Draft> = Vec::new();
    let mut threads = 0usize;
    for d in derived() {
        let slug = d.info.slug.clone();
        let s = d.story;
        let ticket = zendesk_tickets().iter().find(|t| t.story == slug);
        if let Some((who, subject, message)) = voice(&slug) {
            let business = matches!(who, Who::Business(_));
            if business || s.kind == Kind::Incident {
                let (from, signature) = match who {
                    Who::Business(c) => {
                        let (name, email) = contact(c);
                        let sig = format!("{name}\n{}, {}", CUSTOMERS[c].7, CUSTOMERS[c].0);
                        ((name, email), sig)
                    }
                    Who::Shopper => {
                        let (name, email) = shopper(&format!("mail:{slug}"));
                        ((name.clone(), email), name)
                    }
                };
                let first = from.0.split(' ').next().unwrap_or("there").to_string();
                let asked = d.start + 2400 + (d.h % 3000) as i64;
                threads += 1;
                drafts.push(Draft {
                    thread: threads,
                    from: from.clone(),
                    to: GMAIL_ADDRESS.into(),
                    subject: subject.to_string(),
                    body: format!("Hello,\n\n{message}\n\nThanks,\n{signature}"),
                    sent: false,
                    story: slug.clone(),
                    unix: asked,
                });
                let refs = d.refs_sentence();
                let status = if s.open {
                    "Our engineers are working on it and I will write again when it is fixed."
                } else {
                    "It is fixed now; please let me know if you still see it."
                };
                let mut reply = if refs.is_empty() {
                    format!("Hi {first}, thank you for telling us. {status}")
                } else {
                    format!("Hi {first}, thank you for telling us. This is {refs}. {status}")
                };
                if s.kind == Kind::Incident
                    && let Some(pm) = confluence_pages()
                        .iter()
                        .find(|p| p.story == slug && p.title.starts_with("Postmortem"))
                {
                    reply.push_str(&format!(
                        "\n\nWhat happened and what we changed: {}",
                        pm.url
                    ));
                }
                if let Some(t) = ticket {
                    reply.push_str(&format!("\n\nYour support ticket: #{} ({})", t.id, t.url));
                }
                reply.push_str(&format!(
                    "\n\nBest regards,\n{}\nAcme Customer Support",
                    agent.name
                ));
                drafts.push(Draft {
                    thread: threads,
                    from: agent_from.clone(),
                    to: from.1.clone(),
                    subject: format!("Re: {subject}"),
                    body: reply,
                    sent: true,
                    story: slug.clone(),
                    unix: d
                        .at(if s.open { asked } else { d.end }, 5400)
                        .max(asked + 900),
                });
            }
        }
        if let Some((_, subject, body)) = STRIPE.iter().find(|x| x.0 == slug) {
            let from = (
                "Stripe".to_string(),
                "notifications@stripe.example".to_string(),
            );
            let at = d.start + 3600 + (d.h % 1800) as i64;
            threads += 1;
            drafts.push(Draft {
                thread: threads,
                from,
                to: GMAIL_ADDRESS.into(),
                subject: subject.to_string(),
                body: format!("{body}\n\nThe Stripe team"),
                sent: false,
                story: slug.clone(),
                unix: at,
            });
            let refs = d.refs_sentence();
            drafts.push(Draft {
                thread: threads,
                from: (d.owner.name.clone(), d.owner.email.clone()),
                to: GMAIL_ADDRESS.into(),
                subject: format!("Fwd: {subject}"),
                body: format!(
                    "For the record: our side of this is {}.\n\n---------- Forwarded message ----------\nFrom: Stripe <notifications@stripe.example>\nSubject: {subject}\n\n{body}",
                    if refs.is_empty() { s.title.to_string() } else { refs }
                ),
                sent: false,
                story: slug,
                unix: d.at(at, 2 * 3600),
            });
        }
    }
    // Thread ids are the ids of their first messages.
    let id_of = |unix: i64, seed: &str| -> String {
        format!(
            "{:016x}",
            ((unix as u64 * 1000) << 20) | (super::fnv(seed) & 0xfffff)
        )
    };
    let mut first_of_thread: Vec<(usize, String)> = Vec::new();
    let mut messages: Vec<GmailMessage> = drafts
        .iter()
        .map(|m| {
            let id = id_of(m.unix, &format!("{}:{}:{}", m.story, m.subject, m.from.1));
            let thread_id = match first_of_thread.iter().find(|(t, _)| *t == m.thread) {
                Some((_, tid)) => tid.clone(),
                None => {
                    first_of_thread.push((m.thread, id.clone()));
                    id.clone()
                }
            };
            GmailMessage {
                url: format!("https://mail.google.com/mail/u/0/#all/{id}"),
                id,
                thread_id,
                from_name: m.from.0.clone(),
                from_email: m.from.1.clone(),
                to: m.to.clone(),
                subject: m.subject.clone(),
                body: m.body.clone(),
                labels: if m.sent {
                    vec!["SENT".into()]
                } else {
                    vec![
                        "INBOX".into(),
                        "IMPORTANT".into(),
                        "CATEGORY_PERSONAL".into(),
                    ]
                },
                story: m.story.clone(),
                unix: m.unix,
            }
        })
        .collect();
    messages.sort_by(|a, b| a.unix.cmp(&b.unix).then(a.id.cmp(&b.id)));
    messages
}
