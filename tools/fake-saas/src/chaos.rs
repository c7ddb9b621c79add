//! Faults at random, for soaks and crash tests: while a [`Chaos`] is set,
//! each vendor request may get a latency spike, a 500, a 429 with
//! `Retry-After`, a connection reset halfway through its body, or its body
//! trickled out slowly. Which request gets which is decided by a hash of
//! the seed and the request's number (the n-th vendor request since the
//! chaos was set), so a run with the same seed and the same order of
//! requests gets the same faults. Off unless set: `--faults SPEC`,
//! `POST /_fake/chaos {"spec": SPEC}` or [`crate::FakeSaas::set_chaos`].
//!
//! A fault set for a host with [`crate::FakeSaas::set_fault`] wins over the
//! chaos for the requests it applies to.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::http::header;
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Value, json};

/// The rates (probabilities per vendor request, exclusive of one another)
/// and sizes of the faults to inject.
#[derive(Clone, Debug, PartialEq)]
pub struct Chaos {
    pub seed: u64,
    /// A delay of about `spike_ms` (half to one and a half times it).
    pub spike: f64,
    pub spike_ms: u64,
    /// HTTP 500 with the vendor's error body.
    pub error: f64,
    /// HTTP 429 with `Retry-After: retry_after` (seconds).
    pub throttle: f64,
    pub retry_after: u32,
    /// Headers and half the body, then the stream is broken off (HTTP/1.1:
    /// the connection closes mid-message; HTTP/2: the stream is reset).
    pub reset: f64,
    /// The whole body, in small pieces spread over about `trickle_ms`.
    pub trickle: f64,
    pub trickle_ms: u64,
}

/// What one request gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Injected {
    Nothing,
    Spike(Duration),
    ServerError,
    Throttle(u32),
    Reset,
    Trickle(Duration),
}

/// The kinds of [`Injected`] faults, as reports name them.
pub const KINDS: [&str; 5] = ["spike", "error", "throttle", "reset", "trickle"];

impl Chaos {
    /// No fault at all (rates to raise one by one).
    pub fn quiet(seed: u64) -> Chaos {
        Chaos {
            seed,
            spike: 0.0,
            spike_ms: 2000,
            error: 0.0,
            throttle: 0.0,
            retry_after: 1,
            reset: 0.0,
            trickle: 0.0,
            trickle_ms: 1500,
        }
    }

    /// The soak's mix: about one vendor request in five goes wrong.
    pub fn soak(seed: u64) -> Chaos {
        Chaos {
            spike: 0.05,
            error: 0.05,
            throttle: 0.04,
            reset: 0.03,
            trickle: 0.04,
            ..Chaos::quiet(seed)
        }
    }

