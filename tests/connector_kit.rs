//! `quarry connector new/check/install`, through the real binary.
//!
//! `check` gets one fixture per rule it enforces (a planted problem in an
//! otherwise good connector: the built Slack connector and its manifest),
//! and the registry is asked about each fixture too: the check and the
//! host must agree on what loads.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use quarry::connectors::{Runtime, RuntimeConfig, registry};
use quarry_tests::server::quarry_binary;
use quarry_tests::{Harness, built_plugins, component_cache, repo_root, request};
use serde_json::Value;

/// `quarry connector ARGS...`.
fn quarry(args: &[&str]) -> Output {
    Command::new(quarry_binary())
        .arg("connector")
        .args(args)
        .current_dir(repo_root())
        .output()
        .expect("run quarry")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `quarry connector check --json PATH`: the report and the exit status.
fn check(path: &Path, extra: &[&str]) -> (Value, i32) {
    let mut args = vec!["check", "--json"];
    args.extend_from_slice(extra);
    let path = path.to_str().unwrap();
    args.push(path);
    let output = quarry(&args);
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("check printed no JSON ({e}): {}", text(&output)));
    (report, output.status.code().expect("an exit status"))
}

fn codes(report: &Value, severity: &str) -> Vec<String> {
    report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["severity"] == severity)
        .map(|p| p["code"].as_str().unwrap().to_string())
        .collect()
}

fn messages(report: &Value) -> String {
    report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let field = |name: &str| p[name].as_str().unwrap_or_default().to_string();
            format!(
                "{}[{}]: {}",
                field("severity"),
                field("code"),
                field("message")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The built Slack connector and its manifest, good as they are.
fn slack() -> (Vec<u8>, String) {
    let built = built_plugins();
    (
        std::fs::read(built.join("slack.wasm")).unwrap(),
        std::fs::read_to_string(built.join("slack.toml")).unwrap(),
    )
}

/// A pair `<id>.wasm` + `<id>.toml` in a folder of its own; returns the
/// component's path (what `check` is given).
fn fixture(dir: &Path, id: &str, wasm: &[u8], manifest: &str) -> PathBuf {
    let path = dir.join(format!("{id}.wasm"));
    std::fs::write(&path, wasm).unwrap();
    std::fs::write(dir.join(format!("{id}.toml")), manifest).unwrap();
    path
}

/// Whether the registry's own load path accepts the pair.
fn host_loads(wasm: &Path) -> Result<(), String> {
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(component_cache()),
        ..RuntimeConfig::default()
    })
    .unwrap();
    let id = wasm.file_stem().unwrap().to_str().unwrap();
    registry::load(&runtime, id, wasm, &wasm.with_extension("toml"))
        .map(|_| ())
        .map_err(|e| format!("{e:#}"))
}

/// Checks a planted problem: the check names it with `code` (an error),
/// exits 1, and the host refuses the pair too.
fn assert_refused(wasm: &Path, code: &str, needle: &str) -> Value {
    let (report, status) = check(wasm, &[]);
    assert!(
        codes(&report, "error").iter().any(|c| c == code),
        "no error [{code}] in:\n{}",
        messages(&report)
    );
    assert!(
        messages(&report).contains(needle),
        "{needle:?} is not named in:\n{}",
        messages(&report)
    );
    assert_eq!(status, 1, "exit status with errors");
    let refused = host_loads(wasm).expect_err("the host refuses what the check calls an error");
    assert!(refused.contains(needle), "{refused}");
    report
}

const EXTRA_IMPORT: &str = r#"(component (import "wasi:http/outgoing-handler@0.2.0" (instance)))"#;

