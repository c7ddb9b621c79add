//! The dashboard in a real browser: runs `tools/browser-tests` (Debian's
//! headless Chromium driven by Playwright through
//! tests/browser/dashboard.spec.mjs against `quarry demo`) and fails with
//! its output when it fails. Chromium and playwright-core are installed by
//! tools/test (`tools/browser-tests --install`), never here; the
//! screenshots are in target/browser-screenshots/.

use std::io::Write;
use std::process::Command;

use quarry_tests::repo_root;
use quarry_tests::server::quarry_binary;

#[test]
fn the_dashboard_works_in_chromium() {
    let root = repo_root();
    let output = Command::new(root.join("tools/browser-tests"))
        .current_dir(&root)
        // The binary beside this test (target/debug/quarry, or under
        // CARGO_TARGET_DIR), as the API tests use.
        .env("BROWSER_TESTS_QUARRY", quarry_binary())
        .output()
        .expect("cannot run tools/browser-tests");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "tools/browser-tests failed ({}):\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
        output.status
    );
    // Where a person finds the pages, even when cargo captures the output.
    let shots = stdout
        .lines()
        .filter(|l| l.trim_end().ends_with(".png"))
        .count();
    let _ = writeln!(
        std::io::stderr(),
        "browser tests: {shots} screenshots in {}",
        root.join("target/browser-screenshots").display()
    );
}
