//! The encrypted archive of earlier queries and what they found, and the
//! search over it (`POST /v1/deep_search`).
//!
//! Writing is cheap and happens before a query's response is sent: each
//! returned chunk becomes a sealed entry, the query a sealed history record,
//! in one commit. A chunk the live ranking embedded comes with its
//! vector: it is stored in the entry and added to the user's in-memory
//! usearch index at once, so nothing is embedded twice. The others (ranked
//! by keywords because the model did not reach them in time) are queued:
//! the indexer embeds them in the background, behind live work on the
//! shared embedding scheduler. The index is written back sealed from time
//! to time and at shutdown.
//!
//! A deep search never waits for the indexer (`deep_search.rs`): it
//! answers from the index plus a scan of the user's entries still queued.
//!
//! Entries are the truth; the stored index is a cache of them: one missing,
//! stale or built by another embedder is rebuilt from the entries.

mod deep_search;
mod entries;
mod index;
mod indexer;
mod stored;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use anyhow::{Result, bail};

use self::entries::{ENTRIES, HISTORY, PENDING, history_record_id, read_head, write_head};
pub use self::entries::{Entry, HistoryRecord, Source, USER_DATA};
pub use self::index::{Hit, UserIndex};
use crate::rank::Scheduler;
use crate::store::Store;
use crate::store::records::{Records, user_seqs};

/// The serialized index is sealed in pieces of this size: stored values stay
/// small and a large index never needs one contiguous ciphertext.
const SEGMENT_BYTES: usize = 16 << 20;
/// The indexer hands the scheduler this many passages at a time, so that
/// a batch's vectors are stored before the next is embedded.
const EMBED_BATCH: usize = 64;
/// The stored index is rewritten once this many vectors (or a tenth of the
/// index, when smaller) were added since: the entries hold every vector, so
/// a crash in between loses nothing; the next load adds the rest.
const SAVE_AFTER: usize = 1024;
/// Loaded indexes kept in memory (the least recently used saved ones go).
const MAX_LOADED: usize = 256;

/// A chunk to archive: which connector found it, its text, and its vector
/// when the live ranking embedded it (the embedder's name and the vector).
pub struct ArchivedChunk<'a> {
    pub connector: &'a str,
    pub content: &'a str,
    pub vector: Option<(&'a str, &'a [f32])>,
    /// Its document's title and address, kept so that the chunk can be
    /// shown again without asking the vendor (MCP's `fetch`).
    pub source: Option<Source>,
}

/// An archived chunk that matched a deep search.
#[derive(Debug, Clone)]
pub struct Found {
    pub entry: Entry,
    pub similarity: f32,
}

pub struct DeepSearchOutcome {
    pub found: Vec<Found>,
    /// Archived entries within the request's date window.
    pub total_matches: u64,
}

pub struct Archive {
    store: Arc<Store>,
    /// The shared embedding queue: the archive's backlog runs at
    /// background priority, behind live queries.
    embedder: Scheduler,
    loaded: Mutex<HashMap<String, Arc<Slot>>>,
    wake: tokio::sync::Notify,
}

/// One user's index, and the locks that make one task at a time load it
/// and index for that user.
#[derive(Default)]
struct Slot {
    loading: tokio::sync::Mutex<()>,
    indexing: tokio::sync::Mutex<()>,
    index: Mutex<Option<UserIndex>>,
    /// The user's head (`Head::mark`) the loaded index has caught up with.
    seen: Mutex<Option<(u64, u64)>>,
    last_used: Mutex<Option<std::time::Instant>>,
}

impl Archive {
    pub fn open(store: Arc<Store>, embedder: Scheduler) -> Result<Archive> {
        Ok(Archive {
            store,
            embedder,
            loaded: Mutex::default(),
            wake: tokio::sync::Notify::new(),
        })
    }

    pub fn embedder_name(&self) -> &str {
        self.embedder.model_name()
    }

