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
    // A misspelt key is still an error.
    let typo = Config::from_sources("allow_plain_http = true", env(&[("QUARRY_DATADIR", "/x")]));
    assert!(format!("{:#}", typo.unwrap_err()).contains("datadir"));
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