#[test]
fn a_good_connector_passes_and_the_host_loads_it() {
    let (report, status) = check(&built_plugins().join("slack.wasm"), &[]);
    assert_eq!(status, 0, "{}", messages(&report));
    assert_eq!(report["errors"], 0);
    assert_eq!(report["warnings"], 0, "{}", messages(&report));
    assert_eq!(report["contract"], "1.1.0");
    assert!(report["load_ms"].as_f64().is_some());
    assert!(
        report["imports"]
            .as_array()
            .unwrap()
            .contains(&"quarry:connector/http@1.1.0".into())
    );
    // The text form, as a person reads it.
    let output = quarry(&[
        "check",
        built_plugins().join("slack.wasm").to_str().unwrap(),
    ]);
    assert!(output.status.success());
    assert!(
        text(&output).contains("0 error(s), 0 warning(s): the host would load this connector"),
        "{}",
        text(&output)
    );
}

#[test]
fn an_import_outside_the_allow_list_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let (_, manifest) = slack();
    let wasm = fixture(
        dir.path(),
        "slack",
        &wat::parse_str(EXTRA_IMPORT).unwrap(),
        &manifest,
    );
    let report = assert_refused(&wasm, "import", "wasi:http/outgoing-handler@0.2.0");
    // The missing export is reported as well, not hidden by the first problem.
    assert!(codes(&report, "error").contains(&"export".to_string()));
}

#[test]
fn a_write_scope_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let (wasm, manifest) = slack();
    let manifest = manifest.replace(
        r#"scopes = [{ name = "search:read", read_only = true }]"#,
        r#"scopes = [{ name = "search:read", read_only = true }, { name = "chat:write", read_only = false }]"#,
    );
    assert!(manifest.contains("chat:write"));
    let wasm = fixture(dir.path(), "slack", &wasm, &manifest);
    assert_refused(&wasm, "write-scope", "\"chat:write\" is not read-only");
}

#[test]
fn a_post_route_that_is_not_a_query_route_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let (wasm, manifest) = slack();
    let manifest = manifest.replace(r#"method = "GET""#, r#"method = "POST""#);
    let wasm = fixture(dir.path(), "slack", &wasm, &manifest);
    assert_refused(&wasm, "post-not-query", "not marked as a query route");
}

