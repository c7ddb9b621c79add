//! Cancelling a tool call for clients of the `initialize` era. A
//! 2026-07-28 client cancels by closing the request's stream, which rmcp
//! turns into its request's cancellation token. An older client sends a
//! separate `notifications/cancelled` POST instead, which stateless rmcp
//! answers 202 and ignores (there is no session to find the request in).
//! So the gate keeps its own small registry: each `tools/call` POST is
//! registered under (user, JSON-RPC id) with a token the tool watches, and
//! a `notifications/cancelled` from the same user for that id fires it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::http::request::Parts;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Mcp;
use super::caller::McpCaller;

type Key = (String, String);

/// The tool calls in flight, by (user, JSON-RPC id).
#[derive(Default)]
pub struct Cancels {
    /// Each with its registration's number.
    running: Mutex<HashMap<Key, (u64, CancellationToken)>>,
    registered: AtomicU64,
}

/// A tool call's registration: the token a legacy cancellation fires. It
/// leaves the registry when its last holder (the gate, the request's parts
/// inside rmcp) drops it.
pub struct Registration {
    key: Key,
    number: u64,
    pub token: CancellationToken,
    cancels: Arc<Cancels>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut running = self.cancels.running.lock().expect("cancels lock");
        // A later call that reused the id has its own token: leave it.
        if running
            .get(&self.key)
            .is_some_and(|(number, _)| *number == self.number)
        {
            running.remove(&self.key);
        }
    }
}

/// In a request's extensions: the legacy-cancel token of its tool call.
#[derive(Clone)]
pub struct LegacyCancel(pub Arc<Registration>);

/// Reads a POST's one message: registers a `tools/call` (putting its
/// [`LegacyCancel`] in `parts`), or fires the token a
/// `notifications/cancelled` names. Returns what the gate keeps until the
/// response is sent.
pub fn track(mcp: &Mcp, parts: &mut Parts, message: &Value) -> Option<Arc<Registration>> {
    let user = parts.extensions.get::<McpCaller>()?.user.id.clone();
    match message.get("method").and_then(Value::as_str)? {
        "tools/call" => {
            let id = message.get("id")?.to_string();
            let registration = Arc::new(mcp.cancels.register((user, id)));
            parts.extensions.insert(LegacyCancel(registration.clone()));
            Some(registration)
        }
        "notifications/cancelled" => {
            let id = message.pointer("/params/requestId")?.to_string();
            mcp.cancels.cancel(&(user, id));
            None
        }
        _ => None,
    }
}

impl Cancels {
    fn register(self: &Arc<Self>, key: Key) -> Registration {
        let token = CancellationToken::new();
        let number = self.registered.fetch_add(1, Ordering::Relaxed);
        self.running
            .lock()
            .expect("cancels lock")
            .insert(key.clone(), (number, token.clone()));
        Registration {
            key,
            number,
            token,
            cancels: self.clone(),
        }
    }

    fn cancel(&self, key: &Key) {
        if let Some((_, token)) = self.running.lock().expect("cancels lock").get(key) {
            tracing::info!("mcp: a tool call was cancelled by its client");
            token.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancellation_fires_only_its_users_call_and_registrations_leave() {
        let cancels = Arc::new(Cancels::default());
        let alice = cancels.register(("alice".into(), "1".into()));
        let bob = cancels.register(("bob".into(), "1".into()));
        cancels.cancel(&("alice".into(), "1".into()));
        assert!(alice.token.is_cancelled());
        assert!(
            !bob.token.is_cancelled(),
            "another user's call with the same id"
        );
        drop(alice);
        drop(bob);
        assert!(cancels.running.lock().unwrap().is_empty());
    }
}
