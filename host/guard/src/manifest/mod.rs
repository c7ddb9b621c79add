//! The connector manifest: `<id>.toml`, beside `<id>.wasm` in the plugins folder.
//!
//! The manifest is the connector's declaration of everything the host lets it
//! do: which routes it may fetch (method + URL pattern), how the user's token
//! is injected, which OAuth scopes are requested (all read-only), and limits.
//! The host trusts the manifest, not the component: the component only ever
//! gets what the manifest grants.
//!
//! - this file: the manifest as the host uses it, and what it warns about;
//! - [`limits`]: the sandbox's limits, the operator's ceilings over what a
//!   connector asks for;
//! - [`raw`]: the TOML form, and its validation into a [`Manifest`];
//! - [`write_looking`]: scopes and query routes whose names look like
//!   writes, refused unless a reviewer says why they only read.

mod limits;
mod raw;
pub mod write_looking;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::pattern::UrlPattern;
use crate::problem::{Problem, join_errors};
use raw::RawManifest;

pub use limits::{DEFAULT_CONCURRENT_FETCHES, SandboxLimits};

/// The contract versions this host can run, by major version.
pub const SUPPORTED_WIT_MAJORS: &[u64] = &[1];

#[derive(Debug, Clone)]
pub struct Manifest {
    pub id: String,
    pub label: String,
    pub version: String,
    /// The `quarry:connector` version the component targets, e.g. `1.0.0`.
    pub wit: String,
    pub description: String,
    pub routes: Vec<Route>,
    pub auth: Auth,
    pub oauth: Option<OAuth>,
    pub limits: RequestedLimits,
    pub settings: Vec<Setting>,
    /// Connections to retired connectors this one takes over.
    pub carries_over: Vec<CarryOver>,
}

/// `[[carries_over]]`: connections to a retired connector (`from`) become
/// connections to this one, their tokens as they are. `granted_scopes` are
/// the scopes those tokens were granted; validation checks they hold every
/// scope this connector asks, so a carried token is never short of one.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CarryOver {
    pub from: String,
    pub granted_scopes: Vec<String>,
}

/// What kind of request a route admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RouteKind {
    /// GET and HEAD only.
    Read,
    /// A search endpoint that takes its question in a POST body.
    Query,
    /// A GraphQL endpoint: POST whose body holds exactly one `query` operation.
    Graphql,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    Get,
    Head,
    Post,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Route {
    pub method: Method,
    pub url: UrlPattern,
    pub kind: RouteKind,
}

impl Route {
    /// Whether this route admits `method` (HEAD rides along with GET).
    pub fn admits_method(&self, method: Method) -> bool {
        self.method == method || (self.method == Method::Get && method == Method::Head)
    }
}

/// How the host adds the user's credential to requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthScheme {
    /// `Authorization: Bearer <token>`.
    Bearer,
    /// `<header>: <token>` (for vendors with their own header).
    Header(String),
    /// No credential (public APIs, test plugins).
    None,
}

#[derive(Debug, Clone)]
pub struct Auth {
    pub scheme: AuthScheme,
    /// Host patterns that receive the credential. Defaults to the hosts of
    /// the routes; the token never goes anywhere else.
    pub hosts: Vec<UrlPattern>,
}

#[derive(Debug, Clone)]
pub struct OAuth {
    pub authorize_url: String,
    pub token_url: String,
    pub scopes: Vec<String>,
    pub revoke: Option<Revoke>,
    pub flow: Flow,
}

/// How people get a token for the tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Flow {
    /// OAuth 2.0 authorization code (the dashboard adds PKCE).
    #[default]
    AuthorizationCode,
    /// The vendor issues tokens another way (Trello's legacy token page,
    /// OAuth 1.0a): the operator connects it (`quarry admin connect`).
    Manual,
}

/// How a token is revoked upstream (RFC 7009 or the vendor's own call).
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Revoke {
    pub url: String,
    #[serde(default = "default_revoke_method")]
    pub method: String,
    /// `form` (RFC 7009: `token=` in a form body, the client's credentials
    /// in a Basic header), `form_client` (the token and the client's
    /// credentials all in the form body, as Box documents), `bearer` (the
    /// token as a bearer credential, as Slack's `auth.revoke`), or `json`
    /// (the token as a JSON field, as GitHub's application API and Notion).
    #[serde(default = "default_revoke_style")]
    pub style: String,
    /// With the `json` style, the field that carries the token (`token`
    /// unless said otherwise; GitHub's is `access_token`).
    #[serde(default)]
    pub token_field: Option<String>,
}

fn default_revoke_method() -> String {
    "POST".into()
}
fn default_revoke_style() -> String {
    "form".into()
}

