//! The embedded backend: one redb database file, one table per space,
//! byte keys and values.
//!
//! redb never overwrites a freed page in place: a record removed (a deleted
//! user's profile, email, wrapped data key) stays readable in the file
//! until its page happens to be reused. A purge (`Backend::purge_removed`)
//! is how removed records really leave the disk: the live records are
//! copied into a new file, which then replaces the old one.

use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use anyhow::{Context, Result};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition, TableError, TableHandle};

use super::records::{Backend, Flow, Keep, RawRange, RawRead, RawWrite, Records, Visitor, Writer};

fn table(space: &str) -> TableDefinition<'_, &'static [u8], &'static [u8]> {
    TableDefinition::new(space)
}

pub struct Redb {
    path: PathBuf,
    /// The page cache's bound, in bytes: a file that grows (the archive
    /// does) must not take the process's memory with it.
    cache_bytes: usize,
    /// The open file; a purge swaps in a new one. Transactions keep the
    /// database they began on alive.
    db: Mutex<Arc<Database>>,
}

impl Redb {
    pub fn open(path: &Path, cache_bytes: usize) -> Result<Redb> {
        // A purge that a crash interrupted left its unfinished copy.
        let _ = std::fs::remove_file(rewrite_path(path));
        let db = create(path, cache_bytes).with_context(|| {
            format!(
                "opening {} (is another quarry process using this data folder?)",
                path.display()
            )
        })?;
        super::legacy::upgrade(&db)?;
        Ok(Redb {
            path: path.to_path_buf(),
            cache_bytes,
            db: Mutex::new(Arc::new(db)),
        })
    }

    fn current(&self) -> MutexGuard<'_, Arc<Database>> {
        self.db.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A write transaction on the current file. A writer that waited for
    /// the writer lock while a rewrite replaced the file must not write to
    /// the old one: it starts again on the new.
    fn begin_write(&self) -> Result<(Arc<Database>, redb::WriteTransaction)> {
        loop {
            let db = self.current().clone();
            let txn = db.begin_write()?;
            if Arc::ptr_eq(&db, &self.current()) {
                return Ok((db, txn));
            }
        }
    }

    /// Puts a copy of the records `txn` sees (every space of `spaces`) in
    /// the file's place, so that nothing removed survives in the data
    /// folder. `txn` holds the writer lock on the old file meanwhile, so
    /// no commit is lost; readers go on with their snapshots of the old
    /// one. A crash at any moment leaves the old file or the new one in
    /// place, each whole.
    fn replace_with_copy(&self, txn: &Writer, spaces: &[String]) -> Result<()> {
        let temp = rewrite_path(&self.path);
        let _ = std::fs::remove_file(&temp);
        let fresh = create(&temp, self.cache_bytes)
            .with_context(|| format!("creating {}", temp.display()))?;
        copy_all(txn, spaces, &fresh)?;
        std::fs::rename(&temp, &self.path)
            .with_context(|| format!("replacing {}", self.path.display()))?;
        sync_parent(&self.path)?;
        *self.current() = Arc::new(fresh);
        Ok(())
    }
}

/// Opens (or creates) the file at `path` with a page cache of at most
/// `cache_bytes` (redb's own default is 1 GiB).
fn create(path: &Path, cache_bytes: usize) -> Result<Database> {
    super::private::file(path)?;
    Ok(Database::builder()
        .set_cache_size(cache_bytes)
        .create(path)?)
}

/// Where a purge builds the new file, beside the old.
fn rewrite_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".rewrite");
    path.with_file_name(name)
}

/// Every record of `spaces` that `from` sees into `to`, in one commit.
fn copy_all(from: &Writer, spaces: &[String], to: &Database) -> Result<()> {
    let out = to.begin_write()?;
    for space in spaces {
        let mut target = out.open_table(table(space))?;
        let everything = (Bound::Unbounded, Bound::Unbounded);
        from.raw().scan(space, everything, &mut |key, value| {
            target.insert(key, value)?;
            Ok(Flow::Continue)
        })?;
    }
    out.commit()?;
    Ok(())
}

