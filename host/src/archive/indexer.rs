//! The background indexer: embeds the entries the live ranking did not
//! reach, at background priority on the shared embedding scheduler, stores
//! their vectors and adds them to the loaded index.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use super::entries::{ENTRIES, PENDING, read_head, write_head};
use super::{Archive, Chunk, EMBED_BATCH, Entry, Slot};
use crate::rank::Priority;
use quarry_store::records::{Flow, Records, user_seqs};

impl Archive {
    /// Runs the indexer until the process ends: it wakes when a query is
    /// archived (and every few seconds, for work left by a previous run).
    pub fn start(self: &Arc<Self>) {
        let archive = self.clone();
        tokio::spawn(async move {
            loop {
                let _ = tokio::time::timeout(Duration::from_secs(5), archive.wake.notified()).await;
                let indexed = archive.index_everyone().await;
                let saved = archive.save_loaded_if_due().await;
                archive.unload_over_budget();
                if let Err(error) = indexed.and(saved) {
                    tracing::warn!(
                        error = format!("{error:#}"),
                        "archive indexing failed; will retry"
                    );
                    tokio::time::sleep(Duration::from_secs(5)).await;
                }
            }
        });
    }

    pub(super) async fn index_everyone(&self) -> Result<()> {
        for user_id in self.users_with_pending()? {
            let slot = self.slot(&user_id);
            let _indexing = slot.indexing.lock().await;
            self.load(&user_id, &slot).await?;
            self.index_pending(&user_id, &slot).await?;
            self.save_if_due(&user_id, &slot)?;
        }
        Ok(())
    }

    /// Stores each loaded index that took enough vectors since it was last
    /// stored (queries' archiving leaves that to this task), off the async
    /// workers.
    async fn save_loaded_if_due(self: &Arc<Self>) -> Result<()> {
        let due: Vec<(String, Arc<Slot>)> = self
            .loaded
            .lock()
            .expect("loaded indexes")
            .iter()
            .filter(|(_, slot)| Self::save_due(slot))
            .map(|(user, slot)| (user.clone(), slot.clone()))
            .collect();
        for (user_id, slot) in due {
            let _indexing = slot.indexing.lock().await;
            let (archive, saving) = (self.clone(), slot.clone());
            tokio::task::spawn_blocking(move || archive.save_if_due(&user_id, &saving)).await??;
        }
        Ok(())
    }

    pub(super) fn users_with_pending(&self) -> Result<Vec<String>> {
        let mut users: Vec<String> = Vec::new();
        self.store.read()?.each(&PENDING, .., |(user, _), ()| {
            if users.last() != Some(&user) {
                users.push(user);
            }
            Ok(Flow::Continue)
        })?;
        Ok(users)
    }

    /// Embeds a user's pending entries, stores their vectors and adds them
    /// to the loaded index. The caller holds the slot's indexing lock.
    pub(super) async fn index_pending(&self, user_id: &str, slot: &Arc<Slot>) -> Result<()> {
        loop {
            let mut batch = self.pending_batch(user_id, EMBED_BATCH)?;
            if batch.is_empty() {
                return Ok(());
            }
            // The scheduler serves live queries first; the batch's vectors
            // are stored in one commit.
            let texts = batch.iter().map(|(_, e)| e.content.clone()).collect();
            let vectors = self.embed(user_id, texts).await?;
            for ((_, entry), vector) in batch.iter_mut().zip(vectors) {
                entry.vector = Some((self.embedder_name().to_string(), vector));
            }
            self.index_embedded(user_id, slot, &batch)?;
        }
    }

    /// Stores the vectors of queued entries and adds them to the loaded
    /// index (those a deletion or another task took off the queue
    /// meanwhile are skipped).
    pub(super) fn index_embedded(
        &self,
        user_id: &str,
        slot: &Slot,
        embedded: &[(u64, Entry)],
    ) -> Result<()> {
        let stored = self.store_vectors(user_id, embedded)?;
        let chunks: Vec<Chunk> = embedded.iter().map(|(_, entry)| entry.chunk()).collect();
        let mut guard = slot.index.lock().expect("index lock");
        if let Some(index) = guard.as_mut() {
            for ((seq, entry), chunk) in embedded
                .iter()
                .zip(chunks)
                .filter(|((seq, _), _)| stored.binary_search(seq).is_ok())
            {
                index.set_entry(*seq, entry.queried_at_ms, chunk);
                if let Some((_, vector)) = &entry.vector {
                    index.add(*seq, vector)?;
                }
            }
        }
        Ok(())
    }

    /// Up to `limit` of the user's queued entries, oldest first.
    pub(super) fn pending_batch(&self, user_id: &str, limit: usize) -> Result<Vec<(u64, Entry)>> {
        let key = self.store.data_key(user_id)?;
        let txn = self.store.read()?;
        let queued = txn.first_n(&PENDING, user_seqs(user_id), limit)?;
        let mut out = Vec::new();
        for ((_, seq), ()) in queued {
            if let Some(sealed) = txn.get(&ENTRIES, (user_id, seq))? {
                out.push((seq, Entry::open(&key, user_id, seq, &sealed)?));
            }
        }
        Ok(out)
    }

    /// Writes vectors into their entries and takes them off the queue, in one
    /// commit; only entries still queued are written (a deletion that ran
    /// meanwhile removed the queue with the user). Returns the seqs stored.
    pub(super) fn store_vectors(
        &self,
        user_id: &str,
        indexed: &[(u64, Entry)],
    ) -> Result<Vec<u64>> {
        let key = self.store.data_key(user_id)?;
        let mut txn = self.store.write()?;
        let mut stored = Vec::new();
        for (seq, entry) in indexed {
            if txn.remove(&PENDING, (user_id, *seq))?.is_some() {
                txn.put(&ENTRIES, (user_id, *seq), &entry.seal(&key, user_id, *seq)?)?;
                stored.push(*seq);
            }
        }
        if !stored.is_empty() {
            let mut head = read_head(&txn, user_id)?;
            head.indexed += stored.len() as u64;
            write_head(&mut txn, user_id, &head)?;
        }
        txn.commit()?;
        Ok(stored)
    }

    /// Embeds `user_id`'s backlog with the archive's embedder, behind live
    /// work.
    pub(super) async fn embed(&self, user_id: &str, texts: Vec<String>) -> Result<Vec<Vec<f32>>> {
        self.embedder
            .embed_all(user_id, &texts, Priority::Background)
            .await
    }
}
