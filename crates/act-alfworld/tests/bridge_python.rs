//! The Python worker's own tests (`python/test_alfworld_worker.py`: grammar conversion both ways, the upstream
//! `help` text, seeded goal phrasing, the JSON-lines protocol), run with `$ACT_PYTHON` against the real engine.
//!
//! Skipped with a "skipped: ..." line when the engine is missing, unless `ACT_REQUIRE_EXTERNAL=1`.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use act_alfworld::bridge::{default_python, probe_engine};

#[test]
fn the_python_worker_tests_pass() {
    let python = default_python();
    if let Err(error) = probe_engine(&python, Duration::from_secs(180)) {
        if std::env::var("ACT_REQUIRE_EXTERNAL").is_ok_and(|v| v == "1") {
            panic!("ACT_REQUIRE_EXTERNAL=1 but the real ALFWorld engine is not usable with `{python}`: {error}");
        }
        eprintln!(
            "skipped: the_python_worker_tests_pass: the real ALFWorld engine is not usable with `{python}` ({error})"
        );
        return;
    }
    let python_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python");
    let output = Command::new(&python)
        .args(["-m", "unittest", "discover", "-v", "-s"])
        .arg(&python_dir)
        .args(["-p", "test_*.py"])
        .output()
        .expect("run the Python tests");
    let report = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "python worker tests failed:\n{report}");
    assert!(report.contains("Ran 5 tests"), "expected the five worker tests to run:\n{report}");
}
