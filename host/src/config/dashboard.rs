//! The web dashboard at `/dashboard`: sign-in, sessions, connecting tools,
//! and single sign-on through an OpenID Connect provider.

use std::collections::BTreeMap;

use anyhow::{Context, Result, ensure};
use serde::Deserialize;

use quarry_store::secret::Secret;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DashboardConfig {
    /// The dashboard's public origin (`https://quarry.example.com`): the
    /// OAuth redirect URI and the Origin that forms must come from. When
    /// absent, the request's `Host` is used (fine on one address).
    pub public_url: Option<String>,
    /// A session ends this long after sign-in, whatever happens.
    pub session_absolute_seconds: i64,
    /// A session ends after this long without a request.
    pub session_idle_seconds: i64,
    /// Failed sign-ins allowed per address and per email within the window.
    pub login_failures: u32,
    pub login_window_seconds: i64,
    /// Where a browser is sent for a vendor's authorize page, by host:
    /// `"github.com" = "https://127.0.0.1:9443/_vendor/github.com"` (the
    /// demo sends people to the fake vendors this way). Empty in production.
    pub authorize_host_overrides: BTreeMap<String, String>,
    /// Fetch MCP clients' metadata documents from private and loopback
    /// addresses too (the demo's fake clients live on this machine). Off
    /// in production: an anonymous client id would otherwise make this
    /// server fetch from its own network.
    pub allow_private_client_documents: bool,
    /// Single sign-on with the operator's OpenID Connect provider, beside
    /// passwords. People sign in to accounts the operator created: the
    /// first time, by the provider's verified email; after that, by the
    /// provider's subject id, to which the account is then linked.
    pub sso: Option<SsoConfig>,
}

/// An OpenID Connect provider (Okta, Google Workspace, Microsoft Entra ID,
/// Keycloak...) with a confidential client registered for Quarry, whose
/// redirect URI is `<public_url>/dashboard/sso/callback`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SsoConfig {
    /// The issuer, exactly as the provider's ID tokens name it
    /// (`https://acme.okta.com`); discovery is at
    /// `<issuer>/.well-known/openid-configuration`.
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Secret,
    /// The provider's name on the sign-in button ("Sign in with Okta").
    #[serde(default = "default_sso_name")]
    pub name: String,
    /// When not empty, only emails in these domains may sign in.
    #[serde(default)]
    pub allowed_domains: Vec<String>,
}

impl SsoConfig {
    pub(super) fn validate(&self) -> Result<()> {
        let issuer = url::Url::parse(&self.issuer)
            .with_context(|| format!("dashboard.sso.issuer {:?} is not a URL", self.issuer))?;
        ensure!(
            issuer.scheme() == "https" && issuer.query().is_none() && issuer.fragment().is_none(),
            "dashboard.sso.issuer must be an https URL without query or fragment (OpenID Connect Discovery)"
        );
        ensure!(
            !self.client_id.is_empty() && !self.client_secret.expose().is_empty(),
            "dashboard.sso needs client_id and client_secret"
        );
        Ok(())
    }
}

fn default_sso_name() -> String {
    "single sign-on".into()
}

impl Default for DashboardConfig {
    fn default() -> Self {
        DashboardConfig {
            public_url: None,
            session_absolute_seconds: 12 * 3600,
            session_idle_seconds: 30 * 60,
            login_failures: 5,
            login_window_seconds: 15 * 60,
            authorize_host_overrides: BTreeMap::new(),
            allow_private_client_documents: false,
            sso: None,
        }
    }
}