    /// Archives one answered query: its chunks and the query itself, in one
    /// commit. Blocking (it waits for the commit): call it off the async
    /// workers. Returns the sequence numbers of the entries written (the
    /// chunks' order).
    pub fn record(
        &self,
        user_id: &str,
        query_id: &str,
        query: &str,
        chunks: &[ArchivedChunk<'_>],
    ) -> Result<std::ops::Range<u64>> {
        let key = self.store.data_key(user_id)?;
        let mut txn = self.store.write()?;
        if !self.store.has_data_key_in(&txn, user_id)? {
            bail!("user {user_id} is being deleted");
        }
        let mut head = read_head(&txn, user_id)?;
        // Time never goes back within a user's archive, so that sequence
        // order is time order (a clock step back must not break ranges).
        let queried_at_ms = now_ms().max(head.last_queried_at_ms);
        let first_seq = head.next_seq;
        let vectors: Vec<Option<&[f32]>> = chunks.iter().map(|c| self.usable(c.vector)).collect();
        for (offset, (chunk, vector)) in chunks.iter().zip(&vectors).enumerate() {
            let seq = first_seq + offset as u64;
            let entry = Entry {
                query_id: query_id.to_string(),
                query: query.to_string(),
                connector: chunk.connector.to_string(),
                content: chunk.content.to_string(),
                queried_at_ms,
                vector: vector.map(|v| (self.embedder_name().to_string(), v.to_vec())),
                source: chunk.source.clone(),
            };
            txn.put(&ENTRIES, (user_id, seq), &entry.seal(&key, user_id, seq)?)?;
            if vector.is_none() {
                txn.put(&PENDING, (user_id, seq), ())?;
            }
        }
        let mut connectors: Vec<String> = chunks.iter().map(|c| c.connector.to_string()).collect();
        connectors.sort();
        connectors.dedup();
        let history = HistoryRecord {
            query_id: query_id.to_string(),
            query: query.to_string(),
            queried_at_ms,
            first_seq,
            chunks: chunks.len() as u64,
            connectors,
        };
        let record_id = history_record_id(head.next_query);
        txn.put(
            &HISTORY,
            (user_id, head.next_query),
            &key.encrypt(user_id, &record_id, &serde_json::to_vec(&history)?),
        )?;
        head.next_query += 1;
        head.next_seq += chunks.len() as u64;
        head.last_queried_at_ms = queried_at_ms;
        write_head(&mut txn, user_id, &head)?;
        txn.commit()?;
        // A loaded index takes the new entries now (one not loaded catches
        // up with the entries when it is).
        if let Some(slot) = self.loaded_slot(user_id) {
            self.add_recorded(&slot, first_seq, queried_at_ms, &vectors);
            self.save_if_due(user_id, &slot)?;
        }
        if vectors.iter().any(Option::is_none) {
            self.wake.notify_one();
        }
        Ok(first_seq..first_seq + chunks.len() as u64)
    }

    /// A vector the ranking computed, if it is in this archive's space.
    fn usable<'a>(&self, vector: Option<(&str, &'a [f32])>) -> Option<&'a [f32]> {
        vector
            .filter(|(name, v)| {
                *name == self.embedder_name() && v.len() == self.embedder.dimensions()
            })
            .map(|(_, v)| v)
    }

    fn add_recorded(
        &self,
        slot: &Slot,
        first_seq: u64,
        queried_at_ms: i64,
        vectors: &[Option<&[f32]>],
    ) {
        let mut guard = slot.index.lock().expect("index lock");
        let Some(index) = guard.as_mut() else {
            return;
        };
        for (offset, vector) in vectors.iter().enumerate() {
            let seq = first_seq + offset as u64;
            index.set_time(seq, queried_at_ms);
            if let Some(vector) = vector
                && let Err(error) = index.add(seq, vector)
            {
                // The entry holds the vector: the next load adds it.
                tracing::warn!(error = format!("{error:#}"), "adding to the archive index");
            }
        }
    }

    /// The entries of `hits`, without their vectors.
    fn open_hits(&self, user_id: &str, hits: &[Hit]) -> Result<Vec<Found>> {
        let key = self.store.data_key(user_id)?;
        let txn = self.store.read()?;
        let mut found = Vec::with_capacity(hits.len());
        for hit in hits {
            let Some(sealed) = txn.get(&ENTRIES, (user_id, hit.seq))? else {
                continue;
            };
            let mut entry = Entry::open(&key, user_id, hit.seq, &sealed)?;
            entry.vector = None;
            found.push(Found {
                entry,
                similarity: hit.similarity,
            });
        }
        Ok(found)
    }

    fn slot(&self, user_id: &str) -> Arc<Slot> {
        let mut loaded = self.loaded.lock().expect("loaded indexes");
        if loaded.len() >= MAX_LOADED && !loaded.contains_key(user_id) {
            evict_one(&mut loaded);
        }
        let slot = loaded.entry(user_id.to_string()).or_default().clone();
        *slot.last_used.lock().expect("slot use") = Some(std::time::Instant::now());
        slot
    }

    fn loaded_slot(&self, user_id: &str) -> Option<Arc<Slot>> {
        self.loaded
            .lock()
            .expect("loaded indexes")
            .get(user_id)
            .cloned()
    }

    /// Stores every loaded index with unsaved vectors (at shutdown).
    pub fn flush(&self) -> Result<()> {
        let slots: Vec<(String, Arc<Slot>)> = self
            .loaded
            .lock()
            .expect("loaded indexes")
            .iter()
            .map(|(u, s)| (u.clone(), s.clone()))
            .collect();
        for (user_id, slot) in slots {
            let unsaved = slot
                .index
                .lock()
                .expect("index lock")
                .as_ref()
                .is_some_and(|i| i.unsaved > 0);
            if unsaved {
                self.save(&user_id, &slot)?;
            }
        }
        Ok(())
    }

    /// Forgets a deleted user's loaded index (their records went with the
    /// deletion's commit: see [`USER_DATA`]).
    pub fn forget(&self, user_id: &str) {
        self.loaded.lock().expect("loaded indexes").remove(user_id);
    }

    /// A user's query history, oldest first.
    pub fn history(&self, user_id: &str) -> Result<Vec<HistoryRecord>> {
        let key = self.store.data_key(user_id)?;
        let sealed = self.store.read()?.all_in(&HISTORY, user_seqs(user_id))?;
        sealed
            .into_iter()
            .map(|((_, n), v)| {
                let plain = key.decrypt(user_id, &history_record_id(n), &v)?;
                Ok(serde_json::from_slice(&plain)?)
            })
            .collect()
    }

    /// Entries archived for a user (for reports and tests).
    /// One of the user's archived chunks, by its sequence number.
    pub fn entry(&self, user_id: &str, seq: u64) -> Result<Option<Entry>> {
        let key = self.store.data_key(user_id)?;
        let sealed = self.store.read()?.get(&ENTRIES, (user_id, seq))?;
        sealed
            .map(|sealed| Entry::open(&key, user_id, seq, &sealed))
            .transpose()
    }

    pub fn entry_count(&self, user_id: &str) -> Result<u64> {
        entries::count_entries(&self.store.read()?, user_id)
    }

    /// Memory used by a user's loaded index, if loaded.
    pub fn index_memory_bytes(&self, user_id: &str) -> Option<usize> {
        let slot = self.loaded_slot(user_id)?;
        let guard = slot.index.lock().expect("index lock");
        guard.as_ref().map(UserIndex::memory_bytes)
    }

    /// Drops a user's loaded index from memory (benchmarks measure loading).
    pub fn unload(&self, user_id: &str) {
        self.loaded.lock().expect("loaded indexes").remove(user_id);
    }

    /// Loads a user's index now (benchmarks measure it).
    pub async fn preload(&self, user_id: &str) -> Result<()> {
        let slot = self.slot(user_id);
        let _indexing = slot.indexing.lock().await;
        self.load(user_id, &slot).await
    }

    /// Indexes a user's pending entries now and stores the index.
    pub async fn index_now(&self, user_id: &str) -> Result<()> {
        let slot = self.slot(user_id);
        let _indexing = slot.indexing.lock().await;
        self.load(user_id, &slot).await?;
        self.index_pending(user_id, &slot).await?;
        self.save(user_id, &slot)
    }
}

/// Forgets the least recently used index that has nothing unsaved and that
/// no task is using.
fn evict_one(loaded: &mut HashMap<String, Arc<Slot>>) {
    let victim = loaded
        .iter()
        .filter(|(_, slot)| Arc::strong_count(slot) == 1)
        .filter(|(_, slot)| {
            slot.index
                .lock()
                .expect("index lock")
                .as_ref()
                .is_none_or(|i| i.unsaved == 0)
        })
        .min_by_key(|(_, slot)| *slot.last_used.lock().expect("slot use"))
        .map(|(user, _)| user.clone());
    if let Some(user) = victim {
        loaded.remove(&user);
    }
}

/// Whether `at` is within `[from, to]` (inclusive; `None` is open).
fn within(at: i64, from: Option<i64>, to: Option<i64>) -> bool {
    from.is_none_or(|from| at >= from) && to.is_none_or(|to| at <= to)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests;
