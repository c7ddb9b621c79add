//! Day-window counters of the rate limits, by subject (a user) and bucket.

use anyhow::Result;

use super::Store;
use super::records::{Count, Records, Space, Text};
use super::user_data::{Counted, UserData};

/// `subject \0 bucket \0 day` → requests counted that UTC day.
const DAY_COUNTERS: Space<Text, Count> = Space::new("day_counters");

pub(super) const USER_DATA: UserData =
    UserData::keyed_by_user(DAY_COUNTERS.name(), Counted::Nothing);

impl Store {
    pub fn day_count(&self, subject: &str, bucket: &str, day: i64) -> Result<u64> {
        let count = self
            .read()?
            .get(&DAY_COUNTERS, &counter_key(subject, bucket, day))?;
        Ok(count.unwrap_or(0))
    }

    /// Writes several counters in one transaction (one fsync).
    pub fn put_day_counts(&self, counts: &[(String, String, i64, u64)]) -> Result<()> {
        if counts.is_empty() {
            return Ok(());
        }
        let mut txn = self.write()?;
        for (subject, bucket, day, count) in counts {
            txn.put(&DAY_COUNTERS, &counter_key(subject, bucket, *day), *count)?;
        }
        txn.commit()
    }
}

fn counter_key(subject: &str, bucket: &str, day: i64) -> String {
    format!("{subject}\0{bucket}\0{day}")
}
