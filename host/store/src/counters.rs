//! Day-window counters of the rate limits, by subject (a user) and bucket.

use anyhow::Result;

use super::Counted;
use super::Store;
use super::records::{Count, Records, Space, Text};

/// `subject \0 bucket \0 day` → requests counted that UTC day.
pub(super) const DAY_COUNTERS: Space<Text, Count> =
    Space::keyed_by_user("day_counters", Counted::Nothing);

impl Store {
    pub fn day_count(&self, subject: &str, bucket: &str, day: i64) -> Result<u64> {
        let count = self
            .read()?
            .get(&DAY_COUNTERS, &counter_key(subject, bucket, day))?;
        Ok(count.unwrap_or(0))
    }

    /// Writes several counters in one transaction (one fsync); with
    /// `forget_before`, drops every counter of a day before it in the same
    /// commit (days gone by count for nothing).
    pub fn put_day_counts(
        &self,
        counts: &[(String, String, i64, u64)],
        forget_before: Option<i64>,
    ) -> Result<()> {
        if counts.is_empty() && forget_before.is_none() {
            return Ok(());
        }
        let mut txn = self.write()?;
        if let Some(day) = forget_before {
            txn.retain(&DAY_COUNTERS, .., |key, _| {
                key.rsplit('\0')
                    .next()
                    .and_then(|d| d.parse::<i64>().ok())
                    .is_some_and(|d| d >= day)
            })?;
        }
        for (subject, bucket, day, count) in counts {
            txn.put(&DAY_COUNTERS, &counter_key(subject, bucket, *day), *count)?;
        }
        txn.commit()
    }

    /// How many day counters are kept (for tests).
    pub fn day_counter_count(&self) -> Result<u64> {
        self.read()?.count_in(&DAY_COUNTERS, ..)
    }
}

fn counter_key(subject: &str, bucket: &str, day: i64) -> String {
    format!("{subject}\0{bucket}\0{day}")
}
