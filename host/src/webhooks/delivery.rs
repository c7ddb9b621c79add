//! One delivery attempt: a signed POST, no redirects, a time limit, the
//! target re-checked (scheme, IP literal) and its name resolved to public
//! addresses only.

use std::time::{Duration, SystemTime};

use anyhow::Result;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, RETRY_AFTER};

use super::outbox::Message;
use super::retry::parse_retry_after;
use super::signing;
use super::target::{self, Policy};
use crate::net::{self, AddressDenied, Purpose};

/// What an attempt came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A 2xx answer.
    Delivered(u16),
    /// Anything else. `error` never holds the URL or the secret (URLs may
    /// carry tokens); `retry_after` is the receiver's ask on 429 and 503.
    Failed {
        error: String,
        retry_after: Option<Duration>,
    },
}

/// The HTTP client of deliveries.
pub struct Sender {
    client: reqwest::Client,
    policy: Policy,
    timeout: Duration,
}

impl Sender {
    pub fn new(policy: Policy, timeout: Duration) -> Result<Sender> {
        let client = net::client(Purpose::Webhooks {
            allow_private: policy.allow_private,
            allow_plain_http: policy.allow_plain_http,
            timeout,
        })?;
        Ok(Sender {
            client,
            policy,
            timeout,
        })
    }

    /// How long one attempt may take at most.
    pub fn timeout_ms(&self) -> u64 {
        self.timeout.as_millis() as u64
    }

    /// Sends `message` once, signed for `now`.
    pub async fn attempt(&self, message: &Message, now: SystemTime) -> Outcome {
        let failed = |error: String| Outcome::Failed {
            error,
            retry_after: None,
        };
        // The operator may have tightened the policy since registration.
        let url = match target::check_url(&message.url, self.policy) {
            Ok(url) => url,
            // Its messages name the address, never the path or query.
            Err(refusal) => return failed(format!("target refused: {refusal}")),
        };
        let key = match signing::key_of(&message.secret) {
            Ok(key) => key,
            Err(error) => return failed(format!("unusable secret: {error}")),
        };
        let timestamp = unix_seconds(now);
        let mut request = self
            .client
            .post(url)
            .header(CONTENT_TYPE, "application/json")
            .body(message.body.clone());
        for (name, value) in signing::headers(
            &key,
            &message.message_id,
            timestamp,
            message.body.as_bytes(),
        ) {
            request = request.header(name, value);
        }
        match request.send().await {
            Ok(response) => judge(response.status(), response.headers(), now),
            Err(error) => failed(describe(&error)),
        }
    }
}

/// A 2xx is a delivery; anything else (redirects included) a failure.
fn judge(status: StatusCode, headers: &reqwest::header::HeaderMap, now: SystemTime) -> Outcome {
    if status.is_success() {
        return Outcome::Delivered(status.as_u16());
    }
    let retry_after = match status {
        StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE => headers
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, now)),
        _ => None,
    };
    let error = if status.is_redirection() {
        format!("answered {status} (redirects are not followed)")
    } else {
        format!("answered {status}")
    };
    Outcome::Failed { error, retry_after }
}

/// A transport error, without the URL reqwest puts in its messages.
fn describe(error: &reqwest::Error) -> String {
    if let Some(denied) = AddressDenied::in_chain(error) {
        return format!("target refused: {denied}");
    }
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "could not connect"
    } else {
        "request failed"
    };
    // The causes below reqwest's own message are hyper's and the OS's.
    let mut text = kind.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(e) = source {
        text.push_str(": ");
        text.push_str(&e.to_string());
        source = e.source();
    }
    text
}

fn unix_seconds(at: SystemTime) -> i64 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    #[test]
    fn only_2xx_is_delivered_and_retry_after_is_read_on_429_and_503() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(
            judge(StatusCode::NO_CONTENT, &headers, now),
            Outcome::Delivered(204)
        );
        for status in [
            StatusCode::TOO_MANY_REQUESTS,
            StatusCode::SERVICE_UNAVAILABLE,
        ] {
            assert_eq!(
                judge(status, &headers, now),
                Outcome::Failed {
                    error: format!("answered {status}"),
                    retry_after: Some(Duration::from_secs(7)),
                }
            );
        }
        let Outcome::Failed { retry_after, .. } =
            judge(StatusCode::INTERNAL_SERVER_ERROR, &headers, now)
        else {
            panic!("a 500 is a failure");
        };
        assert_eq!(retry_after, None, "Retry-After counts on 429 and 503 only");
        let Outcome::Failed { error, .. } = judge(StatusCode::FOUND, &headers, now) else {
            panic!("a redirect is a failure");
        };
        assert!(error.contains("redirect"), "{error}");
    }
}
