//! Google Drive: product requirement documents for the features, working
//! drafts of the plans and handbooks (the final versions are in Notion),
//! incident timelines as spreadsheets, one PDF report, and two drafts in
//! the trash. Texts carry the Jira keys and links.

use serde::{Deserialize, Serialize};

use super::derived::{derived, token};
use super::people;
use super::stories::{B, Kind};
use crate::time;

pub const MIME_DOC: &str = "application/vnd.google-apps.document";
pub const MIME_SHEET: &str = "application/vnd.google-apps.spreadsheet";
pub const MIME_PDF: &str = "application/pdf";

/// A file in the shared Drive.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct DriveFile {
    pub id: String,
    pub name: String,
    pub mime_type: String,
    pub description: Option<String>,
    /// What `files.export` returns: text/plain for Docs, text/csv for Sheets;
    /// the text of a PDF (searchable, not exportable).
    pub text: String,
    /// The citation URL.
    pub web_view_link: String,
    pub owner_name: String,
    pub owner_email: String,
    pub last_modifier_name: String,
    /// `2025-05-02T09:14:11.000Z`
    pub created_time: String,
    pub modified_time: String,
    pub trashed: bool,
    pub story: String,
    pub created_unix: i64,
    pub modified_unix: i64,
}

impl_record!(DriveFile, url: web_view_link, updated: modified_unix,
    searched: ["name", "description", "content"],
text: |f| {
    let description = f.description.as_deref().unwrap_or_default();
    format!("{}\n{}\n{}", f.name, description, f.text)
});

indexed_records! {
    /// Drive files, in creation order (trashed ones included).
    drive_files, drive_docs: DriveFile = build()
}

