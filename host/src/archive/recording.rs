//! Writing answered queries into the archive, before their responses go
//! out: each returned chunk becomes a sealed entry, the query a sealed
//! history record.
//!
//! Queries answered at the same moment are archived in one transaction
//! (group commit): the first to arrive commits what is waiting, the others
//! wait for that commit or take the next turn. Every query still learns
//! its own outcome, and one user's refusal (a deletion under way) fails
//! only that user's record. One commit serves many queries: one wait for
//! the store's single writer (redb's, or the advisory lock replicas share
//! on PostgreSQL) and one flush to disk, instead of one each.

use std::ops::Range;
use std::sync::Arc;

use anyhow::{Result, anyhow, bail};
use tokio::sync::oneshot;

use super::entries::ToolOutcome;
use super::entries::{ENTRIES, HISTORY, PENDING, history_record_id, read_head, write_head};
use super::{Archive, Chunk, Entry, HistoryRecord, Slot, Source, now_ms};
use crate::rank::vector_index::chunk_of;
use quarry_store::Unavailable;
use quarry_store::keys::DataKey;
use quarry_store::records::Writer;

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

impl<'a> ArchivedChunk<'a> {
    /// A chunk known by its text alone: no vector from the ranking (it is
    /// embedded when indexed) and no source to show it again by.
    pub fn text_only(connector: &'a str, content: &'a str) -> Self {
        ArchivedChunk {
            connector,
            content,
            vector: None,
            source: None,
        }
    }
}

/// An answered query to archive, owned (it waits for a commit).
pub struct Recording {
    pub user_id: String,
    pub query_id: String,
    pub query: String,
    pub chunks: Vec<OwnedChunk>,
    /// What each tool asked did (the history record keeps it).
    pub tools: Vec<ToolOutcome>,
}

/// What a history record says of a query besides its chunks.
struct Asked<'a> {
    query_id: &'a str,
    query: &'a str,
    tools: &'a [ToolOutcome],
}

/// [`ArchivedChunk`], owned.
pub struct OwnedChunk {
    pub connector: String,
    pub content: String,
    pub vector: Option<(String, Vec<f32>)>,
    pub source: Option<Source>,
}

impl Waiting {
    fn answer(self, outcome: Result<Written>) {
        let _ = self.outcome.send((self.recording, outcome));
    }
}

impl OwnedChunk {
    fn borrowed(&self) -> ArchivedChunk<'_> {
        ArchivedChunk {
            connector: &self.connector,
            content: &self.content,
            vector: self
                .vector
                .as_ref()
                .map(|(model, v)| (model.as_str(), v.as_slice())),
            source: self.source.clone(),
        }
    }
}

/// A recording waiting for a commit, and where it goes back with what the
/// commit wrote of it.
pub(super) struct Waiting {
    recording: Recording,
    outcome: oneshot::Sender<(Recording, Result<Written>)>,
}

/// What one recording wrote, for the loaded index after the commit.
pub(super) struct Written {
    first_seq: u64,
    queried_at_ms: i64,
}

impl Archive {
    /// Archives one answered query, in a commit shared with the others
    /// waiting at this moment. Returns the sequence numbers of the entries
    /// written (the chunks' order).
    pub async fn record_grouped(self: &Arc<Self>, recording: Recording) -> Result<Range<u64>> {
        let (outcome, mut mine) = oneshot::channel();
        self.waiting
            .lock()
            .expect("archive queue")
            .push(Waiting { recording, outcome });
        let (recording, written) = {
            let _turn = self.commit_turn.lock().await;
            // The commit before this turn may have carried it already.
            match mine.try_recv() {
                Ok(done) => done,
                Err(_) => {
                    let batch = std::mem::take(&mut *self.waiting.lock().expect("archive queue"));
                    let archive = self.clone();
                    tokio::task::spawn_blocking(move || archive.record_batch(batch)).await?;
                    mine.await?
                }
            }
        };
        // The index takes the entries after the turn, so that the next
        // commit does not wait for it.
        let written = written?;
        let archive = self.clone();
        tokio::task::spawn_blocking(move || {
            let chunks: Vec<ArchivedChunk<'_>> =
                recording.chunks.iter().map(OwnedChunk::borrowed).collect();
            archive.after_commit(&recording.user_id, &written, &chunks)
        })
        .await?
    }

