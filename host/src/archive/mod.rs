//! The encrypted archive of earlier queries and what they found, and the
//! search over it (`POST /v1/deep_search`).
//!
//! Writing is cheap and happens before a query's response is sent
//! (`recording.rs`): each returned chunk becomes a sealed entry, the query
//! a sealed history record, in one commit shared by the queries answered
//! at that moment. A chunk the live ranking embedded comes with its
//! vector: it is stored in the entry and added to the user's in-memory
//! usearch index at once, so nothing is embedded twice. The others (ranked
//! by keywords because the model did not reach them in time) are queued:
//! the indexer embeds them in the background, behind live work on the
//! shared embedding scheduler. The index is written back sealed from time
//! to time and at shutdown.
//!
//! A deep search never waits for the indexer (`deep_search.rs`): it
//! answers from the index plus a scan of the user's entries still queued,
//! and returns each chunk once, however many queries found it (the vector
//! index, `rank::vector_index`, tells chunks apart).
//!
//! Entries are the truth; the stored index is a cache of them: one missing,
//! stale, built by another embedder or stored before it told chunks apart
//! is rebuilt from the entries.

mod deep_search;
mod entries;
mod indexer;
mod recording;
mod stored;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Result;

use self::entries::{ENTRIES, HISTORY, history_record_id};
pub use self::entries::{Entry, HistoryRecord, SPACES, Source};
pub use self::entries::{ToolError, ToolOutcome};
pub use self::recording::{ArchivedChunk, OwnedChunk, Recording};
use crate::rank::Scheduler;
pub use crate::rank::vector_index::{Chunk, Hit, UserIndex, chunk_of};
use quarry_store::Store;
use quarry_store::records::{Records, user_seqs};

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
/// Loaded indexes kept in memory at most, however small (the least
/// recently used go first; see [`Archive::fit_budget`]).
const MAX_LOADED: usize = 256;
/// Memory the loaded indexes may use together, unless the operator says
/// otherwise (`[archive] index_memory_mib`).
const DEFAULT_INDEX_BUDGET: usize = 1 << 30;

/// An archived chunk that matched a deep search: its newest entry within
/// the window, with the best similarity of its entries there.
#[derive(Debug, Clone)]
pub struct Found {
    pub entry: Entry,
    pub similarity: f32,
}

/// What the archive holds in memory (for `/metrics`: an operator sees
/// which part of the process's memory grows).
#[derive(Debug, Clone, Copy, Default)]
pub struct MemoryUse {
    pub loaded_indexes: usize,
    /// The loaded indexes' graphs, vectors and tables.
    pub index_bytes: usize,
    /// Vectors the embedding cache keeps.
    pub cached_vectors: usize,
}

pub struct DeepSearchOutcome {
    pub found: Vec<Found>,
    /// Distinct chunks archived within the request's date window.
    pub total_matches: u64,
}

pub struct Archive {
    store: Arc<Store>,
    /// The shared embedding queue: the archive's backlog runs at
    /// background priority, behind live queries.
    embedder: Scheduler,
    loaded: Mutex<HashMap<String, Arc<Slot>>>,
    /// Bytes the loaded indexes may use together.
    index_budget: usize,
    wake: tokio::sync::Notify,
    /// Answered queries waiting for the next commit, and the turn to make
    /// it (`recording.rs`).
    waiting: Mutex<Vec<recording::Waiting>>,
    commit_turn: tokio::sync::Mutex<()>,
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
    /// The index's memory when it was last measured (while a task holds
    /// the index, it is not measured again).
    bytes: AtomicUsize,
}

impl Slot {
    /// The loaded index's memory: measured when no task holds it, else as
    /// last measured (a budget check never waits for a load or a save).
    fn memory_bytes(&self) -> usize {
        match self.index.try_lock() {
            Ok(index) => {
                let bytes = index.as_ref().map_or(0, UserIndex::memory_bytes);
                self.bytes.store(bytes, Ordering::Relaxed);
                bytes
            }
            Err(_) => self.bytes.load(Ordering::Relaxed),
        }
    }

    fn has_unsaved(&self) -> bool {
        (self.index.lock().expect("index lock"))
            .as_ref()
            .is_some_and(|index| index.unsaved > 0)
    }
}

impl Archive {
    pub fn open(store: Arc<Store>, embedder: Scheduler) -> Result<Archive> {
        Ok(Archive {
            store,
            embedder,
            loaded: Mutex::default(),
            index_budget: DEFAULT_INDEX_BUDGET,
            wake: tokio::sync::Notify::new(),
            waiting: Mutex::default(),
            commit_turn: tokio::sync::Mutex::new(()),
        })
    }

    /// Bounds the memory of the loaded indexes together to `bytes`.
    pub fn with_index_budget(mut self, bytes: usize) -> Archive {
        self.index_budget = bytes;
        self
    }

    pub fn embedder_name(&self) -> &str {
        self.embedder.model_name()
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
        let slot = loaded.entry(user_id.to_string()).or_default().clone();
        *slot.last_used.lock().expect("slot use") = Some(std::time::Instant::now());
        self.fit_budget(&mut loaded);
        slot
    }

    /// Unloads the least recently used indexes that no task is using (those
    /// with every vector stored first) until the loaded ones fit the memory
    /// budget and number at most [`MAX_LOADED`]. Nothing is lost: an
    /// index's entries hold every vector, and the next load adds those the
    /// stored copy lacks.
    fn fit_budget(&self, loaded: &mut HashMap<String, Arc<Slot>>) {
        let mut bytes: usize = loaded.values().map(|slot| slot.memory_bytes()).sum();
        while bytes > self.index_budget || loaded.len() > MAX_LOADED {
            // A task that holds a slot got it from the map, under its lock.
            let idle = loaded
                .iter()
                .filter(|(_, slot)| Arc::strong_count(slot) == 1);
            let victim = idle
                .min_by_key(|(_, slot)| {
                    (
                        slot.has_unsaved(),
                        *slot.last_used.lock().expect("slot use"),
                    )
                })
                .map(|(user, _)| user.clone());
            let Some(user) = victim else {
                return;
            };
            if let Some(slot) = loaded.remove(&user) {
                bytes = bytes.saturating_sub(slot.memory_bytes());
            }
        }
    }

    /// Brings the loaded indexes within the budget (they grow as queries
    /// are archived, between the requests that load them).
    pub(super) fn unload_over_budget(&self) {
        let mut loaded = self.loaded.lock().expect("loaded indexes");
        self.fit_budget(&mut loaded);
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
    /// deletion's commit: see [`SPACES`]).
    pub fn forget(&self, user_id: &str) {
        self.loaded.lock().expect("loaded indexes").remove(user_id);
        // None of the user's passages outlive them, even as cached vectors.
        self.embedder.forget(user_id);
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

    pub fn memory_use(&self) -> MemoryUse {
        let slots: Vec<Arc<Slot>> = (self.loaded.lock().expect("loaded indexes"))
            .values()
            .cloned()
            .collect();
        let index_bytes = slots.iter().map(|slot| slot.memory_bytes()).sum();
        MemoryUse {
            loaded_indexes: slots.len(),
            index_bytes,
            cached_vectors: self.embedder.cached_vectors(),
        }
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
