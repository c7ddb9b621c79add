//! When to try a delivery again: the configured schedule with ±10% jitter
//! (so that deliveries failed together do not retry in lockstep), and the
//! receiver's `Retry-After` on 429 and 503 when it asks for longer.

use std::time::{Duration, SystemTime};

use rand::Rng;

/// The longest wait a receiver's `Retry-After` can impose.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);

/// The wait before attempt `attempt` (0 is the first), or `None` when the
/// schedule has no such attempt (the delivery is given up).
pub fn scheduled_delay(schedule: &[u64], attempt: usize) -> Option<Duration> {
    schedule
        .get(attempt)
        .map(|&seconds| jitter(Duration::from_secs(seconds)))
}

/// The wait before the next attempt after `attempts_made` failed ones:
/// the later of the schedule and the receiver's `Retry-After` (capped).
pub fn next_delay(
    schedule: &[u64],
    attempts_made: usize,
    retry_after: Option<Duration>,
) -> Option<Duration> {
    let scheduled = scheduled_delay(schedule, attempts_made)?;
    Some(match retry_after {
        Some(asked) => scheduled.max(asked.min(MAX_RETRY_AFTER)),
        None => scheduled,
    })
}

/// `base` ±10%, uniformly.
pub fn jitter(base: Duration) -> Duration {
    if base.is_zero() {
        return base;
    }
    base.mul_f64(rand::rng().random_range(0.9..=1.1))
}

/// A `Retry-After` value: delay-seconds, or an HTTP date (as a wait from
/// `now`; a date in the past is no wait).
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    // An HTTP date (RFC 9110's IMF-fixdate) is an RFC 2822 date in GMT.
    static PARSER: jiff::fmt::rfc2822::DateTimeParser = jiff::fmt::rfc2822::DateTimeParser::new();
    let at: SystemTime = PARSER.parse_timestamp(value).ok()?.into();
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEDULE: [u64; 8] = [0, 5, 300, 1800, 7200, 18_000, 36_000, 36_000];

    #[test]
    fn jitter_stays_within_ten_percent() {
        for (attempt, &seconds) in SCHEDULE.iter().enumerate() {
            let base = Duration::from_secs(seconds);
            for _ in 0..200 {
                let delay = scheduled_delay(&SCHEDULE, attempt).unwrap();
                assert!(
                    delay >= base.mul_f64(0.9) && delay <= base.mul_f64(1.1),
                    "attempt {attempt}: {delay:?} is not within 10% of {base:?}"
                );
            }
        }
        assert_eq!(scheduled_delay(&SCHEDULE, 0), Some(Duration::ZERO));
        assert_eq!(scheduled_delay(&SCHEDULE, SCHEDULE.len()), None);
    }

    #[test]
    fn jitter_spreads_retries() {
        let delays: std::collections::BTreeSet<Duration> = (0..50)
            .map(|_| scheduled_delay(&SCHEDULE, 2).unwrap())
            .collect();
        assert!(delays.len() > 10, "{delays:?}");
    }

    #[test]
    fn retry_after_wins_when_later_and_is_capped() {
        let later = next_delay(&SCHEDULE, 1, Some(Duration::from_secs(60))).unwrap();
        assert_eq!(later, Duration::from_secs(60));
        let sooner = next_delay(&SCHEDULE, 2, Some(Duration::from_secs(1))).unwrap();
        assert!(sooner >= Duration::from_secs(270), "{sooner:?}");
        let huge = next_delay(&SCHEDULE, 1, Some(Duration::from_secs(10 * 86_400))).unwrap();
        assert_eq!(huge, MAX_RETRY_AFTER);
        assert_eq!(
            next_delay(&SCHEDULE, SCHEDULE.len(), Some(Duration::ZERO)),
            None
        );
    }

    #[test]
    fn retry_after_is_seconds_or_an_http_date() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777);
        assert_eq!(
            parse_retry_after("120", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:50:37 GMT", now),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(Duration::ZERO),
            "a date in the past is no wait"
        );
        for bad in ["", "-5", "1.5", "soon", "Sun, 06 Nov 1994"] {
            assert_eq!(parse_retry_after(bad, now), None, "{bad:?}");
        }
    }
}
