//! Validates encoded messages against the official ACP schemas with
//! Python's jsonschema (`scripts/check_acp_schema.py`): the one place the
//! schema tests call it. With `ACP_SCHEMA_CHECK=require` (set by
//! `scripts/test`) a missing jsonschema fails the test; without it the
//! check is skipped and says so.
#![cfg(feature = "std")]

use std::fmt::Display;
use std::io::Write;
use std::process::Command;

/// Writes `samples` (one JSON object a line, as the script reads them) to
/// `name` under the tests' scratch directory and runs the script on it
/// with `flags` (`--v2`, `--unstable`); panics naming the first failure.
pub fn validate(name: &str, samples: &[impl Display], flags: &[&str]) {
    assert!(!samples.is_empty(), "{name}: no samples to validate");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let mut f = std::fs::File::create(&path).unwrap();
    for line in samples {
        writeln!(f, "{line}").unwrap();
    }
    drop(f);
    let require = std::env::var("ACP_SCHEMA_CHECK").is_ok_and(|v| v == "require");
    let has_jsonschema = Command::new("python3")
        .args(["-c", "import jsonschema"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_jsonschema {
        assert!(
            !require,
            "ACP_SCHEMA_CHECK=require but python3 -c 'import jsonschema' fails"
        );
        eprintln!(
            "skipped: python3 with jsonschema not found ({} samples in {})",
            samples.len(),
            path.display()
        );
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/check_acp_schema.py");
    let out = Command::new("python3")
        .arg(script)
        .args(flags)
        .arg(&path)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "{name}: schema check {flags:?} failed:\n{stdout}\n{stderr}"
    );
    eprintln!("{stdout}");
}