    /// Archives one answered query in a commit of its own. Blocking (it
    /// waits for the commit): call it off the async workers.
    pub fn record(
        &self,
        user_id: &str,
        query_id: &str,
        query: &str,
        chunks: &[ArchivedChunk<'_>],
    ) -> Result<Range<u64>> {
        let key = self.store.data_key(user_id)?;
        let mut txn = self.store.write()?;
        if !self.store.has_data_key_in(&txn, user_id)? {
            bail!("user {user_id} is being deleted");
        }
        let asked = Asked {
            query_id,
            query,
            tools: &[],
        };
        let written = self.write(&mut txn, &key, user_id, &asked, chunks)?;
        txn.commit()?;
        self.after_commit(user_id, &written, chunks)
    }

    /// One transaction for the whole batch; each waiter gets its outcome.
    fn record_batch(&self, batch: Vec<Waiting>) {
        // The keys are read before the writer's turn, which stays short.
        let mut keyed = Vec::with_capacity(batch.len());
        for waiting in batch {
            match self.store.data_key(&waiting.recording.user_id) {
                Ok(key) => keyed.push((waiting, key)),
                Err(error) => waiting.answer(Err(error)),
            }
        }
        let committed = (|| -> Result<Vec<Option<Written>>> {
            let mut txn = self.store.write()?;
            let written = self.write_batch(&mut txn, &keyed)?;
            txn.commit()?;
            Ok(written)
        })();
        match committed {
            Ok(written) => {
                for ((waiting, _), written) in keyed.into_iter().zip(written) {
                    let user = &waiting.recording.user_id;
                    let deleted = || anyhow!("user {user} is being deleted");
                    let outcome = written.ok_or_else(deleted);
                    waiting.answer(outcome);
                }
            }
            Err(error) => {
                // Nothing of the batch was written: each waiter is told,
                // as a 503 when the store is away.
                let away = error.chain().any(|c| c.is::<Unavailable>());
                for (waiting, _) in keyed {
                    let message = format!("archiving: {error:#}");
                    let error = match away {
                        true => anyhow::Error::new(Unavailable(message)),
                        false => anyhow!(message),
                    };
                    waiting.answer(Err(error));
                }
            }
        }
    }

    /// Writes each recording of the batch whose user still has a data key
    /// (`None` for the others: a deletion is under way).
    fn write_batch(
        &self,
        txn: &mut Writer,
        keyed: &[(Waiting, Arc<DataKey>)],
    ) -> Result<Vec<Option<Written>>> {
        let mut written = Vec::with_capacity(keyed.len());
        // Whether each user still has a data key, asked once per batch.
        let mut has_key: std::collections::HashMap<&str, bool> = std::collections::HashMap::new();
        for (waiting, key) in keyed {
            let r = &waiting.recording;
            let user = r.user_id.as_str();
            let present = match has_key.get(user) {
                Some(present) => *present,
                None => *has_key
                    .entry(user)
                    .or_insert(self.store.has_data_key_in(txn, user)?),
            };
            if !present {
                written.push(None);
                continue;
            }
            let chunks: Vec<ArchivedChunk<'_>> =
                r.chunks.iter().map(OwnedChunk::borrowed).collect();
            let asked = Asked {
                query_id: &r.query_id,
                query: &r.query,
                tools: &r.tools,
            };
            let done = self.write(txn, key, &r.user_id, &asked, &chunks)?;
            written.push(Some(done));
        }
        Ok(written)
    }

    /// Writes one query's entries, history record and head in `txn`.
    fn write(
        &self,
        txn: &mut Writer,
        key: &DataKey,
        user_id: &str,
        asked: &Asked<'_>,
        chunks: &[ArchivedChunk<'_>],
    ) -> Result<Written> {
        // The head is read in the transaction: a batch may hold two of
        // the user's queries, and each writer sees its own writes.
        let mut head = read_head(txn, user_id)?;
        // Time never goes back within a user's archive, so that sequence
        // order is time order (a clock step back must not break ranges).
        let queried_at_ms = now_ms().max(head.last_queried_at_ms);
        let first_seq = head.next_seq;
        for (offset, chunk) in chunks.iter().enumerate() {
            let seq = first_seq + offset as u64;
            let vector = self.usable(chunk.vector);
            let entry = Entry {
                query_id: asked.query_id.to_string(),
                query: asked.query.to_string(),
                connector: chunk.connector.to_string(),
                content: chunk.content.to_string(),
                queried_at_ms,
                vector: vector.map(|v| (self.embedder_name().to_string(), v.to_vec())),
                source: chunk.source.clone(),
            };
            txn.put(&ENTRIES, (user_id, seq), &entry.seal(key, user_id, seq)?)?;
            if vector.is_none() {
                txn.put(&PENDING, (user_id, seq), ())?;
            }
        }
        let mut connectors: Vec<String> = chunks.iter().map(|c| c.connector.to_string()).collect();
        connectors.sort();
        connectors.dedup();
        let history = HistoryRecord {
            query_id: asked.query_id.to_string(),
            query: asked.query.to_string(),
            queried_at_ms,
            first_seq,
            chunks: chunks.len() as u64,
            connectors,
            tools: asked.tools.to_vec(),
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
        write_head(txn, user_id, &head)?;
        Ok(Written {
            first_seq,
            queried_at_ms,
        })
    }

    /// After the commit: a loaded index takes the new entries now (one not
    /// loaded catches up with the entries when it is). The indexer is woken
    /// for the chunks without a vector, and to store the index when enough
    /// vectors came in since it last did: that costs the whole index, and
    /// no query waits for it (the entries hold every vector meanwhile).
    fn after_commit(
        &self,
        user_id: &str,
        written: &Written,
        chunks: &[ArchivedChunk<'_>],
    ) -> Result<Range<u64>> {
        let vectors: Vec<Option<&[f32]>> = chunks.iter().map(|c| self.usable(c.vector)).collect();
        let mut save_due = false;
        if let Some(slot) = self.loaded_slot(user_id) {
            let identities: Vec<Chunk> = chunks
                .iter()
                .map(|c| chunk_of(c.connector, c.content))
                .collect();
            self.add_recorded(&slot, written, &identities, &vectors);
            save_due = Self::save_due(&slot);
        }
        if save_due || vectors.iter().any(Option::is_none) {
            self.wake.notify_one();
        }
        Ok(written.first_seq..written.first_seq + chunks.len() as u64)
    }

    /// A vector the ranking computed, if it is in this archive's space.
    fn usable<'a>(&self, vector: Option<(&str, &'a [f32])>) -> Option<&'a [f32]> {
        vector
            .filter(|(name, v)| {
                *name == self.embedder_name() && v.len() == self.embedder.dimensions()
            })
            .map(|(_, v)| v)
    }

    /// Hands a loaded index the entries one recording wrote: their chunks
    /// (`identities`) and the vectors the ranking made.
    fn add_recorded(
        &self,
        slot: &Slot,
        written: &Written,
        identities: &[Chunk],
        vectors: &[Option<&[f32]>],
    ) {
        let mut guard = slot.index.lock().expect("index lock");
        let Some(index) = guard.as_mut() else {
            return;
        };
        for (offset, (chunk, vector)) in identities.iter().zip(vectors).enumerate() {
            let seq = written.first_seq + offset as u64;
            index.set_entry(seq, written.queried_at_ms, *chunk);
            if let Some(vector) = vector
                && let Err(error) = index.add(seq, vector)
            {
                // The entry holds the vector: the next load adds it.
                tracing::warn!(error = format!("{error:#}"), "adding to the archive index");
            }
        }
    }
}
