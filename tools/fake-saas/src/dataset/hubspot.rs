//! HubSpot CRM: the business customers (companies and their contacts), the
//! deals that depend on the product work (with its Jira keys), and a
//! ticket for every problem a business customer reported (with the Jira
//! key, the fix and the Zendesk ticket).

use serde::{Deserialize, Serialize};

use super::customers::{
    BLUEBIRD, CASA_VERDE, CUSTOMERS, GREENLEAF, HARBOUR, LUMIERE, MAPLE_LEAF, MORE_CONTACTS,
    MUELLER, NORDIC, SUNRISE, VOICES, Who, ascii,
};
use super::derived::{derived, end_limit};
use super::{parse_date, zendesk_tickets};
use crate::time;

/// The HubSpot account (portal) id.
pub const HUBSPOT_PORTAL_ID: i64 = 24_681_357;

/// One CRM record: a company, contact, deal or ticket.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct HubspotObject {
    /// `companies`, `contacts`, `deals` or `tickets`.
    pub object_type: String,
    /// Numeric id.
    pub id: String,
    /// Property values by internal name (`createdate` and the last-modified
    /// property included, as RFC 3339 with milliseconds).
    pub properties: Vec<(String, String)>,
    /// The citation URL (`https://app.hubspot.com/contacts/<portal>/record/0-5/<id>`).
    pub url: String,
    pub story: Option<String>,
    pub created_unix: i64,
    pub updated_unix: i64,
}

impl HubspotObject {
    pub fn property(&self, name: &str) -> Option<&str> {
        self.properties
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The property that holds the last change (`lastmodifieddate` for
    /// contacts, `hs_lastmodifieddate` for the others).
    pub fn modified_property(object_type: &str) -> &'static str {
        if object_type == "contacts" {
            "lastmodifieddate"
        } else {
            "hs_lastmodifieddate"
        }
    }

    /// The properties HubSpot's free-text `query` searches for this type.
    pub fn searchable_properties(object_type: &str) -> &'static [&'static str] {
        match object_type {
            "tickets" => &["subject", "content", "hs_pipeline_stage"],
            "deals" => &["dealname", "description", "dealstage"],
            "companies" => &[
                "name",
                "domain",
                "description",
                "city",
                "country",
                "industry",
            ],
            _ => &["firstname", "lastname", "email", "company", "jobtitle"],
        }
    }
}

impl_record!(HubspotObject, url: url, updated: updated_unix,
    searched: ["default searchable properties"],
text: |o| {
    HubspotObject::searchable_properties(&o.object_type)
        .iter()
        .filter_map(|p| o.property(p))
        .collect::<Vec<_>>()
        .join("\n")
});

indexed_records! {
    /// Every CRM record: companies, contacts, deals, tickets (each by id).
    hubspot_objects, hubspot_docs: HubspotObject = build()
}

