//! The state of one connector call: what the guest's imports can reach.
//!
//! A fresh `CallState` (and a fresh Store around it) is made for every call,
//! so nothing a guest does survives into the next call, and no call can see
//! another user's credential.

use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::fetch::{self, Fetch, FetchBudget, FetchError, GuestResponse};
use quarry_guard::manifest::{Manifest, SandboxLimits};
use quarry_guard::policy::GuestRequest;
use quarry_secret::Secret;

/// Most log lines one call may write; the rest are counted and dropped.
const MAX_LOG_LINES: u32 = 200;
const MAX_LOG_LINE: usize = 2048;
pub struct CallState {
    upstream: Arc<dyn Fetch>,
    budget: FetchBudget,
    logged: u32,
    pub(super) limiter: MemoryLimiter,
    /// Deny-all WASI, made only if the component imports WASI.
    wasi: Option<WasiCtx>,
    table: ResourceTable,
}

impl CallState {
    pub fn new(
        upstream: Arc<dyn Fetch>,
        manifest: Arc<Manifest>,
        limits: SandboxLimits,
        credential: Option<Secret>,
    ) -> CallState {
        CallState {
            upstream,
            limiter: MemoryLimiter::new(limits.memory_bytes as usize),
            budget: FetchBudget {
                manifest,
                limits,
                credential,
                used: 0,
            },
            logged: 0,
            wasi: None,
            table: ResourceTable::new(),
        }
    }

    pub fn fetches_used(&self) -> u32 {
        self.budget.used
    }

    pub async fn fetch(&mut self, request: GuestRequest) -> Result<GuestResponse, FetchError> {
        let result = fetch::fetch(self.upstream.as_ref(), &mut self.budget, request).await;
        if let Err(error) = &result {
            tracing::info!(connector = %self.budget.manifest.id, ?error, "fetch refused or failed");
        }
        result
    }

    /// A batch of independent fetches (contract 1.1's `http.fetch-many`),
    /// at most the connector's `max_concurrent_fetches` in flight at once.
    pub async fn fetch_many(
        &mut self,
        requests: Vec<GuestRequest>,
    ) -> Vec<Result<GuestResponse, FetchError>> {
        let results = fetch::fetch_many(self.upstream.as_ref(), &mut self.budget, requests).await;
        let failed = results.iter().filter(|r| r.is_err()).count();
        if failed > 0 {
            tracing::info!(connector = %self.budget.manifest.id, failed, of = results.len(), "fetches of a batch refused or failed");
        }
        results
    }

    pub fn log(&mut self, level: tracing::Level, mut message: String) {
        self.logged += 1;
        if self.logged > MAX_LOG_LINES {
            return;
        }
        if message.len() > MAX_LOG_LINE {
            let mut cut = MAX_LOG_LINE;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            message.truncate(cut);
        }
        let message = one_line(&message);
        let connector = &self.budget.manifest.id;
        match level {
            tracing::Level::ERROR => {
                tracing::error!(target: "quarry::guest", %connector, "{message}")
            }
            tracing::Level::WARN => {
                tracing::warn!(target: "quarry::guest", %connector, "{message}")
            }
            tracing::Level::INFO => {
                tracing::info!(target: "quarry::guest", %connector, "{message}")
            }
            tracing::Level::DEBUG => {
                tracing::debug!(target: "quarry::guest", %connector, "{message}")
            }
            tracing::Level::TRACE => {
                tracing::trace!(target: "quarry::guest", %connector, "{message}")
            }
        }
    }
}

/// A connector's message as one line of the host's log: line breaks and
/// other control characters escaped, so that a message cannot forge log
/// lines (or hide in terminal escapes).
fn one_line(message: &str) -> String {
    let mut line = String::with_capacity(message.len());
    for c in message.chars() {
        match c {
            '\n' => line.push_str("\\n"),
            '\r' => line.push_str("\\r"),
            '\t' => line.push_str("\\t"),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') => {
                line.push_str(&c.escape_unicode().to_string())
            }
            c => line.push(c),
        }
    }
    line
}

/// A WASI that grants nothing: no preopened directories, no environment,
/// no arguments, no sockets, no name lookups; stdin is empty and output is
/// discarded. Components built for `wasm32-wasip2` (or by componentize-py,
/// which links all of WASI, sockets included) import WASI even when they
/// never use it; this lets them load without giving them anything: creating
/// a TCP or UDP socket fails with `access-denied`, a name lookup fails, and
/// no address would pass the (default, refuse-all) address check.
fn deny_all_wasi() -> WasiCtx {
    let mut builder = WasiCtx::builder();
    builder
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false);
    builder.build()
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: self.wasi.get_or_insert_with(deny_all_wasi),
            table: &mut self.table,
        }
    }
}

/// Caps a call's linear memories, all of them together (a component made
/// by componentize-py or jco holds several), and its tables. Going over
/// traps the guest (rather than failing `memory.grow`) so the cause is
/// reported clearly.
pub struct MemoryLimiter {
    memory_bytes: usize,
    /// Bytes of every linear memory of the call, added up.
    in_use: usize,
    pub exceeded: bool,
}

impl MemoryLimiter {
    pub fn new(memory_bytes: usize) -> MemoryLimiter {
        MemoryLimiter {
            memory_bytes,
            in_use: 0,
            exceeded: false,
        }
    }
}

/// Most table elements a connector may have (function references).
const MAX_TABLE_ELEMENTS: usize = 200_000;

impl wasmtime::ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // A new memory grows from 0 to its initial size through here too.
        let total = self.in_use.saturating_sub(current).saturating_add(desired);
        if total > self.memory_bytes {
            self.exceeded = true;
            return Err(wasmtime::Error::msg(format!(
                "memory limit exceeded: the connector asked for {total} bytes in all, the limit is {}",
                self.memory_bytes
            )));
        }
        self.in_use = total;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}

#[cfg(test)]
mod tests {
    use super::{MemoryLimiter, one_line};
    use wasmtime::ResourceLimiter;

    #[test]
    fn the_memory_limit_covers_every_memory_of_a_call_together() {
        const MIB: usize = 1 << 20;
        let mut limiter = MemoryLimiter::new(10 * MIB);
        // Two memories of 4 MiB fit; growing one so that they pass 10 MiB
        // together does not.
        assert!(limiter.memory_growing(0, 4 * MIB, None).unwrap());
        assert!(limiter.memory_growing(0, 4 * MIB, None).unwrap());
        assert!(limiter.memory_growing(4 * MIB, 7 * MIB, None).is_err());
        assert!(limiter.exceeded);
        // Within the sum, a memory still grows.
        let mut limiter = MemoryLimiter::new(10 * MIB);
        assert!(limiter.memory_growing(0, 4 * MIB, None).unwrap());
        assert!(limiter.memory_growing(0, 4 * MIB, None).unwrap());
        assert!(limiter.memory_growing(4 * MIB, 5 * MIB, None).unwrap());
        assert!(!limiter.exceeded);
    }

    #[test]
    fn a_connectors_message_cannot_forge_log_lines() {
        let forged = "found 3\n2026-11-26T06:00:00Z  INFO quarry: user deleted\r\x1b[2J\u{2028}x";
        let line = one_line(forged);
        assert!(!line.contains(['\n', '\r', '\x1b', '\u{2028}']), "{line}");
        assert_eq!(
            line,
            "found 3\\n2026-11-26T06:00:00Z  INFO quarry: user deleted\\r\\u{1b}[2J\\u{2028}x"
        );
        assert_eq!(one_line("plain é"), "plain é");
    }
}
