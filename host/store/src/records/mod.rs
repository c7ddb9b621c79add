//! Records: the storage interface every module outside `store/` sees.
//!
//! A record lives in a named [`Space`] under an ordered key. Modules declare
//! their spaces, with whose records they hold ([`owner`]: `const SESSIONS:
//! Space<Text, Bytes> = Space::user_owned("dashboard_sessions", ..)`), and
//! read and write them in transactions: a [`Reader`] sees one consistent
//! snapshot, a [`Writer`] commits all of its changes or none. Transactions
//! span spaces, which is what the invariants need: a webhook is queued in
//! the transaction of the change that caused it, and a deletion removes
//! every record of a user in one commit.
//!
//! Underneath is a [`Backend`]: raw byte keys and values, ordered by bytes.
//! redb (`store/redb.rs`) is the embedded one; any transactional ordered
//! key-value store can be another.

mod kinds;
pub mod owner;

use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

use anyhow::Result;

/// A transactional, ordered key-value store.
pub trait Backend: Send + Sync {
    fn read(&self) -> Result<Box<dyn RawRead>>;
    fn write(&self) -> Result<Box<dyn RawWrite>>;
    /// The names of the spaces that hold records (for the invariant tests).
    fn spaces(&self) -> Result<Vec<String>>;
    /// Whether this process is the only one using the records (an embedded
    /// file), so that any job it finds unfinished at start was abandoned.
    fn exclusive(&self) -> bool;
    /// Makes removed records unreadable from the backend's files, not just
    /// unreachable (a deleted user's records must leave the disk). `last`
    /// makes a final change in the purge's own write transaction and says
    /// whether a purge is due at all (when not, nothing happens). A backend
    /// with nothing of its own on this machine's disk only commits `last`.
    fn purge_removed(&self, last: &mut dyn FnMut(&mut Writer) -> Result<bool>) -> Result<()> {
        let mut txn = Writer::new(self.write()?);
        match last(&mut txn)? {
            true => txn.commit(),
            false => Ok(()),
        }
    }
}

/// Raw byte bounds of a scan.
pub type RawRange<'a> = (Bound<&'a [u8]>, Bound<&'a [u8]>);

/// What a scan's visitor says after each record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// Sees one record of a scan (key, value) and says whether to go on.
pub type Visitor<'a> = dyn FnMut(&[u8], &[u8]) -> Result<Flow> + 'a;

/// Sees one record of a retain (key, value) and says whether to keep it.
pub type Keep<'a> = dyn FnMut(&[u8], &[u8]) -> bool + 'a;

pub trait RawRead {
    fn get(&self, space: &str, key: &[u8]) -> Result<Option<Vec<u8>>>;
    /// Visits the records in `range` in key order until the visitor stops.
    fn scan(&self, space: &str, range: RawRange<'_>, visit: &mut Visitor<'_>) -> Result<()>;
}

pub trait RawWrite: RawRead {
    fn put(&mut self, space: &str, key: &[u8], value: &[u8]) -> Result<()>;
    fn remove(&mut self, space: &str, key: &[u8]) -> Result<Option<Vec<u8>>>;
    /// Removes the records in `range` that `keep` refuses; how many.
    fn retain(&mut self, space: &str, range: RawRange<'_>, keep: &mut Keep<'_>) -> Result<u64>;
    fn commit(self: Box<Self>) -> Result<()>;
}

/// A named set of records with keys of kind `K` and values of kind `V`,
/// and whose they are ([`Owner`]).
pub struct Space<K, V> {
    name: &'static str,
    owner: Owner,
    kinds: PhantomData<fn() -> (K, V)>,
}

impl<K, V> Space<K, V> {
    /// Users' records, each keyed by its user first (the user id, or the
    /// id and a separator): a deletion removes the user's key range.
    pub const fn keyed_by_user(name: &'static str, counted: Counted) -> Self {
        Space::with_owner(name, Owner::User(Removal::KeyedByUser, counted))
    }

    /// Users' records keyed otherwise (by a token's hash, with the user in
    /// the value): a deletion removes a user's with `remove`, which says
    /// how many it removed.
    pub const fn user_owned(
        name: &'static str,
        remove: fn(&mut Writer, &str) -> Result<u64>,
        counted: Counted,
    ) -> Self {
        Space::with_owner(name, Owner::User(Removal::Custom(remove), counted))
    }

