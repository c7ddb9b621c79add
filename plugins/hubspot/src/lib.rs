//! HubSpot CRM: deals, companies and contacts, through CRM search
//! (`POST /crm/v3/objects/{object}/search`, one object type per call; the
//! manifest admits POST on those three routes only). Not tickets: HubSpot's
//! only scope that lets ticket search answers (`tickets`) also grants
//! writing them, and this connector asks for read-only scopes alone.
//!
//! HubSpot's `query` matches records whose searchable properties contain
//! its words, all of them; a CRM record holds few words, so the query is
//! the question's most specific term. The search endpoints allow 4 calls a
//! second per token, which the three types' first pages stay within.
//!
//! Each object type is searched once with that term (`query`) and
//! the time range as filters on its last-modified property; while fewer
//! than `max_results` records came back, the types that have more are
//! paged (`paging.next.after`). The first pages go out in one batch, with
//! the `account-info` request. Records are interleaved type by type, so a
//! short answer still shows every kind. Citations are the records' pages in
//! the HubSpot app (`https://app.hubspot.com/contacts/{portal}/record/{type}/{id}`),
//! with the portal id and UI domain from `account-info`.

use quarry_connector_sdk::plan::terms_by_specificity;
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::text::join_non_empty;
use quarry_connector_sdk::time::to_unix;

const ACCOUNT: &str = "https://api.hubapi.com/account-info/v3/details";
/// Pages read after the first page of each type.
const MAX_EXTRA_PAGES: usize = 6;

/// One CRM object type: its search path, its type id in app URLs, the
/// property that holds its last change, and the properties read.
struct Object {
    name: &'static str,
    type_id: &'static str,
    modified: &'static str,
    properties: &'static [&'static str],
}

const OBJECTS: [Object; 3] = [
    Object {
        name: "deals",
        type_id: "0-3",
        modified: "hs_lastmodifieddate",
        properties: &[
            "dealname",
            "description",
            "dealstage",
            "amount",
            "closedate",
            "createdate",
            "hs_lastmodifieddate",
        ],
    },
    Object {
        name: "companies",
        type_id: "0-2",
        modified: "hs_lastmodifieddate",
        properties: &[
            "name",
            "domain",
            "description",
            "industry",
            "city",
            "country",
            "createdate",
            "hs_lastmodifieddate",
        ],
    },
    Object {
        name: "contacts",
        type_id: "0-1",
        modified: "lastmodifieddate",
        properties: &[
            "firstname",
            "lastname",
            "email",
            "jobtitle",
            "company",
            "createdate",
            "lastmodifieddate",
        ],
    },
];

struct HubSpot;

/// The results of one object type so far, and its next cursor.
struct Stream {
    object: &'static Object,
    records: Vec<Value>,
    next: Option<String>,
}

impl Connector for HubSpot {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let want = request.max_results.clamp(1, 200) as usize;
        // The account (for the records' URLs) and the first page of every
        // type do not depend on each other: one batch. The answers are read
        // in that order, so the first failure is the one it always was.
        let mut requests = vec![Request::get(ACCOUNT)];
        requests.extend(
            OBJECTS
                .iter()
                .map(|o| search_request(o, &request, want, None)),
        );
        let mut answers = send_all(requests).into_iter();
        let (portal, ui_domain) = account(answers.next().expect("one answer per request")?)?;
        let mut streams = Vec::new();
        for (object, answer) in OBJECTS.iter().zip(answers) {
            let (records, next) = read_page(answer?)?;
            streams.push(Stream {
                object,
                records,
                next,
            });
        }
        more_pages(&mut streams, &request, want)?;
        let mut documents = Vec::new();
        let mut round = 0;
        while documents.len() < want && streams.iter().any(|s| round < s.records.len()) {
            for stream in &streams {
                if documents.len() == want {
                    break;
                }
                if let Some(record) = stream.records.get(round)
                    && let Some(doc) = to_document(stream.object, record, portal, &ui_domain)
                {
                    documents.push(doc);
                }
            }
            round += 1;
        }
        Ok(documents)
    }
}

