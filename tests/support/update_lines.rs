//! Generates `session/update` lines the way real and broken peers write
//! them: every member order, whitespace, escapes, `null`s, unknown and
//! duplicate members, wrong types, deep raw values, and corruptions (a
//! byte changed or the line cut). Used to hold the single-pass decoder to
//! the two-step one in `tests/integration/acp_decode_line.rs`. Test code only:
//! compiled for `cargo test`, never into the library.
#![allow(dead_code)]

use std::fmt::Write as _;
// Spelled out so that the crate's own (`no_std`) unit tests can include
// this file too.
use std::string::{String, ToString};
use std::vec::Vec;
use std::{format, vec};

/// A tiny deterministic generator, seeded by proptest.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed ^ 0x9e37_79b9_7f4a_7c15)
    }
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    /// A number in `0..n`.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// True with probability `1 / n`.
    pub(crate) fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
    pub(crate) fn pick<'s>(&mut self, items: &[&'s str]) -> &'s str {
        items[self.below(items.len() as u64) as usize]
    }
}

/// Whitespace between tokens: mostly none, as peers write it.
fn ws(r: &mut Rng) -> &'static str {
    if r.one_in(6) {
        r.pick(&[" ", "\n", " \t ", "\r\n  "])
    } else {
        ""
    }
}

/// A string of several KiB (tool output): escapes throughout, or only far
/// in, or none; rarely a bad escape or a raw control character far in.
fn long_string(r: &mut Rng) -> String {
    let n = 4000 + r.below(6000) as usize;
    let mut body = String::with_capacity(n + 64);
    let dense = r.one_in(2);
    while body.len() < n {
        body.push_str(r.pick(&["drwxr-xr-x  2 user ", "src/main.rs ", "caf\u{e9} "]));
        if dense || body.len() > 4100 {
            body.push_str(r.pick(&[
                "\\n",
                "\\\"",
                "\\t",
                "\\u00e9",
                "\\ud83d\\ude00",
                "\\\\",
                "\\/",
            ]));
        }
    }
    if r.one_in(10) {
        body.push_str(r.pick(&["\\x", "\\ud800", "\u{1}", "\\u12"]));
    }
    format!("\"{body}\"")
}

/// A JSON string token: plain, escaped, unicode, long, or (rarely)
/// invalid.
fn string(r: &mut Rng) -> String {
    if r.one_in(60) {
        return long_string(r);
    }
    let body = if r.one_in(200) {
        r.pick(&["lone \\ud800 surrogate", "bad \\x escape", "raw \t tab"])
    } else {
        r.pick(&[
            "s1",
            "",
            "9f2c1a7e-3b4d-4e8f-a1c2-5d6e7f8a9b0c",
            "The function `process_data` iterates over the list and prints each item",
            "line one\\nline two\\t\\\"quoted\\\"",
            "caf\\u00e9 \\ud83d\\ude00",
            "\u{e9}\u{1f600} unicode as is",
            "slash\\/ok",
            "a]}\\\\",
        ])
    };
    format!("\"{body}\"")
}

/// Any JSON value, nested up to `depth`.
fn value(r: &mut Rng, depth: u32) -> String {
    let pick = if depth == 0 { r.below(6) } else { r.below(8) };
    match pick {
        0 => "null".into(),
        1 => r.pick(&["true", "false"]).into(),
        2 if r.one_in(50) => r.pick(&["01", "1.", "-"]).into(),
        2 => r.pick(&["0", "-1", "3.5e2", "12", "-0"]).into(),
        3..=5 => string(r),
        6 => {
            let n = r.below(4);
            let items: Vec<String> = (0..n).map(|_| value(r, depth - 1)).collect();
            format!("[{}]", items.join(","))
        }
        _ => {
            let n = r.below(4);
            let items: Vec<String> = (0..n)
                .map(|_| format!("{}:{}", string(r), value(r, depth - 1)))
                .collect();
            format!("{{{}}}", items.join(","))
        }
    }
}

