//! Outgoing webhooks: users' registrations, events signed the Standard
//! Webhooks way, and a durable outbox drained by a delivery worker.
//!
//! - [`registrations`]: the users' endpoints (sealed with their data key).
//! - [`outbox`]: one entry per delivery, queued in the transaction of the
//!   change that caused the event, kept until delivered or given up.
//! - [`signing`]: `webhook-id`, `webhook-timestamp`, `webhook-signature`.
//! - [`retry`]: the schedule with jitter, and the receiver's `Retry-After`.
//! - [`target`]: which URLs may receive deliveries (https, public).
//! - [`delivery`]: one attempt over HTTP; `worker`: the loop that drains
//!   the outbox.
//!
//! The deletion of a user calls [`Webhooks::targets_of`] before destroying
//! the user's key, then [`Webhooks::remove_user_in`] and
//! [`Webhooks::enqueue_in`] in its own transaction, then [`Webhooks::wake`].

pub mod delivery;
pub mod outbox;
pub mod registrations;
pub mod retry;
pub mod signing;
pub mod target;
mod worker;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::{Notify, watch};

use self::delivery::Sender;
use self::outbox::{Entry, Message};
use self::registrations::Registration;
use self::target::Policy;
use crate::config::WebhookConfig;
use quarry_store::records::Writer;
use quarry_store::{Declared, Store, now, random_hex};

/// The webhooks' spaces: a user's deliveries that depend on their
/// registrations go first (pending test events; the `user.deleted`
/// snapshot deliveries are the master key's and stay), then the
/// registrations.
pub const SPACES: &[Declared] = &[
    outbox::OUTBOX.declared(),
    registrations::REGISTRATIONS.declared(),
    outbox::DUE.declared(),
    outbox::GIVEN_UP.declared(),
];

/// Emitted when `DELETE /v1/delete_my_data` executes.
pub const USER_DELETED: &str = "user.deleted";
/// Sent by `POST /v1/webhooks/{id}/test` to that one registration.
pub const WEBHOOK_TEST: &str = "webhook.test";
/// The events a registration can subscribe to.
pub const SUBSCRIBABLE: &[&str] = &[USER_DELETED];
/// Registrations a user may have.
pub const MAX_PER_USER: usize = 20;

/// Where one delivery goes. Serializable: the deletion keeps a snapshot of
/// a user's targets, sealed with the master key, until it has queued them.
#[derive(Clone, Serialize, Deserialize)]
pub struct Target {
    pub url: String,
    /// `whsec_...`
    pub secret: String,
    /// The registration, or `None` for an operator's endpoint.
    pub webhook_id: Option<String>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("webhook_id", &self.webhook_id)
            .field("url", &"***")
            .field("secret", &"***")
            .finish()
    }
}

/// Why a registration was not made.
#[derive(Debug)]
pub enum RegisterError {
    /// The request is wrong; the message names the field (a 400).
    Invalid(String),
    Internal(anyhow::Error),
}

impl From<anyhow::Error> for RegisterError {
    fn from(error: anyhow::Error) -> Self {
        RegisterError::Internal(error)
    }
}

/// A queued event.
#[derive(Debug, Clone)]
pub struct Queued {
    pub message_id: String,
    pub queued_at: i64,
}

pub struct Webhooks {
    store: Arc<Store>,
    /// Seconds before each attempt (see `WebhookConfig`).
    schedule: Vec<u64>,
    sender: Sender,
    policy: Policy,
    operator: Vec<Target>,
    wake: Notify,
    stop: watch::Sender<bool>,
    worker: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Names this process's claims on the outbox (replicas share it).
    worker_id: String,
}

