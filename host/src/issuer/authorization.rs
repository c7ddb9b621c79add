//! The authorization code grant with PKCE (RFC 6749 §4.1, RFC 7636 S256
//! only), as MCP clients use it: the person consents in the dashboard, the
//! client gets a code at its redirect URI and exchanges it, with the
//! verifier only it knows, for an MCP access token and a refresh token.
//!
//! A code is single use and short-lived, stored as its SHA-256, and bound
//! to the client, the redirect URI, the challenge and the person. A code
//! that comes back after it was exchanged (stolen, or replayed) revokes
//! what it issued (RFC 6749 §4.1.2).

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::secrets::{digest, random_token};
use super::{Issued, Issuer};
use quarry_store::records::{Bytes, Records, Space, Text, Writer};
use quarry_store::secret::constant_time_eq;
use quarry_store::{Audience, Counted, Scope, now};

/// SHA-256 of the code → [`CodeRecord`].
pub(super) const CODES: Space<Text, Bytes> =
    Space::user_owned("authorization_codes", remove_codes_of, Counted::Nothing);

/// How long a code can be exchanged.
pub const CODE_SECONDS: i64 = 120;

/// What the person consented to: the request, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consent {
    pub user_id: String,
    pub client_id: String,
    /// As the consent page showed it.
    pub client_name: String,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub scope: Scope,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct CodeRecord {
    user_id: String,
    client_id: String,
    client_name: String,
    redirect_uri: String,
    code_challenge: String,
    scope: Scope,
    expires_at: i64,
    /// Set once exchanged: the family it started, revoked if it returns.
    exchanged_into: Option<String>,
}

/// What exchanging a code came to.
#[derive(Debug)]
pub enum Exchange {
    Issued(Issued, Scope),
    /// Why the code cannot be used (for `error_description`).
    InvalidGrant(&'static str),
}

impl Issuer {
    /// A code for what the person consented to.
    pub fn grant_code(&self, consent: Consent) -> Result<String> {
        let code = random_token(32);
        let record = CodeRecord {
            user_id: consent.user_id,
            client_id: consent.client_id,
            client_name: consent.client_name,
            redirect_uri: consent.redirect_uri,
            code_challenge: consent.code_challenge,
            scope: consent.scope,
            expires_at: now() + CODE_SECONDS,
            exchanged_into: None,
        };
        let mut txn = self.store.write()?;
        super::clients::mark_allowed(&mut txn, &record.client_id)?;
        put(&mut txn, &digest(&code), &record)?;
        if super::sweep_due(&self.authorization_codes_swept) {
            forget_expired(&mut txn)?;
        }
        txn.commit()?;
        Ok(code)
    }

