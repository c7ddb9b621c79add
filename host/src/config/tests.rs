//! The configuration from TOML and the environment, defaults and checks.

use super::*;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn environment_overrides_every_key() {
    let config = Config::from_sources(
        "data_dir = \"/from/file\"\nallow_plain_http = true\n[limits.query]\nminute = 1\nday = 2\n",
        env(&[
            ("QUARRY_DATA_DIR", "/from/env"),
            ("QUARRY_LIMITS__QUERY__MINUTE", "99"),
            (
                "QUARRY_UPSTREAM__HOST_OVERRIDES",
                "{ \"api.github.com\" = \"127.0.0.1:9443\" }",
            ),
            ("QUARRY_SANDBOX__MAX_FETCHES", "3"),
            ("PATH", "/usr/bin"),
        ]),
    )
    .unwrap();
    assert_eq!(config.data_dir, PathBuf::from("/from/env"));
    assert_eq!(config.limits.query, Window { minute: 99, day: 2 });
    assert_eq!(
        config.upstream.host_overrides["api.github.com"].port(),
        9443
    );
    assert_eq!(config.sandbox.max_fetches, 3);
}

#[test]
fn the_tests_and_tools_variables_are_not_configuration_keys() {
    // A shell that ran `tools/engines` exports QUARRY_TEST_*; `admin
    // connect` reads its token from QUARRY_CONNECT_TOKEN.
    let config = Config::from_sources(
        "allow_plain_http = true",
        env(&[
            ("QUARRY_TEST_POSTGRES_URL", "postgres://127.0.0.1/test"),
            ("QUARRY_TEST_REDIS_URL", "redis://127.0.0.1:6379"),
            ("QUARRY_CONNECT_TOKEN", "secret"),
            ("QUARRY_LOG", "warn"),
        ]),
    );
    assert!(config.is_ok(), "{:#}", config.unwrap_err());
    // A misspelt key is still an error, which names the key meant.
    for typo in ["QUARRY_DATADIR", "QUARRY_DATA_DIRS", "QUARRY_LISTN"] {
        let refused = Config::from_sources("allow_plain_http = true", env(&[(typo, "/x")]));
        let said = format!("{:#}", refused.unwrap_err());
        assert!(
            said.contains(typo) && said.contains("did you mean"),
            "{said}"
        );
    }
}

#[test]
fn plain_http_only_on_loopback_and_only_when_asked() {
    assert!(Config::from_sources("", env(&[])).is_err());
    assert!(Config::from_sources("allow_plain_http = true", env(&[])).is_ok());
    let public = Config::from_sources(
        "allow_plain_http = true\nlisten = \"0.0.0.0:8080\"",
        env(&[]),
    );
    assert!(format!("{:#}", public.unwrap_err()).contains("loopback"));
}

#[test]
fn webhook_keys_have_defaults_and_environment_overrides() {
    let config = Config::from_sources("allow_plain_http = true", env(&[])).unwrap();
    assert_eq!(
        config.webhooks.retry_schedule_seconds,
        [0, 5, 300, 1800, 7200, 18_000, 36_000, 36_000]
    );
    assert_eq!(config.webhooks.timeout_ms, 10_000);
    assert!(!config.webhooks.allow_plain_http && !config.webhooks.allow_private_targets);
    let config = Config::from_sources(
        "allow_plain_http = true",
        env(&[
            ("QUARRY_WEBHOOKS__RETRY_SCHEDULE_SECONDS", "[0,1,1,1]"),
            ("QUARRY_WEBHOOKS__ALLOW_PRIVATE_TARGETS", "true"),
            (
                "QUARRY_WEBHOOKS__ENDPOINTS",
                "[{ url = \"https://ops.example.com/hook?key=k\", secret = \"whsec_c2VjcmV0\" }]",
            ),
        ]),
    )
    .unwrap();
    assert_eq!(config.webhooks.retry_schedule_seconds, [0, 1, 1, 1]);
    assert!(config.webhooks.allow_private_targets);
    assert_eq!(config.webhooks.endpoints[0].secret, "whsec_c2VjcmV0");
    let shown = format!("{config:?}");
    assert!(
        !shown.contains("whsec_") && !shown.contains("key=k"),
        "Debug hides secrets: {shown}"
    );
    let empty = Config::from_sources(
        "allow_plain_http = true\n[webhooks]\nretry_schedule_seconds = []",
        env(&[]),
    );
    assert!(format!("{:#}", empty.unwrap_err()).contains("retry_schedule_seconds"));
}