    /// Parses `SPEC`: comma-separated, an optional preset first (`soak`
    /// or `quiet`, the default), then `key=value` pairs that override it:
    /// `seed`, the rates `spike`, `error`, `throttle`, `reset`, `trickle`
    /// (0 to 1, at most 1 in all), `spike_ms`, `retry_after` (seconds),
    /// `trickle_ms`. `off` (or an empty spec) is no chaos: `None`.
    pub fn parse(spec: &str) -> Result<Option<Chaos>, String> {
        let spec = spec.trim();
        if spec.is_empty() || spec == "off" {
            return Ok(None);
        }
        let mut chaos = Chaos::quiet(0);
        for (index, item) in spec.split(',').map(str::trim).enumerate() {
            match (index, item.split_once('=')) {
                (0, None) if item == "soak" => chaos = Chaos::soak(0),
                (0, None) if item == "quiet" => {}
                (_, Some((key, value))) => chaos.set(key.trim(), value.trim())?,
                _ => return Err(format!("{item:?}: expected a preset first, then key=value")),
            }
        }
        let total = chaos.spike + chaos.error + chaos.throttle + chaos.reset + chaos.trickle;
        if total > 1.0 {
            return Err(format!("the rates add up to {total}, more than 1"));
        }
        Ok(Some(chaos))
    }

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let rate = |value: &str| match value.parse::<f64>() {
            Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
            _ => Err(format!("{key}={value}: a rate is a number from 0 to 1")),
        };
        let whole = |value: &str| {
            value
                .parse::<u64>()
                .map_err(|_| format!("{key}={value}: expected a whole number"))
        };
        match key {
            "seed" => self.seed = whole(value)?,
            "spike" => self.spike = rate(value)?,
            "error" => self.error = rate(value)?,
            "throttle" => self.throttle = rate(value)?,
            "reset" => self.reset = rate(value)?,
            "trickle" => self.trickle = rate(value)?,
            "spike_ms" => self.spike_ms = whole(value)?,
            "trickle_ms" => self.trickle_ms = whole(value)?,
            "retry_after" => {
                self.retry_after = u32::try_from(whole(value)?).map_err(|e| e.to_string())?;
            }
            other => return Err(format!("unknown key {other:?}")),
        }
        Ok(())
    }

    /// The spec that parses back to this chaos.
    pub fn spec(&self) -> String {
        format!(
            "seed={},spike={},spike_ms={},error={},throttle={},retry_after={},reset={},trickle={},trickle_ms={}",
            self.seed,
            self.spike,
            self.spike_ms,
            self.error,
            self.throttle,
            self.retry_after,
            self.reset,
            self.trickle,
            self.trickle_ms
        )
    }

    /// What the `n`-th request gets.
    pub fn decide(&self, n: u64) -> Injected {
        let draw = unit(mix(self.seed, n, 0));
        // A second draw sizes the spike, so spikes vary in length.
        let scale = 0.5 + unit(mix(self.seed, n, 1));
        let mut bound = 0.0;
        let mut within = |rate: f64| {
            bound += rate;
            draw < bound
        };
        if within(self.spike) {
            Injected::Spike(Duration::from_millis((self.spike_ms as f64 * scale) as u64))
        } else if within(self.error) {
            Injected::ServerError
        } else if within(self.throttle) {
            Injected::Throttle(self.retry_after)
        } else if within(self.reset) {
            Injected::Reset
        } else if within(self.trickle) {
            Injected::Trickle(Duration::from_millis(self.trickle_ms))
        } else {
            Injected::Nothing
        }
    }
}

/// SplitMix64 of the seed, the request's number and the draw's number.
fn mix(seed: u64, n: u64, draw: u64) -> u64 {
    let mut z = seed
        .wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add(draw.wrapping_mul(0xD1B5_4A32_D192_ED03));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A number in [0, 1) from 53 bits of `x`.
fn unit(x: u64) -> f64 {
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// The chaos in force and what it has injected so far.
#[derive(Default)]
pub(crate) struct State {
    chaos: Mutex<Option<Chaos>>,
    /// Vendor requests seen since the chaos was set.
    seen: AtomicU64,
    injected: [AtomicU64; KINDS.len()],
}

impl State {
    /// Sets (or, with `None`, ends) the chaos; counting starts again.
    pub(crate) fn set(&self, chaos: Option<Chaos>) {
        let mut current = crate::lock(&self.chaos);
        *current = chaos;
        self.seen.store(0, Ordering::SeqCst);
        for count in &self.injected {
            count.store(0, Ordering::SeqCst);
        }
    }

    /// What the next vendor request gets, counted.
    pub(crate) fn next(&self) -> Injected {
        let current = crate::lock(&self.chaos);
        let Some(chaos) = current.as_ref() else {
            return Injected::Nothing;
        };
        let n = self.seen.fetch_add(1, Ordering::SeqCst);
        let injected = chaos.decide(n);
        let kind = match injected {
            Injected::Nothing => None,
            Injected::Spike(_) => Some(0),
            Injected::ServerError => Some(1),
            Injected::Throttle(_) => Some(2),
            Injected::Reset => Some(3),
            Injected::Trickle(_) => Some(4),
        };
        if let Some(kind) = kind {
            self.injected[kind].fetch_add(1, Ordering::SeqCst);
        }
        injected
    }

    /// `{"spec": ..., "requests": n, "injected": {"spike": n, ...}}`
    /// (`spec` is `null` when off).
    pub(crate) fn report(&self) -> Value {
        let spec = crate::lock(&self.chaos).as_ref().map(Chaos::spec);
        let injected: serde_json::Map<String, Value> = KINDS
            .iter()
            .zip(&self.injected)
            .map(|(kind, count)| (kind.to_string(), json!(count.load(Ordering::SeqCst))))
            .collect();
        json!({
            "spec": spec,
            "requests": self.seen.load(Ordering::SeqCst),
            "injected": injected,
        })
    }
}

/// The response with its body broken off halfway: the client sees the
/// headers, part of the body, then the connection (HTTP/1.1) or stream
/// (HTTP/2) dies.
pub(crate) async fn broken_off(response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let half = bytes.slice(..bytes.len() / 2);
    parts.headers.remove(header::CONTENT_LENGTH);
    let pieces: Vec<Result<Bytes, std::io::Error>> = vec![
        Ok(half),
        Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "fake-saas chaos: connection reset",
        )),
    ];
    Response::from_parts(parts, Body::from_stream(futures::stream::iter(pieces)))
}