    /// Records that are nobody's once a deletion has ended, and why.
    pub const fn shared(name: &'static str, why: &'static str) -> Self {
        Space::with_owner(name, Owner::Shared(why))
    }

    /// A space of the store's own tests, outside the registry.
    #[cfg(test)]
    pub(crate) const fn unregistered(name: &'static str) -> Self {
        Space::with_owner(name, Owner::Shared("the store's own tests"))
    }

    const fn with_owner(name: &'static str, owner: Owner) -> Self {
        Space {
            name,
            owner,
            kinds: PhantomData,
        }
    }

    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The space's name and owner, for the registry of spaces.
    pub const fn declared(&self) -> Declared {
        Declared {
            space: self.name,
            owner: self.owner,
        }
    }
}

/// How a key is written as bytes whose order is the key's order.
pub trait KeyKind {
    type Arg<'a>: Copy;
    type Owned;
    fn encode(arg: Self::Arg<'_>, out: &mut Vec<u8>);
    fn decode(bytes: &[u8]) -> Result<Self::Owned>;
}

/// How a value is written as bytes.
pub trait ValueKind {
    type Arg<'a>: Copy;
    type Owned;
    fn encode(arg: Self::Arg<'_>) -> Vec<u8>;
    fn decode(bytes: &[u8]) -> Result<Self::Owned>;
}

use self::kinds::SEPARATOR;
pub use self::kinds::{Bytes, Count, Text, TextPart, TextSeq, TimeText, Unit};
use self::owner::{Counted, Declared, Owner, Removal};

fn key_bytes<K: KeyKind>(key: K::Arg<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    K::encode(key, &mut out);
    out
}

/// The byte bounds of a typed range.
fn byte_bounds<'a, K: KeyKind>(
    range: &impl RangeBounds<K::Arg<'a>>,
) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let bound = |b: Bound<&K::Arg<'a>>| match b {
        Bound::Included(k) => Bound::Included(key_bytes::<K>(*k)),
        Bound::Excluded(k) => Bound::Excluded(key_bytes::<K>(*k)),
        Bound::Unbounded => Bound::Unbounded,
    };
    (bound(range.start_bound()), bound(range.end_bound()))
}

/// The byte bounds of every key that starts with `prefix`.
fn prefix_bounds(prefix: &[u8]) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let mut past = prefix.to_vec();
    // The first key past the prefix: the prefix with its last byte below
    // 0xff raised by one (a prefix of only 0xff bytes has no end).
    while let Some(last) = past.pop() {
        if last < u8::MAX {
            past.push(last + 1);
            return (Bound::Included(prefix.to_vec()), Bound::Excluded(past));
        }
    }
    (Bound::Included(prefix.to_vec()), Bound::Unbounded)
}

fn as_raw(bounds: &(Bound<Vec<u8>>, Bound<Vec<u8>>)) -> RawRange<'_> {
    (
        bounds.0.as_ref().map(Vec::as_slice),
        bounds.1.as_ref().map(Vec::as_slice),
    )
}

/// Typed reads, for both kinds of transaction.
pub trait Records {
    fn raw(&self) -> &dyn RawRead;

    fn get<K: KeyKind, V: ValueKind>(
        &self,
        space: &Space<K, V>,
        key: K::Arg<'_>,
    ) -> Result<Option<V::Owned>> {
        let bytes = self.raw().get(space.name, &key_bytes::<K>(key))?;
        bytes.map(|b| V::decode(&b)).transpose()
    }

    fn contains<K: KeyKind, V: ValueKind>(
        &self,
        space: &Space<K, V>,
        key: K::Arg<'_>,
    ) -> Result<bool> {
        Ok(self.raw().get(space.name, &key_bytes::<K>(key))?.is_some())
    }

