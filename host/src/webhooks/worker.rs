//! The delivery worker: takes the entries that are due, attempts them a few
//! at a time, and records each outcome (delivered: removed; failed:
//! rescheduled by the retry schedule; schedule exhausted: given up). It
//! sleeps until the next entry is due or until woken by a new one.

use std::time::{Duration, SystemTime};

use futures::StreamExt;
use tokio::sync::watch;

use super::delivery::Outcome;
use super::outbox::{self, Entry, GivenUp};
use super::{WEBHOOK_TEST, Webhooks, now_ms, registrations, retry};
use quarry_store::now;

/// Entries taken per pass.
const BATCH: usize = 64;
/// Attempts per user in one pass, all their registrations together: a
/// user whose receivers answer slowly (or never) holds at most this many
/// of the [`CONCURRENCY`] slots, whatever they queued and however many
/// registrations they made; the rest wait for the next pass.
const PER_USER: usize = 2;
/// Attempts in flight at once: a slow receiver must not hold up the others.
const CONCURRENCY: usize = 8;
/// Longest sleep between passes, so that a changed clock cannot strand an
/// entry for long.
const MAX_IDLE: Duration = Duration::from_secs(60);
/// Shortest sleep when nothing was due: an index entry whose record is
/// missing (which no code path leaves) must not make the loop spin.
const MIN_IDLE: Duration = Duration::from_millis(100);
/// Pause after the outbox could not be read or written, so that a broken
/// disk does not turn into a hot loop (or repeated deliveries).
const BACKOFF: Duration = Duration::from_secs(5);

/// The entries of a pass, and those left for later: at most [`PER_USER`]
/// per user (a deleted user's last deliveries, which have no owner any
/// more, per registration; the operator's endpoints, which receive every
/// `user.deleted`, are not capped).
fn fair_share(batch: Vec<Entry>) -> (Vec<Entry>, Vec<Entry>) {
    let mut taken: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    batch.into_iter().partition(|entry| {
        let Some(webhook_id) = &entry.webhook_id else {
            return true;
        };
        let whose = entry.owner.as_ref().unwrap_or(webhook_id);
        let count = taken.entry(whose.clone()).or_default();
        *count += 1;
        *count <= PER_USER
    })
}

