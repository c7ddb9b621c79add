//! Revoking a user's OAuth tokens at the vendors, as each connector's
//! manifest says (RFC 7009 form posts, a bearer call such as Slack's
//! `auth.revoke`, or a JSON body such as GitHub's application API), and the
//! durable queue that retries the revocations that failed (a deletion's:
//! its records are sealed with the master key, since the user's is gone).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::{Deserialize, Serialize};

use super::Vendors;
use crate::connectors::manifest::Revoke;
use quarry_store::records::{Bytes, Records, Space, Text, Writer};
use quarry_store::{Store, now, random_hex};

/// `id` → a [`Pending`] revocation, sealed with the master key: the user's
/// data key is gone by the time it is retried.
pub const REVOCATIONS: Space<Text, Bytes> = Space::shared(
    "pending_revocations",
    "tokens still to revoke at a vendor after the user is gone, sealed with the master key, without the user's id",
);

/// One token to revoke, and how.
#[derive(Clone, Serialize, Deserialize)]
pub struct TokenToRevoke {
    pub connector: String,
    pub token: String,
    pub revoke: Option<Revoke>,
    /// Settled: revoked, queued for retry, or nothing to call.
    pub done: bool,
}

#[derive(Clone, Serialize, Deserialize)]
struct Pending {
    token: TokenToRevoke,
    attempts: u32,
    next_attempt_at: i64,
}

/// What one revocation call came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Revoked,
    /// The vendor says the token is not valid (any more): nothing is left
    /// to revoke.
    AlreadyInvalid,
    /// The manifest names no revocation endpoint.
    Unsupported,
    /// Worth trying again later (network, 429, 5xx, unexpected answers).
    Failed(String),
}

pub struct Revoker {
    vendors: Arc<Vendors>,
    /// Seconds between retries of a failed revocation; then it is dropped.
    schedule: Vec<u64>,
}

impl Revoker {
    pub fn new(vendors: Arc<Vendors>, schedule: Vec<u64>) -> Revoker {
        Revoker { vendors, schedule }
    }

    pub async fn revoke(&self, token: &TokenToRevoke) -> Outcome {
        let Some(revoke) = &token.revoke else {
            return Outcome::Unsupported;
        };
        let client = self.vendors.clients.get(&token.connector);
        let url = match client {
            Some(c) => revoke.url.replace("{client_id}", &c.client_id),
            None => revoke.url.clone(),
        };
        let method = if revoke.method == "DELETE" {
            reqwest::Method::DELETE
        } else {
            reqwest::Method::POST
        };
        let mut request = self
            .vendors
            .http
            .request(method, &url)
            .timeout(Duration::from_secs(10));
        request = match revoke.style.as_str() {
            "bearer" => request.bearer_auth(&token.token),
            "json" => {
                let field = revoke.token_field.as_deref().unwrap_or("token");
                request.json(&serde_json::json!({ field: token.token }))
            }
            "form_client" => {
                // Without the client's credentials the vendor can only
                // refuse: no call, and the token is to be revoked by hand.
                let Some(c) = client else {
                    return Outcome::Failed(
                        "no OAuth client is configured for this connector".into(),
                    );
                };
                request.form(&[
                    ("client_id", c.client_id.as_str()),
                    ("client_secret", c.client_secret.expose()),
                    ("token", token.token.as_str()),
                ])
            }
            _ => request.form(&[
                ("token", token.token.as_str()),
                ("token_type_hint", "access_token"),
            ]),
        };
        if !matches!(revoke.style.as_str(), "bearer" | "form_client")
            && let Some(c) = client
        {
            let basic = B64.encode(format!("{}:{}", c.client_id, c.client_secret.expose()));
            request = request.header("Authorization", format!("Basic {basic}"));
        }
        match request.send().await {
            Ok(response) => judge(response).await,
            Err(error) => Outcome::Failed(format!("{error}")),
        }
    }

    /// Queues a failed revocation inside the caller's transaction.
    pub fn queue_in(&self, store: &Store, txn: &mut Writer, token: &TokenToRevoke) -> Result<()> {
        let id = format!("rvk_{}", random_hex(8));
        let pending = Pending {
            token: token.clone(),
            attempts: 1,
            next_attempt_at: now() + self.delay(0) as i64,
        };
        let sealed = store
            .master()
            .encrypt(&record_id(&id), &serde_json::to_vec(&pending)?);
        txn.put(&REVOCATIONS, &id, &sealed)
    }

