//! The stored index: the user's usearch index sealed in segments, loaded
//! (and caught up with the entries archived since), saved from time to
//! time and at shutdown. Entries are the truth: an index that is missing,
//! unreadable or made by another embedder is rebuilt from them.

use std::sync::Arc;

use anyhow::{Context, Result};

use super::entries::{ENTRIES, INDEX_SEGMENTS, PENDING, read_head, write_head};
use super::{Archive, Entry, SAVE_AFTER, SEGMENT_BYTES, Slot, UserIndex};
use quarry_store::Store;
use quarry_store::records::{Records, user_parts};

impl Archive {
    /// Makes sure the slot holds the user's index, current with the user's
    /// entries: the stored one if it was built by this embedder, else a new
    /// one; then caught up with entries archived or indexed since, here or
    /// by another replica (the user's head says whether any were: one read).
    pub(super) async fn load(&self, user_id: &str, slot: &Arc<Slot>) -> Result<()> {
        let _loading = slot.loading.lock().await;
        let loaded = slot.index.lock().expect("index lock").is_some();
        if loaded && !self.moved_on(user_id, slot)? {
            return Ok(());
        }
        let store = self.store.clone();
        let (name, dimensions) = (self.embedder_name().to_string(), self.embedder.dimensions());
        let (user, slot) = (user_id.to_string(), slot.clone());
        tokio::task::spawn_blocking(move || {
            let stored = match loaded {
                false => Some(stored_index(&store, &user, &name, dimensions)?),
                true => None,
            };
            // Caught up under the index lock: an entry recorded meanwhile
            // is either in this read or added by `record` once it is done.
            let mut guard = slot.index.lock().expect("index lock");
            if let Some(index) = stored {
                *guard = Some(index);
            }
            let index = guard.as_mut().context("the index was unloaded")?;
            let mark = catch_up_with(&store, &user, index)?;
            *slot.seen.lock().expect("seen lock") = Some(mark);
            anyhow::Ok(())
        })
        .await??;
        if !loaded {
            // This index is in use: others make room for it.
            self.unload_over_budget();
        }
        Ok(())
    }

    /// Whether the user's head moved since the loaded index caught up.
    fn moved_on(&self, user_id: &str, slot: &Slot) -> Result<bool> {
        let head = read_head(&self.store.read()?, user_id)?;
        Ok(*slot.seen.lock().expect("seen lock") != Some(head.mark()))
    }

    pub(super) fn save_if_due(&self, user_id: &str, slot: &Slot) -> Result<()> {
        if Self::save_due(slot) {
            self.save(user_id, slot)?;
        }
        Ok(())
    }

    /// Whether enough vectors came into a loaded index since it was stored.
    pub(super) fn save_due(slot: &Slot) -> bool {
        slot.index
            .lock()
            .expect("index lock")
            .as_ref()
            .is_some_and(|index| index.unsaved >= SAVE_AFTER.min(index.len().div_ceil(10)).max(1))
    }

    /// Seals the index and stores it in segments, replacing the previous
    /// generation in the same commit.
    pub(super) fn save(&self, user_id: &str, slot: &Slot) -> Result<()> {
        let bytes = {
            let mut guard = slot.index.lock().expect("index lock");
            let Some(index) = guard.as_mut() else {
                return Ok(());
            };
            index.unsaved = 0;
            index.serialize()?
        };
        let key = self.store.data_key(user_id)?;
        let mut txn = self.store.write()?;
        if !self.store.has_data_key_in(&txn, user_id)? {
            return Ok(());
        }
        let mut head = read_head(&txn, user_id)?;
        let generation = head.index_generation + 1;
        txn.remove_in(&INDEX_SEGMENTS, user_parts(user_id))?;
        for (n, piece) in bytes.chunks(SEGMENT_BYTES).enumerate() {
            let record_id = segment_record_id(generation, n as u32);
            txn.put(
                &INDEX_SEGMENTS,
                (user_id, n as u32),
                &key.encrypt(user_id, &record_id, piece),
            )?;
        }
        head.index_generation = generation;
        head.index_segments = bytes.chunks(SEGMENT_BYTES).count() as u32;
        write_head(&mut txn, user_id, &head)?;
        txn.commit()?;
        Ok(())
    }
}