    /// Exchanges a code at the token endpoint: the same client and
    /// redirect URI it was granted to, and the verifier of its challenge.
    pub fn exchange_code(
        &self,
        code: &str,
        client_id: &str,
        redirect_uri: &str,
        verifier: &str,
    ) -> Result<Exchange> {
        let hash = digest(code);
        let mut txn = self.store.write()?;
        let Some(mut record) = get(&txn, &hash)? else {
            return Ok(Exchange::InvalidGrant(
                "unknown or expired authorization code",
            ));
        };
        if let Some(family) = &record.exchanged_into {
            tracing::warn!(%family, "an authorization code came back: revoking what it issued");
            super::refresh::revoke_family_in(&mut txn, family)?;
            txn.commit()?;
            return Ok(Exchange::InvalidGrant(
                "the authorization code was already used; the tokens it gave are revoked",
            ));
        }
        if now() >= record.expires_at {
            txn.remove(&CODES, &hash)?;
            txn.commit()?;
            return Ok(Exchange::InvalidGrant("the authorization code expired"));
        }
        if record.client_id != client_id {
            return Ok(Exchange::InvalidGrant(
                "the code was issued to another client",
            ));
        }
        if record.redirect_uri != redirect_uri {
            return Ok(Exchange::InvalidGrant(
                "redirect_uri is not the one the code was sent to",
            ));
        }
        if !verifies(verifier, &record.code_challenge) {
            return Ok(Exchange::InvalidGrant(
                "code_verifier does not match the code_challenge",
            ));
        }
        // Claimed, with the family it starts, in this transaction: two
        // exchanges cannot both succeed, a replay at any later moment
        // revokes that family, and a deletion cannot come between the
        // check that the person exists and the tokens.
        let family = super::refresh::new_family_id();
        record.exchanged_into = Some(family.clone());
        put(&mut txn, &hash, &record)?;
        let approval = super::refresh::Approval {
            user_id: &record.user_id,
            client_id,
            client_name: &record.client_name,
            audience: Audience::Mcp,
            scope: record.scope.clone(),
        };
        let Some(issued) = self.issue_in(&mut txn, approval, &family)? else {
            return Ok(Exchange::InvalidGrant("the person who consented is gone"));
        };
        txn.commit()?;
        Ok(Exchange::Issued(issued, record.scope))
    }
}

/// RFC 7636 §4.6 with S256: `BASE64URL(SHA256(verifier)) == challenge`,
/// and a verifier of the form §4.1 requires.
fn verifies(verifier: &str, challenge: &str) -> bool {
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    well_formed && constant_time_eq(&crate::oauth::pkce::challenge_of(verifier), challenge)
}

/// Whether a `code_challenge` has S256's form (43 base64url characters).
pub fn is_s256_challenge(challenge: &str) -> bool {
    challenge.len() == 43
        && challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn get(txn: &impl Records, hash: &str) -> Result<Option<CodeRecord>> {
    let bytes = txn.get(&CODES, hash)?;
    Ok(bytes.map(|b| serde_json::from_slice(&b)).transpose()?)
}

fn put(txn: &mut Writer, hash: &str, record: &CodeRecord) -> Result<()> {
    txn.put(&CODES, hash, &serde_json::to_vec(record)?)
}

/// Codes past their time (kept that long after an exchange, so that a
/// replay is caught).
fn forget_expired(txn: &mut Writer) -> Result<()> {
    let t = now();
    txn.retain(&CODES, .., |_, bytes| {
        serde_json::from_slice::<CodeRecord>(&bytes).is_ok_and(|r| r.expires_at > t)
    })?;
    Ok(())
}

fn remove_codes_of(txn: &mut Writer, user_id: &str) -> Result<u64> {
    txn.retain(&CODES, .., |_, bytes| {
        serde_json::from_slice::<CodeRecord>(&bytes).is_ok_and(|r| r.user_id != user_id)
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use quarry_store::{Store, TokenCheck};

    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
    const REDIRECT: &str = "http://127.0.0.1:33418/callback";

    fn setup() -> (tempfile::TempDir, Arc<Store>, Issuer, String) {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path(), None).unwrap());
        let user = store.create_user("alice@acme.test").unwrap().id;
        let issuer = Issuer::for_tests(store.clone());
        (dir, store, issuer, user)
    }

    fn consent(user: &str) -> Consent {
        Consent {
            user_id: user.to_string(),
            client_id: "mcp_client".into(),
            client_name: "Claude".into(),
            redirect_uri: REDIRECT.into(),
            code_challenge: CHALLENGE.into(),
            scope: Scope::all(),
        }
    }

    fn mcp_token_valid(store: &Store, token: &str) -> bool {
        matches!(
            store.check_token(token, Audience::Mcp).unwrap(),
            TokenCheck::Valid { .. }
        )
    }

    #[test]
    fn a_code_is_exchanged_once_by_its_client_with_its_verifier() {
        let (_dir, store, issuer, user) = setup();
        let code = issuer.grant_code(consent(&user)).unwrap();
        for (client, redirect, verifier, why) in [
            ("mcp_other", REDIRECT, VERIFIER, "another client"),
            (
                "mcp_client",
                "http://127.0.0.1:1/other",
                VERIFIER,
                "another redirect",
            ),
            (
                "mcp_client",
                REDIRECT,
                &"x".repeat(43)[..],
                "a wrong verifier",
            ),
        ] {
            assert!(
                matches!(
                    issuer
                        .exchange_code(&code, client, redirect, verifier)
                        .unwrap(),
                    Exchange::InvalidGrant(_)
                ),
                "{why}"
            );
        }
        let Exchange::Issued(issued, scope) = issuer
            .exchange_code(&code, "mcp_client", REDIRECT, VERIFIER)
            .unwrap()
        else {
            panic!("exchanged")
        };
        assert_eq!(scope, Scope::all());
        assert!(mcp_token_valid(&store, issued.access_token.expose()));
        assert!(
            !matches!(
                store
                    .check_token(issued.access_token.expose(), Audience::V1)
                    .unwrap(),
                TokenCheck::Valid { .. }
            ),
            "an MCP token is not a /v1 token"
        );

        // The code comes back: refused, and what it issued is revoked.
        assert!(matches!(
            issuer
                .exchange_code(&code, "mcp_client", REDIRECT, VERIFIER)
                .unwrap(),
            Exchange::InvalidGrant(_)
        ));
        assert!(!mcp_token_valid(&store, issued.access_token.expose()));
        assert!(matches!(
            issuer
                .refresh(issued.refresh_token.expose(), "mcp_client")
                .unwrap(),
            super::super::Renewal::InvalidGrant
        ));
    }

    #[test]
    fn refreshed_tokens_keep_the_audience_and_scope_consented_to() {
        let (_dir, store, issuer, user) = setup();
        let mut narrow = consent(&user);
        narrow.scope = Scope::parse("search").unwrap();
        let code = issuer.grant_code(narrow).unwrap();
        let Exchange::Issued(issued, _) = issuer
            .exchange_code(&code, "mcp_client", REDIRECT, VERIFIER)
            .unwrap()
        else {
            panic!("exchanged")
        };
        let super::super::Renewal::Issued(renewed) = issuer
            .refresh(issued.refresh_token.expose(), "mcp_client")
            .unwrap()
        else {
            panic!("refreshed")
        };
        let TokenCheck::Valid { scope, .. } = store
            .check_token(renewed.access_token.expose(), Audience::Mcp)
            .unwrap()
        else {
            panic!("an MCP token")
        };
        assert_eq!(scope, Scope::parse("search").unwrap());
    }

    #[test]
    fn only_well_formed_s256_verifiers_and_challenges_pass() {
        assert!(verifies(VERIFIER, CHALLENGE));
        assert!(!verifies(
            "short",
            &crate::oauth::pkce::challenge_of("short")
        ));
        assert!(is_s256_challenge(CHALLENGE));
        assert!(!is_s256_challenge("plain-challenge"));
    }
}