/// While fewer than `want` records came back, the next page of the first
/// type that has one. These stay one after another: which type is paged,
/// and for how many records, depends on the page before. Seldom needed:
/// each first page asks for `want` records (up to 100), so a type with
/// more usually brought them all already.
fn more_pages(
    streams: &mut [Stream],
    request: &SearchRequest,
    want: usize,
) -> Result<(), SearchError> {
    for _ in 0..MAX_EXTRA_PAGES {
        let have: usize = streams.iter().map(|s| s.records.len()).sum();
        if have >= want {
            break;
        }
        let Some(stream) = streams.iter_mut().find(|s| s.next.is_some()) else {
            break;
        };
        let page = search_request(stream.object, request, want - have, stream.next.take());
        let (records, next) = read_page(page.send()?)?;
        if records.is_empty() {
            continue;
        }
        stream.records.extend(records);
        stream.next = next;
    }
    Ok(())
}

/// The portal (hub) id and the app's domain (`app.hubspot.com`, or
/// `app-eu1.hubspot.com` for accounts hosted in the EU).
fn account(response: Response) -> Result<(i64, String), SearchError> {
    let body: Value = response.error_for_status()?.json()?;
    let portal = body
        .i64_at("/portalId")
        .ok_or_else(|| SearchError::InvalidResponse("account-info without portalId".into()))?;
    let domain = body
        .str_at("/uiDomain")
        .filter(|d| {
            d.ends_with(".hubspot.com")
                && d.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        })
        .unwrap_or("app.hubspot.com");
    Ok((portal, domain.to_string()))
}

/// The search for one page of one object type.
fn search_request(
    object: &Object,
    request: &SearchRequest,
    limit: usize,
    after: Option<String>,
) -> Request {
    let url = format!(
        "https://api.hubapi.com/crm/v3/objects/{}/search",
        object.name
    );
    Request::post(url).json(&search_body(object, request, limit, after))
}

/// One page's records, and the cursor of the next page.
fn read_page(response: Response) -> Result<(Vec<Value>, Option<String>), SearchError> {
    let response: Value = response.error_for_status()?.json()?;
    let next = response.cursor_at("/paging/next/after");
    Ok((response.array_at("/results").to_vec(), next))
}

/// `{query, filterGroups, properties, limit, sorts, after}` (all but
/// `query` required by HubSpot's description): the most specific term as
/// the free-text `query`, the time range as one filter group on the type's
/// last-modified property (milliseconds).
fn search_body(
    object: &Object,
    request: &SearchRequest,
    limit: usize,
    after: Option<String>,
) -> Value {
    let query = terms_by_specificity(request)
        .first()
        .map_or_else(|| request.query.clone(), |term| term.text.replace('"', ""));
    let mut filters = Vec::new();
    if let Some(since) = request.since.as_deref().and_then(to_unix) {
        filters.push(json!({"propertyName": object.modified, "operator": "GTE", "value": (since * 1000).to_string()}));
    }
    if let Some(until) = request.until.as_deref().and_then(to_unix) {
        filters.push(json!({"propertyName": object.modified, "operator": "LTE", "value": (until * 1000 + 999).to_string()}));
    }
    let groups = if filters.is_empty() {
        json!([])
    } else {
        json!([{ "filters": filters }])
    };
    json!({
        "query": query,
        "filterGroups": groups,
        "properties": object.properties,
        "limit": limit.clamp(1, 100),
        "sorts": [],
        // The first page starts at the first record.
        "after": after.unwrap_or_else(|| "0".to_string()),
    })
}

