//! The manifest's TOML form, and its validation into a [`Manifest`]: every
//! problem is collected, not just the first.

use std::collections::BTreeSet;

use serde::Deserialize;

use super::write_looking::{REVIEW_KEY, query_route_problem, reason_given, scope_write_word};
use super::{
    Auth, AuthScheme, CarryOver, Flow, Manifest, Method, OAuth, RequestedLimits, Revoke, Route,
    RouteKind, SUPPORTED_WIT_MAJORS, Setting, fill_endpoint, is_valid_id,
};
use crate::pattern::UrlPattern;
use crate::problem::Problem;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawManifest {
    id: String,
    label: String,
    version: String,
    wit: String,
    #[serde(default)]
    description: String,
    routes: Vec<RawRoute>,
    #[serde(default)]
    auth: RawAuth,
    oauth: Option<RawOAuth>,
    #[serde(default)]
    limits: RequestedLimits,
    #[serde(default)]
    settings: Vec<Setting>,
    #[serde(default)]
    carries_over: Vec<CarryOver>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRoute {
    method: Method,
    url: String,
    #[serde(default = "default_kind")]
    kind: RouteKind,
    /// Why a POST query route whose path looks like a write only reads
    /// (see `write_looking`).
    reviewed_read_only: Option<String>,
}

fn default_kind() -> RouteKind {
    RouteKind::Read
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawAuth {
    /// `bearer` (default), `header`, or `none`.
    scheme: Option<String>,
    header: Option<String>,
    hosts: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOAuth {
    authorize_url: String,
    token_url: String,
    #[serde(default)]
    scopes: Vec<RawScope>,
    revoke: Option<Revoke>,
    #[serde(default)]
    flow: Flow,
}

/// Every scope must say it is read-only: a manifest cannot request a write
/// scope by accident, and a reviewer sees the claim next to the name.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScope {
    name: String,
    read_only: bool,
    /// Why a read-only scope whose name looks like a write only reads
    /// (see `write_looking`).
    reviewed_read_only: Option<String>,
}

impl RawManifest {
    pub(super) fn validate(self, problems: &mut Vec<Problem>) -> Manifest {
        if !is_valid_id(&self.id) {
            problems.push(Problem::error("id", format!(
                "id {:?} must be 1-64 characters of a-z, 0-9, '-' and '_', starting with a letter",
                self.id
            )));
        }
        if self.label.trim().is_empty() {
            problems.push(Problem::error("label", "label is empty"));
        }
        match parse_semver_major(&self.wit) {
            Some(major) if SUPPORTED_WIT_MAJORS.contains(&major) => {}
            Some(_) => problems.push(Problem::error(
                "wit-version",
                format!(
                    "wit version {} is not supported by this host (supported majors: {:?})",
                    self.wit, SUPPORTED_WIT_MAJORS
                ),
            )),
            None => problems.push(Problem::error(
                "wit-version",
                format!("wit {:?} is not a version like \"1.0.0\"", self.wit),
            )),
        }
        if self.routes.is_empty() {
            problems.push(Problem::error(
                "routes",
                "no routes: a connector must declare what it may fetch",
            ));
        }
        let mut routes = Vec::new();
        for (i, raw) in self.routes.into_iter().enumerate() {
            match raw.validate() {
                Ok(route) => routes.push(route),
                Err(problem) => problems.push(problem.within(&format!("routes[{i}]"))),
            }
        }
        let auth = validate_auth(self.auth, &routes, problems);
        let oauth = self.oauth.map(|o| validate_oauth(o, problems));
        for (name, value) in [
            ("max_fetches", self.limits.max_fetches.map(u64::from)),
            ("max_response_bytes", self.limits.max_response_bytes),
            ("fetch_timeout_ms", self.limits.fetch_timeout_ms),
            ("call_timeout_ms", self.limits.call_timeout_ms),
            ("memory_bytes", self.limits.memory_bytes),
            (
                "max_concurrent_fetches",
                self.limits.max_concurrent_fetches.map(u64::from),
            ),
        ] {
            if value == Some(0) {
                problems.push(Problem::error(
                    "limits",
                    format!("limits.{name} must be positive"),
                ));
            }
        }
        let mut seen = BTreeSet::new();
        for s in &self.settings {
            if !seen.insert(&s.name) {
                problems.push(Problem::error(
                    "settings",
                    format!("setting {:?} is declared twice", s.name),
                ));
            }
        }
        // Placeholders in the OAuth endpoints are settings a person types.
        if let Some(oauth) = &oauth {
            let askable: Vec<(String, String)> = self
                .settings
                .iter()
                .filter(|s| !s.from_token)
                .map(|s| (s.name.clone(), "x".to_string()))
                .collect();
            for url in [&oauth.authorize_url, &oauth.token_url] {
                if let Err(why) = fill_endpoint(url, &askable) {
                    problems.push(Problem::error(
                        "oauth",
                        format!(
                            "{url}: {why}, but no such setting is declared (or it is from_token)"
                        ),
                    ));
                }
            }
        }
        carry_over_problems(&self.id, &self.carries_over, oauth.as_ref(), problems);
        Manifest {
            id: self.id,
            label: self.label,
            version: self.version,
            wit: self.wit,
            description: self.description,
            routes,
            auth,
            oauth,
            limits: self.limits,
            settings: self.settings,
            carries_over: self.carries_over,
        }
    }
}

/// A connection carried over keeps its token: the token must have been
/// granted every scope this connector asks.
fn carry_over_problems(
    id: &str,
    carries_over: &[CarryOver],
    oauth: Option<&OAuth>,
    problems: &mut Vec<Problem>,
) {
    let mut seen = BTreeSet::new();
    for (i, carry) in carries_over.iter().enumerate() {
        let mut problem = |message: String| {
            problems.push(Problem::error(
                "carries-over",
                format!("carries_over[{i}]: {message}"),
            ))
        };
        if !is_valid_id(&carry.from) || carry.from == id {
            problem(format!(
                "from {:?} must be another connector's id",
                carry.from
            ));
        }
        if !seen.insert(&carry.from) {
            problem(format!("{:?} is carried over twice", carry.from));
        }
        let Some(oauth) = oauth else {
            problem("only a connector with [oauth] takes over connections".into());
            continue;
        };
        let missing: Vec<&str> = oauth
            .scopes
            .iter()
            .filter(|s| !carry.granted_scopes.contains(s))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            problem(format!(
                "connections to {:?} were not granted {}: they cannot carry over",
                carry.from,
                missing.join(", ")
            ));
        }
    }
}

impl RawRoute {
    fn validate(self) -> Result<Route, Problem> {
        let url =
            UrlPattern::parse(&self.url).map_err(|e| Problem::error("route", format!("{e:#}")))?;
        if let Some(problem) = empty_review(self.reviewed_read_only.as_deref()) {
            return Err(problem);
        }
        match (self.method, self.kind) {
            (Method::Get | Method::Head, RouteKind::Read) => {}
            (Method::Post, RouteKind::Graphql) => {}
            (Method::Post, RouteKind::Query) => {
                if let Some(why) = query_route_problem(&self.url)
                    && !reason_given(self.reviewed_read_only.as_deref())
                {
                    return Err(Problem::error(
                        "write-looking-route",
                        format!(
                            "POST {} is marked kind = \"query\", but {why}: POST is allowed \
                             only where it reads. If this endpoint only searches, say why in \
                             the route: {REVIEW_KEY} = \"<why>\"",
                            self.url
                        ),
                    ));
                }
            }
            (Method::Post, RouteKind::Read) => {
                return Err(Problem::error(
                    "post-not-query",
                    format!(
                        "POST {} is not marked as a query route (kind = \"query\" or \"graphql\"): \
                         POST is allowed only where it reads",
                        self.url
                    ),
                ));
            }
            (m, k) => {
                return Err(Problem::error(
                    "route",
                    format!(
                        "{} with kind {k:?} makes no sense: query and graphql routes are POST",
                        m.as_str()
                    ),
                ));
            }
        }
        Ok(Route {
            method: self.method,
            url,
            kind: self.kind,
        })
    }
}

fn validate_auth(raw: RawAuth, routes: &[Route], problems: &mut Vec<Problem>) -> Auth {
    let scheme = match (raw.scheme.as_deref().unwrap_or("bearer"), raw.header) {
        ("bearer", None) => AuthScheme::Bearer,
        ("none", None) => AuthScheme::None,
        ("header", Some(h)) if is_header_name(&h) => AuthScheme::Header(h.to_ascii_lowercase()),
        ("header", Some(h)) => {
            problems.push(Problem::error(
                "auth",
                format!("auth.header {h:?} is not a header name"),
            ));
            AuthScheme::None
        }
        ("header", None) => {
            problems.push(Problem::error(
                "auth",
                "auth.scheme = \"header\" needs auth.header",
            ));
            AuthScheme::None
        }
        (other, Some(_)) if other != "header" => {
            problems.push(Problem::error(
                "auth",
                "auth.header is only meaningful with scheme = \"header\"",
            ));
            AuthScheme::None
        }
        (other, _) => {
            problems.push(Problem::error(
                "auth",
                format!("auth.scheme {other:?} is not one of bearer, header, none"),
            ));
            AuthScheme::None
        }
    };
    let hosts = match raw.hosts {
        Some(hosts) => hosts
            .iter()
            .filter_map(|h| match UrlPattern::parse_host(h) {
                Ok(p) => Some(p),
                Err(e) => {
                    problems.push(Problem::error("auth", format!("auth.hosts: {e:#}")));
                    None
                }
            })
            .collect(),
        None => routes.iter().map(|r| r.url.host_only()).collect(),
    };
    Auth { scheme, hosts }
}

/// What is wrong with a vendor's OAuth address, if anything: it must be
/// https, on a host name (`{placeholder}` labels allowed), with no user
/// part, and not a name for this machine or its network. (The host's
/// calls there also go through the guarded resolver, which refuses
/// private addresses at connect time.)
fn vendor_url_problem(url: &str) -> Option<String> {
    let concrete = url.replace('{', "p").replace('}', "");
    let Ok(parsed) = url::Url::parse(&concrete) else {
        return Some(format!("{url:?} is not a URL"));
    };
    if parsed.scheme() != "https" {
        return Some("must be an https URL".into());
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Some("must not have a user part".into());
    }
    match parsed.host() {
        Some(url::Host::Domain(name)) => {
            let name = name.to_ascii_lowercase();
            let local = name == "localhost"
                || [".localhost", ".local", ".internal", ".lan", ".home.arpa"]
                    .iter()
                    .any(|suffix| name.ends_with(suffix))
                || !name.contains('.');
            local.then(|| format!("names a local host ({name}); use the vendor's public host"))
        }
        Some(_) => Some("must name the vendor's host, not an IP address".into()),
        None => Some("has no host".into()),
    }
}

fn validate_oauth(raw: RawOAuth, problems: &mut Vec<Problem>) -> OAuth {
    for (what, url) in [
        ("authorize_url", &raw.authorize_url),
        ("token_url", &raw.token_url),
    ] {
        if let Some(problem) = vendor_url_problem(url) {
            problems.push(Problem::error("oauth", format!("oauth.{what} {problem}")));
        }
    }
    if let Some(revoke) = &raw.revoke {
        if let Some(problem) = vendor_url_problem(&revoke.url) {
            problems.push(Problem::error(
                "oauth",
                format!("oauth.revoke.url {problem}"),
            ));
        }
        if !matches!(revoke.method.as_str(), "POST" | "DELETE") {
            problems.push(Problem::error(
                "oauth",
                format!(
                    "oauth.revoke.method {:?} is not POST or DELETE",
                    revoke.method
                ),
            ));
        }
        if !matches!(
            revoke.style.as_str(),
            "form" | "form_client" | "bearer" | "json"
        ) {
            problems.push(Problem::error(
                "oauth",
                format!(
                    "oauth.revoke.style {:?} is not form, form_client, bearer or json",
                    revoke.style
                ),
            ));
        }
    }
    let mut scopes = Vec::new();
    for scope in raw.scopes {
        if let Some(problem) = scope_problem(&scope) {
            problems.push(problem);
        } else {
            scopes.push(scope.name);
        }
    }
    OAuth {
        authorize_url: raw.authorize_url,
        token_url: raw.token_url,
        scopes,
        revoke: raw.revoke,
        flow: raw.flow,
    }
}

/// What is wrong with a scope: not read-only, or read-only in a name that
/// says otherwise with no reviewer's reason.
fn scope_problem(scope: &RawScope) -> Option<Problem> {
    let name = &scope.name;
    if !scope.read_only {
        return Some(Problem::error(
            "write-scope",
            format!("oauth scope {name:?} is not read-only: Quarry requests only read-only scopes"),
        ));
    }
    if let Some(problem) = empty_review(scope.reviewed_read_only.as_deref()) {
        return Some(problem.within(&format!("oauth scope {name:?}")));
    }
    let word = scope_write_word(name)?;
    if reason_given(scope.reviewed_read_only.as_deref()) {
        return None;
    }
    Some(Problem::error(
        "write-looking-scope",
        format!(
            "oauth scope {name:?} is marked read-only, but its name says {word:?}: Quarry \
             requests only read-only scopes. If the vendor documents it as read-only, say why \
             beside it: {{ name = {name:?}, read_only = true, {REVIEW_KEY} = \"<why>\" }}"
        ),
    ))
}

/// A reviewer's reason that says nothing is refused wherever it is.
fn empty_review(reason: Option<&str>) -> Option<Problem> {
    let empty = reason.is_some_and(|r| r.trim().is_empty());
    empty.then(|| {
        Problem::error(
            "review",
            format!("{REVIEW_KEY} is empty: it must say why what it names only reads"),
        )
    })
}

fn parse_semver_major(v: &str) -> Option<u64> {
    let parts: Vec<&str> = v.split('.').collect();
    if parts.len() != 3 || parts.iter().any(|p| p.parse::<u64>().is_err()) {
        return None;
    }
    parts[0].parse().ok()
}

fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
}
