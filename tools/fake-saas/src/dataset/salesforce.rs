//! Salesforce (Service Cloud), where the account team follows the business
//! customers: one Account per customer, a Case for every problem a
//! business customer reported, and an "incident impact" Case for every
//! business customer an incident hit. Case descriptions name the company
//! and carry the engineering references (Jira or Linear key, pull request,
//! post-mortem).

use serde::{Deserialize, Serialize};

use super::customers::{CUSTOMERS, VOICES, Who, contact};
use super::derived::{derived, end_limit, token};
use super::stories::{Kind, Team};
use super::{parse_date, people};
use crate::time;

/// The org's My Domain URL: the API and the Lightning pages live there.
pub const SALESFORCE_INSTANCE: &str = "https://acme.my.salesforce.com";
/// The org id (the start of every access token).
pub const SALESFORCE_ORG_ID: &str = "00D5g00000AcMeQEAV";

/// One record: an Account or a Case.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SalesforceRecord {
    /// `Account` or `Case`.
    pub object_type: String,
    /// 18-character id (`001…` for accounts, `500…` for cases).
    pub id: String,
    /// Field values by API name (`Name`, `Subject`, `Description`,
    /// `CreatedDate`, `LastModifiedDate`...), relationship fields by path
    /// (`Account.Name`, `Owner.Name`). Dates as Salesforce writes them
    /// (`2025-05-02T09:14:11.000+0000`).
    pub fields: Vec<(String, String)>,
    /// The citation URL (`https://acme.my.salesforce.com/lightning/r/Case/<id>/view`).
    pub url: String,
    pub story: Option<String>,
    pub created_unix: i64,
    pub updated_unix: i64,
}

impl SalesforceRecord {
    /// A field by API name (case-insensitive, as in Salesforce).
    pub fn field(&self, name: &str) -> Option<&str> {
        crate::value_ignoring_case(&self.fields, name)
    }

    /// The text fields a search looks in ("IN ALL FIELDS").
    pub fn searchable_fields(object_type: &str) -> &'static [&'static str] {
        match object_type {
            "Case" => &["CaseNumber", "Subject", "Description", "Status"],
            _ => &[
                "Name",
                "Description",
                "Industry",
                "BillingCity",
                "BillingCountry",
                "Website",
            ],
        }
    }
}

impl_record!(SalesforceRecord, url: url, updated: updated_unix,
    searched: ["name fields", "text fields"],
text: |r| {
    SalesforceRecord::searchable_fields(&r.object_type)
        .iter()
        .filter_map(|f| r.field(f))
        .collect::<Vec<_>>()
        .join("\n")
});

indexed_records! {
    /// Accounts (by customer), then cases (by case number).
    salesforce_records, salesforce_docs: SalesforceRecord = build()
}

/// `2025-05-02T09:14:11.000+0000`.
pub fn salesforce_time(unix: i64) -> String {
    time::jira(unix)
}

const ID_CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

fn record_id(prefix: &str, seed: &str) -> String {
    format!(
        "{prefix}5g00000{}",
        token(&format!("sf:{seed}"), 8, ID_CHARS)
    )
}

fn lightning(object_type: &str, id: &str) -> String {
    format!("{SALESFORCE_INSTANCE}/lightning/r/{object_type}/{id}/view")
}

struct CaseDraft {
    slug: String,
    customer: usize,
    subject: String,
    description: String,
    status: &'static str,
    priority: &'static str,
    origin: &'static str,
    case_type: &'static str,
    created: i64,
    updated: i64,
}

/// The business customers an incident hit: those who wrote about it, and
/// two more chosen by the story's hash.
fn hit_by(slug: &str, h: u64) -> Vec<usize> {
    let mut out: Vec<usize> = VOICES
        .iter()
        .filter(|v| v.story == slug)
        .filter_map(|v| match v.who {
            Who::Business(c) => Some(c),
            Who::Shopper => None,
        })
        .collect();
    let n = CUSTOMERS.len() as u64;
    for pick in [h % n, (h >> 17) % n, (h >> 29) % n] {
        if out.len() >= 2 {
            break;
        }
        if !out.contains(&(pick as usize)) {
            out.push(pick as usize);
        }
    }
    out
}