const ID_CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn link(mime: &str, id: &str) -> String {
    match mime {
        MIME_DOC => format!("https://docs.google.com/document/d/{id}/edit?usp=drivesdk"),
        MIME_SHEET => format!("https://docs.google.com/spreadsheets/d/{id}/edit?usp=drivesdk"),
        _ => format!("https://drive.google.com/file/d/{id}/view?usp=drivesdk"),
    }
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

struct Draft {
    name: String,
    mime: &'static str,
    description: Option<String>,
    text: String,
    owner: &'static super::Person,
    created: i64,
    modified: i64,
    trashed: bool,
    story: String,
}

impl Draft {
    /// An old or mistaken copy of this file, in the bin, made and last
    /// changed `made` and `changed` seconds after this file was created.
    fn binned_copy(&self, name: &str, text: &str, made: i64, changed: i64) -> Draft {
        Draft {
            name: name.into(),
            mime: self.mime,
            description: None,
            text: text.into(),
            owner: self.owner,
            created: self.created + made,
            modified: self.created + changed,
            trashed: true,
            story: self.story.clone(),
        }
    }
}

/// The copies in the bin: (story, name, text, made and last changed in
/// seconds after the story's own file was created).
const BINNED_COPIES: &[(&str, &str, &str, i64, i64)] = &[
    (
        "loyalty-points",
        "PRD: Loyalty points (old draft)",
        "Old draft of the loyalty points PRD: points per euro spent, expiry after 12 months. Superseded.",
        -20 * 86400,
        -19 * 86400,
    ),
    (
        "q3-launch-plan",
        "Q3 launch plan (copy)",
        "Copy of the Q3 launch plan draft, made by mistake.",
        3600,
        7200,
    ),
];

fn build() -> Vec<DriveFile> {
    let product = &people()[super::people::SOFIA];
    let sre = &people()[super::people::AISHA];
    let mut drafts: Vec<Draft> = Vec::new();
    for d in derived() {
        let s = d.story;
        let slug = d.info.slug.clone();
        let links: Vec<String> = d
            .links()
            .into_iter()
            .map(|(label, url)| format!("{label}: {url}"))
            .collect();
        // A file of this story, not in the bin; the arms below fill it.
        let file = |name: String, mime, owner| Draft {
            name,
            mime,
            owner,
            description: None,
            text: String::new(),
            created: 0,
            modified: 0,
            trashed: false,
            story: slug.clone(),
        };
        // The story's own file.
        let own = match s.kind {
            Kind::Feature => {
                let mut text = vec![
                    format!("PRD: {}", s.title),
                    format!(
                        "Owner: {} (product), {} (engineering)",
                        product.name, d.owner.name
                    ),
                    String::new(),
                    "Problem".into(),
                    s.desc.to_string(),
                    String::new(),
                    "Goals".into(),
                    format!("{}, for every storefront customer.", s.title),
                    "Adoption and support tickets are measured in the first four weeks.".into(),
                    String::new(),
                    "Related".into(),
                ];
                text.extend(links.iter().cloned());
                let created = d.start - 2 * 86400;
                Draft {
                    description: Some(format!("Product requirements for {}", s.title)),
                    text: text.join("\n"),
                    created,
                    modified: d.at(d.end, -86400).max(created),
                    ..file(format!("PRD: {}", s.title), MIME_DOC, product)
                }
            }
            Kind::Doc => {
                let Some((notion_title, blocks)) = s.notion else {
                    continue;
                };
                let mut text = vec![
                    format!("{notion_title} (working draft)"),
                    format!(
                        "Draft. The final version is in Notion: {}",
                        d.info.notion_url.clone().unwrap_or_default()
                    ),
                    String::new(),
                ];
                for b in blocks {
                    match b {
                        B::H(t) => {
                            text.push(String::new());
                            text.push(t.to_string());
                        }
                        B::P(t) => text.push(t.to_string()),
                        B::L(t) => text.push(format!("* {t}")),
                    }
                }
                text.extend(links.iter().cloned());
                Draft {
                    text: text.join("\n"),
                    created: d.start - 3 * 86400,
                    modified: d.at(d.start, 86400),
                    ..file(format!("{notion_title} (draft)"), MIME_DOC, d.owner)
                }
            }
            Kind::Incident => {
                let mut csv = vec!["time_utc,who,what".to_string()];
                for (t, who, what) in d.timeline() {
                    csv.push(format!(
                        "{},{},{}",
                        time::rfc3339(t),
                        csv_field(&who),
                        csv_field(&what)
                    ));
                }
                for l in &links {
                    csv.push(format!(",,{}", csv_field(l)));
                }
                Draft {
                    description: Some(format!("Incident timeline. {}", s.desc)),
                    text: csv.join("\n"),
                    created: d.start + 1200,
                    modified: d.at(d.end, 3 * 3600),
                    ..file(format!("{} - timeline", s.title), MIME_SHEET, sre)
                }
            }
            Kind::Task if slug == "black-friday-readiness" => {
                let summary = format!(
                    "Black Friday load test report. {} Result: checkout held 4x last year's peak at p95 under 800 ms; the order worker autoscaler cap of 10 replicas is the next bottleneck. {}",
                    s.desc,
                    d.refs_sentence()
                );
                Draft {
                    description: Some(summary.clone()),
                    text: summary,
                    created: d.at(d.end, -86400),
                    modified: d.at(d.end, -86400),
                    ..file("Black Friday load test results.pdf".into(), MIME_PDF, sre)
                }
            }
            _ => continue,
        };
        for &(_, name, text, made, changed) in BINNED_COPIES.iter().filter(|c| c.0 == slug) {
            drafts.push(own.binned_copy(name, text, made, changed));
        }
        drafts.push(own);
    }
    drafts.sort_by(|a, b| a.created.cmp(&b.created).then(a.name.cmp(&b.name)));
    drafts
        .into_iter()
        .map(|f| {
            let id = format!("1{}", token(&format!("drive:{}", f.name), 43, ID_CHARS));
            let editor = if super::fnv(&f.name) & 1 == 0 {
                f.owner
            } else {
                product
            };
            DriveFile {
                web_view_link: link(f.mime, &id),
                id,
                name: f.name,
                mime_type: f.mime.into(),
                description: f.description,
                text: f.text,
                owner_name: f.owner.name.clone(),
                owner_email: f.owner.email.clone(),
                last_modifier_name: editor.name.clone(),
                created_time: time::rfc3339_millis(f.created, 0),
                modified_time: time::rfc3339_millis(f.modified, 0),
                trashed: f.trashed,
                story: f.story,
                created_unix: f.created,
                modified_unix: f.modified,
            }
        })
        .collect()
}