#[test]
fn a_wit_version_the_host_does_not_run_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let (wasm, manifest) = slack();
    // The manifest names a contract major this host lacks.
    let wasm_path = fixture(
        dir.path(),
        "slack",
        &wasm,
        &manifest.replace(r#"wit = "1.1.0""#, r#"wit = "2.0.0""#),
    );
    assert_refused(
        &wasm_path,
        "wit-version",
        "wit version 2.0.0 is not supported",
    );

    // A component built against another major than its manifest says.
    let other = tempfile::tempdir().unwrap();
    let v2 =
        wat::parse_str(r#"(component (import "quarry:connector/http@2.0.0" (instance)))"#).unwrap();
    let wasm_path = fixture(other.path(), "slack", &v2, &manifest);
    assert_refused(
        &wasm_path,
        "wit-version",
        "quarry:connector/http@2.0.0, but the manifest declares contract major 1",
    );

    // A component importing contract 1.1 while its manifest says 1.0.
    let older = tempfile::tempdir().unwrap();
    let wasm_path = fixture(
        older.path(),
        "slack",
        &wasm,
        &manifest.replace(r#"wit = "1.1.0""#, r#"wit = "1.0.0""#),
    );
    assert_refused(
        &wasm_path,
        "wit-version",
        r#"quarry:connector/http@1.1.0, but its manifest says wit = "1.0.0""#,
    );

    // Same major, a later minor than the component's: the host runs it,
    // the check warns.
    let minor = tempfile::tempdir().unwrap();
    let wasm_path = fixture(
        minor.path(),
        "slack",
        &wasm,
        &manifest.replace(r#"wit = "1.1.0""#, r#"wit = "1.2.0""#),
    );
    let (report, status) = check(&wasm_path, &[]);
    assert_eq!(status, 0, "{}", messages(&report));
    assert_eq!(codes(&report, "warning"), ["wit-version"]);
    host_loads(&wasm_path).expect("the host runs a component of the same major");
}

#[test]
fn a_malformed_manifest_is_found_and_the_component_still_checked() {
    let dir = tempfile::tempdir().unwrap();
    let (wasm, manifest) = slack();
    let broken = manifest.replace(r#"label = "Slack""#, r#"label = "Slack"#);
    let wasm = fixture(dir.path(), "slack", &wasm, &broken);
    let report = assert_refused(&wasm, "toml", "manifest is not valid TOML");
    // The check went on to the component.
    assert_eq!(report["contract"], "1.1.0");

    // A manifest missing a required key is malformed too.
    let other = tempfile::tempdir().unwrap();
    let (bytes, _) = slack();
    let no_routes = manifest.split("[[routes]]").next().unwrap().to_string();
    let wasm = fixture(other.path(), "slack", &bytes, &no_routes);
    assert_refused(&wasm, "toml", "routes");
}

#[test]
fn a_missing_revocation_endpoint_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let (wasm, manifest) = slack();
    let manifest: String = manifest
        .lines()
        .filter(|l| !l.starts_with("revoke"))
        .collect::<Vec<_>>()
        .join("\n");
    let wasm = fixture(dir.path(), "slack", &wasm, &manifest);
    let (report, status) = check(&wasm, &[]);
    assert_eq!(codes(&report, "warning"), ["no-revocation"]);
    assert_eq!(status, 0, "warnings alone pass");
    host_loads(&wasm).expect("the host does not act on warnings");
    let (_, strict) = check(&wasm, &["--deny-warnings"]);
    assert_eq!(strict, 1);
}

#[test]
fn a_read_only_scope_named_like_a_write_is_refused_unless_reviewed() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, manifest) = slack();
    let write_looking = r#"name = "chat:write", read_only = true"#;
    let manifest = manifest.replace(r#"name = "search:read", read_only = true"#, write_looking);
    assert!(manifest.contains(write_looking));
    let wasm = fixture(dir.path(), "slack", &bytes, &manifest);
    let report = assert_refused(
        &wasm,
        "write-looking-scope",
        r#"oauth scope "chat:write" is marked read-only, but its name says "write""#,
    );
    assert!(
        messages(&report).contains("reviewed_read_only"),
        "the way out is named"
    );

    // A reviewer's reason lets it through, in the check and in the host.
    let reviewed = tempfile::tempdir().unwrap();
    let manifest = manifest.replace(
        write_looking,
        r#"name = "chat:write", read_only = true, reviewed_read_only = "reviewed: this vendor's chat:write only reads (its scope reference)""#,
    );
    let wasm = fixture(reviewed.path(), "slack", &bytes, &manifest);
    let (report, status) = check(&wasm, &[]);
    assert_eq!(status, 0, "{}", messages(&report));
    assert_eq!(report["warnings"], 0, "{}", messages(&report));
    host_loads(&wasm).expect("the host loads a reviewed scope");

    // An empty reason is no review.
    let blank = tempfile::tempdir().unwrap();
    let manifest = manifest.replace(
        r#"reviewed_read_only = "reviewed: this vendor's chat:write only reads (its scope reference)""#,
        r#"reviewed_read_only = " ""#,
    );
    let wasm = fixture(blank.path(), "slack", &bytes, &manifest);
    assert_refused(&wasm, "review", "reviewed_read_only is empty");
}

#[test]
fn a_query_route_named_like_a_write_is_refused_unless_reviewed() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, manifest) = slack();
    let route = "\n[[routes]]\nmethod = \"POST\"\nurl = \"https://slack.com/api/chat.postMessage\"\nkind = \"query\"\n";
    let with_route = format!("{manifest}{route}");
    let wasm = fixture(dir.path(), "slack", &bytes, &with_route);
    assert_refused(
        &wasm,
        "write-looking-route",
        r#"POST https://slack.com/api/chat.postMessage is marked kind = "query", but its path ends in "chat.postMessage", which names a write ("post")"#,
    );

    // A path that names no search is refused the same way.
    let other = tempfile::tempdir().unwrap();
    let things = with_route.replace("chat.postMessage", "things.list");
    let wasm = fixture(other.path(), "slack", &bytes, &things);
    assert_refused(&wasm, "write-looking-route", "which names no search");

    // With a reviewer's reason, the check and the host accept it.
    let reviewed = tempfile::tempdir().unwrap();
    let manifest = format!(
        "{with_route}reviewed_read_only = \"a test fixture: the connector never calls it\"\n"
    );
    let wasm = fixture(reviewed.path(), "slack", &bytes, &manifest);
    let (report, status) = check(&wasm, &[]);
    assert_eq!(status, 0, "{}", messages(&report));
    assert_eq!(report["errors"], 0, "{}", messages(&report));
    host_loads(&wasm).expect("the host loads a reviewed route");
}

