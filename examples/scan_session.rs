//! Splits a recorded ACP session (or any NDJSON stream) with `LineSplitter`
//! in 64 KiB reads and reports what it found: messages by kind and method,
//! the largest line, and every bad line with its typed error.
//!
//! ```sh
//! cargo run --release --example scan_session                 # the recorded session shipped in the repo
//! cargo run --release --example scan_session -- FILE         # any file
//! gemini --acp < requests.ndjson | cargo run --example scan_session -- -   # stdin
//! cargo run --release --example scan_session -- --max-line-len 65536 FILE
//! ```

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::process::ExitCode;

use acp_codec::{Limits, LineSplitter};
use clap::Parser;

/// The session shipped with the repo: the ACP specification's example
/// messages, one full turn (initialize, session/new, prompt, updates, a
/// permission request, the stop reason).
const DEFAULT: &[u8] = include_bytes!("../tests/fixtures/acp-spec-examples.ndjson");

/// Splits a recorded ACP session (or any NDJSON stream) into lines and
/// reports what it found.
#[derive(Parser, Debug)]
#[command(name = "scan_session")]
struct Args {
    /// Longest line accepted (bytes)
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().max_line_len)]
    max_line_len: usize,
    /// The file to scan, - for stdin (default: the recorded session shipped
    /// in the repo, the ACP specification's examples)
    #[arg(value_name = "FILE")]
    path: Option<String>,
}

#[derive(Default)]
struct Report {
    lines: usize,
    bytes: u64,
    largest: usize,
    kinds: BTreeMap<String, usize>,
    errors: Vec<String>,
}

impl Report {
    fn line(&mut self, text: &str) {
        self.lines += 1;
        self.largest = self.largest.max(text.len());
        let kind = match serde_json::from_str::<serde_json::Value>(text) {
            Ok(v) => {
                let method = v.get("method").and_then(|m| m.as_str());
                let update = v
                    .pointer("/params/update/sessionUpdate")
                    .and_then(|m| m.as_str());
                match (method, v.get("id").is_some(), update) {
                    (Some(m), _, Some(u)) => format!("notification {m} ({u})"),
                    (Some(m), true, _) => format!("request {m}"),
                    (Some(m), false, _) => format!("notification {m}"),
                    (None, _, _) if v.get("error").is_some() => "error response".to_owned(),
                    (None, _, _) => "response".to_owned(),
                }
            }
            Err(e) => {
                self.errors
                    .push(format!("line {}: not json: {e}", self.lines));
                return;
            }
        };
        *self.kinds.entry(kind).or_default() += 1;
    }
}

fn main() -> ExitCode {
    let Args { max_line_len, path } = Args::parse();
    let limits = Limits::default().with_max_line_len(max_line_len);
    let mut input: Box<dyn Read> = match path.as_deref() {
        None => {
            println!("scanning the recorded session shipped in the repo (ACP spec examples)");
            Box::new(DEFAULT)
        }
        Some("-") => Box::new(io::stdin().lock()),
        Some(p) => match std::fs::File::open(p) {
            Ok(f) => Box::new(f),
            Err(e) => {
                eprintln!("scan_session: {p}: {e}");
                return ExitCode::FAILURE;
            }
        },
    };

    let mut splitter = LineSplitter::with_limits(&limits);
    let mut report = Report::default();
    let mut buf = Vec::new();
    let mut read = vec![0u8; 64 * 1024];
    loop {
        let n = match input.read(&mut read) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                eprintln!("scan_session: read: {e}");
                return ExitCode::FAILURE;
            }
        };
        report.bytes += n as u64;
        buf.extend_from_slice(&read[..n]);
        let mut lines = splitter.lines(&buf);
        for item in lines.by_ref() {
            match item {
                Ok(line) => report.line(&line),
                Err(e) => report
                    .errors
                    .push(format!("line {}: {e}", report.lines + 1)),
            }
        }
        let consumed = lines.consumed();
        buf.drain(..consumed);
    }
    loop {
        let d = splitter.decode_eof(&buf);
        let consumed = d.consumed;
        match d.item {
            Some(Ok(line)) => {
                let text = line.as_str().to_owned();
                report
                    .errors
                    .push(format!("last line has no newline ({} bytes)", text.len()));
                report.line(&text);
            }
            Some(Err(e)) => report.errors.push(format!("last line: {e}")),
            None => break,
        }
        buf.drain(..consumed);
    }

    println!(
        "{} bytes, {} messages, largest line {} bytes",
        report.bytes, report.lines, report.largest
    );
    for (kind, n) in &report.kinds {
        println!("{n:>6}  {kind}");
    }
    for e in &report.errors {
        println!("  bad: {e}");
    }
    ExitCode::SUCCESS
}