    /// Visits the records in `range`, in key order, until `visit` stops.
    fn each<'a, K: KeyKind, V: ValueKind>(
        &self,
        space: &Space<K, V>,
        range: impl RangeBounds<K::Arg<'a>>,
        mut visit: impl FnMut(K::Owned, V::Owned) -> Result<Flow>,
    ) -> Result<()> {
        let bounds = byte_bounds::<K>(&range);
        self.raw().scan(space.name, as_raw(&bounds), &mut |k, v| {
            visit(K::decode(k)?, V::decode(v)?)
        })
    }

    /// The records in `range`, in key order.
    fn all_in<'a, K: KeyKind, V: ValueKind>(
        &self,
        space: &Space<K, V>,
        range: impl RangeBounds<K::Arg<'a>>,
    ) -> Result<Vec<(K::Owned, V::Owned)>> {
        let mut out = Vec::new();
        self.each(space, range, |k, v| {
            out.push((k, v));
            Ok(Flow::Continue)
        })?;
        Ok(out)
    }

    /// The first `limit` records in `range`, in key order.
    fn first_n<'a, K: KeyKind, V: ValueKind>(
        &self,
        space: &Space<K, V>,
        range: impl RangeBounds<K::Arg<'a>>,
        limit: usize,
    ) -> Result<Vec<(K::Owned, V::Owned)>> {
        let mut out = Vec::new();
        if limit == 0 {
            return Ok(out);
        }
        self.each(space, range, |k, v| {
            out.push((k, v));
            Ok(if out.len() < limit {
                Flow::Continue
            } else {
                Flow::Stop
            })
        })?;
        Ok(out)
    }

    /// The first record in `range`.
    fn first_in<'a, K: KeyKind, V: ValueKind>(
        &self,
        space: &Space<K, V>,
        range: impl RangeBounds<K::Arg<'a>>,
    ) -> Result<Option<(K::Owned, V::Owned)>> {
        let mut first = None;
        self.each(space, range, |k, v| {
            first = Some((k, v));
            Ok(Flow::Stop)
        })?;
        Ok(first)
    }

    fn count_in<'a, K: KeyKind, V: ValueKind>(
        &self,
        space: &Space<K, V>,
        range: impl RangeBounds<K::Arg<'a>>,
    ) -> Result<u64> {
        let bounds = byte_bounds::<K>(&range);
        let mut count = 0;
        self.raw().scan(space.name, as_raw(&bounds), &mut |_, _| {
            count += 1;
            Ok(Flow::Continue)
        })?;
        Ok(count)
    }

    /// The records whose text key starts with `prefix` (with the prefix
    /// stripped from the key), in key order.
    fn with_prefix<V: ValueKind>(
        &self,
        space: &Space<Text, V>,
        prefix: &str,
    ) -> Result<Vec<(String, V::Owned)>> {
        let bounds = prefix_bounds(prefix.as_bytes());
        let mut out = Vec::new();
        self.raw().scan(space.name, as_raw(&bounds), &mut |k, v| {
            let rest = <Text as KeyKind>::decode(&k[prefix.len()..])?;
            out.push((rest, V::decode(v)?));
            Ok(Flow::Continue)
        })?;
        Ok(out)
    }
}

/// A read transaction: one consistent snapshot.
pub struct Reader(Box<dyn RawRead>);

impl Reader {
    pub fn new(raw: Box<dyn RawRead>) -> Reader {
        Reader(raw)
    }
}

impl Records for Reader {
    fn raw(&self) -> &dyn RawRead {
        &*self.0
    }
}

/// A write transaction: every change commits together, or none does
/// (dropping a `Writer` without [`Writer::commit`] discards it).
pub struct Writer(Box<dyn RawWrite>);

impl Records for Writer {
    fn raw(&self) -> &dyn RawRead {
        // `RawWrite: RawRead`; the upcast is explicit for readability.
        let raw: &dyn RawWrite = &*self.0;
        raw
    }
}

impl Writer {
    pub fn new(raw: Box<dyn RawWrite>) -> Writer {
        Writer(raw)
    }

    pub fn put<K: KeyKind, V: ValueKind>(
        &mut self,
        space: &Space<K, V>,
        key: K::Arg<'_>,
        value: V::Arg<'_>,
    ) -> Result<()> {
        self.0
            .put(space.name, &key_bytes::<K>(key), &V::encode(value))
    }

    /// Removes a record; the value it had.
    pub fn remove<K: KeyKind, V: ValueKind>(
        &mut self,
        space: &Space<K, V>,
        key: K::Arg<'_>,
    ) -> Result<Option<V::Owned>> {
        let old = self.0.remove(space.name, &key_bytes::<K>(key))?;
        old.map(|b| V::decode(&b)).transpose()
    }

