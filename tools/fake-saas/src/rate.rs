//! The vendors' rate limits, as their declarations state them
//! (`rate_limit`): per token, a fixed window of `per_seconds` allowing
//! `requests` calls to the declared endpoint; past it the vendor's refusal
//! (its status, with `Retry-After`). Off unless asked for
//! ([`crate::FakeSaasConfig::rate_limits`]): most tests ask faster than any
//! vendor allows.

use std::collections::HashMap;
use std::time::Instant;

use crate::http::Req;
use crate::search::{Declaration, declarations};

/// Calls counted per (declaration, token): the window's start and count.
#[derive(Default)]
pub(crate) struct Windows {
    counts: HashMap<(&'static str, String), (Instant, u32)>,
}

/// A refusal: the status and the seconds until the window ends.
pub(crate) struct Limited {
    pub status: u16,
    pub retry_after: u32,
}

impl Windows {
    /// Counts `req` against the limit of the declared endpoint it calls, if
    /// any; the refusal when that limit is spent.
    pub(crate) fn charge(&mut self, req: &Req) -> Option<Limited> {
        let token = req.header("authorization").unwrap_or_default().to_string();
        let (name, limit) = declarations().find_map(|(name, declaration)| {
            let limit = declaration.rate_limit.as_ref()?;
            calls(declaration, req).then_some((name, limit.value))
        })?;
        let now = Instant::now();
        let window = self.counts.entry((name, token)).or_insert((now, 0));
        let elapsed = now.duration_since(window.0).as_secs();
        if elapsed >= u64::from(limit.per_seconds) {
            *window = (now, 0);
        }
        window.1 += 1;
        (window.1 > limit.requests).then(|| Limited {
            status: limit.status,
            retry_after: (u64::from(limit.per_seconds) - elapsed.min(u64::from(limit.per_seconds)))
                .max(1) as u32,
        })
    }
}

/// Whether `req` calls the declaration's endpoint (`METHOD https://host/path`,
/// `{name}` matching any one label or segment; a note in parentheses after
/// it is not part of it).
fn calls(declaration: &Declaration, req: &Req) -> bool {
    let mut parts = declaration.endpoint.split_whitespace();
    let (Some(method), Some(url)) = (parts.next(), parts.next()) else {
        return false;
    };
    let Some(rest) = url.strip_prefix("https://") else {
        return false;
    };
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    method == req.method.as_str()
        && same_shape(host.split('.'), req.host.split('.'))
        && same_shape(path.split('/'), req.path.trim_start_matches('/').split('/'))
}

fn same_shape<'a>(
    template: impl Iterator<Item = &'a str>,
    actual: impl Iterator<Item = &'a str>,
) -> bool {
    let (template, actual): (Vec<&str>, Vec<&str>) = (template.collect(), actual.collect());
    template.len() == actual.len()
        && template
            .iter()
            .zip(&actual)
            .all(|(t, a)| (t.starts_with('{') && t.ends_with('}')) || t == a)
}