/// Limits a connector asks for; the operator's maxima clamp them.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestedLimits {
    pub max_fetches: Option<u32>,
    pub max_response_bytes: Option<u64>,
    pub fetch_timeout_ms: Option<u64>,
    pub call_timeout_ms: Option<u64>,
    pub memory_bytes: Option<u64>,
    /// Requests of one `fetch-many` batch in flight at once (contract 1.1).
    pub max_concurrent_fetches: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setting {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub required: bool,
    /// Filled from the token response's field of the same name when a
    /// person connects (Salesforce's `instance_url`), not asked for.
    #[serde(default)]
    pub from_token: bool,
}

/// Fills `{name}` placeholders of an OAuth endpoint with a connection's
/// settings (Zendesk's `https://{subdomain}.zendesk.com/...`). Values must
/// be host labels, so that a setting cannot move the request elsewhere.
pub fn fill_endpoint(template: &str, settings: &[(String, String)]) -> Result<String, String> {
    let mut filled = template.to_string();
    for (name, value) in settings {
        let placeholder = format!("{{{name}}}");
        if !filled.contains(&placeholder) {
            continue;
        }
        let label = !value.is_empty()
            && value.len() <= 63
            && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !value.starts_with('-');
        if !label {
            return Err(format!(
                "{name} must be letters, digits and hyphens only (it is part of an address)"
            ));
        }
        filled = filled.replace(&placeholder, value);
    }
    match (filled.find('{'), filled.find('}')) {
        (Some(open), Some(close)) if open < close => Err(format!(
            "the setting {} is needed",
            &filled[open + 1..close]
        )),
        _ => Ok(filled),
    }
}

impl Manifest {
    /// Parses and validates a manifest. Every problem is reported, not just
    /// the first, so that `quarry connector check` can list them all.
    pub fn parse(text: &str) -> Result<Manifest> {
        let raw: RawManifest = toml::from_str(text).context("manifest is not valid TOML")?;
        let mut problems = Vec::new();
        let manifest = raw.validate(&mut problems);
        if !problems.is_empty() {
            bail!(
                "manifest has {} problem(s): {}",
                problems.len(),
                join_errors(&problems)
            );
        }
        Ok(manifest)
    }

    /// A manifest with the given routes (and any other tables), under the
    /// identity every unit test's connector shares: for the tests of the
    /// crates that enforce manifests, which care about the routes alone.
    /// (Always built: a feature for it would make the workspace's test
    /// build compile every crate above this one a second time.)
    #[doc(hidden)]
    pub fn for_tests(tables: &str) -> Manifest {
        let header = "id = \"t\"\nlabel = \"T\"\nversion = \"1.0.0\"\nwit = \"1.0.0\"\n";
        Manifest::parse(&format!("{header}{tables}")).expect("a test's manifest")
    }

    /// Parses and validates a manifest without stopping at its errors: the
    /// manifest as far as it could be read (none when it is not valid
    /// TOML or misses a required key) and every error found. [`parse`]
    /// is this, refusing any error.
    ///
    /// [`parse`]: Manifest::parse
    pub fn parse_reporting(text: &str) -> (Option<Manifest>, Vec<Problem>) {
        match toml::from_str::<RawManifest>(text) {
            Ok(raw) => {
                let mut problems = Vec::new();
                let manifest = raw.validate(&mut problems);
                (Some(manifest), problems)
            }
            Err(e) => (
                None,
                vec![Problem::error(
                    "toml",
                    format!("manifest is not valid TOML: {}", e.to_string().trim_end()),
                )],
            ),
        }
    }

    /// What the host accepts but a reviewer should look at twice: no way
    /// to revoke the user's token at the vendor. (A read-only scope whose
    /// name suggests writing is an error: [`write_looking`].) The host
    /// never acts on these; `quarry connector check` prints them.
    pub fn warnings(&self) -> Vec<Problem> {
        let mut warnings = Vec::new();
        let takes_credential = self.auth.scheme != AuthScheme::None;
        match &self.oauth {
            Some(oauth) if oauth.revoke.is_none() => warnings.push(Problem::warning(
                "no-revocation",
                "oauth has no revoke endpoint: when a user deletes their data, their token \
                 cannot be revoked at the vendor (add [oauth] revoke if the vendor has one)",
            )),
            None if takes_credential => warnings.push(Problem::warning(
                "no-revocation",
                "no [oauth] section, so no revoke endpoint: when a user deletes their data, \
                 their token cannot be revoked at the vendor",
            )),
            _ => {}
        }
        warnings
    }

    /// The major version of the contract this connector targets.
    pub fn wit_major(&self) -> u64 {
        self.wit
            .split('.')
            .next()
            .and_then(|m| m.parse().ok())
            .unwrap_or(0)
    }
}

pub fn is_valid_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id.starts_with(|c: char| c.is_ascii_lowercase())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests;
