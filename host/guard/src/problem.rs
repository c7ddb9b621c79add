//! One thing wrong with a connector, as the load path finds it.
//!
//! The registry refuses a connector with any error; `quarry connector
//! check` prints them all, warnings included. Both come from the same
//! rules: the manifest's validation ([`crate::manifest`]), and in the host,
//! the import allow-list (`connectors::runtime::imports`) and the runtime's
//! checks of a component (`Runtime::inspect`).

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The host refuses the connector.
    Error,
    /// The host loads it, but something is probably wrong.
    Warning,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub severity: Severity,
    /// The rule, named for scripts and tests: `write-scope`,
    /// `post-not-query`, `import`, `wit-version`... (docs/connectors.md
    /// lists them).
    pub code: &'static str,
    pub message: String,
}

impl Problem {
    pub fn error(code: &'static str, message: impl Into<String>) -> Problem {
        Problem {
            severity: Severity::Error,
            code,
            message: message.into(),
        }
    }

    pub fn warning(code: &'static str, message: impl Into<String>) -> Problem {
        Problem {
            severity: Severity::Warning,
            code,
            message: message.into(),
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The same problem, its message prefixed (`in FILE: ...`).
    pub fn within(mut self, prefix: &str) -> Problem {
        self.message = format!("{prefix}: {}", self.message);
        self
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The messages of the errors among `problems`, joined as one line.
pub fn join_errors(problems: &[Problem]) -> String {
    problems
        .iter()
        .filter(|p| p.is_error())
        .map(|p| p.message.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}
