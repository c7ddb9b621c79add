//! The token endpoint: exchanging an authorization code, and refreshing an
//! access token. Both answers are read into one [`TokenSet`], with the
//! vendors' quirks handled here and nowhere else:
//! - Slack puts a user token under `authed_user` (the bot token, if any,
//!   at the top: Quarry asks for user scopes only);
//! - Slack answers errors with 200 and `{"ok": false, "error": ...}`.

use std::time::Duration;

use anyhow::{Context, Result, ensure};
use serde_json::{Map, Value};

use super::Vendors;
use crate::connectors::manifest::OAuth;
use quarry_store::secret::Secret;

/// What a token endpoint granted.
pub struct TokenSet {
    pub access_token: Secret,
    pub refresh_token: Option<Secret>,
    /// Seconds the access token lives, when the vendor says.
    pub expires_in: Option<i64>,
    /// The answer's other fields, as sent (Salesforce's `instance_url`
    /// becomes a setting).
    pub fields: Map<String, Value>,
}

/// Why a refresh gave no new token.
#[derive(Debug)]
pub enum RefreshFailure {
    /// The vendor refused the refresh token: only the user can fix it.
    Refused(String),
    /// Worth trying again at the next query (network, 5xx, 429).
    Transient(String),
}

/// The answer's token object: the top level, or Slack's `authed_user`.
fn token_object(mut body: Map<String, Value>) -> Map<String, Value> {
    if body.contains_key("access_token") {
        return body;
    }
    match body.remove("authed_user") {
        Some(Value::Object(user)) => user,
        _ => body,
    }
}

/// Reads a successful answer; `Err` with the vendor's `error` otherwise.
fn token_set(body: Value) -> Result<TokenSet, String> {
    let Value::Object(body) = body else {
        return Err("the token response is not a JSON object".into());
    };
    let error = body.get("error").cloned();
    let mut fields = token_object(body);
    let Some(Value::String(access)) = fields.remove("access_token") else {
        return Err(match error {
            Some(error) => format!("the vendor answered {error}"),
            None => "the token response has no access_token".into(),
        });
    };
    let refresh = match fields.remove("refresh_token") {
        Some(Value::String(token)) => Some(Secret::new(token)),
        _ => None,
    };
    Ok(TokenSet {
        access_token: Secret::new(access),
        refresh_token: refresh,
        expires_in: fields.get("expires_in").and_then(Value::as_i64),
        fields,
    })
}

impl Vendors {
    /// Exchanges an authorization code (with its PKCE verifier).
    pub async fn exchange_code(
        &self,
        connector: &str,
        oauth: &OAuth,
        settings: &[(String, String)],
        code: &str,
        redirect_uri: &str,
        verifier: &str,
    ) -> Result<TokenSet> {
        let client = self.client(connector)?;
        let response = self
            .http
            .post(Self::token_url(oauth, settings)?)
            .header("Accept", "application/json")
            .form(&[
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", redirect_uri),
                ("client_id", client.client_id.as_str()),
                ("client_secret", client.client_secret.expose()),
                ("code_verifier", verifier),
            ])
            .timeout(Duration::from_secs(15))
            .send()
            .await?;
        let status = response.status();
        let body: Value = response.json().await.context("the token response")?;
        ensure!(status.is_success(), "the vendor answered {status}");
        token_set(body).map_err(anyhow::Error::msg)
    }

    /// Renews an access token with a refresh token.
    pub async fn refresh(
        &self,
        connector: &str,
        oauth: &OAuth,
        settings: &[(String, String)],
        refresh_token: &Secret,
    ) -> Result<TokenSet, RefreshFailure> {
        let token_url = Self::token_url(oauth, settings)
            .map_err(|e| RefreshFailure::Refused(format!("{e:#}")))?;
        let mut form = vec![
            ("grant_type", "refresh_token".to_string()),
            ("refresh_token", refresh_token.expose().to_string()),
        ];
        if let Some(client) = self.clients.get(connector) {
            form.push(("client_id", client.client_id.clone()));
            form.push(("client_secret", client.client_secret.expose().to_string()));
        }
        let response = self
            .http
            .post(&token_url)
            .header("Accept", "application/json")
            .form(&form)
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .map_err(|e| RefreshFailure::Transient(format!("{e}")))?;
        let status = response.status();
        if status.is_server_error() || status.as_u16() == 429 {
            return Err(RefreshFailure::Transient(format!(
                "the vendor answered {status}"
            )));
        }
        if !status.is_success() {
            return Err(RefreshFailure::Refused(format!(
                "the vendor answered {status}"
            )));
        }
        let body: Value = response
            .json()
            .await
            .map_err(|e| RefreshFailure::Transient(format!("the token response: {e}")))?;
        // A 200 that carries an `error` (Slack) is a refusal.
        let refused = body.get("access_token").is_none() && body.get("error").is_some();
        token_set(body).map_err(|why| match refused {
            true => RefreshFailure::Refused(why),
            false => RefreshFailure::Transient(why),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn slacks_user_token_is_read_from_authed_user() {
        let set = token_set(json!({
            "ok": true,
            "authed_user": { "access_token": "xoxp-1", "refresh_token": "xoxe-1", "expires_in": 43200 }
        }))
        .unwrap();
        assert_eq!(set.access_token.expose(), "xoxp-1");
        assert_eq!(set.refresh_token.unwrap().expose(), "xoxe-1");
        assert_eq!(set.expires_in, Some(43200));
    }

    #[test]
    fn other_fields_are_kept_and_errors_named() {
        let set = token_set(json!({
            "access_token": "a", "instance_url": "https://acme.my.salesforce.com"
        }))
        .unwrap();
        assert_eq!(set.fields["instance_url"], "https://acme.my.salesforce.com");
        let error = token_set(json!({ "ok": false, "error": "invalid_refresh_token" }));
        assert!(error.err().unwrap().contains("invalid_refresh_token"));
    }
}
