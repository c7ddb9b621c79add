//! The server among the environment variables it will meet where it runs.

use quarry_tests::server::Demo;

use super::QUESTION;

/// Kubernetes gives every pod in a namespace with a Service named
/// `quarry` `QUARRY_PORT`, `QUARRY_SERVICE_HOST`, `QUARRY_PORT_443_TCP`...;
/// a shell may hold `QUARRY_ROOT`. The server starts and answers, and
/// says in its log that it ignored them. (It used to refuse to start:
/// "invalid configuration: unknown field `port`".)
#[tokio::test]
async fn the_server_starts_among_kubernetes_service_variables() {
    let demo = Demo::start(&[
        ("QUARRY_PORT", "tcp://10.96.0.7:443"),
        ("QUARRY_SERVICE_HOST", "10.96.0.7"),
        ("QUARRY_SERVICE_PORT", "443"),
        ("QUARRY_PORT_443_TCP", "tcp://10.96.0.7:443"),
        ("QUARRY_PORT_443_TCP_ADDR", "10.96.0.7"),
        ("QUARRY_ROOT", "/srv/quarry"),
    ]);
    let reply = demo
        .query(demo.alice(), &serde_json::json!({ "query": QUESTION }))
        .await;
    reply.expect(200, None);
    let log = demo.log();
    assert!(
        log.contains("QUARRY_SERVICE_HOST") && log.contains("ignored"),
        "the log names what it ignored:\n{log}"
    );
}
