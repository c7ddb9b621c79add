//! Asana, where product and marketing run the launches: a project per plan
//! (Q3 launch plan, Black Friday readiness, 2026 roadmap, Q3 2026 marketplace
//! launch) with a task per item of the plan and a go/no-go task, and the
//! "Product launches" project with a launch, a help-center and a QA sign-off
//! task for every feature. Notes carry the Jira or Linear keys, the pull
//! requests and the plan in Notion.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use super::derived::derived;
use super::stories::{B, Kind};
use super::{Person, parse_date, people};
use crate::search::Index;
use crate::time;

/// The Acme workspace (organization).
pub const ASANA_WORKSPACE_GID: &str = "1201994848293001";

/// A task.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct AsanaTask {
    pub gid: String,
    pub name: String,
    /// Plain-text description.
    pub notes: String,
    /// The citation URL (`https://app.asana.com/1/<workspace>/project/<project>/task/<task>`).
    pub permalink_url: String,
    /// `2025-05-02T09:14:11.000Z`
    pub created_at: String,
    pub modified_at: String,
    pub completed: bool,
    pub completed_at: Option<String>,
    /// `2025-05-02`
    pub due_on: Option<String>,
    /// (gid, name)
    pub assignee: (String, String),
    pub created_by: (String, String),
    /// (gid, name) of the projects the task is in.
    pub projects: Vec<(String, String)>,
    pub story: String,
    pub created_unix: i64,
    pub modified_unix: i64,
}

impl_record!(AsanaTask, url: permalink_url, updated: modified_unix, searched: ["name", "notes"],
    text: |t| format!("{}\n{}", t.name, t.notes));

/// Names only, indexed for the typeahead.
static NAMES: LazyLock<Index> = LazyLock::new(|| Index::new(asana_tasks().iter().map(|t| &t.name)));

indexed_records! {
    /// Tasks, in creation order.
    asana_tasks, asana_docs: AsanaTask = build()
}

/// Names only (typeahead).
pub(crate) fn asana_name_docs() -> &'static Index {
    &NAMES
}

/// A 16-digit gid derived from a seed.
pub(crate) fn gid(seed: &str) -> String {
    format!(
        "120{:013}",
        super::fnv(&format!("asana:{seed}")) % 10_000_000_000_000
    )
}

/// A person's user gid.
pub fn user_gid(person: &Person) -> String {
    gid(&format!("user:{}", person.email))
}

fn user(p: &Person) -> (String, String) {
    (user_gid(p), p.name.clone())
}

struct Draft {
    name: String,
    notes: String,
    project: String,
    assignee: &'static Person,
    created: i64,
    modified: i64,
    completed: Option<i64>,
    due: i64,
    story: String,
}