impl Webhooks {
    /// Creates the tables and checks the operator's endpoints (a typo in a
    /// URL or a secret stops the server at start rather than losing events).
    pub fn new(store: Arc<Store>, config: WebhookConfig) -> Result<Webhooks> {
        let policy = Policy {
            allow_plain_http: config.allow_plain_http,
            allow_private: config.allow_private_targets,
        };
        let mut operator = Vec::new();
        for (i, endpoint) in config.endpoints.iter().enumerate() {
            target::check_url(&endpoint.url, policy)
                .map_err(|e| anyhow::anyhow!("webhooks.endpoints[{i}]: {e}"))?;
            signing::key_of(&endpoint.secret)
                .with_context(|| format!("webhooks.endpoints[{i}].secret"))?;
            operator.push(Target {
                url: endpoint.url.clone(),
                secret: endpoint.secret.clone(),
                webhook_id: None,
            });
        }
        let sender = Sender::new(policy, Duration::from_millis(config.timeout_ms))?;
        Ok(Webhooks {
            store,
            schedule: config.retry_schedule_seconds,
            sender,
            policy,
            operator,
            wake: Notify::new(),
            stop: watch::Sender::new(false),
            worker: Mutex::new(None),
            worker_id: format!("wkr_{}", quarry_store::random_hex(8)),
        })
    }

    /// Spawns the delivery worker on the current tokio runtime (once). It
    /// starts with whatever the outbox holds: deliveries pending when the
    /// server last stopped go out now.
    pub fn start(self: &Arc<Self>) {
        let mut worker = self.worker.lock().expect("worker lock");
        if worker.is_none() {
            let receiver = self.stop.subscribe();
            *worker = Some(tokio::spawn(self.clone().run(receiver)));
        }
    }

    /// Stops the worker. An attempt in flight is abandoned: its entry is
    /// still in the outbox and is sent again at the next start (receivers
    /// deduplicate by `webhook-id`).
    pub async fn stop(&self) {
        self.stop.send_replace(true);
        let handle = self.worker.lock().expect("worker lock").take();
        if let Some(handle) = handle {
            let _ = handle.await;
        }
    }

    /// Wakes the worker after the caller committed new entries.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    // ---- registrations -----------------------------------------------------

    /// Registers `url` for `events` (default: `user.deleted`) and returns the
    /// registration with its new secret.
    pub async fn register(
        &self,
        user_id: &str,
        url: &str,
        events: Option<Vec<String>>,
    ) -> Result<Registration, RegisterError> {
        let events = check_events(events).map_err(RegisterError::Invalid)?;
        let url = target::check_registration(url, self.policy)
            .await
            .map_err(RegisterError::Invalid)?;
        let registration = Registration {
            id: format!("wh_{}", random_hex(8)),
            url: url.to_string(),
            events,
            created_at: now(),
            secret: signing::new_secret(),
        };
        let mut txn = self.store.write()?;
        // Counted in the transaction that inserts: concurrent registrations
        // cannot both pass the limit.
        if registrations::count_in(&txn, user_id)? >= MAX_PER_USER {
            return Err(RegisterError::Invalid(format!(
                "a user can have at most {MAX_PER_USER} webhooks; delete one first (DELETE /webhooks/{{id}})"
            )));
        }
        registrations::insert_in(&mut txn, &self.store, user_id, &registration)?;
        txn.commit()?;
        tracing::info!(user = user_id, webhook = %registration.id, "webhook registered");
        Ok(registration)
    }

    /// The user's registrations (with their secrets: callers must not show them).
    pub fn list(&self, user_id: &str) -> Result<Vec<Registration>> {
        registrations::list(&self.store, user_id)
    }

    /// Removes one of the user's registrations; whether it was theirs.
    /// Deliveries still pending for it are dropped by the worker.
    pub fn unregister(&self, user_id: &str, webhook_id: &str) -> Result<bool> {
        let removed = registrations::remove(&self.store, user_id, webhook_id)?;
        if removed {
            tracing::info!(user = user_id, webhook = webhook_id, "webhook removed");
        }
        Ok(removed)
    }

    /// Queues a `webhook.test` event to one of the user's registrations;
    /// `None` when it is not theirs.
    pub fn send_test(&self, user_id: &str, webhook_id: &str) -> Result<Option<Queued>> {
        let Some(registration) = registrations::get(&self.store, user_id, webhook_id)? else {
            return Ok(None);
        };
        let target = Target {
            url: registration.url,
            secret: registration.secret,
            webhook_id: Some(registration.id),
        };
        let data = json!({
            "webhook_id": webhook_id,
            "message": "A test event: this endpoint receives and can verify Quarry's webhooks.",
        });
        let mut txn = self.store.write()?;
        let queued = self.queue_in(&mut txn, WEBHOOK_TEST, &data, &[target], Some(user_id))?;
        txn.commit()?;
        self.wake();
        Ok(Some(queued))
    }

