//! The import allow-list: what a component may ask the host for.
//!
//! A connector may import the contract's `http` and `log` interfaces, and,
//! so that components built for `wasm32-wasip2` (or by componentize-py and
//! jco) load, the parts of WASI 0.2 that the deny-all WASI context answers
//! with nothing. Sockets, HTTP and anything else are refused at load time,
//! with the offending import named.

use anyhow::{Result, bail};

use super::v1;

/// WASI 0.2 interfaces answered by the deny-all context.
const DENY_ALL_WASI: &[&str] = &[
    "wasi:io/error",
    "wasi:io/streams",
    "wasi:io/poll",
    "wasi:clocks/wall-clock",
    "wasi:clocks/monotonic-clock",
    "wasi:random/random",
    "wasi:random/insecure",
    "wasi:random/insecure-seed",
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/stderr",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:cli/terminal-stderr",
    "wasi:filesystem/types",
    "wasi:filesystem/preopens",
];

/// What the imports of a component say about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportSummary {
    pub uses_wasi: bool,
}

/// Checks every import name of a component targeting contract major
/// `wit_major`.
pub fn check<'a>(
    wit_major: u64,
    imports: impl IntoIterator<Item = &'a str>,
) -> Result<ImportSummary> {
    let mut uses_wasi = false;
    let mut refused = Vec::new();
    for name in imports {
        let (interface, version) = name.split_once('@').unwrap_or((name, ""));
        let major = version
            .split('.')
            .next()
            .and_then(|m| m.parse::<u64>().ok());
        if interface == v1::HTTP_IMPORT || interface == v1::LOG_IMPORT {
            if major != Some(wit_major) {
                refused.push(format!(
                    "{name} (the manifest declares contract major {wit_major})"
                ));
            }
        } else if DENY_ALL_WASI.contains(&interface) && version.starts_with("0.2.") {
            uses_wasi = true;
        } else {
            refused.push(name.to_string());
        }
    }
    if !refused.is_empty() {
        bail!(
            "component imports {}, which the connector contract does not allow: a connector may import only \
             quarry:connector/http and quarry:connector/log (plus a deny-all subset of WASI 0.2 without sockets or http)",
            refused.join(", ")
        );
    }
    Ok(ImportSummary { uses_wasi })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contract_and_deny_all_wasi_pass() {
        let s = check(
            1,
            ["quarry:connector/http@1.0.0", "quarry:connector/log@1.0.0"],
        )
        .unwrap();
        assert!(!s.uses_wasi);
        let s = check(
            1,
            [
                "quarry:connector/http@1.0.0",
                "wasi:cli/environment@0.2.3",
                "wasi:io/streams@0.2.0",
            ],
        )
        .unwrap();
        assert!(s.uses_wasi);
    }

    #[test]
    fn anything_else_is_refused_by_name() {
        let err = check(1, ["quarry:connector/http@1.0.0", "wasi:sockets/tcp@0.2.0"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("wasi:sockets/tcp@0.2.0"), "{err}");
        assert!(check(1, ["wasi:http/outgoing-handler@0.2.0"]).is_err());
        assert!(check(1, ["quarry:connector/http@2.0.0"]).is_err());
        assert!(check(1, ["env"]).is_err());
    }
}
