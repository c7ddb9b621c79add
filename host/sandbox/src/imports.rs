//! The import allow-list: what a component may ask the host for.
//!
//! A connector may import the contract's `http` and `log` interfaces, and,
//! so that components built for `wasm32-wasip2` (or by componentize-py and
//! jco) load, the parts of WASI 0.2 that the deny-all WASI context answers
//! with nothing. WASI's HTTP and anything else are refused at load time,
//! with the offending import named.
//!
//! componentize-py links all of WASI into every Python component, sockets
//! included, so the socket interfaces are on the list too, answered by the
//! same deny-all context: it refuses to create a TCP or UDP socket and to
//! look a name up, and lets no address through (`state.rs`; proved by the
//! sandbox tests). The only way out stays `quarry:connector/http`.

use anyhow::{Result, bail};

use super::v1;
use quarry_guard::problem::Problem;

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
    // Refused at run time by the deny-all context: no TCP, no UDP, no name
    // lookups, no address allowed.
    "wasi:sockets/network",
    "wasi:sockets/instance-network",
    "wasi:sockets/tcp",
    "wasi:sockets/tcp-create-socket",
    "wasi:sockets/udp",
    "wasi:sockets/udp-create-socket",
    "wasi:sockets/ip-name-lookup",
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
    let (summary, problems) = inspect(wit_major, imports);
    if !problems.is_empty() {
        bail!("{}", quarry_guard::problem::join_errors(&problems));
    }
    Ok(summary)
}

/// Like [`check`], with one problem per refused import (`import` outside
/// the allow-list, `wit-version` for the contract's own interfaces at
/// another major version).
pub fn inspect<'a>(
    wit_major: u64,
    imports: impl IntoIterator<Item = &'a str>,
) -> (ImportSummary, Vec<Problem>) {
    let mut uses_wasi = false;
    let mut problems = Vec::new();
    for name in imports {
        let (interface, version) = name.split_once('@').unwrap_or((name, ""));
        let major = version
            .split('.')
            .next()
            .and_then(|m| m.parse::<u64>().ok());
        if interface == v1::HTTP_IMPORT || interface == v1::LOG_IMPORT {
            if major != Some(wit_major) {
                problems.push(Problem::error(
                    "wit-version",
                    format!(
                        "component imports {name}, but the manifest declares contract major {wit_major}: \
                         build against the wit/ folder of the version the manifest names"
                    ),
                ));
            }
        } else if DENY_ALL_WASI.contains(&interface) && version.starts_with("0.2.") {
            uses_wasi = true;
        } else {
            problems.push(Problem::error(
                "import",
                format!(
                    "component imports {name}, which the connector contract does not allow: a connector may \
                     import only quarry:connector/http and quarry:connector/log (plus a deny-all WASI 0.2 \
                     without http)"
                ),
            ));
        }
    }
    (ImportSummary { uses_wasi }, problems)
}

/// The newest minor version of contract 1 this host links (`wit/v1.1`).
pub const HOST_MINOR_1: u64 = 1;

/// Minor-version problems of a component whose manifest declares contract
/// `declared` (such as `1.0.0`): the contract's own interfaces may not be
/// imported at a minor version above the declared one (a component that
/// uses `fetch-many` must say `wit = "1.1.0"`), nor above what this host
/// knows.
pub fn minor_problems<'a>(
    declared: &str,
    imports: impl IntoIterator<Item = &'a str>,
) -> Vec<Problem> {
    let minor_of = |version: &str| -> Option<(u64, u64)> {
        let mut parts = version.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        Some((major, minor))
    };
    let Some((declared_major, declared_minor)) = minor_of(declared) else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    for name in imports {
        let (interface, version) = name.split_once('@').unwrap_or((name, ""));
        if interface != v1::HTTP_IMPORT && interface != v1::LOG_IMPORT {
            continue;
        }
        let Some((major, minor)) = minor_of(version) else {
            continue;
        };
        if major != declared_major {
            continue; // reported by `inspect`
        }
        if major == 1 && minor > HOST_MINOR_1 {
            problems.push(Problem::error(
                "wit-version",
                format!(
                    "component imports {name}, but this host knows quarry:connector only up to \
                     1.{HOST_MINOR_1}: build against wit/v1.{HOST_MINOR_1} or an older minor version"
                ),
            ));
        } else if minor > declared_minor {
            problems.push(Problem::error(
                "wit-version",
                format!(
                    "component imports {name}, but its manifest says wit = \"{declared}\": \
                     declare wit = \"{major}.{minor}.0\" (or build against wit/v{major})"
                ),
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minor_above_the_manifests_is_refused() {
        let p = minor_problems(
            "1.0.0",
            ["quarry:connector/http@1.1.0", "quarry:connector/log@1.1.0"],
        );
        assert_eq!(p.len(), 2);
        assert!(
            p[0].message.contains("manifest says wit = \"1.0.0\""),
            "{:?}",
            p[0]
        );
        assert!(minor_problems("1.1.0", ["quarry:connector/http@1.1.0"]).is_empty());
        assert!(minor_problems("1.1.0", ["quarry:connector/http@1.0.0"]).is_empty());
        let p = minor_problems("1.2.0", ["quarry:connector/http@1.2.0"]);
        assert!(p[0].message.contains("only up to 1.1"), "{:?}", p[0]);
    }

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
        let err = check(
            1,
            [
                "quarry:connector/http@1.0.0",
                "wasi:http/outgoing-handler@0.2.0",
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("wasi:http/outgoing-handler@0.2.0"), "{err}");
        assert!(check(1, ["wasi:http/types@0.2.0"]).is_err());
        assert!(check(1, ["wasi:sockets/tcp@0.3.0"]).is_err());
        assert!(check(1, ["quarry:connector/http@2.0.0"]).is_err());
        assert!(check(1, ["env"]).is_err());
    }

    #[test]
    fn every_refused_import_is_a_problem_of_its_own() {
        let (_, problems) = inspect(
            1,
            ["wasi:http/types@0.2.0", "quarry:connector/log@2.0.0", "env"],
        );
        let codes: Vec<_> = problems.iter().map(|p| p.code).collect();
        assert_eq!(codes, ["import", "wit-version", "import"]);
    }

    #[test]
    fn python_components_wasi_imports_pass() {
        // What componentize-py 0.25.1 imports besides the contract.
        let s = check(
            1,
            [
                "wasi:sockets/network@0.2.9",
                "wasi:sockets/instance-network@0.2.9",
                "wasi:sockets/udp@0.2.9",
                "wasi:sockets/udp-create-socket@0.2.9",
                "wasi:sockets/tcp@0.2.9",
                "wasi:sockets/tcp-create-socket@0.2.9",
                "wasi:sockets/ip-name-lookup@0.2.9",
                "wasi:filesystem/preopens@0.2.9",
            ],
        )
        .unwrap();
        assert!(s.uses_wasi);
    }
}