/// Deals: (story, customer, deal name, amount, stage, description).
const DEALS: &[(&str, usize, &str, u32, &str, &str)] = &[
    (
        "q3-launch-plan",
        MUELLER,
        "Kaffeehaus Müller - Q3 2025 launch bundle",
        12_000,
        "closedwon",
        "Seasonal bundle for three coffee houses, ordered for the Q3 launch.",
    ),
    (
        "apple-pay",
        LUMIERE,
        "Café Lumière - web checkout with Apple Pay",
        4_000,
        "closedwon",
        "Camille's team pays from iPhones at the counter and asked for Apple Pay in the web checkout.",
    ),
    (
        "giftcard-discount",
        GREENLEAF,
        "Greenleaf Offices - employee gift cards",
        8_000,
        "closedwon",
        "Gift cards for 1,200 employees, redeemable together with the staff discount code.",
    ),
    (
        "checkout-timeout-50",
        GREENLEAF,
        "Greenleaf Offices - office coffee bulk orders",
        36_000,
        "closedwon",
        "Monthly bulk restock of office coffee (60+ items per order). At risk while bulk orders timed out at payment.",
    ),
    (
        "canada-tax",
        MAPLE_LEAF,
        "Maple Leaf Espresso Bar - wholesale expansion to Quebec",
        15_000,
        "decisionmakerboughtin",
        "Second espresso bar in Montréal; needs correct GST/QST invoices per province.",
    ),
    (
        "subscription-pause",
        BLUEBIRD,
        "Bluebird Café Group - wholesale subscription renewal",
        24_000,
        "closedwon",
        "Renewal of the weekly wholesale subscription for six cafés, with pause and resume for the summer closures.",
    ),
    (
        "loyalty-points",
        HARBOUR,
        "Harbour Street Deli - loyalty programme pilot",
        5_000,
        "qualifiedtobuy",
        "Pilot of the loyalty points programme for the deli's regulars.",
    ),
    (
        "marketplace-launch-plan",
        NORDIC,
        "Nordic Brew Supply - marketplace seller onboarding",
        18_000,
        "contractsent",
        "Nordic Brew lists 40 brewing products at the marketplace launch (Q3 2026 launch plan).",
    ),
    (
        "stripe-connect-payouts",
        CASA_VERDE,
        "Casa Verde Tostadores - marketplace seller payouts",
        9_500,
        "appointmentscheduled",
        "Casa Verde sells beans on the marketplace and needs weekly payouts in EUR through Stripe Connect.",
    ),
    (
        "invoice-pdf-blank",
        SUNRISE,
        "Sunrise Co-working - annual invoice plan",
        20_000,
        "contractsent",
        "Yearly invoicing for five co-working spaces; their finance team needs the invoice PDFs to render.",
    ),
];

fn ms(unix: i64) -> String {
    time::rfc3339_millis(unix, 0)
}

impl HubspotObject {
    /// An object with `properties` of its own, then those HubSpot keeps on every object:
    /// when it was created and last changed, and its id.
    fn new(
        object_type: &str,
        id: String,
        properties: Vec<(&str, String)>,
        story: Option<&str>,
        created: i64,
        updated: i64,
    ) -> Self {
        let type_id = match object_type {
            "contacts" => "0-1",
            "companies" => "0-2",
            "deals" => "0-3",
            _ => "0-5",
        };
        let mut properties: Vec<(String, String)> = properties
            .into_iter()
            .map(|(name, value)| (name.to_string(), value))
            .collect();
        properties.extend([
            ("createdate".to_string(), ms(created)),
            (
                Self::modified_property(object_type).to_string(),
                ms(updated),
            ),
            ("hs_object_id".to_string(), id.clone()),
        ]);
        HubspotObject {
            object_type: object_type.into(),
            url: format!(
                "https://app.hubspot.com/contacts/{HUBSPOT_PORTAL_ID}/record/{type_id}/{id}"
            ),
            id,
            properties,
            story: story.map(str::to_string),
            created_unix: created,
            updated_unix: updated,
        }
    }
}

fn company_id(c: usize) -> String {
    (9_870_000_011u64 + c as u64 * 1_013).to_string()
}