#[test]
fn unknown_keys_are_refused() {
    let err = Config::from_sources("allow_plain_http = true\nlisten_adress = \"x\"", env(&[]))
        .unwrap_err();
    assert!(format!("{err:#}").contains("listen_adress"));
}

#[test]
fn the_embedded_page_cache_is_bounded_and_positive() {
    let config = Config::from_sources("allow_plain_http = true", env(&[])).unwrap();
    assert_eq!(config.storage.cache_bytes(), 64 << 20);
    let config = Config::from_sources(
        "allow_plain_http = true\n[storage]\ncache_mib = 16\n",
        env(&[]),
    )
    .unwrap();
    assert_eq!(config.storage.cache_bytes(), 16 << 20);
    let zero = Config::from_sources(
        "allow_plain_http = true\n[storage]\ncache_mib = 0\n",
        env(&[]),
    );
    assert!(format!("{:#}", zero.unwrap_err()).contains("cache_mib"));
}

/// Kubernetes gives every pod of a namespace with a Service named
/// `quarry` these variables; the server must start with them (and a
/// shell's `QUARRY_ROOT`). A misspelt key under a known one still stops
/// it.
#[test]
fn variables_that_name_no_configuration_key_are_ignored_not_fatal() {
    let kubernetes = [
        ("QUARRY_PORT", "tcp://10.0.0.7:443"),
        ("QUARRY_SERVICE_HOST", "10.0.0.7"),
        ("QUARRY_SERVICE_PORT", "443"),
        ("QUARRY_SERVICE_PORT_HTTPS", "443"),
        ("QUARRY_PORT_443_TCP", "tcp://10.0.0.7:443"),
        ("QUARRY_PORT_443_TCP_PROTO", "tcp"),
        ("QUARRY_PORT_443_TCP_PORT", "443"),
        ("QUARRY_PORT_443_TCP_ADDR", "10.0.0.7"),
        ("QUARRY_ROOT", "/srv/quarry"),
        ("QUARRY_TOKEN_TTL_SECONDS", "60"),
    ];
    let config = Config::from_sources("allow_plain_http = true", env(&kubernetes)).unwrap();
    assert_eq!(config.token_ttl_seconds, 60, "known keys still apply");
    assert_eq!(config.ignored_env.len(), 9, "{:?}", config.ignored_env);
    assert!(config.ignored_env.contains(&"QUARRY_PORT".to_string()));
    let misspelt = Config::from_sources(
        "allow_plain_http = true",
        env(&[("QUARRY_LIMITS__QUERY__MINUTES", "5")]),
    );
    assert!(format!("{:#}", misspelt.unwrap_err()).contains("minutes"));
}

/// `TOP_LEVEL_KEYS` is exactly `Config`'s fields: the list serde gives
/// when refusing an unknown one.
#[test]
fn the_top_level_keys_are_the_configurations_fields() {
    let err = Config::from_sources("allow_plain_http = true\nnot_a_key = 1", env(&[]))
        .unwrap_err()
        .to_string();
    let expected = err
        .split_once("expected one of ")
        .map(|(_, list)| list)
        .unwrap_or_else(|| panic!("serde names the fields: {err}"));
    let mut fields: Vec<&str> = expected
        .split(", ")
        .map(|name| name.trim().trim_matches('`'))
        .collect();
    fields.sort_unstable();
    let mut listed = super::TOP_LEVEL_KEYS.to_vec();
    listed.sort_unstable();
    assert_eq!(fields, listed);
}
