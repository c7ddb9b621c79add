//! The settings step of connecting a tool: what a person types before
//! going to the vendor (a subdomain, a workspace), checked; the settings a
//! connection keeps after connecting again; and the pages' Content Security
//! Policy widened to the vendors' origins the forms post to.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use maud::{Markup, html};

use super::Dashboard;
use super::session::Session;
use super::templates::{error_notice, post_form, signed_in_page};
use crate::connectors::manifest::{Manifest, Setting, fill_endpoint};

/// The settings a person types for a connector: the manifest's, less
/// those the vendor's token response gives.
pub(super) fn askable(manifest: &Manifest) -> impl Iterator<Item = &Setting> {
    manifest.settings.iter().filter(|s| !s.from_token)
}

/// Where the settings step of connecting stands.
pub(super) enum Step {
    /// The typed settings, checked (none when the tool has none to ask).
    Ready(Vec<(String, String)>),
    /// The page that asks for them (first, or again with what is wrong).
    Ask(Response),
}

pub(super) fn settings_step(
    dashboard: &Dashboard,
    session: &Session,
    manifest: &Manifest,
    form: &[(String, String)],
) -> Step {
    if askable(manifest).next().is_none() {
        return Step::Ready(Vec::new());
    }
    let typed = |name: &str| {
        form.iter()
            .find(|(n, _)| n == &format!("setting.{name}"))
            .map(|(_, v)| v.trim().to_string())
    };
    let submitted = form.iter().any(|(n, _)| n == "settings_step");
    if !submitted {
        let current = dashboard
            .store
            .grant(&session.user_id, &manifest.id)
            .ok()
            .flatten()
            .map(|g| g.settings)
            .unwrap_or_default();
        return Step::Ask(settings_page(dashboard, session, manifest, &current, None));
    }
    let settings: Vec<(String, String)> = askable(manifest)
        .filter_map(|s| {
            typed(&s.name)
                .filter(|v| !v.is_empty())
                .map(|v| (s.name.clone(), v))
        })
        .collect();
    let problem = askable(manifest)
        .find(|s| s.required && !settings.iter().any(|(n, _)| *n == s.name))
        .map(|s| format!("{} is required.", s.name))
        .or_else(|| {
            settings
                .iter()
                .find(|(_, v)| v.len() > 500)
                .map(|(n, _)| format!("{n} is too long."))
        })
        .or_else(|| {
            let oauth = manifest.oauth.as_ref()?;
            [&oauth.authorize_url, &oauth.token_url]
                .into_iter()
                .find_map(|url| fill_endpoint(url, &settings).err())
        });
    match problem {
        None => Step::Ready(settings),
        Some(problem) => {
            let mut page = settings_page(dashboard, session, manifest, &settings, Some(&problem));
            *page.status_mut() = StatusCode::BAD_REQUEST;
            Step::Ask(page)
        }
    }
}

fn settings_page(
    dashboard: &Dashboard,
    session: &Session,
    manifest: &Manifest,
    values: &[(String, String)],
    problem: Option<&str>,
) -> Response {
    let (id, label) = (&manifest.id, &manifest.label);
    let value_of = |name: &str| {
        values
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.as_str())
    };
    let body = html! {
        @if let Some(problem) = problem {
            (error_notice(problem))
        }
        p {
            (label) " needs these settings of your account before you approve Quarry's \
             read-only access there."
        }
        (post_form(session, &format!("/dashboard/tools/{id}/connect"), html! {
            // Tells the connect handler that this is the answer to this page.
            input type="hidden" name="settings_step" value="1";
            @for setting in askable(manifest) {
                (setting_field(setting, value_of(&setting.name)))
            }
            p { button type="submit" { "Continue to " (label) } }
        }))
        p { a href="/dashboard/tools" { "Back to your tools" } }
    };
    let mut response = signed_in_page(&format!("Connect {label}"), session, body);
    // The form's answer is a redirect to the vendor: allow its origin, with
    // a wildcard for the label a setting fills (and the demo's overrides).
    let mut origins = vec!["'self'".to_string()];
    if let Some(oauth) = &manifest.oauth {
        let wildcard = oauth
            .authorize_url
            .split('/')
            .take(3)
            .collect::<Vec<_>>()
            .join("/");
        let wildcard = wildcard_origin(&wildcard);
        origins.push(wildcard);
    }
    for base in dashboard.config.authorize_host_overrides.values() {
        if let Some(origin) = origin_of(base).filter(|o| !origins.contains(o)) {
            origins.push(origin);
        }
    }
    widen_form_action(&mut response, &origins);
    response
}