fn build() -> Vec<HubspotObject> {
    let stories = derived();
    let span = |slug: &str| {
        stories
            .iter()
            .find(|d| d.info.slug == slug)
            .expect("a deal or ticket names a story")
    };
    let mut deals = Vec::new();
    for (i, (slug, customer, name, amount, stage, description)) in DEALS.iter().enumerate() {
        let d = span(slug);
        let created = (d.start - 5 * 86400 - (d.h % 7200) as i64).max(parse_date("2025-01-02"));
        let updated = d.at(d.end, 86400);
        let refs = d.refs_sentence();
        let description = if refs.is_empty() {
            description.to_string()
        } else {
            format!("{description} Product work: {refs}.")
        };
        let id = (31_000_000_007u64 + i as u64 * 3_001).to_string();
        let properties = vec![
            ("dealname", name.to_string()),
            ("description", description),
            ("dealstage", stage.to_string()),
            ("pipeline", "default".into()),
            ("amount", amount.to_string()),
        ];
        let mut deal = HubspotObject::new("deals", id, properties, Some(slug), created, updated);
        let company = ("associatedcompanyid".to_string(), company_id(*customer));
        deal.properties.push(company);
        if *stage == "closedwon" {
            let closed = ("closedate".to_string(), ms(d.at(d.end, 2 * 86400)));
            deal.properties.push(closed);
        }
        deals.push((*customer, deal));
    }
    let mut tickets = Vec::new();
    for voice in VOICES.iter() {
        let Who::Business(customer) = &voice.who else {
            continue;
        };
        let (slug, subject, message) = (&voice.story, &voice.subject, &voice.message);
        let d = span(slug);
        let zendesk = zendesk_tickets()
            .iter()
            .find(|t| t.story == *slug && t.organization_id.is_some());
        let (name, email) = super::customers::contact(*customer);
        let refs = d.refs_sentence();
        let mut content =
            format!("{name} ({email}) reported: {message}\nEscalated to engineering: ");
        if refs.is_empty() {
            content.push_str(d.story.title);
        } else {
            content.push_str(&refs);
        }
        content.push('.');
        if let Some(z) = zendesk {
            content.push_str(&format!("\nZendesk ticket #{}: {}", z.id, z.url));
        }
        let created = zendesk.map_or(d.start, |z| z.created_unix) + 3600;
        let updated = zendesk
            .map_or(d.end, |z| z.updated_unix)
            .max(created + 600)
            .min(end_limit());
        let id = (1_820_000_003u64 + tickets.len() as u64 * 7_919).to_string();
        let open = d.story.open;
        let incident = d.story.kind == super::stories::Kind::Incident;
        let properties = vec![
            ("subject", format!("{}: {subject}", CUSTOMERS[*customer].0)),
            ("content", content),
            ("hs_pipeline", "0".into()),
            ("hs_pipeline_stage", if open { "3" } else { "4" }.into()),
            (
                "hs_ticket_priority",
                if incident { "HIGH" } else { "MEDIUM" }.into(),
            ),
        ];
        tickets.push((
            *customer,
            HubspotObject::new("tickets", id, properties, Some(slug), created, updated),
        ));
    }
    let last_touch = |customer: usize, fallback: i64| {
        deals
            .iter()
            .chain(tickets.iter())
            .filter(|(c, _)| *c == customer)
            .map(|(_, o)| o.updated_unix)
            .max()
            .unwrap_or(fallback)
    };
    let mut out = Vec::new();
    for (c, customer) in CUSTOMERS.iter().enumerate() {
        let (name, domain, industry, city, country, ..) = *customer;
        let created = parse_date("2025-01-02") + c as i64 * 86400 + 9 * 3600;
        let updated = last_touch(c, created + 86400).max(created);
        let id = company_id(c);
        let properties = vec![
            ("name", name.to_string()),
            ("domain", domain.to_string()),
            ("industry", industry.to_string()),
            ("city", city.to_string()),
            ("country", country.to_string()),
            ("description", customer.8.to_string()),
            ("lifecyclestage", "customer".into()),
        ];
        out.push(HubspotObject::new(
            "companies",
            id,
            properties,
            None,
            created,
            updated,
        ));
    }
    let people: Vec<(usize, &str, &str, &str)> = CUSTOMERS
        .iter()
        .enumerate()
        .map(|(c, x)| (c, x.5, x.6, x.7))
        .chain(MORE_CONTACTS.iter().copied())
        .collect();
    for (i, (c, first, last, title)) in people.into_iter().enumerate() {
        let created = parse_date("2025-01-03") + c as i64 * 86400 + 10 * 3600 + i as i64 * 60;
        let updated = last_touch(c, created + 3600).max(created);
        let id = (151 + i as u64 * 50).to_string();
        let email = if i < CUSTOMERS.len() {
            super::customers::contact(c).1
        } else {
            format!("{}@{}", ascii(&first.to_lowercase()), CUSTOMERS[c].1)
        };
        let properties = vec![
            ("firstname", first.to_string()),
            ("lastname", last.to_string()),
            ("email", email),
            ("jobtitle", title.to_string()),
            ("company", CUSTOMERS[c].0.to_string()),
            ("lifecyclestage", "customer".into()),
        ];
        out.push(HubspotObject::new(
            "contacts", id, properties, None, created, updated,
        ));
    }
    out.extend(deals.into_iter().map(|(_, o)| o));
    out.extend(tickets.into_iter().map(|(_, o)| o));
    out
}
