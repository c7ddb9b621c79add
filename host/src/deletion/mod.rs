//! `DELETE /v1/delete_my_data`: every trace of a user, gone, in the order
//! DESIGN.md gives, as a durable job that a crash cannot leave half done.
//!
//! 1. The job is recorded (sealed with the master key, since it outlives the
//!    user's key) with a snapshot of what must happen after the key is gone:
//!    the OAuth tokens to revoke and the webhook endpoints to tell. The user
//!    is blocked from then on.
//! 2. Each token is revoked at its vendor; one that fails goes to a durable
//!    retry queue ([`revoke`]).
//! 3. The user's data key is destroyed: every sealed record becomes noise.
//! 4. One commit removes every record the registry of user data lists
//!    (`crate::user_data`: archive, index, history, idempotency records, profile,
//!    grants, webhooks, API tokens, counters, sessions...), queues the
//!    signed `user.deleted` event, and ends the job.
//! 5. The removed records are purged from the data files (`Store::purge_removed`:
//!    the embedded file is rewritten without them), so that no copy of the
//!    profile, the email or the wrapped key is left in freed pages.
//!
//! A process killed anywhere in between leaves the job for whoever finds it
//! first: this process at its next start, or another replica, whose sweep
//! adopts a job once its lease has run out (the job renews its lease at
//! every step it saves), and carries it on from the step it reached.

use std::collections::HashSet;
use std::sync::{Arc, RwLock};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::archive::Archive;
use crate::calendar::rfc3339;
use crate::connectors::Registry;
use crate::oauth::revoke::{Outcome, Revoker, TokenToRevoke};
use crate::webhooks::{Target, Webhooks};
use quarry_store::records::{Bytes, Records, Space, Text, Writer};
use quarry_store::{Counted, Store, UserData, now};

/// `user` → a [`Job`], sealed with the master key.
pub(crate) const DELETIONS: Space<Text, Bytes> = Space::shared(
    "deletions",
    "the deletion job, sealed with the master key; its last commit removes it",
);

/// How long a job is its runner's after each step it saves; a job left
/// longer was abandoned (its process died) and another may adopt it.
const JOB_LEASE_SECONDS: i64 = 20;
/// How often each replica looks for abandoned jobs.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Stage {
    Revoking,
    KeyDestroyed,
}

/// Which unfinished jobs a replica takes over.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Adopt {
    /// At start: its own (it died running them), every one on an embedded
    /// store (no other process can run them), and abandoned ones.
    AtStart,
    /// Later: only those whose lease ran out.
    Abandoned,
}

#[derive(Serialize, Deserialize)]
struct Job {
    user_id: String,
    started_at: i64,
    stage: Stage,
    tokens: Vec<TokenToRevoke>,
    revoked: u64,
    queued: u64,
    /// The user's webhook endpoints as they were when deletion began.
    targets: Vec<Target>,
    /// Until when the process running the job holds it (Unix seconds).
    #[serde(default)]
    lease_until: i64,
    /// The replica running it (its id lives in its data folder, so that a
    /// restarted replica knows its own jobs).
    #[serde(default)]
    runner: Option<String>,
}

/// What a deletion removed: the contract's `details`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub oauth_tokens_revoked: u64,
    /// Revocations that failed now and are retried by a durable job.
    pub oauth_revocations_pending: u64,
    pub query_history_deleted: bool,
    pub archive_entries_removed: u64,
    pub webhooks_unregistered: u64,
    pub profile_deleted: bool,
}

pub struct Deletions {
    store: Arc<Store>,
    archive: Arc<Archive>,
    webhooks: Arc<Webhooks>,
    registry: Arc<Registry>,
    revoker: Arc<Revoker>,
    /// Every space holding a user's records (`crate::user_data`).
    user_data: Vec<UserData>,
    /// Users whose deletion has begun: every request of theirs is refused.
    blocked: RwLock<HashSet<String>>,
    /// This replica's id (see `Job::runner`).
    replica: String,
}

