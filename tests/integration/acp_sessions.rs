//! Replays every recorded session under `tests/fixtures/sessions/<name>/`
//! (`agent.ndjson`, `client.ndjson`: the raw bytes each peer wrote;
//! `transcript.ndjson`: `{"from", "msg"}` in order): whole, one byte at a
//! time and in random pieces, every line decoded to a typed message, nothing
//! reported unknown (but the non-ACP methods in `NOT_ACP`), typed re-encoding a subset of the original (unknown
//! fields dropped, nothing invented or changed).
//!
//! `ACP_SESSIONS_DIR` points the test at another fixture folder.
#![cfg(feature = "std")]

use crate::acp_support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use acp_codec::acp::{Message, RequestId, Tracker};
use acp_codec::LineSplitter;
use acp_support::{dropped, is_subset, outside_strings, payload, typed};
use serde_json::Value;

/// Methods that real agents send although they are not ACP's and lack the
/// `_` prefix ACP reserves for extensions: the codec decodes them as unknown
/// methods (as it should), and the replay accepts that for these names only.
/// Qwen Code 0.24.4: `qwen/notify/session/*` notifications after
/// `session/set_mode` / `session/set_model`, and a `craft/drainMidTurnQueue`
/// request during a turn (it stops asking once answered `-32601`).
const NOT_ACP: &[&str] = &[
    "qwen/notify/session/mode-update",
    "qwen/notify/session/model-update",
    "craft/drainMidTurnQueue",
];

fn sessions() -> Vec<PathBuf> {
    let dir = std::env::var_os("ACP_SESSIONS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions")
        });
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("transcript.ndjson").exists())
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no recorded sessions in {}", dir.display());
    out
}

/// Splits `bytes` into lines, fed in pieces whose sizes come from `sizes`.
fn lines(bytes: &[u8], mut sizes: impl FnMut() -> usize) -> Vec<String> {
    let mut s = LineSplitter::new();
    let mut buf = Vec::new();
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let end = (pos + sizes().max(1)).min(bytes.len());
        buf.extend_from_slice(&bytes[pos..end]);
        pos = end;
        let mut start = 0;
        loop {
            let d = s.decode(&buf[start..]);
            start += d.consumed;
            match d.item {
                Some(r) => out.push(r.expect("framing error").as_str().to_owned()),
                None => break,
            }
        }
        buf.drain(..start);
    }
    loop {
        let d = s.decode_eof(&buf);
        let consumed = d.consumed;
        let item = d
            .item
            .map(|r| r.expect("framing error").as_str().to_owned());
        buf.drain(..consumed);
        match item {
            Some(l) => out.push(l),
            None => break,
        }
    }
    out
}

#[test]
fn recorded_sessions_replay() {
    for dir in sessions() {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let transcript: Vec<(String, Value)> =
            std::fs::read_to_string(dir.join("transcript.ndjson"))
                .unwrap()
                .lines()
                .map(|l| {
                    let v: Value = serde_json::from_str(l).unwrap();
                    (v["from"].as_str().unwrap().to_owned(), v["msg"].clone())
                })
                .collect();
        let mut per_side = BTreeMap::new();
        for side in ["agent", "client"] {
            let bytes = std::fs::read(dir.join(format!("{side}.ndjson"))).unwrap();
            let whole = lines(&bytes, || usize::MAX / 2);
            assert_eq!(lines(&bytes, || 1), whole, "{name}/{side}: byte at a time");
            let mut seed = 0x2545_f491_u32;
            let random = lines(&bytes, || {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                (seed % 4096) as usize
            });
            assert_eq!(random, whole, "{name}/{side}: random pieces");
            per_side.insert(side, whole);
        }
        // Every line of each side is in the transcript, in order.
        for side in ["agent", "client"] {
            let from_transcript: Vec<&Value> = transcript
                .iter()
                .filter(|(f, _)| f == side)
                .map(|(_, m)| m)
                .collect();
            let decoded: Vec<Value> = per_side[side]
                .iter()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert_eq!(
                decoded.iter().collect::<Vec<_>>(),
                from_transcript,
                "{name}/{side}"
            );
        }
        // Decode in transcript order, tracking requests per direction.
        let mut next = BTreeMap::from([("agent", 0usize), ("client", 0usize)]);
        let mut sent_by: BTreeMap<&str, BTreeMap<RequestId<'static>, String>> = BTreeMap::new();
        let mut client_tracker = Tracker::new();
        let mut stats = (0, 0);
        for (from, _) in &transcript {
            let side = from.as_str();
            let other = if side == "agent" { "client" } else { "agent" };
            let i = next[side];
            next.insert(side, i + 1);
            let line = &per_side[side][i];
            let msg =
                Message::decode(line).unwrap_or_else(|e| panic!("{name}/{side}:{i}: {e}: {line}"));
            let original: Value = serde_json::from_str(line).unwrap();
            // Envelope re-encodes to equal JSON, one line.
            let mut out = Vec::new();
            msg.encode(&mut out).unwrap();
            assert_eq!(
                serde_json::from_slice::<Value>(&out).unwrap(),
                original,
                "{name}/{side}:{i}"
            );
            // Typed form: nothing unknown, nothing invented.
            let empty = BTreeMap::new();
            let t = typed(&msg, sent_by.get(other).unwrap_or(&empty));
            let method = match &msg {
                Message::Request(r) => Some(&*r.method),
                Message::Notification(n) => Some(&*n.method),
                _ => None,
            };
            assert!(
                !outside_strings(&t.debug).contains("Unknown")
                    || method.is_some_and(|m| NOT_ACP.contains(&m)),
                "{name}/{side}:{i}: unknown in {}",
                t.debug
            );
            if let (Some(json), Some(orig)) = (&t.json, payload(&original)) {
                is_subset(json, &orig).unwrap_or_else(|e| panic!("{name}/{side}:{i}: {e}"));
                let mut gone = Vec::new();
                dropped(json, &orig, "", &mut gone);
                if !gone.is_empty() {
                    eprintln!("{name}/{side}:{i}: fields not in the schema dropped: {gone:?}");
                }
            }
            if let Message::Request(r) = &msg {
                sent_by
                    .entry(side)
                    .or_default()
                    .insert(r.id.to_owned_id(), r.method.to_string());
            }
            // The client's tracker: its own ids count from 0 like the recorder's.
            let now = std::time::Duration::from_millis(i as u64);
            if side == "client" {
                if let Message::Request(r) = &msg {
                    assert_eq!(
                        client_tracker.start(&r.method, now),
                        r.id,
                        "{name}: client ids"
                    );
                }
                if matches!(msg, Message::Response(_) | Message::Error(_)) {
                    client_tracker
                        .finish_peer_request(msg.id().unwrap())
                        .unwrap();
                }
            } else {
                let done = client_tracker
                    .handle(&msg, now)
                    .unwrap_or_else(|e| panic!("{name}/agent:{i}: {e}"));
                if let Some(done) = done {
                    assert_eq!(
                        Some(&done.method),
                        sent_by["client"].get(&done.id).map(|m| m.into()).as_ref()
                    );
                }
            }
            stats.0 += 1;
            stats.1 += line.len();
        }
        eprintln!("{name}: {} messages, {} bytes", stats.0, stats.1);
    }
}