#[test]
fn every_problem_is_reported_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (_, manifest) = slack();
    let manifest = manifest
        .replace(r#"id = "slack""#, r#"id = "slack-two""#)
        .replace(r#"method = "GET""#, r#"method = "POST""#)
        .replace("read_only = true", "read_only = false")
        .replace("max_fetches = 4", "max_fetches = 0");
    let wasm = fixture(
        dir.path(),
        "slack",
        &wat::parse_str(EXTRA_IMPORT).unwrap(),
        &manifest,
    );
    let (report, status) = check(&wasm, &[]);
    assert_eq!(status, 1);
    let found = codes(&report, "error");
    for code in [
        "id-mismatch",
        "post-not-query",
        "write-scope",
        "limits",
        "import",
        "export",
    ] {
        assert!(
            found.iter().any(|c| c == code),
            "[{code}] missing from:\n{}",
            messages(&report)
        );
    }
}

#[test]
fn what_is_not_a_component_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let (_, manifest) = slack();
    let wasm = fixture(dir.path(), "slack", b"\0asm garbage", &manifest);
    assert_refused(&wasm, "component", "compiling the component");
}

#[test]
fn a_check_that_cannot_run_exits_2() {
    let output = quarry(&["check", "/nonexistent/thing.wasm"]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(text(&output).contains("does not exist"));
    // A crate folder that was never built.
    let dir = tempfile::tempdir().unwrap();
    let output = quarry(&[
        "new",
        "unbuilt",
        "--dir",
        dir.path().join("unbuilt").to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output));
    let output = quarry(&["check", dir.path().join("unbuilt").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output).contains("no built component")
            && text(&output).contains("quarry connector build"),
        "{}",
        text(&output)
    );
}

#[test]
fn build_refuses_a_folder_that_is_not_a_connector_crate() {
    let dir = tempfile::tempdir().unwrap();
    let output = quarry(&["build", dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        text(&output)
            .contains("is not a connector crate: it needs a Cargo.toml and a connector.toml"),
        "{}",
        text(&output)
    );
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "nothing was written"
    );
}

#[test]
fn new_refuses_bad_names_and_busy_folders() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("x");
    let output = quarry(&["new", "Bad Name", "--dir", target.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output).contains("cannot be a connector id"));
    std::fs::create_dir_all(&target).unwrap();
    std::fs::write(target.join("keep.txt"), "mine").unwrap();
    let output = quarry(&["new", "acme", "--dir", target.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output).contains("not empty")
            && text(&output).contains("--dir names the crate's folder itself"),
        "{}",
        text(&output)
    );
    assert_eq!(
        std::fs::read_to_string(target.join("keep.txt")).unwrap(),
        "mine"
    );
}

/// Waits (bounded) until `condition` holds; the watcher polls every 100 ms.
async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    for _ in 0..300 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for: {what}");
}

/// `quarry connector ARGS...` run in `dir`, as an author outside the
/// checkout runs it. The wasm32 build shares the workspace's cargo target
/// folder (`CARGO_TARGET_DIR`), whose dependencies tools/test already
/// compiled for wasm32: the crate builds in seconds instead of minutes.
fn quarry_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(quarry_binary())
        .arg("connector")
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", repo_root().join("target"))
        .output()
        .expect("run quarry")
}

/// Every file under `dir`, but its `target` folder.
fn crate_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && path != dir.join("target") {
                stack.push(path);
            } else if path.is_file() {
                files.push(path);
            }
        }
    }
    files
}