impl Webhooks {
    pub(super) async fn run(self: std::sync::Arc<Self>, mut stop: watch::Receiver<bool>) {
        match outbox::pending(&self.store) {
            Ok(pending) => tracing::info!(pending = pending.len(), "webhook worker started"),
            Err(error) => {
                tracing::error!(error = %format!("{error:#}"), "reading the webhook outbox")
            }
        }
        loop {
            if *stop.borrow() {
                return;
            }
            let claim = (now_ms(), self.lease_ms());
            let pause = match outbox::claim_due(&self.store, claim, BATCH, &self.worker_id) {
                Ok(batch) if batch.is_empty() => self.idle_time(),
                Ok(batch) => {
                    let (batch, later) = fair_share(batch);
                    for entry in &later {
                        if let Err(error) = outbox::release(&self.store, entry) {
                            tracing::warn!(error = %format!("{error:#}"), "releasing a webhook entry");
                        }
                    }
                    let pass = futures::stream::iter(batch)
                        .map(|entry| self.deliver(entry))
                        .buffer_unordered(CONCURRENCY)
                        .collect::<Vec<bool>>();
                    let recorded = tokio::select! {
                        recorded = pass => recorded,
                        _ = stop.changed() => return,
                    };
                    if recorded.iter().all(|ok| *ok) {
                        continue;
                    }
                    BACKOFF
                }
                Err(error) => {
                    tracing::error!(error = %format!("{error:#}"), "reading the webhook outbox");
                    BACKOFF
                }
            };
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = self.wake.notified() => {}
                _ = stop.changed() => return,
            }
        }
    }

    /// How long a claimed batch is this worker's: long enough for every
    /// attempt of the batch to time out, [`CONCURRENCY`] at a time.
    fn lease_ms(&self) -> i64 {
        let rounds = BATCH.div_ceil(CONCURRENCY) as i64;
        rounds * self.sender.timeout_ms() as i64 + 30_000
    }

    /// Until the next entry is due (at most [`MAX_IDLE`]; at least
    /// [`MIN_IDLE`], since nothing was due a moment ago).
    fn idle_time(&self) -> Duration {
        match outbox::next_due(&self.store) {
            Ok(Some(due)) => {
                Duration::from_millis((due - now_ms()).max(0) as u64).clamp(MIN_IDLE, MAX_IDLE)
            }
            Ok(None) => MAX_IDLE,
            Err(error) => {
                tracing::error!(error = %format!("{error:#}"), "reading the webhook outbox");
                BACKOFF
            }
        }
    }

    /// Attempts one entry and records the outcome; whether the outcome
    /// could be recorded.
    async fn deliver(&self, entry: Entry) -> bool {
        let message = match outbox::unseal(self.store.master(), &entry) {
            Ok(message) => message,
            Err(error) => {
                // Sealed with another master key, or damaged: it can never go.
                return self.give_up(&entry, None, Some(format!("{error:#}")));
            }
        };
        let outcome = match self.still_wanted(&entry) {
            Ok(true) => self.sender.attempt(&message, SystemTime::now()).await,
            Ok(false) => {
                tracing::info!(delivery = %entry.id, message_id = %message.message_id, event = %entry.event_type,
                    target = target_name(&entry), "webhook delivery dropped: the registration was removed");
                return self.recorded(outbox::remove(&self.store, &entry));
            }
            Err(error) => Outcome::Failed {
                error: format!("checking the registration: {error:#}"),
                retry_after: None,
            },
        };
        let attempt = entry.attempts + 1;
        match outcome {
            Outcome::Delivered(status) => {
                tracing::info!(delivery = %entry.id, message_id = %message.message_id, event = %entry.event_type,
                    target = target_name(&entry), attempt, status, "webhook delivered");
                self.recorded(outbox::remove(&self.store, &entry))
            }
            Outcome::Failed { error, retry_after } => {
                match retry::next_delay(&self.schedule, attempt as usize, retry_after) {
                    Some(delay) => {
                        tracing::info!(delivery = %entry.id, message_id = %message.message_id, event = %entry.event_type,
                            target = target_name(&entry), attempt, %error, retry_in_ms = delay.as_millis() as u64,
                            "webhook attempt failed; will retry");
                        let next = Entry {
                            attempts: attempt,
                            due_ms: now_ms() + delay.as_millis() as i64,
                            last_error: Some(error),
                            ..entry.clone()
                        };
                        self.recorded(outbox::reschedule(&self.store, &entry, &next))
                    }
                    None => {
                        let entry = Entry {
                            attempts: attempt,
                            ..entry
                        };
                        self.give_up(&entry, Some(&message.message_id), Some(error))
                    }
                }
            }
        }
    }

    /// Deliveries queued for a registration (a test event) go only while it
    /// exists and subscribes to the event; snapshot deliveries always go.
    fn still_wanted(&self, entry: &Entry) -> anyhow::Result<bool> {
        let (Some(owner), Some(webhook_id)) = (&entry.owner, &entry.webhook_id) else {
            return Ok(true);
        };
        Ok(match registrations::get(&self.store, owner, webhook_id)? {
            Some(registration) => {
                entry.event_type == WEBHOOK_TEST || registration.events.contains(&entry.event_type)
            }
            None => false,
        })
    }

    fn give_up(&self, entry: &Entry, message_id: Option<&str>, error: Option<String>) -> bool {
        let record = GivenUp {
            delivery_id: entry.id.clone(),
            message_id: message_id.unwrap_or_default().to_string(),
            event_type: entry.event_type.clone(),
            webhook_id: entry.webhook_id.clone(),
            attempts: entry.attempts,
            last_error: error.or_else(|| entry.last_error.clone()),
            queued_at: entry.queued_at,
            given_up_at: now(),
        };
        tracing::warn!(delivery = %record.delivery_id, message_id = %record.message_id, event = %record.event_type,
            target = target_name(entry), attempts = record.attempts,
            error = record.last_error.as_deref().unwrap_or("-"), "webhook delivery given up");
        self.recorded(outbox::give_up(&self.store, entry, &record))
    }

    fn recorded(&self, result: anyhow::Result<()>) -> bool {
        match result {
            Ok(()) => true,
            Err(error) => {
                tracing::error!(error = %format!("{error:#}"), "recording a webhook delivery");
                false
            }
        }
    }
}

/// How logs name a target: its registration id, never its URL (which may
/// carry a token of the receiver's).
fn target_name(entry: &Entry) -> &str {
    entry.webhook_id.as_deref().unwrap_or("operator endpoint")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: usize, webhook: Option<&str>) -> Entry {
        Entry {
            id: format!("dlv_{n}"),
            event_type: "webhook.test".into(),
            webhook_id: webhook.map(str::to_string),
            owner: webhook.map(|_| "usr_x".to_string()),
            attempts: 0,
            due_ms: 0,
            queued_at: 0,
            last_error: None,
            leased_by: None,
            sealed: Vec::new(),
        }
    }

    fn owned_by(owner: Option<&str>, mut entry: Entry) -> Entry {
        entry.owner = owner.map(str::to_string);
        entry
    }

    #[test]
    fn one_user_takes_at_most_their_share_of_a_pass() {
        // One user with twenty registrations, each with two deliveries due.
        let mut batch: Vec<Entry> = (0..40)
            .map(|n| {
                owned_by(
                    Some("usr_tarpit"),
                    entry(n, Some(&format!("wh_{}", n % 20))),
                )
            })
            .collect();
        batch.push(owned_by(Some("usr_other"), entry(40, Some("wh_other"))));
        // A deleted user's last deliveries: per registration.
        batch.push(owned_by(None, entry(41, Some("wh_gone"))));
        batch.push(owned_by(None, entry(42, Some("wh_gone"))));
        batch.push(owned_by(None, entry(43, Some("wh_gone"))));
        // The operator's endpoints.
        batch.push(entry(44, None));
        batch.push(entry(45, None));
        let (now, later) = fair_share(batch);
        let ids: Vec<&str> = now.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "dlv_0", "dlv_1", "dlv_40", "dlv_41", "dlv_42", "dlv_44", "dlv_45"
            ]
        );
        assert_eq!(later.len(), 39);
    }
}
