//! Structured logs with `tracing`, to stderr. `RUST_LOG` (or `QUARRY_LOG`)
//! picks the levels; the default is `info`.

use tracing_subscriber::EnvFilter;

pub fn init(format: &str) {
    let filter = std::env::var("QUARRY_LOG")
        .ok()
        .map(EnvFilter::new)
        .unwrap_or_else(|| {
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"))
        });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = if format == "json" {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}