    // ---- for the deletion of a user -----------------------------------------

    /// Snapshot of a user's registrations subscribed to `user.deleted`, with
    /// their secrets, taken before the user's key is destroyed.
    pub fn targets_of(&self, user_id: &str) -> Result<Vec<Target>> {
        Ok(registrations::list(&self.store, user_id)?
            .into_iter()
            .filter(|r| r.events.iter().any(|e| e == USER_DELETED))
            .map(|r| Target {
                url: r.url,
                secret: r.secret,
                webhook_id: Some(r.id),
            })
            .collect())
    }

    /// The operator's configured endpoints.
    pub fn operator_targets(&self) -> Vec<Target> {
        self.operator.clone()
    }

    /// Inside the caller's write transaction: queues one event for each
    /// target (the list decides: no subscription check at delivery).
    /// Returns how many deliveries were queued.
    pub fn enqueue_in(
        &self,
        txn: &mut Writer,
        event_type: &str,
        data: Value,
        targets: &[Target],
    ) -> Result<usize> {
        self.queue_in(txn, event_type, &data, targets, None)?;
        Ok(targets.len())
    }

    /// Deliveries not yet made (for tests and inspection).
    pub fn pending(&self) -> Result<Vec<Entry>> {
        outbox::pending(&self.store)
    }

    /// Deliveries given up in the last 30 days.
    pub fn given_up(&self) -> Result<Vec<outbox::GivenUp>> {
        outbox::given_up(&self.store)
    }

    /// One message (one `webhook-id`, one body) and a delivery per target.
    /// `owner`: the user whose registration must still exist and subscribe
    /// to the event when the delivery is made.
    fn queue_in(
        &self,
        txn: &mut Writer,
        event_type: &str,
        data: &Value,
        targets: &[Target],
        owner: Option<&str>,
    ) -> Result<Queued> {
        let queued_at = now();
        let message_id = signing::new_message_id();
        let body = payload(event_type, queued_at, data)?;
        let first = retry::scheduled_delay(&self.schedule, 0).unwrap_or_default();
        for target in targets {
            let id = format!("dlv_{}", random_hex(8));
            let message = Message {
                message_id: message_id.clone(),
                url: target.url.clone(),
                secret: target.secret.clone(),
                body: body.clone(),
            };
            let entry = Entry {
                sealed: outbox::seal(self.store.master(), &id, &message)?,
                id,
                event_type: event_type.to_string(),
                webhook_id: target.webhook_id.clone(),
                owner: owner.map(str::to_string),
                attempts: 0,
                due_ms: now_ms() + first.as_millis() as i64,
                queued_at,
                last_error: None,
                leased_by: None,
            };
            outbox::insert_in(txn, &entry)?;
        }
        Ok(Queued {
            message_id,
            queued_at,
        })
    }
}

/// The body every attempt sends: `{"type", "timestamp", "data"}`.
fn payload(event_type: &str, at: i64, data: &Value) -> Result<String> {
    #[derive(Serialize)]
    struct Payload<'a> {
        #[serde(rename = "type")]
        kind: &'a str,
        timestamp: String,
        data: &'a Value,
    }
    Ok(serde_json::to_string(&Payload {
        kind: event_type,
        timestamp: crate::calendar::rfc3339(at),
        data,
    })?)
}

/// The events of a registration: the default when none are given, each
/// one known, duplicates dropped. The message names the event.
pub fn check_events(events: Option<Vec<String>>) -> Result<Vec<String>, String> {
    let events = events.unwrap_or_default();
    if events.is_empty() {
        return Ok(vec![USER_DELETED.to_string()]);
    }
    let mut out: Vec<String> = Vec::new();
    for event in events {
        if event == WEBHOOK_TEST {
            return Err(format!(
                "events: {WEBHOOK_TEST} needs no subscription; POST /webhooks/{{id}}/test sends it to any webhook"
            ));
        }
        if !SUBSCRIBABLE.contains(&event.as_str()) {
            return Err(format!(
                "events: unknown event {event:?}; known events: {}",
                SUBSCRIBABLE.join(", ")
            ));
        }
        if !out.contains(&event) {
            out.push(event);
        }
    }
    Ok(out)
}

/// Unix milliseconds now: due times survive restarts, so they are wall
/// clock, not `Instant`s.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests;
