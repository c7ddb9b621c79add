//! The fake's record of the vendor requests it received and what it
//! answered, which tests, `eval-live` and `/_fake/requests` read.
//!
//! Bounded by size: a fake that runs for hours (the README's demo, the
//! soak, an author's fixtures server) keeps its newest exchanges up to
//! [`MAX_BYTES`] and forgets the oldest, so that its memory stays flat
//! whatever the traffic. Kept whole, the record grew by every request and
//! answer the demo's vendors ever made: about 70 KiB of the demo's heap per
//! question, which the soak measured as the server's own growth.
//!
//! Places are counted from the start (or the last clear), forgotten
//! exchanges included, so that a caller who noted [`RequestLog::count`]
//! reads what came after it with [`RequestLog::between`], and an answer
//! finds its request by the place its arrival was given.

use std::collections::VecDeque;

use crate::{RecordedRequest, RecordedResponse};

/// What the record keeps at most, in bytes of bodies, headers and
/// addresses: far more than one test or one evaluated question sends (the
/// soak's questions average about 70 KiB of exchanges each, at up to 15
/// vendors), little beside the server's own memory.
pub const MAX_BYTES: usize = 8 << 20;

pub(crate) struct RequestLog {
    kept: VecDeque<RecordedRequest>,
    /// Exchanges forgotten before the first one kept.
    forgotten: usize,
    /// The size of what is kept ([`size_of_request`]).
    bytes: usize,
    max_bytes: usize,
}

impl Default for RequestLog {
    fn default() -> Self {
        RequestLog::with_max_bytes(MAX_BYTES)
    }
}

impl RequestLog {
    pub(crate) fn with_max_bytes(max_bytes: usize) -> RequestLog {
        RequestLog {
            kept: VecDeque::new(),
            forgotten: 0,
            bytes: 0,
            max_bytes,
        }
    }

    /// Records a request as it arrives; returns its place, for its answer.
    pub(crate) fn push(&mut self, request: RecordedRequest) -> usize {
        self.bytes += size_of_request(&request);
        self.kept.push_back(request);
        self.forget_over_budget();
        self.count() - 1
    }

    /// Records the answer to the request at `place`, unless that request
    /// was forgotten or cleared meanwhile (a request after a clear may hold
    /// the place: it must be the same method and path, still unanswered).
    pub(crate) fn answer(
        &mut self,
        place: usize,
        method: &str,
        path: &str,
        answer: RecordedResponse,
    ) {
        let Some(index) = place.checked_sub(self.forgotten) else {
            return;
        };
        let Some(request) = self
            .kept
            .get_mut(index)
            .filter(|r| r.method == method && r.path == path && r.response.is_none())
        else {
            return;
        };
        self.bytes += size_of_response(&answer);
        request.response = Some(answer);
        self.forget_over_budget();
    }

    /// Requests received since the start or the last clear, forgotten ones
    /// included.
    pub(crate) fn count(&self) -> usize {
        self.forgotten + self.kept.len()
    }

    pub(crate) fn kept_count(&self) -> usize {
        self.kept.len()
    }

    /// The requests kept, oldest first.
    pub(crate) fn kept(&self) -> Vec<RecordedRequest> {
        self.kept.iter().cloned().collect()
    }

    /// The requests at places `from` up to (not including) `to`, of those
    /// still kept.
    pub(crate) fn between(&self, from: usize, to: usize) -> Vec<RecordedRequest> {
        let start = from.saturating_sub(self.forgotten);
        let end = to.saturating_sub(self.forgotten).min(self.kept.len());
        self.kept.range(start.min(end)..end).cloned().collect()
    }

    pub(crate) fn clear(&mut self) {
        self.kept.clear();
        self.forgotten = 0;
        self.bytes = 0;
    }

    /// Forgets the oldest exchanges until the rest fit; the newest is kept
    /// whatever its size.
    fn forget_over_budget(&mut self) {
        while self.bytes > self.max_bytes && self.kept.len() > 1 {
            let oldest = self.kept.pop_front().expect("more than one kept");
            self.bytes -=
                size_of_request(&oldest) + oldest.response.as_ref().map_or(0, size_of_response);
            self.forgotten += 1;
        }
    }
}

fn size_of_request(request: &RecordedRequest) -> usize {
    request.host.len()
        + request.path.len()
        + request.query.as_ref().map_or(0, String::len)
        + size_of_headers(&request.headers)
        + request.body.len()
}

fn size_of_response(response: &RecordedResponse) -> usize {
    size_of_headers(&response.headers)
        + response.body.len()
        + response
            .returned
            .iter()
            .flatten()
            .map(String::len)
            .sum::<usize>()
}

fn size_of_headers(headers: &[(String, String)]) -> usize {
    headers.iter().map(|(n, v)| n.len() + v.len()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(path: &str, body_bytes: usize) -> RecordedRequest {
        RecordedRequest {
            method: "GET".into(),
            host: "h".into(),
            path: path.into(),
            query: None,
            headers: Vec::new(),
            body: vec![b'x'; body_bytes],
            received_ms: 0,
            response: None,
        }
    }

    fn answer(body_bytes: usize) -> RecordedResponse {
        RecordedResponse {
            status: 200,
            headers: Vec::new(),
            body: vec![b'y'; body_bytes],
            returned: None,
        }
    }

    fn paths(requests: &[RecordedRequest]) -> Vec<&str> {
        requests.iter().map(|r| r.path.as_str()).collect()
    }

    #[test]
    fn keeps_the_newest_within_its_size_and_counts_from_the_start() {
        // Each request is its path (2 bytes) and host (1) and 7 of body.
        let mut log = RequestLog::with_max_bytes(25);
        for (n, path) in ["/a", "/b", "/c", "/d"].into_iter().enumerate() {
            assert_eq!(log.push(request(path, 7)), n);
        }
        assert_eq!(log.count(), 4);
        assert_eq!(paths(&log.kept()), ["/c", "/d"]);
        assert_eq!(paths(&log.between(1, 4)), ["/c", "/d"]);
        assert_eq!(paths(&log.between(3, 9)), ["/d"]);
        assert!(log.between(0, 2).is_empty());
    }

    #[test]
    fn an_answer_counts_and_finds_its_request_by_place() {
        let mut log = RequestLog::with_max_bytes(100);
        let first = log.push(request("/a", 0));
        let second = log.push(request("/b", 0));
        // The second's answer is too big for both: the first is forgotten,
        // and its late answer goes nowhere.
        log.answer(second, "GET", "/b", answer(98));
        log.answer(first, "GET", "/a", answer(1));
        assert_eq!(paths(&log.kept()), ["/b"]);
        assert_eq!(log.kept()[0].response.as_ref().unwrap().body.len(), 98);
        // A wrong method or path, or a second answer, changes nothing.
        log.answer(second, "POST", "/b", answer(1));
        log.answer(second, "GET", "/b", answer(2));
        assert_eq!(log.kept()[0].response.as_ref().unwrap().body.len(), 98);
    }

    #[test]
    fn the_newest_is_kept_whatever_its_size_and_a_clear_starts_again() {
        let mut log = RequestLog::with_max_bytes(10);
        log.push(request("/a", 50));
        log.push(request("/b", 50));
        assert_eq!(paths(&log.kept()), ["/b"]);
        log.clear();
        assert_eq!(log.count(), 0);
        assert_eq!(log.push(request("/c", 0)), 0);
    }
}
