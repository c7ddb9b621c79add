//! Attempt throttles shared by replicas (sign-ins, device codes, single
//! sign-on): one Redis sorted set per key, the times of its attempts, so
//! that a guesser gets the same number of tries whichever replica they
//! reach. Scripts check and count under Redis's one clock, atomically.

use anyhow::Result;
use redis::Script;

use super::{Redis, unavailable};

/// Drops what left the window from every key; if none is full, counts the
/// attempt (`ARGV[3]`, unique) in each (`ARGV[4] == 'count'`). Returns 1
/// when the attempt may go on.
const BEGIN: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local window = tonumber(ARGV[1])
for _, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  if redis.call('ZCARD', key) >= tonumber(ARGV[2]) then return 0 end
end
if ARGV[4] == 'count' then
  for _, key in ipairs(KEYS) do
    redis.call('ZADD', key, now, ARGV[3])
    redis.call('EXPIRE', key, math.ceil(window) + 1)
  end
end
return 1
"#;

pub struct SharedAttempts {
    redis: Redis,
    begin: Script,
}

impl SharedAttempts {
    pub fn new(redis: Redis) -> SharedAttempts {
        SharedAttempts {
            redis,
            begin: Script::new(BEGIN),
        }
    }

    fn keys(&self, throttle: &str, keys: &[String]) -> Vec<String> {
        keys.iter()
            .map(|key| self.redis.key(&["attempts", throttle, key]))
            .collect()
    }

    /// Counts attempt `id` under every key unless one of them holds `most`
    /// attempts of the last `window` seconds already (`count == false`:
    /// only looks). Whether it may go on.
    pub async fn begin(
        &self,
        throttle: &str,
        keys: &[String],
        (most, window): (u32, i64),
        id: &str,
        count: bool,
    ) -> Result<bool> {
        let mut invocation = self.begin.prepare_invoke();
        for key in self.keys(throttle, keys) {
            invocation.key(key);
        }
        let allowed: i64 = invocation
            .arg(window)
            .arg(most)
            .arg(id)
            .arg(if count { "count" } else { "peek" })
            .invoke_async(&mut self.redis.connection())
            .await
            .map_err(unavailable)?;
        Ok(allowed == 1)
    }

    /// Takes attempt `id` back from every key (it did not fail).
    pub async fn take_back(&self, throttle: &str, keys: &[String], id: &str) -> Result<()> {
        let mut pipe = redis::pipe();
        for key in self.keys(throttle, keys) {
            pipe.zrem(key, id).ignore();
        }
        pipe.query_async::<()>(&mut self.redis.connection())
            .await
            .map_err(unavailable)
    }

    /// Forgets every attempt under `keys` (a sign-in that succeeded clears
    /// its email's failures).
    pub async fn forget(&self, throttle: &str, keys: &[String]) -> Result<()> {
        let keys = self.keys(throttle, keys);
        if keys.is_empty() {
            return Ok(());
        }
        redis::cmd("DEL")
            .arg(keys)
            .query_async::<()>(&mut self.redis.connection())
            .await
            .map_err(unavailable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread")]
    async fn concurrent_attempts_pass_exactly_the_limit_and_taken_back_ones_do_not_count() {
        let url = std::env::var("QUARRY_TEST_REDIS_URL")
            .unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
        let prefix = format!("quarry_unit_{}", quarry_store::random_hex(6));
        let redis = Redis::connect(&url, Some(&prefix), None).expect("a Redis URL");
        let attempts = std::sync::Arc::new(SharedAttempts::new(redis));
        let keys = vec!["email:bob@acme.test".to_string()];
        let tries = (0..20).map(|n| {
            let (attempts, keys) = (attempts.clone(), keys.clone());
            tokio::spawn(async move {
                attempts
                    .begin("sign_in", &keys, (5, 900), &format!("a{n}"), true)
                    .await
            })
        });
        let mut passed = Vec::new();
        for (n, attempt) in tries.enumerate() {
            if attempt.await.unwrap().expect("Redis answers") {
                passed.push(format!("a{n}"));
            }
        }
        assert_eq!(passed.len(), 5, "{passed:?}");
        // Full; taking one back frees a place; forgetting frees them all.
        assert!(
            !attempts
                .begin("sign_in", &keys, (5, 900), "b", false)
                .await
                .unwrap()
        );
        attempts
            .take_back("sign_in", &keys, &passed[0])
            .await
            .unwrap();
        assert!(
            attempts
                .begin("sign_in", &keys, (5, 900), "b", false)
                .await
                .unwrap()
        );
        attempts.forget("sign_in", &keys).await.unwrap();
        for n in 0..5 {
            let id = format!("c{n}");
            assert!(
                attempts
                    .begin("sign_in", &keys, (5, 900), &id, true)
                    .await
                    .unwrap()
            );
        }
        assert!(
            !attempts
                .begin("sign_in", &keys, (5, 900), "d", true)
                .await
                .unwrap()
        );
    }
}