/// An object from members; shuffled unless `tag_first` pins the first one.
fn object(r: &mut Rng, mut members: Vec<(String, String)>, tag_first: bool) -> String {
    // Rare enough that many lines still fit the direct decoder, which
    // leaves any line with an unknown member to the general path.
    if r.one_in(40) {
        members.push(("\"unknownMember\"".into(), value(r, 2)));
    }
    if r.one_in(60) && !members.is_empty() {
        // A duplicate member.
        let i = r.below(members.len() as u64) as usize;
        let dup = members[i].clone();
        members.push(dup);
    }
    let fixed = usize::from(tag_first && !members.is_empty());
    for i in (fixed + 1..members.len()).rev() {
        let j = fixed + r.below((i - fixed + 1) as u64) as usize;
        members.swap(i, j);
    }
    if !tag_first && members.len() > 1 && r.one_in(4) {
        members.rotate_left(1);
    }
    let mut out = String::from("{");
    out.push_str(ws(r));
    for (n, (k, v)) in members.iter().enumerate() {
        if n > 0 {
            let _ = write!(out, "{},{}", ws(r), ws(r));
        }
        let _ = write!(out, "{k}{}:{}{v}", ws(r), ws(r));
    }
    out.push_str(ws(r));
    out.push('}');
    out
}

fn key(name: &str) -> String {
    format!("\"{name}\"")
}

/// Optional member: absent, `null`, the value, or (rarely) a wrong type.
fn opt(r: &mut Rng, out: &mut Vec<(String, String)>, name: &str, v: String) {
    // `null` is rare for the same reason (only `_meta` and the raw members
    // keep it in the direct decoder).
    match r.below(60) {
        0..=10 => {}
        11..=12 => out.push((key(name), "null".into())),
        13 => out.push((key(name), value(r, 1))),
        _ => out.push((key(name), v)),
    }
}

fn content_block(r: &mut Rng) -> String {
    let mut m = Vec::new();
    if r.one_in(12) {
        m.push((key("type"), "\"image\"".into()));
        m.push((key("data"), "\"aGk=\"".into()));
        m.push((key("mimeType"), "\"image/png\"".into()));
    } else {
        m.push((key("type"), "\"text\"".into()));
        m.push((key("text"), string(r)));
        if r.one_in(6) {
            let v = if r.one_in(2) {
                "null".into()
            } else {
                r#"{"priority":0.5,"audience":["user"]}"#.into()
            };
            m.push((key("annotations"), v));
        }
        let v = value(r, 2);
        opt(r, &mut m, "_meta", v);
    }
    let tag_first = !r.one_in(25);
    object(r, m, tag_first)
}

fn tool_content(r: &mut Rng) -> String {
    let mut m = Vec::new();
    match r.below(20) {
        0..=12 => {
            m.push((key("type"), "\"content\"".into()));
            m.push((key("content"), content_block(r)));
        }
        13..=16 => {
            m.push((key("type"), "\"diff\"".into()));
            m.push((key("path"), string(r)));
            let v = string(r);
            opt(r, &mut m, "oldText", v);
            m.push((key("newText"), string(r)));
        }
        17 | 18 => {
            m.push((key("type"), "\"terminal\"".into()));
            m.push((key("terminalId"), string(r)));
        }
        _ => {
            m.push((key("type"), "\"hologram\"".into()));
            m.push((key("beam"), value(r, 2)));
        }
    }
    let v = value(r, 1);
    opt(r, &mut m, "_meta", v);
    let tag_first = !r.one_in(25);
    object(r, m, tag_first)
}

fn array(r: &mut Rng, item: fn(&mut Rng) -> String) -> String {
    let n = r.below(4);
    let items: Vec<String> = (0..n).map(|_| item(r)).collect();
    format!("[{}{}]", items.join(&format!("{},", ws(r))), ws(r))
}

fn location(r: &mut Rng) -> String {
    let mut m = vec![(key("path"), string(r))];
    let line = if r.one_in(10) {
        r.pick(&["4294967296", "-1", "2.0", "1e3"])
    } else {
        r.pick(&["7", "0", "4294967295"])
    }
    .to_string();
    opt(r, &mut m, "line", line);
    object(r, m, false)
}

/// A deeply nested raw value: the line's depth limit must hold in both
/// decoders.
fn deep(r: &mut Rng) -> String {
    let n = 120 + r.below(12) as usize;
    format!("{}{}", "[".repeat(n), "]".repeat(n))
}

