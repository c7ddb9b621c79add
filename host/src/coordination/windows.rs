//! Fixed rate-limit windows shared by replicas: one Redis hash per
//! (subject, bucket), checked and counted by one script, so concurrent
//! requests on any replica are admitted exactly up to the limit.

use anyhow::Result;
use redis::Script;

use super::{Redis, unavailable};
#[cfg(test)]
use quarry_store::Unavailable;

/// Admits a request when both windows have room, then counts it in both
/// (a refused request is not counted; a peek counts nothing). The clock is
/// Redis's own (`TIME`), one clock for every replica. Returns
/// `{allowed, minute count, day count, now}`.
const CHARGE: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1])
local minute_start = now - now % 60
local day_start = now - now % 86400
local w = redis.call('HMGET', KEYS[1], 'minute_start', 'minute', 'day_start', 'day')
local minute = 0
if tonumber(w[1]) == minute_start then minute = tonumber(w[2]) end
local day = 0
if tonumber(w[3]) == day_start then day = tonumber(w[4]) end
local allowed = minute < tonumber(ARGV[1]) and day < tonumber(ARGV[2])
if allowed and ARGV[3] == 'charge' then
  minute = minute + 1
  day = day + 1
  redis.call('HSET', KEYS[1], 'minute_start', minute_start, 'minute', minute,
             'day_start', day_start, 'day', day)
  redis.call('EXPIREAT', KEYS[1], day_start + 86400 + 60)
end
return {allowed and 1 or 0, minute, day, now}
"#;

/// What the script found: the counts after this request, and Redis's now.
#[derive(Debug, Clone, Copy)]
pub struct Counted {
    pub allowed: bool,
    pub minute: u32,
    pub day: u32,
    pub now: i64,
}

pub struct SharedWindows {
    redis: Redis,
    script: Script,
}

impl SharedWindows {
    pub fn new(redis: Redis) -> SharedWindows {
        SharedWindows {
            redis,
            script: Script::new(CHARGE),
        }
    }

    /// Counts one request of `subject` in `bucket` if both windows have
    /// room (`charge`), or only looks (`!charge`).
    pub async fn count(
        &self,
        subject: &str,
        bucket: &str,
        (minute_limit, day_limit): (u32, u32),
        charge: bool,
    ) -> Result<Counted> {
        let key = self.redis.key(&["limits", bucket, subject]);
        let (allowed, minute, day, now): (i64, u32, u32, i64) = self
            .script
            .key(key)
            .arg(minute_limit)
            .arg(day_limit)
            .arg(if charge { "charge" } else { "peek" })
            .invoke_async(&mut self.redis.connection())
            .await
            .map_err(unavailable)?;
        Ok(Counted {
            allowed: allowed == 1,
            minute,
            day,
            now,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared_windows() -> SharedWindows {
        let url = std::env::var("QUARRY_TEST_REDIS_URL")
            .unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
        let prefix = format!("quarry_unit_{}", quarry_store::random_hex(6));
        SharedWindows::new(Redis::connect(&url, Some(&prefix), None).expect("a Redis URL"))
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn concurrent_charges_admit_exactly_the_limit() {
        let windows = std::sync::Arc::new(shared_windows());
        let charges = (0..100).map(|_| {
            let windows = windows.clone();
            tokio::spawn(async move { windows.count("usr_a", "query", (10, 1000), true).await })
        });
        let mut admitted = Vec::new();
        for charge in charges {
            let counted = charge
                .await
                .unwrap()
                .expect("Redis answers (tools/test starts one; or set QUARRY_TEST_REDIS_URL)");
            if counted.allowed {
                admitted.push(counted.minute);
            }
        }
        admitted.sort_unstable();
        assert_eq!(admitted, (1..=10).collect::<Vec<u32>>());
        // A refused request is not counted, and a peek counts nothing.
        let peek = windows
            .count("usr_a", "query", (10, 1000), false)
            .await
            .unwrap();
        assert_eq!((peek.minute, peek.day), (10, 10));
        let other = windows
            .count("usr_b", "query", (10, 1000), true)
            .await
            .unwrap();
        assert!(other.allowed && other.minute == 1, "per subject");
    }

    #[tokio::test]
    async fn an_unreachable_redis_is_unavailable() {
        let windows =
            SharedWindows::new(Redis::connect("redis://127.0.0.1:1", None, None).unwrap());
        let error = windows.count("u", "query", (1, 1), true).await.unwrap_err();
        assert!(error.chain().any(|c| c.is::<Unavailable>()), "{error:#}");
    }
}