fn build() -> Vec<SalesforceRecord> {
    let support = &people()[super::people::EMMA];
    let mut cases: Vec<CaseDraft> = Vec::new();
    for d in derived() {
        let s = d.story;
        let slug = d.info.slug.clone();
        let refs = d.refs_sentence();
        let engineering = if refs.is_empty() {
            format!("Engineering: \"{}\".", s.title)
        } else {
            format!("Engineering: \"{}\", {refs}.", s.title)
        };
        if let Some((Who::Business(c), subject, message)) = super::customers::voice(&slug) {
            let (name, email) = contact(c);
            let created = d.start + 2 * 3600 + (d.h % 3600) as i64;
            cases.push(CaseDraft {
                slug: slug.clone(),
                customer: c,
                subject: subject.to_string(),
                description: format!(
                    "{name} ({email}, {}) reported: {message}\n\n{engineering}",
                    CUSTOMERS[c].0
                ),
                status: if s.open { "Escalated" } else { "Closed" },
                priority: if s.kind == Kind::Incident {
                    "High"
                } else {
                    "Medium"
                },
                origin: "Email",
                case_type: "Problem",
                created,
                updated: d.at(d.end, 5 * 3600).max(created + 600),
            });
        }
        if s.kind == Kind::Incident {
            let postmortem = d.write_up(|u| format!(" Post-mortem: {u}."));
            for c in hit_by(&slug, d.h) {
                let created = d.start + 4 * 3600 + (c as i64 * 611);
                cases.push(CaseDraft {
                    slug: slug.clone(),
                    customer: c,
                    subject: format!("Incident impact: {}", s.title),
                    description: format!(
                        "{} was affected by the incident \"{}\". {} Orders and invoices of the account were checked and the customer was informed by {}.{postmortem}\n\n{engineering}",
                        CUSTOMERS[c].0, s.title, s.desc, support.name
                    ),
                    status: "Closed",
                    priority: "High",
                    origin: "Web",
                    case_type: "Incident",
                    created,
                    updated: d.at(d.end, 8 * 3600).max(created + 3600),
                });
            }
        }
        // Feature work a business customer asked for: a question case.
        if s.kind == Kind::Feature
            && matches!(s.team, Team::Checkout | Team::Payments | Team::Billing)
        {
            let c = (d.h % CUSTOMERS.len() as u64) as usize;
            let (name, _) = contact(c);
            let created = (d.start - 3 * 86400).max(parse_date("2025-01-02"));
            cases.push(CaseDraft {
                slug: slug.clone(),
                customer: c,
                subject: format!("Feature request: {}", s.title),
                description: format!(
                    "{name} ({}) asked when \"{}\" will be available for their account. {}\n\n{engineering}",
                    CUSTOMERS[c].0, s.title, s.desc
                ),
                status: if s.open { "Working" } else { "Closed" },
                priority: "Low",
                origin: "Phone",
                case_type: "Feature Request",
                created,
                updated: d.at(d.end, 86400).max(created + 3600),
            });
        }
    }
    cases.sort_by(|a, b| a.created.cmp(&b.created).then(a.subject.cmp(&b.subject)));

    let account_ids: Vec<String> = CUSTOMERS.iter().map(|c| record_id("001", c.1)).collect();
    let mut records = Vec::new();
    for (i, c) in CUSTOMERS.iter().enumerate() {
        let (name, domain, industry, city, country, ..) = *c;
        let created = parse_date("2025-01-02") + i as i64 * 86400 + 8 * 3600;
        let updated = cases
            .iter()
            .filter(|x| x.customer == i)
            .map(|x| x.updated)
            .max()
            .unwrap_or(created + 86400)
            .clamp(created, end_limit());
        let id = account_ids[i].clone();
        records.push(SalesforceRecord {
            object_type: "Account".into(),
            url: lightning("Account", &id),
            fields: vec![
                ("Name".to_string(), name.to_string()),
                ("Description".into(), c.8.to_string()),
                ("Industry".into(), industry.replace('_', " ").to_lowercase()),
                ("BillingCity".into(), city.to_string()),
                ("BillingCountry".into(), country.to_string()),
                ("Website".into(), format!("https://{domain}")),
                ("Type".into(), "Customer - Direct".into()),
                ("Owner.Name".into(), support.name.clone()),
                ("CreatedBy.Name".into(), support.name.clone()),
                ("CreatedDate".into(), salesforce_time(created)),
                ("LastModifiedDate".into(), salesforce_time(updated)),
            ],
            id,
            story: None,
            created_unix: created,
            updated_unix: updated,
        });
    }
    for (n, c) in cases.into_iter().enumerate() {
        let number = format!("{:08}", 1001 + n);
        let id = record_id("500", &number);
        let updated = c.updated.min(end_limit()).max(c.created);
        records.push(SalesforceRecord {
            object_type: "Case".into(),
            url: lightning("Case", &id),
            fields: vec![
                ("CaseNumber".to_string(), number),
                ("Subject".into(), c.subject),
                ("Description".into(), c.description),
                ("Status".into(), c.status.into()),
                ("Priority".into(), c.priority.into()),
                ("Origin".into(), c.origin.into()),
                ("Type".into(), c.case_type.into()),
                ("AccountId".into(), account_ids[c.customer].clone()),
                ("Account.Name".into(), CUSTOMERS[c.customer].0.into()),
                ("Owner.Name".into(), support.name.clone()),
                ("CreatedBy.Name".into(), support.name.clone()),
                ("CreatedDate".into(), salesforce_time(c.created)),
                ("LastModifiedDate".into(), salesforce_time(updated)),
            ],
            id,
            story: Some(c.slug),
            created_unix: c.created,
            updated_unix: updated,
        });
    }
    records
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounts_and_cases_with_references() {
        let records = salesforce_records();
        let accounts = records
            .iter()
            .filter(|r| r.object_type == "Account")
            .count();
        let cases = records.iter().filter(|r| r.object_type == "Case").count();
        assert_eq!(accounts, CUSTOMERS.len());
        assert!(cases >= 25, "{cases} cases");
        for r in records {
            assert_eq!(r.id.len(), 18, "{}", r.id);
            assert!(r.created_unix <= r.updated_unix, "{}", r.id);
        }
        let double = records
            .iter()
            .find(|r| r.story.as_deref() == Some("invoice-retry-double-charge"))
            .unwrap();
        assert!(double.field("Description").unwrap().contains("ACME-"));
        assert!(
            double
                .field("Description")
                .unwrap()
                .contains("Kaffeehaus Müller")
        );
        let ids: std::collections::HashSet<&str> = records.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids.len(), records.len());
    }
}