    fn delay(&self, attempt: usize) -> u64 {
        self.schedule.get(attempt).copied().unwrap_or(0)
    }

    /// Retries due revocations until the process ends.
    pub fn start(self: &Arc<Self>, store: Arc<Store>) {
        let revoker = self.clone();
        tokio::spawn(async move {
            loop {
                if let Err(error) = revoker.retry_due(&store).await {
                    tracing::warn!(error = format!("{error:#}"), "retrying revocations failed");
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }

    async fn retry_due(&self, store: &Store) -> Result<()> {
        let due = claim_due(store)?;
        for (id, mut pending) in due {
            let outcome = self.revoke(&pending.token).await;
            let mut txn = store.write()?;
            match outcome {
                Outcome::Failed(reason) if (pending.attempts as usize) < self.schedule.len() => {
                    tracing::info!(connector = %pending.token.connector, attempt = pending.attempts, %reason, "token revocation failed; will retry");
                    pending.next_attempt_at = now() + self.delay(pending.attempts as usize) as i64;
                    pending.attempts += 1;
                    let sealed = store
                        .master()
                        .encrypt(&record_id(&id), &serde_json::to_vec(&pending)?);
                    txn.put(&REVOCATIONS, &id, &sealed)?;
                }
                Outcome::Failed(reason) => {
                    tracing::error!(connector = %pending.token.connector, %reason, "token revocation gave up; revoke it at the vendor by hand");
                    txn.remove(&REVOCATIONS, &id)?;
                }
                _ => {
                    tracing::info!(connector = %pending.token.connector, "queued token revocation done");
                    txn.remove(&REVOCATIONS, &id)?;
                }
            }
            txn.commit()?;
        }
        Ok(())
    }

    /// Revocations still waiting (for tests and reports).
    pub fn queued(&self, store: &Store) -> Result<u64> {
        store.read()?.count_in(&REVOCATIONS, ..)
    }
}

/// How long a claimed retry is its replica's: far longer than one
/// revocation call takes.
const CLAIM_SECONDS: i64 = 60;

/// Takes the due revocations for this replica, moving their next attempt
/// past the claim in the same commit, so that no other replica retries them
/// meanwhile (and one that dies leaves them to the others).
fn claim_due(store: &Store) -> Result<Vec<(String, Pending)>> {
    // Most seconds nothing is queued: no write transaction then.
    if store.read()?.count_in(&REVOCATIONS, ..)? == 0 {
        return Ok(Vec::new());
    }
    let mut txn = store.write()?;
    let mut due = Vec::new();
    for (id, sealed) in txn.all_in(&REVOCATIONS, ..)? {
        let plain = store.master().decrypt(&record_id(&id), &sealed)?;
        let mut pending: Pending = serde_json::from_slice(&plain)?;
        if pending.next_attempt_at > now() {
            continue;
        }
        due.push((id.clone(), pending.clone()));
        pending.next_attempt_at = now() + CLAIM_SECONDS;
        let sealed = store
            .master()
            .encrypt(&record_id(&id), &serde_json::to_vec(&pending)?);
        txn.put(&REVOCATIONS, &id, &sealed)?;
    }
    txn.commit()?;
    Ok(due)
}

fn record_id(id: &str) -> String {
    format!("revocation/{id}")
}

/// 2xx is revoked unless the body says otherwise (Slack answers 200 with
/// `ok: false`); 404, 410 and the vendors' "invalid token" answers mean
/// there is nothing left to revoke; anything else is worth a retry.
async fn judge(response: reqwest::Response) -> Outcome {
    let status = response.status();
    let body: serde_json::Value = response.json().await.unwrap_or_default();
    let vendor_error = body.get("ok").and_then(|v| v.as_bool()) == Some(false);
    let error_code = body.get("error").and_then(|v| v.as_str()).unwrap_or("");
    if status.is_success() && !vendor_error {
        return Outcome::Revoked;
    }
    if matches!(status.as_u16(), 404 | 410)
        || matches!(
            error_code,
            "token_revoked" | "invalid_auth" | "account_inactive" | "invalid_token"
        )
        || (status.as_u16() == 400
            && body.get("code").and_then(|v| v.as_str()) == Some("validation_error"))
    {
        return Outcome::AlreadyInvalid;
    }
    Outcome::Failed(format!("the vendor answered {status} {error_code}"))
}