#[tokio::test]
async fn out_of_the_tree_a_scaffolded_crate_builds_checks_clean_and_loads() {
    let work = tempfile::tempdir().unwrap();
    assert!(
        !work.path().starts_with(repo_root()),
        "the test needs a folder outside the checkout"
    );
    let crate_dir = work.path().join("acme-wiki");
    let output = quarry_in(work.path(), &["new", "acme-wiki"]);
    assert!(output.status.success(), "{}", text(&output));
    for file in [
        "Cargo.toml",
        "Cargo.lock",
        "connector.toml",
        "src/lib.rs",
        "README.md",
        "wit/v1.1/connector.wit",
        "vendor/quarry-connector-sdk/Cargo.toml",
        "vendor/quarry-connector-sdk/src/lib.rs",
    ] {
        assert!(crate_dir.join(file).is_file(), "{file} was not written");
    }
    let cargo_toml = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    assert!(
        cargo_toml.contains(r#"quarry-connector-sdk = { path = "vendor/quarry-connector-sdk" }"#),
        "outside a checkout, the crate carries its SDK:\n{cargo_toml}"
    );
    // Nothing points into the checkout: the crate stands alone.
    let checkout = repo_root().display().to_string();
    for file in crate_files(&crate_dir) {
        let content = std::fs::read_to_string(&file).unwrap();
        assert!(
            !content.contains(&checkout),
            "{} names the checkout",
            file.display()
        );
    }

    // Built with the quarry binary, next to the crate; found by `check`
    // from the crate folder.
    let output = quarry_in(&crate_dir, &["build"]);
    assert!(output.status.success(), "{}", text(&output));
    let built = crate_dir.join("target/connector");
    assert!(built.join("acme-wiki.wasm").is_file(), "{}", text(&output));
    assert!(built.join("acme-wiki.toml").is_file());
    let output = quarry_in(&crate_dir, &["check", "--json", "."]);
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("check printed no JSON ({e}): {}", text(&output)));
    assert_eq!(output.status.code(), Some(0), "{}", messages(&report));
    assert_eq!(report["errors"], 0);
    assert_eq!(report["warnings"], 0, "{}", messages(&report));
    assert_eq!(report["id"], "acme-wiki");
    assert!(
        report["component_path"]
            .as_str()
            .unwrap()
            .ends_with("target/connector/acme-wiki.wasm"),
        "{report}"
    );

    // `--out` writes the pair elsewhere.
    let out = work.path().join("out");
    let output = quarry_in(&crate_dir, &["build", "--out", out.to_str().unwrap()]);
    assert!(output.status.success(), "{}", text(&output));
    let (report, status) = check(&out.join("acme-wiki.wasm"), &[]);
    assert_eq!(status, 0, "{}", messages(&report));

    // Installed from the crate folder into a running registry's folder:
    // hot-loaded.
    let h = Harness::start(&[]).await;
    let _watch = h.registry.watch();
    let output = quarry_in(
        &crate_dir,
        &[
            "install",
            ".",
            "--plugins-dir",
            h.plugins.path().to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", text(&output));
    eventually("the scaffolded connector is loaded", || {
        h.registry.get("acme-wiki").is_some()
    })
    .await;
    assert!(
        h.registry.problems().is_empty(),
        "{:?}",
        h.registry.problems()
    );
}

#[test]
fn the_scaffolded_crate_passes_its_own_unit_tests() {
    let work = tempfile::tempdir().unwrap();
    let crate_dir = work.path().join("acme-docs");
    let output = quarry(&["new", "acme-docs", "--dir", crate_dir.to_str().unwrap()]);
    assert!(output.status.success(), "{}", text(&output));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // The workspace's target folder: its dependencies are already built.
    let output = Command::new(cargo)
        .args(["test", "-q", "--manifest-path"])
        .arg(crate_dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", repo_root().join("target/connector-kit"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
}

#[tokio::test]
async fn install_hot_loads_into_a_running_server_and_it_answers() {
    let h = Harness::start(&["github"]).await;
    let _watch = h.registry.watch();
    assert!(h.registry.get("slack").is_none());
    let output = quarry(&[
        "install",
        built_plugins().join("slack.wasm").to_str().unwrap(),
        "--plugins-dir",
        h.plugins.path().to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        text(&output).contains("installed slack 1.0.0"),
        "{}",
        text(&output)
    );
    eventually("slack is loaded", || h.registry.get("slack").is_some()).await;
    let docs = h.search("slack", &request("invoice", 5)).await.unwrap();
    assert!(!docs.is_empty(), "the installed connector answers");
    // Only the pair is left: the temporary files were renamed into place.
    let mut names: Vec<String> = std::fs::read_dir(h.plugins.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["github.toml", "github.wasm", "slack.toml", "slack.wasm"]
    );

    // A connector with errors is not installed, and the one serving stays.
    let dir = tempfile::tempdir().unwrap();
    let (wasm, manifest) = slack();
    let bad = fixture(
        dir.path(),
        "slack",
        &wasm,
        &manifest.replace("read_only = true", "read_only = false"),
    );
    let output = quarry(&[
        "install",
        bad.to_str().unwrap(),
        "--plugins-dir",
        h.plugins.path().to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    assert!(text(&output).contains("not installed"), "{}", text(&output));
    assert_eq!(
        std::fs::read_to_string(h.plugins.path().join("slack.toml")).unwrap(),
        manifest,
        "nothing was written"
    );
    assert!(h.search("slack", &request("invoice", 5)).await.is_ok());
}

/// `install` of a crate whose manifest's `id` is a path (`../../quarry`,
/// `./../github`, an absolute path) writes nothing anywhere: the id is
/// checked before any path is made of it. (It used to name the staging
/// folder and the files, which were written, and left, before the check
/// refused the id: one could overwrite another connector, or the server's
/// configuration beside the plugins folder.)
#[test]
fn install_refuses_an_id_that_is_a_path_before_writing_anything() {
    let (wasm, manifest) = slack();
    let root = tempfile::tempdir().unwrap();
    let plugins = root.path().join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    let config = root.path().join("quarry.toml");
    std::fs::write(&config, "# the server's configuration\n").unwrap();
    std::fs::write(plugins.join("github.toml"), "# another connector\n").unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let absolute = elsewhere.path().join("planted");
    for id in ["../../quarry", "./../github", absolute.to_str().unwrap()] {
        let krate = tempfile::tempdir().unwrap();
        let evil = manifest.replacen("id = \"slack\"", &format!("id = \"{id}\""), 1);
        std::fs::write(krate.path().join("connector.toml"), &evil).unwrap();
        // Where `quarry connector build` would have left the pair for that
        // id (target/connector/<id>.wasm, wherever the id leads).
        let built = krate.path().join("target/connector");
        std::fs::create_dir_all(&built).unwrap();
        for (extension, bytes) in [("wasm", &wasm[..]), ("toml", evil.as_bytes())] {
            let path = built.join(format!("{id}.{extension}"));
            if let Some(parent) = path.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::write(path, bytes);
        }
        let before = everything(root.path());
        let before_elsewhere = everything(elsewhere.path());
        let output = quarry(&[
            "install",
            krate.path().to_str().unwrap(),
            "--plugins-dir",
            plugins.to_str().unwrap(),
        ]);
        assert!(
            !output.status.success(),
            "{id}: installed\n{}",
            text(&output)
        );
        assert!(
            text(&output).contains("not a connector id"),
            "{id}: the refusal names the rule\n{}",
            text(&output)
        );
        assert_eq!(everything(root.path()), before, "{id}: nothing written");
        assert_eq!(
            std::fs::read_to_string(&config).unwrap(),
            "# the server's configuration\n"
        );
        assert_eq!(
            std::fs::read_to_string(plugins.join("github.toml")).unwrap(),
            "# another connector\n"
        );
        // (An absolute id's "built" pair is there: this test put it
        // where a build would have; nothing else may appear.)
        assert_eq!(everything(elsewhere.path()), before_elsewhere, "{id}");
    }
}

/// Every file and folder under `dir`, sorted.
fn everything(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            found.push(path);
        }
    }
    found.sort();
    found
}