impl Deletions {
    pub fn new(
        store: Arc<Store>,
        archive: Arc<Archive>,
        webhooks: Arc<Webhooks>,
        registry: Arc<Registry>,
        revoker: Revoker,
        user_data: Vec<UserData>,
        replica: String,
    ) -> Result<Deletions> {
        Ok(Deletions {
            store,
            archive,
            webhooks,
            registry,
            revoker: Arc::new(revoker),
            user_data,
            blocked: RwLock::default(),
            replica,
        })
    }

    /// Whether the user's deletion has begun, here or on another replica
    /// (their requests are refused).
    pub fn is_blocked(&self, user_id: &str) -> bool {
        self.blocked.read().expect("blocked lock").contains(user_id)
            || self
                .store
                .read()
                .and_then(|txn| txn.contains(&DELETIONS, user_id))
                // Unreadable storage fails the request elsewhere (503).
                .unwrap_or(false)
    }

    fn block(&self, user_id: &str) {
        self.blocked
            .write()
            .expect("blocked lock")
            .insert(user_id.to_string());
    }

    /// Deletes the user: blocked from now on, and the job runs to its end
    /// even if the caller (a request) is dropped.
    pub async fn delete(self: &Arc<Self>, user_id: &str) -> Result<Report> {
        self.block(user_id);
        let deletions = self.clone();
        let user_id = user_id.to_string();
        tokio::spawn(async move { deletions.run(&user_id).await }).await?
    }

    /// Finishes the deletions a process left midway (at start, before the
    /// first request is served): every one on an embedded store, which no
    /// other process can be running; on a shared one, this replica's own
    /// (it was restarted) and those whose lease ran out (a job whose runner
    /// is alive is left to it).
    pub async fn finish_unfinished(&self) -> Result<()> {
        self.adopt_unfinished(Adopt::AtStart).await?;
        self.purge().await
    }

    /// Adopts and finishes the unfinished jobs that `when` allows.
    async fn adopt_unfinished(&self, when: Adopt) -> Result<()> {
        let jobs = self.store.read()?.all_in(&DELETIONS, ..)?;
        for (user_id, _) in jobs {
            let Some(job) = self.adopt(&user_id, when)? else {
                continue;
            };
            self.block(&user_id);
            // A failed revocation is queued, not waited for: this ends.
            self.carry_on(job)
                .await
                .with_context(|| format!("resuming the deletion of {user_id}"))?;
        }
        Ok(())
    }

    /// Takes over a job that is nobody's (see [`Adopt`]), renewing the
    /// lease in the same commit, so that of several replicas only one
    /// adopts it.
    fn adopt(&self, user_id: &str, when: Adopt) -> Result<Option<Job>> {
        let mut txn = self.store.write()?;
        let Some(mut job) = self.load_in(&txn, user_id)? else {
            return Ok(None);
        };
        let abandoned = job.lease_until <= now()
            || (when == Adopt::AtStart
                && (self.store.exclusive() || job.runner.as_deref() == Some(&self.replica)));
        if !abandoned {
            return Ok(None);
        }
        tracing::info!(user = user_id, stage = ?job.stage, "resuming a deletion");
        self.put_in(&mut txn, &mut job)?;
        txn.commit()?;
        Ok(Some(job))
    }

    /// The vendors' revocation calls (the dashboard's disconnect uses them).
    pub fn revoker(&self) -> &Revoker {
        &self.revoker
    }

