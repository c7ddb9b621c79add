//! The embedded backend: one redb database file, one table per space,
//! byte keys and values.

use std::path::Path;

use anyhow::{Context, Result};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition, TableError, TableHandle};

use super::records::{Backend, Flow, RawRange, RawRead, RawWrite, Visitor};

fn table(space: &str) -> TableDefinition<'_, &'static [u8], &'static [u8]> {
    TableDefinition::new(space)
}

pub struct Redb {
    db: Database,
}

impl Redb {
    pub fn open(path: &Path) -> Result<Redb> {
        let db = Database::create(path).with_context(|| {
            format!(
                "opening {} (is another quarry process using this data folder?)",
                path.display()
            )
        })?;
        super::legacy::upgrade(&db)?;
        Ok(Redb { db })
    }
}

impl Backend for Redb {
    fn read(&self) -> Result<Box<dyn RawRead>> {
        Ok(Box::new(ReadTxn(self.db.begin_read()?)))
    }

    fn write(&self) -> Result<Box<dyn RawWrite>> {
        Ok(Box::new(WriteTxn(self.db.begin_write()?)))
    }

    fn spaces(&self) -> Result<Vec<String>> {
        let txn = self.db.begin_read()?;
        Ok(txn.list_tables()?.map(|t| t.name().to_string()).collect())
    }

    fn exclusive(&self) -> bool {
        // redb locks its file: no other process has it open.
        true
    }
}

struct ReadTxn(redb::ReadTransaction);

impl RawRead for ReadTxn {
    fn get(&self, space: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        match self.0.open_table(table(space)) {
            Ok(t) => Ok(t.get(key)?.map(|v| v.value().to_vec())),
            // A space nothing was ever written to is empty.
            Err(TableError::TableDoesNotExist(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    fn scan(&self, space: &str, range: RawRange<'_>, visit: &mut Visitor<'_>) -> Result<()> {
        match self.0.open_table(table(space)) {
            Ok(t) => visit_range(&t, range, visit),
            Err(TableError::TableDoesNotExist(_)) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

struct WriteTxn(redb::WriteTransaction);

impl RawRead for WriteTxn {
    fn get(&self, space: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let t = self.0.open_table(table(space))?;
        Ok(t.get(key)?.map(|v| v.value().to_vec()))
    }

    fn scan(&self, space: &str, range: RawRange<'_>, visit: &mut Visitor<'_>) -> Result<()> {
        visit_range(&self.0.open_table(table(space))?, range, visit)
    }
}

impl RawWrite for WriteTxn {
    fn put(&mut self, space: &str, key: &[u8], value: &[u8]) -> Result<()> {
        self.0.open_table(table(space))?.insert(key, value)?;
        Ok(())
    }

    fn remove(&mut self, space: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut t = self.0.open_table(table(space))?;
        let old = t.remove(key)?.map(|v| v.value().to_vec());
        Ok(old)
    }

    fn retain(
        &mut self,
        space: &str,
        range: RawRange<'_>,
        keep: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<u64> {
        let mut removed = 0;
        self.0
            .open_table(table(space))?
            .retain_in::<&[u8], _>(range, |k, v| {
                let kept = keep(k, v);
                removed += u64::from(!kept);
                kept
            })?;
        Ok(removed)
    }

    fn commit(self: Box<Self>) -> Result<()> {
        self.0.commit()?;
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