fn to_document(object: &Object, record: &Value, portal: i64, ui_domain: &str) -> Option<Document> {
    let id = record.str_at("/id")?;
    let p = |name: &str| {
        record
            .str_at(&format!("/properties/{name}"))
            .unwrap_or_default()
    };
    let (title, content) = match object.name {
        "deals" => (
            p("dealname").to_string(),
            join_non_empty(
                [
                    p("description"),
                    &labelled("Stage", p("dealstage")),
                    &labelled("Amount", p("amount")),
                    &labelled("Close date", p("closedate")),
                ],
                "\n",
            ),
        ),
        "companies" => (
            p("name").to_string(),
            join_non_empty(
                [
                    p("description"),
                    &labelled("Domain", p("domain")),
                    &labelled("Industry", p("industry")),
                    &join_non_empty([p("city"), p("country")], ", "),
                ],
                "\n",
            ),
        ),
        _ => (
            join_non_empty([p("firstname"), p("lastname")], " "),
            join_non_empty(
                [
                    &join_non_empty([p("jobtitle"), p("company")], " at "),
                    p("email"),
                ],
                "\n",
            ),
        ),
    };
    let created = record
        .str_at("/createdAt")
        .or_else(|| record.str_at("/properties/createdate"));
    let updated = record
        .str_at("/updatedAt")
        .or_else(|| record.str_at(&format!("/properties/{}", object.modified)));
    Some(
        Document::new(
            id,
            title,
            content,
            format!(
                "https://{ui_domain}/contacts/{portal}/record/{}/{id}",
                object.type_id
            ),
        )
        .times(created, updated)
        .metadata(json!({
            "object": object.name,
            "stage": record
                .str_at("/properties/hs_pipeline_stage")
                .or_else(|| record.str_at("/properties/dealstage")),
        })),
    )
}

fn labelled(label: &str, value: &str) -> String {
    if value.trim().is_empty() {
        String::new()
    } else {
        format!("{label}: {value}")
    }
}

quarry_connector_sdk::export!(HubSpot);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_each_object_type() {
        assert!(
            OBJECTS.iter().all(|o| o.name != "tickets"),
            "no read-only scope reaches tickets"
        );
        let deal: Value = serde_json::from_str(r#"{"id":"9001","properties":{"dealname":"Northwind - marketplace","description":"Seller onboarding.","dealstage":"contractsent","amount":"12000"},"createdAt":"2026-06-02T09:00:00Z","updatedAt":"2026-06-10T09:00:00Z"}"#).unwrap();
        let doc = to_document(&OBJECTS[0], &deal, 1, "app-eu1.hubspot.com").unwrap();
        assert_eq!(
            doc.url,
            "https://app-eu1.hubspot.com/contacts/1/record/0-3/9001"
        );
        assert_eq!(
            doc.content,
            "Seller onboarding.\nStage: contractsent\nAmount: 12000"
        );

        let contact: Value = serde_json::from_str(r#"{"id":"51","properties":{"firstname":"Dana","lastname":"Whitfield","email":"dana@bluebird-cafe.example","jobtitle":"Owner","company":"Bluebird Café Group","lastmodifieddate":"2025-01-02T00:00:00Z"}}"#).unwrap();
        let doc = to_document(&OBJECTS[2], &contact, 1, "app.hubspot.com").unwrap();
        assert_eq!(doc.title, "Dana Whitfield");
        assert_eq!(
            doc.content,
            "Owner at Bluebird Café Group\ndana@bluebird-cafe.example"
        );
        assert_eq!(doc.updated_at.as_deref(), Some("2025-01-02T00:00:00Z"));
    }

    #[test]
    fn builds_the_search_body() {
        let request =
            SearchRequest::new("x", &["refund"], &[]).between(Some("2025-08-01T00:00:00Z"), None);
        let body = search_body(&OBJECTS[2], &request, 5, Some("10".into()));
        assert_eq!(
            body,
            json!({
                "query": "refund",
                "properties": ["firstname", "lastname", "email", "jobtitle", "company", "createdate", "lastmodifieddate"],
                "limit": 5,
                "filterGroups": [{"filters": [{"propertyName": "lastmodifieddate", "operator": "GTE", "value": "1754006400000"}]}],
                "sorts": [],
                "after": "10",
            })
        );
        // The first page: every key HubSpot requires, an empty filter list.
        let body = search_body(
            &OBJECTS[0],
            &SearchRequest::new("x", &["refund"], &[]),
            5,
            None,
        );
        assert_eq!(body["after"], "0");
        assert_eq!(body["filterGroups"], json!([]));
    }
}