    /// Removes every record in `range` that `keep` refuses; how many. A
    /// record that cannot be decoded is kept (and counted nowhere).
    pub fn retain<'a, K: KeyKind, V: ValueKind>(
        &mut self,
        space: &Space<K, V>,
        range: impl RangeBounds<K::Arg<'a>>,
        mut keep: impl FnMut(K::Owned, V::Owned) -> bool,
    ) -> Result<u64> {
        let bounds = byte_bounds::<K>(&range);
        self.0.retain(
            space.name,
            as_raw(&bounds),
            &mut |k, v| match (K::decode(k), V::decode(v)) {
                (Ok(k), Ok(v)) => keep(k, v),
                _ => true,
            },
        )
    }

    /// Removes every record in `range`; how many.
    pub fn remove_in<'a, K: KeyKind, V: ValueKind>(
        &mut self,
        space: &Space<K, V>,
        range: impl RangeBounds<K::Arg<'a>>,
    ) -> Result<u64> {
        let bounds = byte_bounds::<K>(&range);
        self.0
            .retain(space.name, as_raw(&bounds), &mut |_, _| false)
    }

    /// Removes every record whose text key starts with `prefix`; how many.
    pub fn remove_prefix<V: ValueKind>(
        &mut self,
        space: &Space<Text, V>,
        prefix: &str,
    ) -> Result<u64> {
        let bounds = prefix_bounds(prefix.as_bytes());
        self.0
            .retain(space.name, as_raw(&bounds), &mut |_, _| false)
    }

    /// Removes the record keyed `user_id` and every record whose key is
    /// `user_id`, a separator and more: one user's records in a space keyed
    /// by user first; how many.
    pub fn remove_keyed_by_user(&mut self, space: &str, user_id: &str) -> Result<u64> {
        let exact = user_id.as_bytes();
        let only = (Bound::Included(exact), Bound::Included(exact));
        let mut removed = self.0.retain(space, only, &mut |_, _| false)?;
        let mut prefix = exact.to_vec();
        prefix.push(SEPARATOR);
        let bounds = prefix_bounds(&prefix);
        removed += self.0.retain(space, as_raw(&bounds), &mut |_, _| false)?;
        Ok(removed)
    }

    pub fn commit(self) -> Result<()> {
        self.0.commit()
    }
}

/// Every key of one user in a `TextSeq` space.
pub fn user_seqs(user_id: &str) -> std::ops::RangeInclusive<(&str, u64)> {
    (user_id, 0)..=(user_id, u64::MAX)
}

/// Every key of one user in a `TextPart` space.
pub fn user_parts(user_id: &str) -> std::ops::RangeInclusive<(&str, u32)> {
    (user_id, 0)..=(user_id, u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded<K: KeyKind>(key: K::Arg<'_>) -> Vec<u8> {
        key_bytes::<K>(key)
    }

    #[test]
    fn composite_keys_sort_like_their_parts_and_decode_back() {
        let a = encoded::<TextSeq>(("usr_a", 2));
        let b = encoded::<TextSeq>(("usr_a", 10));
        let c = encoded::<TextSeq>(("usr_ab", 0));
        assert!(a < b && b < c);
        assert_eq!(TextSeq::decode(&b).unwrap(), ("usr_a".into(), 10));
        let early = encoded::<TimeText>((-5, "x"));
        let late = encoded::<TimeText>((3, "a"));
        assert!(early < late);
        assert_eq!(TimeText::decode(&early).unwrap(), (-5, "x".into()));
        assert_eq!(
            TextPart::decode(&encoded::<TextPart>(("u", 7))).unwrap(),
            ("u".into(), 7)
        );
    }

    #[test]
    fn a_prefix_range_ends_past_the_prefix() {
        let (start, end) = prefix_bounds(b"usr\0");
        assert_eq!(start, Bound::Included(b"usr\0".to_vec()));
        assert_eq!(end, Bound::Excluded(b"usr\x01".to_vec()));
        assert_eq!(prefix_bounds(&[0xff]).1, Bound::Unbounded);
    }
}
