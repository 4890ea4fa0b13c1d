// Shared by benches/acp_traffic.rs and benches/official: every line of the
// recorded peer sessions (tests/fixtures/sessions, real peers only), one
// row per shape.
#![allow(dead_code)] // each bench package uses part of it

use acp_codec::acp::Mode;
use std::collections::{BTreeMap, HashMap};
use std::hint::black_box;
use std::path::Path;

use acp_codec::acp::{decode_line, Decoding, Incoming, Tracker};

#[path = "../../tests/support/pending.rs"]
mod pending;
use pending::tracker_with;
use serde_json::Value;

/// What a row's lines are, so each decoder knows what to decode them as.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `session/update` notifications.
    Update,
    /// Requests of one method.
    Request(&'static str),
    /// Results of requests of one method.
    Result(&'static str),
}

/// One row: lines of one shape, decoded together in each iteration.
pub struct Row {
    pub name: String,
    pub kind: Kind,
    pub lines: Vec<String>,
    /// For each line, the tracker it is decoded with: for a result, one
    /// with the request it answers pending; empty for the other lines.
    pub trackers: Vec<Tracker>,
}

impl Row {
    pub fn bytes(&self) -> u64 {
        self.lines.iter().map(|l| l.len() as u64).sum()
    }

    /// Each line with its tracker.
    pub fn each(&self) -> impl Iterator<Item = (&str, &Tracker)> {
        self.lines.iter().map(String::as_str).zip(&self.trackers)
    }

    fn new(name: String, kind: Kind, lines: Vec<String>) -> Self {
        let trackers = lines
            .iter()
            .map(|line| match kind {
                Kind::Result(method) => {
                    let v: Value = serde_json::from_str(line).unwrap();
                    tracker_with(v["id"].as_i64().unwrap(), method)
                }
                _ => Tracker::new(),
            })
            .collect();
        Row {
            name,
            kind,
            lines,
            trackers,
        }
    }
}

/// The request methods measured (requests and their results).
pub const METHODS: [&str; 4] = [
    "session/prompt",
    "fs/read_text_file",
    "fs/write_text_file",
    "session/request_permission",
];

/// The name of the row with every `session/update` line.
pub const ALL_UPDATES: &str = "all session/update lines";

/// The rows of the sessions under `dir` (`tests/fixtures/sessions`): one per
/// `sessionUpdate` kind (the updates of a kind that carry `_meta` in a row
/// of their own), every `session/update` line
/// together, then the requests of each method of [`METHODS`] and their
/// results. `spec-examples` (the schema's examples, not a recording) is
/// left out.
pub fn rows(dir: &Path) -> Vec<Row> {
    let mut sessions: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != "spec-examples"))
        .collect();
    sessions.sort();
    let mut updates: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut all = Vec::new();
    let mut requests: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    let mut results: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    for session in sessions {
        let agent = read_lines(&session.join("agent.ndjson"));
        let client = read_lines(&session.join("client.ndjson"));
        // A result answers the other side's request with its id.
        for (mine, theirs) in [(&agent, &client), (&client, &agent)] {
            let mut asked: HashMap<String, &'static str> = HashMap::new();
            for line in theirs.iter() {
                let v: Value = serde_json::from_str(line).unwrap();
                let method = v.get("method").and_then(Value::as_str);
                if let (Some(id), Some(m)) = (v.get("id"), method.and_then(known)) {
                    asked.insert(id.to_string(), m);
                }
            }
            for line in mine.iter() {
                let v: Value = serde_json::from_str(line).unwrap();
                match v.get("method").and_then(Value::as_str) {
                    Some("session/update") => {
                        let update = &v["params"]["update"];
                        let mut name = update["sessionUpdate"].as_str().unwrap().to_owned();
                        if update.get("_meta").is_some() {
                            name.push_str(" with _meta");
                        }
                        updates.entry(name).or_default().push(line.clone());
                        all.push(line.clone());
                    }
                    Some(m) if v.get("id").is_some() => {
                        if let Some(m) = known(m) {
                            requests.entry(m).or_default().push(line.clone());
                        }
                    }
                    Some(_) => {}
                    None if v.get("result").is_some() => {
                        if let Some(m) = asked.get(&v["id"].to_string()) {
                            results.entry(m).or_default().push(line.clone());
                        }
                    }
                    None => {}
                }
            }
        }
    }
    let mut rows: Vec<Row> = updates
        .into_iter()
        .map(|(name, lines)| Row::new(name, Kind::Update, lines))
        .collect();
    rows.push(Row::new(ALL_UPDATES.to_owned(), Kind::Update, all));
    for m in METHODS {
        let asked = requests.remove(m).unwrap_or_default();
        rows.push(Row::new(format!("request {m}"), Kind::Request(m), asked));
        let answers = results.remove(m).unwrap_or_default();
        rows.push(Row::new(format!("result of {m}"), Kind::Result(m), answers));
    }
    rows
}

fn known(method: &str) -> Option<&'static str> {
    METHODS.into_iter().find(|m| *m == method)
}

fn read_lines(path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

/// The line decoded typed by this crate, in one call to `acp::decode_line`:
/// a notification's or a request's params typed; a result typed by the
/// method of the request it answers, which `tracker` has pending. Whether
/// it succeeded.
pub fn acp_codec(kind: Kind, line: &str, tracker: &Tracker) -> bool {
    let how = Decoding::new(Mode::Lenient).with_tracker(tracker);
    matches!(
        (kind, black_box(decode_line(line, how))),
        (Kind::Update, Ok(Incoming::Notification(_)))
            | (Kind::Request(_), Ok(Incoming::Request { .. }))
            | (Kind::Result(_), Ok(Incoming::Response { .. }))
    )
}

/// The line parsed into a `serde_json::Value`.
pub fn value(line: &str) -> bool {
    black_box(serde_json::from_str::<Value>(line)).is_ok()
}

/// The string tokens (quotes included, escapes as the peer wrote them) of
/// 1 KiB or more that hold an escape, in every line of `rows`, each once:
/// the text the escape-dense rows spend their time unescaping.
pub fn long_escaped_strings(rows: &[Row]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut tokens = Vec::new();
    for line in rows.iter().flat_map(|row| &row.lines) {
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'"' {
                i += 1;
                continue;
            }
            let start = i;
            let mut escaped = false;
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    escaped = true;
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
            let token = &line[start..i];
            if escaped && token.len() >= 1024 && seen.insert(token) {
                tokens.push(token.to_owned());
            }
        }
    }
    tokens
}
