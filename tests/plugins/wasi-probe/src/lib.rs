//! Imports WASI's environment and reports what it sees: the host's deny-all
//! WASI must load this component and show it no environment, no arguments
//! and no working directory.

wit_bindgen::generate!({
    world: "quarry:wasi-probe/probe",
    path: ["../../../wit/v1", "wit"],
    generate_all,
});

use exports::quarry::connector::search::{Document, Guest, SearchError, SearchRequest};
use wasi::cli::environment;

struct Probe;

impl Guest for Probe {
    fn search(_request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let seen = format!(
            "env={} args={} cwd={}",
            environment::get_environment().len(),
            environment::get_arguments().len(),
            environment::initial_cwd().unwrap_or_else(|| "none".into()),
        );
        Ok(vec![Document {
            id: "probe".into(),
            title: "what WASI showed".into(),
            content: seen,
            url: "https://example.com/probe".into(),
            author: None,
            created_at: None,
            updated_at: None,
            metadata: "{}".into(),
        }])
    }
}

export!(Probe);