pub(super) fn segment_record_id(generation: u64, n: u32) -> String {
    format!("archive-index/{generation}/{n}")
}

/// The stored index, if there is one and it fits the embedder; else a new
/// one.
fn stored_index(
    store: &Store,
    user_id: &str,
    embedder: &str,
    dimensions: usize,
) -> Result<UserIndex> {
    let key = store.data_key(user_id)?;
    let txn = store.read()?;
    let head = read_head(&txn, user_id)?;
    if head.index_segments == 0 {
        return UserIndex::new(embedder, dimensions);
    }
    let mut bytes = Vec::new();
    for n in 0..head.index_segments {
        let sealed = txn
            .get(&INDEX_SEGMENTS, (user_id, n))?
            .with_context(|| format!("index segment {n} is missing"))?;
        bytes.extend(key.decrypt(
            user_id,
            &segment_record_id(head.index_generation, n),
            &sealed,
        )?);
    }
    match UserIndex::deserialize(&bytes) {
        Ok(Some(index)) if index.embedder() == embedder => Ok(index),
        // Another embedder's, or stored before chunks were kept: rebuilt
        // from the entries (their vectors are reused when this embedder
        // made them).
        Ok(_) => UserIndex::new(embedder, dimensions),
        Err(error) => {
            tracing::warn!(
                user = user_id,
                error = format!("{error:#}"),
                "stored index unreadable; rebuilding"
            );
            UserIndex::new(embedder, dimensions)
        }
    }
}

/// Brings `index` up to date with the user's entries; entries whose vector
/// another embedder made are queued again. Returns the head's mark it
/// caught up with.
fn catch_up_with(store: &Store, user_id: &str, index: &mut UserIndex) -> Result<(u64, u64)> {
    let key = store.data_key(user_id)?;
    let txn = store.read()?;
    let head = read_head(&txn, user_id)?;
    let stale = catch_up(&txn, &key, user_id, &head, index)?;
    drop(txn);
    if !stale.is_empty() {
        requeue(store, user_id, &stale)?;
    }
    Ok(head.mark())
}

/// Adds entries the index does not hold yet: those archived after it was
/// stored, those indexed after it was stored, and those it had not seen
/// when it was (a gap a later entry left). Entries without a usable
/// vector are left to the indexer (they are queued, or queued again when
/// another embedder made their vector: those are returned).
fn catch_up(
    txn: &impl Records,
    key: &quarry_store::keys::DataKey,
    user_id: &str,
    head: &super::entries::Head,
    index: &mut UserIndex,
) -> Result<Vec<u64>> {
    let mut stale = Vec::new();
    for seq in 0..head.next_seq {
        let queued = || txn.contains(&PENDING, (user_id, seq));
        if index.seen(seq) && (index.contains(seq) || queued()?) {
            continue;
        }
        let Some(sealed) = txn.get(&ENTRIES, (user_id, seq))? else {
            continue;
        };
        let entry = Entry::open(key, user_id, seq, &sealed)?;
        index.set_entry(seq, entry.queried_at_ms, entry.chunk());
        match &entry.vector {
            Some((name, vector)) if name == index.embedder() => index.add(seq, vector)?,
            _ if queued()? => {}
            _ => stale.push(seq),
        }
    }
    Ok(stale)
}

/// Entries whose vectors another embedder made go back on the queue.
fn requeue(store: &Store, user_id: &str, seqs: &[u64]) -> Result<()> {
    tracing::info!(
        user = user_id,
        entries = seqs.len(),
        "re-embedding archive entries made by another embedder"
    );
    let mut txn = store.write()?;
    if store.has_data_key_in(&txn, user_id)? {
        for seq in seqs {
            txn.put(&PENDING, (user_id, *seq), ())?;
        }
    }
    txn.commit()
}