/// Pieces a trickled body is cut into.
const TRICKLE_PIECES: usize = 10;

/// The response with its body sent in small pieces over about `over`.
pub(crate) async fn trickled(response: Response, over: Duration) -> Response {
    let (mut parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    parts.headers.remove(header::CONTENT_LENGTH);
    let size = bytes.len().div_ceil(TRICKLE_PIECES).max(1);
    let pieces: Vec<Bytes> = (0..bytes.len())
        .step_by(size)
        .map(|start| bytes.slice(start..(start + size).min(bytes.len())))
        .collect();
    let pause = over / TRICKLE_PIECES as u32;
    let stream = futures::stream::unfold(pieces.into_iter(), move |mut rest| async move {
        let piece = rest.next()?;
        tokio::time::sleep(pause).await;
        Some((Ok::<Bytes, std::io::Error>(piece), rest))
    });
    Response::from_parts(parts, Body::from_stream(stream))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_parses_back_to_the_same_chaos() {
        assert_eq!(Chaos::parse("off").unwrap(), None);
        assert_eq!(Chaos::parse("").unwrap(), None);
        let soak = Chaos::parse("soak,seed=42").unwrap().unwrap();
        assert_eq!(soak, Chaos::soak(42));
        assert_eq!(Chaos::parse(&soak.spec()).unwrap(), Some(soak));
        let custom = Chaos::parse("seed=7, error=0.5, retry_after=3")
            .unwrap()
            .unwrap();
        assert_eq!(custom.error, 0.5);
        assert_eq!(custom.retry_after, 3);
        assert_eq!(custom.spike, 0.0);
    }

    #[test]
    fn bad_specs_are_refused() {
        for spec in [
            "error=2",
            "error=0.6,reset=0.6",
            "colour=blue",
            "seed=-1",
            "seed=1,soak",
            "loud",
        ] {
            assert!(Chaos::parse(spec).is_err(), "{spec}");
        }
    }

    #[test]
    fn the_same_seed_injects_the_same_faults_at_about_the_rates() {
        let chaos = Chaos::soak(9);
        let first: Vec<Injected> = (0..10_000).map(|n| chaos.decide(n)).collect();
        let again: Vec<Injected> = (0..10_000).map(|n| chaos.decide(n)).collect();
        assert_eq!(first, again);
        let errors = first
            .iter()
            .filter(|i| **i == Injected::ServerError)
            .count();
        assert!((400..600).contains(&errors), "{errors} errors in 10000");
        let other: Vec<Injected> = (0..10_000).map(|n| Chaos::soak(10).decide(n)).collect();
        assert_ne!(first, other, "another seed, other faults");
    }
}