/// Makes a rename in `path`'s folder durable.
fn sync_parent(path: &Path) -> Result<()> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = std::fs::File::open(parent.unwrap_or(Path::new(".")))?;
    dir.sync_all()?;
    Ok(())
}

impl Backend for Redb {
    fn read(&self) -> Result<Box<dyn RawRead>> {
        let db = self.current().clone();
        let txn = db.begin_read()?;
        Ok(Box::new(ReadTxn { txn, _open: db }))
    }

    fn write(&self) -> Result<Box<dyn RawWrite>> {
        let (db, txn) = self.begin_write()?;
        Ok(Box::new(WriteTxn { txn, _open: db }))
    }

    fn spaces(&self) -> Result<Vec<String>> {
        let txn = self.current().begin_read()?;
        Ok(txn.list_tables()?.map(|t| t.name().to_string()).collect())
    }

    fn exclusive(&self) -> bool {
        // redb locks its file: no other process has it open.
        true
    }

    /// The file is rewritten (see [`Redb::replace_with_copy`]): redb
    /// leaves freed pages as they were.
    fn purge_removed(&self, last: &mut dyn FnMut(&mut Writer) -> Result<bool>) -> Result<()> {
        let (db, txn) = self.begin_write()?;
        let spaces: Vec<String> = txn.list_tables()?.map(|t| t.name().to_string()).collect();
        let mut txn = Writer::new(Box::new(WriteTxn { txn, _open: db }));
        if !last(&mut txn)? {
            return Ok(());
        }
        self.replace_with_copy(&txn, &spaces)
        // `txn` ends uncommitted: writers that waited for the old file
        // find it replaced and begin again on the new one.
    }
}

/// A snapshot, and the database it was taken from (kept open for it).
struct ReadTxn {
    txn: redb::ReadTransaction,
    _open: Arc<Database>,
}

impl RawRead for ReadTxn {
    fn get(&self, space: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        match self.txn.open_table(table(space)) {
            Ok(t) => Ok(t.get(key)?.map(|v| v.value().to_vec())),
            // A space nothing was ever written to is empty.
            Err(TableError::TableDoesNotExist(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    fn scan(&self, space: &str, range: RawRange<'_>, visit: &mut Visitor<'_>) -> Result<()> {
        match self.txn.open_table(table(space)) {
            Ok(t) => visit_range(&t, range, visit),
            Err(TableError::TableDoesNotExist(_)) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// A write transaction, and the database it writes (kept open for it).
struct WriteTxn {
    txn: redb::WriteTransaction,
    _open: Arc<Database>,
}

impl RawRead for WriteTxn {
    fn get(&self, space: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let t = self.txn.open_table(table(space))?;
        Ok(t.get(key)?.map(|v| v.value().to_vec()))
    }

    fn scan(&self, space: &str, range: RawRange<'_>, visit: &mut Visitor<'_>) -> Result<()> {
        visit_range(&self.txn.open_table(table(space))?, range, visit)
    }
}

impl RawWrite for WriteTxn {
    fn put(&mut self, space: &str, key: &[u8], value: &[u8]) -> Result<()> {
        self.txn.open_table(table(space))?.insert(key, value)?;
        Ok(())
    }

    fn remove(&mut self, space: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut t = self.txn.open_table(table(space))?;
        let old = t.remove(key)?.map(|v| v.value().to_vec());
        Ok(old)
    }

    fn retain(&mut self, space: &str, range: RawRange<'_>, keep: &mut Keep<'_>) -> Result<u64> {
        let mut removed = 0;
        self.txn
            .open_table(table(space))?
            .retain_in::<&[u8], _>(range, |k, v| {
                let kept = keep(k, v);
                removed += u64::from(!kept);
                kept
            })?;
        Ok(removed)
    }

    fn commit(self: Box<Self>) -> Result<()> {
        self.txn.commit()?;
        Ok(())
    }
}

fn visit_range(
    t: &impl ReadableTable<&'static [u8], &'static [u8]>,
    range: RawRange<'_>,
    visit: &mut Visitor<'_>,
) -> Result<()> {
    for item in t.range::<&[u8]>(range)? {
        let (k, v) = item?;
        if visit(k.value(), v.value())? == Flow::Stop {
            break;
        }
    }
    Ok(())
}
