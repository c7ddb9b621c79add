//! The host as an OAuth client of the vendors, on the users' behalf: the
//! one place that speaks OAuth to them.
//!
//! - [`Vendors`]: the operator's registered clients and the guarded HTTP
//!   client, with the three calls: the authorization request ([`Vendors::
//!   authorization`], PKCE S256), the code exchange and the refresh
//!   ([`tokens`]: typed answers, the vendors' quirks), and revocation
//!   ([`revoke`], with the durable queue that retries failed ones).
//! - [`pkce`]: verifier and challenge (also the OpenID Connect sign-in's).
//! - [`refresh`]: keeps a connector's access token fresh before a query.
//!
//! `oauth2` was considered: it does not carry the quirks that matter here
//! (Slack's user token under `authed_user`, its `ok: false` answers, the
//! manifests' revocation styles), so the requests are written out.

pub mod pkce;
pub mod refresh;
pub mod revoke;
pub mod tokens;

use std::collections::BTreeMap;

use anyhow::{Context, Result};

use crate::config::OAuthClient;
use crate::connectors::manifest::{OAuth, fill_endpoint};

pub use self::refresh::Refresher;
pub use self::revoke::{Outcome, TokenToRevoke};
pub use self::tokens::{RefreshFailure, TokenSet};

/// The operator's OAuth clients at the vendors, and how to reach them.
pub struct Vendors {
    http: reqwest::Client,
    clients: BTreeMap<String, OAuthClient>,
}

/// Where to send the person, and what the callback needs to finish.
pub struct Authorization {
    pub url: url::Url,
    /// The PKCE verifier: kept server-side until the code comes back.
    pub verifier: String,
}

impl Vendors {
    pub fn new(http: reqwest::Client, clients: BTreeMap<String, OAuthClient>) -> Vendors {
        Vendors { http, clients }
    }

    /// Whether the operator registered a client for the connector.
    /// The guarded client the host reaches vendors with (also the
    /// operator's identity provider, for single sign-on).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    pub fn has_client(&self, connector: &str) -> bool {
        self.clients.contains_key(connector)
    }

    fn client(&self, connector: &str) -> Result<&OAuthClient> {
        self.clients
            .get(connector)
            .with_context(|| format!("no OAuth client is registered for {connector}"))
    }

    /// The authorization request (code flow, PKCE S256) at `authorize_url`
    /// (already filled with the person's settings and rewritten for the
    /// browser).
    pub fn authorization(
        &self,
        connector: &str,
        oauth: &OAuth,
        mut authorize_url: url::Url,
        redirect_uri: &str,
        state: &str,
    ) -> Result<Authorization> {
        let client = self.client(connector)?;
        let pkce = pkce::Pkce::new();
        {
            let mut query = authorize_url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &client.client_id)
                .append_pair("redirect_uri", redirect_uri)
                .append_pair("state", state)
                .append_pair("code_challenge", &pkce.challenge)
                .append_pair("code_challenge_method", "S256");
            if !oauth.scopes.is_empty() {
                query.append_pair(scope_parameter(connector), &oauth.scopes.join(" "));
            }
        }
        Ok(Authorization {
            url: authorize_url,
            verifier: pkce.verifier,
        })
    }

    /// The token endpoint of a connector, on the account's host when the
    /// manifest's URL names a setting (Zendesk's subdomain).
    fn token_url(oauth: &OAuth, settings: &[(String, String)]) -> Result<String> {
        fill_endpoint(&oauth.token_url, settings).map_err(anyhow::Error::msg)
    }
}

/// Slack's user tokens (`search:read`) are asked for as user scopes.
fn scope_parameter(connector: &str) -> &'static str {
    if connector == "slack" {
        "user_scope"
    } else {
        "scope"
    }
}