/// One setting's labelled text field, named `setting.<name>`, with the
/// manifest's description as its hint.
fn setting_field(setting: &Setting, value: &str) -> Markup {
    let id = format!("setting-{}", setting.name);
    let hint = format!("{id}-hint");
    html! {
        label for=(id) {
            (setting.name)
            @if setting.required { " (required)" }
        }
        input id=(id) name={ "setting." (setting.name) } type="text" value=(value)
            aria-describedby=(hint) required[setting.required];
        p id=(hint) { small { (setting.description) } }
    }
}

/// `https://{subdomain}.zendesk.com` → `https://*.zendesk.com`.
fn wildcard_origin(origin: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in origin.chars() {
        match c {
            '{' => {
                inside = true;
                out.push('*');
            }
            '}' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

/// Lets this page's forms lead to `origins` (CSP `form-action` governs
/// where a form's redirects may go too).
pub(super) fn widen_form_action(response: &mut Response, origins: &[String]) {
    let csp = super::templates::CSP.replace(
        "form-action 'self'",
        &format!("form-action {}", origins.join(" ")),
    );
    if let Ok(value) = HeaderValue::from_str(&csp) {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, value);
    }
}

/// `https://host[:port]` of a URL, for `form-action`.
pub(super) fn origin_of(url: &str) -> Option<String> {
    let url = url::Url::parse(url).ok()?;
    Some(url.origin().ascii_serialization()).filter(|o| o != "null")
}

/// A connection's settings after connecting again: what was typed on the
/// settings step replaces the askable ones (an emptied field clears its
/// setting); what the vendor's answer names (Salesforce's instance_url) is
/// taken; anything else the connection had stays.
pub(super) fn merged_settings(
    manifest: &Manifest,
    mut settings: Vec<(String, String)>,
    typed: &[(String, String)],
    token_response: &serde_json::Map<String, serde_json::Value>,
) -> Vec<(String, String)> {
    if askable(manifest).next().is_some() {
        settings.retain(|(name, _)| !askable(manifest).any(|s| s.name == *name));
    }
    let from_token = manifest
        .settings
        .iter()
        .filter(|s| s.from_token)
        .filter_map(|s| {
            Some((
                s.name.clone(),
                token_response.get(&s.name)?.as_str()?.to_string(),
            ))
        });
    for (name, value) in typed.iter().cloned().chain(from_token) {
        settings.retain(|(n, _)| *n != name);
        settings.push((name, value));
    }
    settings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn settings_typed_again_replace_the_askable_ones_and_tokens_fill_theirs() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../plugins/jira/connector.toml"
        ))
        .unwrap();
        let mut manifest = Manifest::parse(&text).unwrap();
        manifest.settings.push(Setting {
            name: "instance".into(),
            description: String::new(),
            required: false,
            from_token: true,
        });
        let before = pairs(&[("site", "old.atlassian.net"), ("legacy", "kept")]);
        let answer = serde_json::json!({"access_token": "t", "instance": "https://x.test"});
        // An emptied optional field clears its setting.
        let answer = answer.as_object().unwrap();
        let merged = merged_settings(&manifest, before.clone(), &[], answer);
        assert_eq!(
            merged,
            pairs(&[("legacy", "kept"), ("instance", "https://x.test")])
        );
        let merged = merged_settings(&manifest, before, &pairs(&[("site", "new")]), answer);
        assert_eq!(
            merged,
            pairs(&[
                ("legacy", "kept"),
                ("site", "new"),
                ("instance", "https://x.test")
            ])
        );
    }

    #[test]
    fn templated_hosts_become_wildcards_in_the_csp() {
        assert_eq!(
            wildcard_origin("https://{subdomain}.zendesk.com"),
            "https://*.zendesk.com"
        );
        assert_eq!(wildcard_origin("https://linear.app"), "https://linear.app");
    }
}