fn build() -> Vec<AsanaTask> {
    let pm = &people()[super::people::SOFIA];
    let support = &people()[super::people::EMMA];
    let first_day = parse_date("2025-01-02");
    let mut drafts: Vec<Draft> = Vec::new();
    for d in derived() {
        let s = d.story;
        let slug = d.info.slug.clone();
        let plan = d.write_up(|u| format!("Plan: {u}"));
        let eng = d.refs_in(|refs| format!("Engineering: {refs}."));
        let done = !s.open;
        match s.kind {
            Kind::Doc | Kind::Task
                if matches!(
                    d.info.slug.as_str(),
                    "q3-launch-plan"
                        | "marketplace-launch-plan"
                        | "roadmap-2026"
                        | "black-friday-readiness"
                ) =>
            {
                let Some((title, blocks)) = s.notion else {
                    continue;
                };
                let mut section = "";
                let mut n = 0;
                for b in blocks {
                    match b {
                        B::H(h) => section = h,
                        B::P(_) => {}
                        B::L(item) => {
                            n += 1;
                            let created = d.start + n * 1800;
                            let due = d.at(d.start, (7 + n * 5) * 86400);
                            drafts.push(Draft {
                                name: item.trim_end_matches('.').to_string(),
                                notes: [
                                    format!("From the {title}, section \"{section}\": {item}"),
                                    s.desc.to_string(),
                                    plan.clone(),
                                    eng.clone(),
                                ]
                                .join("\n"),
                                project: title.to_string(),
                                assignee: if n % 2 == 0 { d.owner } else { pm },
                                created,
                                modified: d.at(due, -86400).max(created) + n * 41,
                                completed: done.then_some(d.at(due, -86400).max(created) + n * 41),
                                due,
                                story: slug.clone(),
                            });
                        }
                    }
                }
                let created = d.start + 600;
                let due = d.at(d.end, 0);
                drafts.push(Draft {
                    name: format!("Go/no-go: {title}"),
                    notes: [
                        format!("Go/no-go meeting for the {title}, with engineering, support and marketing."),
                        s.desc.to_string(),
                        plan.clone(),
                        eng.clone(),
                    ]
                    .join("\n"),
                    project: title.to_string(),
                    assignee: pm,
                    created,
                    modified: due.max(created),
                    completed: done.then_some(due.max(created)),
                    due,
                    story: slug.clone(),
                });
            }
            Kind::Feature => {
                let created = (d.start - 2 * 86400).max(first_day);
                let launch = d.at(d.end, 86400);
                let tasks = [
                    (
                        format!("Launch: {}", s.title),
                        format!(
                            "Launch {} to every storefront customer: announcement, newsletter and release notes. {}",
                            s.title, s.desc
                        ),
                        pm,
                    ),
                    (
                        format!("Help center article: {}", s.title),
                        format!(
                            "Write the help center article and the support macros for {} before the launch.",
                            s.title
                        ),
                        support,
                    ),
                    (
                        format!("QA sign-off: {}", s.title),
                        format!(
                            "Sign off {} on staging: happy path, refunds and the mobile app.",
                            s.title
                        ),
                        d.owner,
                    ),
                ];
                for (i, (name, what, assignee)) in tasks.into_iter().enumerate() {
                    let created = created + i as i64 * 3600;
                    drafts.push(Draft {
                        name,
                        notes: [what, eng.clone(), plan.clone()]
                            .into_iter()
                            .filter(|l| !l.is_empty())
                            .collect::<Vec<_>>()
                            .join("\n"),
                        project: "Product launches".into(),
                        assignee,
                        created,
                        // Distinct times: search pages by time.
                        modified: launch.max(created) + i as i64 * 61,
                        completed: done.then_some(launch.max(created) + i as i64 * 61),
                        due: launch,
                        story: slug.clone(),
                    });
                }
            }
            _ => {}
        }
    }
    drafts.sort_by(|a, b| a.created.cmp(&b.created).then(a.name.cmp(&b.name)));
    drafts
        .into_iter()
        .map(|t| {
            let task_gid = gid(&format!("task:{}:{}", t.story, t.name));
            let project_gid = gid(&format!("project:{}", t.project));
            AsanaTask {
                permalink_url: format!(
                    "https://app.asana.com/1/{ASANA_WORKSPACE_GID}/project/{project_gid}/task/{task_gid}"
                ),
                gid: task_gid,
                name: t.name,
                notes: t.notes.trim().to_string(),
                created_at: time::rfc3339_millis(t.created, 0),
                modified_at: time::rfc3339_millis(t.modified, 0),
                completed: t.completed.is_some(),
                completed_at: t.completed.map(|c| time::rfc3339_millis(c, 0)),
                due_on: Some(time::rfc3339(t.due)[..10].to_string()),
                assignee: user(t.assignee),
                created_by: user(pm),
                projects: vec![(project_gid, t.project)],
                story: t.story,
                created_unix: t.created,
                modified_unix: t.modified,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_tasks_with_references() {
        let tasks = asana_tasks();
        assert!(tasks.len() >= 30, "{}", tasks.len());
        let gids: std::collections::HashSet<&str> = tasks.iter().map(|t| t.gid.as_str()).collect();
        assert_eq!(gids.len(), tasks.len());
        assert!(tasks.iter().all(|t| t.gid.len() == 16));
        let apple = tasks
            .iter()
            .find(|t| t.name == "Launch: Add Apple Pay to web checkout")
            .unwrap();
        assert!(apple.notes.contains("Engineering: tracked as"));
        assert!(
            tasks
                .iter()
                .any(|t| t.projects[0].1 == "Q3 launch plan" && t.name.contains("Apple Pay"))
        );
    }
}
