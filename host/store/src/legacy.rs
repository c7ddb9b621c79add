//! Data folders written before the storage boundary kept typed redb tables
//! (string keys, tuple keys, counters). Opening such a file converts every
//! table to the byte keys and values of `records`, in one transaction, so
//! that nothing an operator stored is lost in the upgrade.

use anyhow::Result;
use redb::{Database, Key, ReadableTable, TableDefinition, TableError, Value, WriteTransaction};

use super::records::{KeyKind, TextPart, TextSeq, TimeText};

type Rows = Vec<(Vec<u8>, Vec<u8>)>;

pub(super) fn upgrade(db: &Database) -> Result<()> {
    let txn = db.begin_write()?;
    let names: Vec<String> = txn
        .list_tables()?
        .map(|t| redb::TableHandle::name(&t).to_string())
        .collect();
    let mut upgraded = Vec::new();
    for name in names {
        let current: TableDefinition<&[u8], &[u8]> = TableDefinition::new(&name);
        match txn.open_table(current) {
            Ok(_) => continue,
            Err(TableError::TableTypeMismatch { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        let rows = legacy_rows(&txn, &name)?;
        txn.delete_table(current)?;
        let mut table = txn.open_table(current)?;
        for (key, value) in &rows {
            table.insert(key.as_slice(), value.as_slice())?;
        }
        upgraded.push(name);
    }
    txn.commit()?;
    if !upgraded.is_empty() {
        tracing::info!(tables = ?upgraded, "upgraded the data folder's tables to byte records");
    }
    Ok(())
}

/// The rows of a table of an older shape, in today's encoding.
fn legacy_rows(txn: &WriteTransaction, name: &str) -> Result<Rows> {
    macro_rules! try_shape {
        ($k:ty, $v:ty, $key:expr, $value:expr) => {
            if let Some(rows) = rows_of::<$k, $v>(txn, name, $key, $value)? {
                return Ok(rows);
            }
        };
    }
    try_shape!(&str, &[u8], |k| k.as_bytes().to_vec(), |v| v.to_vec());
    try_shape!(&str, &str, |k| k.as_bytes().to_vec(), |v| v
        .as_bytes()
        .to_vec());
    try_shape!(&str, u64, |k| k.as_bytes().to_vec(), |v| v
        .to_le_bytes()
        .to_vec());
    try_shape!(&str, (), |k| k.as_bytes().to_vec(), |()| Vec::new());
    try_shape!((&str, u64), &[u8], encode::<TextSeq>, |v| v.to_vec());
    try_shape!((&str, u64), (), encode::<TextSeq>, |()| Vec::new());
    try_shape!((&str, u32), &[u8], encode::<TextPart>, |v| v.to_vec());
    try_shape!((i64, &str), (), encode::<TimeText>, |()| Vec::new());
    anyhow::bail!("the table {name:?} has a shape this version of quarry does not know")
}

fn encode<K: KeyKind>(key: K::Arg<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    K::encode(key, &mut out);
    out
}

/// Every row of `name` if it has the shape `(K, V)`; `None` if not.
fn rows_of<K: Key + 'static, V: Value + 'static>(
    txn: &WriteTransaction,
    name: &str,
    key: impl for<'a> Fn(K::SelfType<'a>) -> Vec<u8>,
    value: impl for<'a> Fn(V::SelfType<'a>) -> Vec<u8>,
) -> Result<Option<Rows>> {
    let definition: TableDefinition<K, V> = TableDefinition::new(name);
    let table = match txn.open_table(definition) {
        Ok(table) => table,
        Err(TableError::TableTypeMismatch { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let mut rows = Vec::new();
    for item in table.iter()? {
        let (k, v) = item?;
        rows.push((key(k.value()), value(v.value())));
    }
    Ok(Some(rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{Bytes, Count, Records, Space, Text, Unit};

    #[test]
    fn typed_tables_of_older_versions_become_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quarry.redb");
        {
            let db = Database::create(&path).unwrap();
            let txn = db.begin_write().unwrap();
            let counters: TableDefinition<&str, u64> = TableDefinition::new("day_counters");
            txn.open_table(counters)
                .unwrap()
                .insert("u\0query\0day1", 7)
                .unwrap();
            let entries: TableDefinition<(&str, u64), &[u8]> =
                TableDefinition::new("archive_entries");
            txn.open_table(entries)
                .unwrap()
                .insert(("usr_a", 3), b"sealed".as_slice())
                .unwrap();
            let due: TableDefinition<(i64, &str), ()> = TableDefinition::new("due");
            txn.open_table(due)
                .unwrap()
                .insert((-1, "evt"), ())
                .unwrap();
            txn.commit().unwrap();
        }
        let backend = crate::embedded::Redb::open(&path, 1 << 20).unwrap();
        let reader = crate::records::Reader::new(crate::records::Backend::read(&backend).unwrap());
        const COUNTERS: Space<Text, Count> = Space::unregistered("day_counters");
        const ENTRIES: Space<TextSeq, Bytes> = Space::unregistered("archive_entries");
        const DUE: Space<TimeText, Unit> = Space::unregistered("due");
        assert_eq!(reader.get(&COUNTERS, "u\0query\0day1").unwrap(), Some(7));
        assert_eq!(
            reader.get(&ENTRIES, ("usr_a", 3)).unwrap(),
            Some(b"sealed".to_vec())
        );
        assert!(reader.contains(&DUE, (-1, "evt")).unwrap());
    }
}
