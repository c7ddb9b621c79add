//! Imports WASI's environment and sockets and reports what it sees: the
//! host's deny-all WASI must load this component and show it no
//! environment, no arguments and no working directory; and (query
//! `sockets`) refuse to create a TCP or UDP socket or to look a name up.

wit_bindgen::generate!({
    world: "quarry:wasi-probe/probe",
    path: ["../../../wit/v1", "wit"],
    generate_all,
});

use exports::quarry::connector::search::{Document, Guest, SearchError, SearchRequest};
use wasi::cli::environment;
use wasi::sockets::network::{ErrorCode, IpAddressFamily};
use wasi::sockets::{instance_network, ip_name_lookup, tcp_create_socket, udp_create_socket};

struct Probe;

impl Guest for Probe {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let seen = if request.query == "sockets" {
            sockets()
        } else {
            format!(
                "env={} args={} cwd={}",
                environment::get_environment().len(),
                environment::get_arguments().len(),
                environment::initial_cwd().unwrap_or_else(|| "none".into()),
            )
        };
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

/// What creating sockets and resolving a name gave.
fn sockets() -> String {
    let tcp = match tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4) {
        Ok(_) => "created".to_string(),
        Err(e) => code(e),
    };
    let udp = match udp_create_socket::create_udp_socket(IpAddressFamily::Ipv4) {
        Ok(_) => "created".to_string(),
        Err(e) => code(e),
    };
    let network = instance_network::instance_network();
    let dns = match ip_name_lookup::resolve_addresses(&network, "api.github.com") {
        Err(e) => code(e),
        Ok(stream) => loop {
            match stream.resolve_next_address() {
                Err(ErrorCode::WouldBlock) => stream.subscribe().block(),
                Err(e) => break code(e),
                Ok(Some(_)) => break "resolved".to_string(),
                Ok(None) => break "no-address".to_string(),
            }
        },
    };
    format!("tcp={tcp} udp={udp} dns={dns}")
}

fn code(error: ErrorCode) -> String {
    error.name().to_string()
}

export!(Probe);