    /// Starts the retry queue of failed revocations, and the sweep that
    /// adopts the jobs of replicas that died.
    pub fn start(self: &Arc<Self>) {
        self.revoker.start(self.store.clone());
        let deletions = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(SWEEP_EVERY).await;
                if let Err(error) = deletions.adopt_unfinished(Adopt::Abandoned).await {
                    tracing::warn!(
                        error = format!("{error:#}"),
                        "finishing abandoned deletions"
                    );
                }
            }
        });
    }

    /// Deletes the user, or finishes an unfinished deletion of them.
    pub async fn run(&self, user_id: &str) -> Result<Report> {
        let job = match self.load_in(&self.store.read()?, user_id)? {
            Some(job) => {
                tracing::info!(user = user_id, stage = ?job.stage, "resuming a deletion");
                job
            }
            None => self.begin(user_id)?,
        };
        self.carry_on(job).await
    }

    /// Runs a job from the step it reached to its end.
    async fn carry_on(&self, mut job: Job) -> Result<Report> {
        let user_id = job.user_id.clone();
        let user_id = user_id.as_str();
        failpoint("deletion:recorded");
        if job.stage == Stage::Revoking {
            self.revoke_all(&mut job).await?;
            failpoint("deletion:revoked");
            let mut txn = self.store.write()?;
            self.store.destroy_data_key_in(&mut txn, user_id)?;
            job.stage = Stage::KeyDestroyed;
            if self.save_in(&mut txn, &mut job)? {
                txn.commit()?;
            }
            failpoint("deletion:key-destroyed");
        }
        let report = self.remove_everything(&job)?;
        self.purge().await?;
        self.webhooks.wake();
        tracing::info!(user = user_id, "user deleted");
        Ok(report)
    }

    /// Records the job with its snapshot, before anything is removed.
    fn begin(&self, user_id: &str) -> Result<Job> {
        let tokens = self
            .store
            .grants(user_id)?
            .into_iter()
            .flat_map(|(connector, grant)| {
                let revoke = self
                    .registry
                    .get(&connector)
                    .and_then(|c| c.manifest.oauth.as_ref().and_then(|o| o.revoke.clone()));
                let refresh = grant.refresh_token.map(|t| t.expose().to_string());
                std::iter::once(grant.access_token.expose().to_string())
                    .chain(refresh)
                    .map(move |token| TokenToRevoke {
                        connector: connector.clone(),
                        token,
                        revoke: revoke.clone(),
                        done: false,
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut job = Job {
            user_id: user_id.to_string(),
            started_at: now(),
            stage: Stage::Revoking,
            tokens,
            revoked: 0,
            queued: 0,
            targets: self.webhooks.targets_of(user_id)?,
            lease_until: 0,
            runner: None,
        };
        let mut txn = self.store.write()?;
        // Another run may have recorded it meanwhile: that one is the job.
        if let Some(recorded) = self.load_in(&txn, user_id)? {
            return Ok(recorded);
        }
        self.put_in(&mut txn, &mut job)?;
        txn.commit()?;
        Ok(job)
    }

    /// Revokes each token not settled yet, saving progress after each, so a
    /// resumed job neither skips nor double-counts one.
    async fn revoke_all(&self, job: &mut Job) -> Result<()> {
        for i in 0..job.tokens.len() {
            if job.tokens[i].done {
                continue;
            }
            let outcome = self.revoker.revoke(&job.tokens[i]).await;
            let mut txn = self.store.write()?;
            match &outcome {
                Outcome::Revoked | Outcome::AlreadyInvalid => job.revoked += 1,
                Outcome::Unsupported => {
                    tracing::warn!(connector = %job.tokens[i].connector, "the connector's manifest names no revocation endpoint; the token expires on its own");
                }
                Outcome::Failed(reason) => {
                    tracing::warn!(connector = %job.tokens[i].connector, %reason, "token revocation failed; queued for retry");
                    self.revoker
                        .queue_in(&self.store, &mut txn, &job.tokens[i])?;
                    job.queued += 1;
                }
            }
            job.tokens[i].done = true;
            if !self.save_in(&mut txn, job)? {
                // Another run of the same deletion finished it meanwhile.
                return Ok(());
            }
            txn.commit()?;
        }
        Ok(())
    }

    /// The last step, in one commit: every record goes, the event is
    /// queued, the job ends.
    fn remove_everything(&self, job: &Job) -> Result<Report> {
        let user_id = job.user_id.as_str();
        let mut txn = self.store.write()?;
        let mut report = Report {
            oauth_tokens_revoked: job.revoked,
            oauth_revocations_pending: job.queued,
            query_history_deleted: true,
            archive_entries_removed: 0,
            webhooks_unregistered: 0,
            profile_deleted: false,
        };
        // Two deletions of one user at once (two requests, or two
        // replicas): the one that commits first ends the job and sends the
        // event; the other finds the job gone and sends nothing.
        if !txn.contains(&DELETIONS, user_id)? {
            tracing::info!(user = user_id, "the deletion was finished by another run");
            report.profile_deleted = true;
            return Ok(report);
        }
        for data in &self.user_data {
            let removed = data.remove(&mut txn, user_id)?;
            match data.counted {
                Counted::Nothing => {}
                Counted::Profile => report.profile_deleted |= removed > 0,
                Counted::ArchiveEntries => report.archive_entries_removed += removed,
                Counted::Webhooks => report.webhooks_unregistered += removed,
            }
        }
        let mut targets = self.webhooks.operator_targets();
        targets.extend(job.targets.iter().cloned());
        let data = json!({
            "user_id": user_id,
            "deleted_at": rfc3339(now()),
            "details": report,
        });
        self.webhooks
            .enqueue_in(&mut txn, "user.deleted", data, &targets)?;
        txn.remove(&DELETIONS, user_id)?;
        self.store.mark_for_purge_in(&mut txn)?;
        txn.commit()?;
        // What memory holds of the user goes after the commit.
        self.store.forget_data_key(user_id);
        self.archive.forget(user_id);
        Ok(report)
    }

    /// The removed records leave the files too (the embedded store is
    /// rewritten without them), before the deletion is reported done; a
    /// purge a crash interrupted is done at the next start
    /// ([`Deletions::finish_unfinished`]). Deletions that end together
    /// share one purge.
    async fn purge(&self) -> Result<()> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || store.purge_removed())
            .await?
            .context("purging the deleted records from the data files")
    }

    fn load_in(&self, txn: &impl Records, user_id: &str) -> Result<Option<Job>> {
        let Some(sealed) = txn.get(&DELETIONS, user_id)? else {
            return Ok(None);
        };
        let plain = self.store.master().decrypt(&record_id(user_id), &sealed)?;
        Ok(Some(
            serde_json::from_slice(&plain).context("reading a deletion job")?,
        ))
    }

    /// Saves the job's progress, renewing this replica's lease on it.
    /// Only while the job exists: a run that another run of the same
    /// deletion overtook must not bring the finished job back (it would
    /// finish it again, with a second `user.deleted`). Whether it was saved.
    fn save_in(&self, txn: &mut Writer, job: &mut Job) -> Result<bool> {
        if !txn.contains(&DELETIONS, &job.user_id)? {
            return Ok(false);
        }
        self.put_in(txn, job)?;
        Ok(true)
    }

    /// Writes the job (creating it), renewing this replica's lease on it.
    fn put_in(&self, txn: &mut Writer, job: &mut Job) -> Result<()> {
        job.lease_until = now() + JOB_LEASE_SECONDS;
        job.runner = Some(self.replica.clone());
        let sealed = self
            .store
            .master()
            .encrypt(&record_id(&job.user_id), &serde_json::to_vec(job)?);
        txn.put(&DELETIONS, &job.user_id, &sealed)
    }
}

fn record_id(user_id: &str) -> String {
    format!("deletion/{user_id}")
}

/// Crash testing: `QUARRY_FAILPOINT=deletion:revoked` (say) makes the
/// process kill itself with SIGKILL when the deletion reaches that point,
/// as a power cut would. Only in binaries built with the `failpoints`
/// feature (the tests'); elsewhere this is nothing.
#[cfg(feature = "failpoints")]
fn failpoint(name: &str) {
    if std::env::var("QUARRY_FAILPOINT").is_ok_and(|v| v == name) {
        tracing::error!(failpoint = name, "failpoint reached: killing the process");
        // SAFETY: sending a signal to ourselves has no memory effects.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        std::process::abort();
    }
}

#[cfg(not(feature = "failpoints"))]
fn failpoint(_name: &str) {}