fn update(r: &mut Rng) -> String {
    let kind = r.pick(&[
        "agent_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "user_message_chunk",
        "tool_call",
        "tool_call_update",
        "tool_call_update",
        "plan",
    ]);
    let mut m = vec![(key("sessionUpdate"), format!("\"{kind}\""))];
    match kind {
        "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk" => {
            m.push((key("content"), content_block(r)));
            let v = string(r);
            opt(r, &mut m, "messageId", v);
            let v = value(r, 2);
            opt(r, &mut m, "_meta", v);
        }
        "tool_call" | "tool_call_update" => {
            m.push((key("toolCallId"), string(r)));
            let v = string(r);
            opt(r, &mut m, "title", v);
            let v = string(r);
            opt(r, &mut m, "name", v);
            let kind = format!("\"{}\"", r.pick(&["execute", "read", "edit", "teleport"]));
            opt(r, &mut m, "kind", kind);
            let status = format!(
                "\"{}\"",
                r.pick(&["pending", "completed", "failed", "paused"])
            );
            opt(r, &mut m, "status", status);
            let content = array(r, tool_content);
            opt(r, &mut m, "content", content);
            let locations = array(r, location);
            opt(r, &mut m, "locations", locations);
            let input = if r.one_in(15) { deep(r) } else { value(r, 3) };
            opt(r, &mut m, "rawInput", input);
            let output = value(r, 3);
            opt(r, &mut m, "rawOutput", output);
            let v = value(r, 2);
            opt(r, &mut m, "_meta", v);
        }
        "plan" => m.push((key("entries"), "[]".into())),
        _ => m.push((key("whatever"), value(r, 2))),
    }
    let tag_first = !r.one_in(25);
    object(r, m, tag_first)
}

/// The params of a `session/update`.
pub(crate) fn params(r: &mut Rng) -> String {
    let mut m = Vec::new();
    if !r.one_in(30) {
        m.push((key("sessionId"), string(r)));
    }
    m.push((key("update"), update(r)));
    let v = value(r, 2);
    opt(r, &mut m, "_meta", v);
    object(r, m, false)
}

/// One line: mostly a well-formed `session/update` notification, else a
/// near miss (another method, an id, params first, a broken envelope, a
/// corrupted byte, a cut).
pub(crate) fn line(seed: u64) -> String {
    let r = &mut Rng::new(seed);
    let mut m = vec![
        (key("jsonrpc"), "\"2.0\"".to_string()),
        (
            key("method"),
            if r.one_in(15) {
                r.pick(&[
                    "\"session/cancel\"",
                    "\"_x/update\"",
                    "\"session\\/update\"",
                    "7",
                ])
                .into()
            } else {
                "\"session/update\"".into()
            },
        ),
        (key("params"), params(r)),
    ];
    if r.one_in(15) {
        m.push((key("id"), r.pick(&["1", "\"a\"", "null"]).into()));
    }
    if r.one_in(20) {
        m[0].1 = r.pick(&["\"1.0\"", "2.0", "\"2\\u002e0\""]).into();
    }
    if r.one_in(25) {
        m.push((key("result"), "{}".into()));
    }
    if r.one_in(12) {
        m.swap(1, 2);
    }
    if r.one_in(8) {
        m.push((key("x-trace"), value(r, 2)));
    }
    // In the order peers write it (but for the swaps above).
    let mut line = String::from("{");
    for (n, (k, v)) in m.iter().enumerate() {
        let sep = if n > 0 { "," } else { "" };
        let _ = write!(line, "{sep}{}{k}:{}{v}", ws(r), ws(r));
    }
    line.push('}');
    if r.one_in(15) {
        // Corrupt one byte, or cut the line, or add trailing text.
        let at = r.below(line.len() as u64) as usize;
        let at = (0..=at)
            .rev()
            .find(|&i| line.is_char_boundary(i))
            .unwrap_or(0);
        match r.below(3) {
            0 => line.insert(
                at,
                r.pick(&["\"", "}", ",", "\\", "\u{1}", "x"])
                    .chars()
                    .next()
                    .unwrap(),
            ),
            1 => line.truncate(at),
            _ => line.push_str(r.pick(&[" ", " x", "\n", "}"])),
        }
    }
    format!("{}{line}{}", ws(r), ws(r))
}
