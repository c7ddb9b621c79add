//! Fair shares of the connector slots, per user.

use std::sync::Arc;

use tokio::sync::Semaphore;

/// Each user's share of the connector slots: one user's burst of queries
/// waits on its own share while everyone else's calls go on.
pub(super) struct Shares {
    per_user: u32,
    by_user: std::sync::Mutex<std::collections::HashMap<String, Arc<Semaphore>>>,
}

/// Users whose idle shares are forgotten past this many (bounded memory).
const SHARES_KEPT: usize = 1024;

impl Shares {
    pub(super) fn new(per_user: u32) -> Shares {
        Shares {
            per_user: per_user.max(1),
            by_user: std::sync::Mutex::default(),
        }
    }

    pub(super) async fn acquire(&self, user: &str) -> tokio::sync::OwnedSemaphorePermit {
        let share = {
            let mut by_user = self.by_user.lock().unwrap_or_else(|e| e.into_inner());
            if by_user.len() >= SHARES_KEPT {
                // A share nobody holds a permit of is only its map entry.
                by_user.retain(|_, share| Arc::strong_count(share) > 1);
            }
            by_user
                .entry(user.to_string())
                .or_insert_with(|| Arc::new(Semaphore::new(self.per_user as usize)))
                .clone()
        };
        share
            .acquire_owned()
            .await
            .expect("the semaphore is never closed")
    }
}
