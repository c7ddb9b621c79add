//! The fictional company as a retrieval benchmark in BEIR's format
//! (`fake-saas beir --out DIR`): every record of every vendor a document,
//! every story a question (its title, as a person would name the matter),
//! and a story's records the relevant documents. A second set beside a
//! public one for `quarry eval-live`: in a company's own words, across
//! fifteen tools, and no question planner was tuned on it.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::json;

use super::{
    Record, asana_tasks, confluence_pages, drive_files, github_items, gmail_messages,
    hubspot_objects, intercom_conversations, jira_issues, linear_issues, m365_items, notion_pages,
    salesforce_records, slack_messages, stories, trello_cards, zendesk_tickets,
};

/// One record as a document: its citation URL (the id), title, text,
/// story, and when it last changed (a question that names a date is
/// filtered by it, as the vendors filter).
struct Row {
    url: String,
    title: String,
    text: String,
    story: Option<String>,
    updated_unix: i64,
}

fn row<R: Record>(r: &R, title: &str, text: String, story: Option<&str>) -> Row {
    Row {
        url: r.citation_url().to_string(),
        title: title.to_string(),
        text,
        story: story.filter(|s| !s.is_empty()).map(str::to_string),
        updated_unix: r.updated_unix(),
    }
}

fn rows() -> Vec<Row> {
    let mut rows = Vec::new();
    for r in github_items() {
        rows.push(row(r, &r.title, r.body.clone(), Some(&r.story)));
    }
    for r in slack_messages() {
        rows.push(row(r, "", r.text.clone(), Some(&r.story)));
    }
    for r in notion_pages() {
        rows.push(row(r, &r.title, r.body_text(), Some(&r.story)));
    }
    for r in linear_issues() {
        rows.push(row(r, &r.title, r.description.clone(), Some(&r.story)));
    }
    for r in jira_issues() {
        rows.push(row(r, &r.summary, r.description.clone(), Some(&r.story)));
    }
    for r in confluence_pages() {
        rows.push(row(r, &r.title, r.body_text.clone(), Some(&r.story)));
    }
    for r in drive_files().iter().filter(|f| !f.trashed) {
        rows.push(row(r, &r.name, r.text.clone(), Some(&r.story)));
    }
    for r in gmail_messages() {
        rows.push(row(r, &r.subject, r.body.clone(), Some(&r.story)));
    }
    for r in zendesk_tickets() {
        rows.push(row(r, &r.subject, r.description.clone(), Some(&r.story)));
    }
    for r in hubspot_objects() {
        let text: Vec<&str> = r.properties.iter().map(|(_, v)| v.as_str()).collect();
        rows.push(row(r, "", text.join("\n"), r.story.as_deref()));
    }
    for r in salesforce_records() {
        let text: Vec<&str> = r.fields.iter().map(|(_, v)| v.as_str()).collect();
        rows.push(row(r, "", text.join("\n"), r.story.as_deref()));
    }
    for r in m365_items() {
        rows.push(row(r, &r.name, r.text.clone(), Some(&r.story)));
    }
    for r in asana_tasks() {
        rows.push(row(r, &r.name, r.notes.clone(), Some(&r.story)));
    }
    for r in trello_cards() {
        rows.push(row(r, &r.name, r.desc.clone(), Some(&r.story)));
    }
    for r in intercom_conversations() {
        let title = r.title.as_deref().unwrap_or(&r.subject);
        rows.push(row(r, title, r.body_text.clone(), Some(&r.story)));
    }
    rows
}

/// Writes `corpus.jsonl`, `queries.jsonl` and `qrels/test.tsv` into `dir`;
/// returns (documents, questions, judgements).
pub fn write_beir(dir: &Path) -> Result<(usize, usize, usize)> {
    std::fs::create_dir_all(dir.join("qrels"))?;
    let rows = rows();
    let mut corpus = std::fs::File::create(dir.join("corpus.jsonl"))?;
    for row in &rows {
        let updated = crate::time::rfc3339(row.updated_unix);
        let line = json!({
            "_id": row.url,
            "title": row.title,
            "text": row.text,
            "metadata": {"updated": updated},
        });
        writeln!(corpus, "{line}")?;
    }
    let mut queries = std::fs::File::create(dir.join("queries.jsonl"))?;
    let mut qrels = std::fs::File::create(dir.join("qrels/test.tsv"))?;
    writeln!(qrels, "query-id\tcorpus-id\tscore")?;
    let (mut questions, mut judgements) = (0, 0);
    for story in stories() {
        let relevant: Vec<&Row> = rows
            .iter()
            .filter(|r| r.story.as_deref() == Some(story.slug.as_str()))
            .collect();
        if relevant.is_empty() {
            continue;
        }
        writeln!(
            queries,
            "{}",
            json!({"_id": story.slug, "text": story.title})
        )?;
        questions += 1;
        for row in relevant {
            writeln!(qrels, "{}\t{}\t1", story.slug, row.url)?;
            judgements += 1;
        }
    }
    corpus.flush().context("writing the corpus")?;
    Ok((rows.len(), questions, judgements))
}
