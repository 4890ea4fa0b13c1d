//! The direct path for the chunk frames [`ChunkEncoder`](super::ChunkEncoder)
//! writes: `{"type":"tool_result_chunk","tool_id":"…","seq":N,"data":"…"}`
//! exactly, with an unescaped `tool_id`.
//!
//! The data is validated and unescaped into the transfer's buffer in one
//! pass, without going through a JSON parser first. Anything else (another
//! key order, whitespace, escapes in the id, a bad literal, a fault) is left
//! to the general path, which gives the same result or the typed error.

use crate::json;

const PREFIX: &str = "{\"type\":\"tool_result_chunk\",\"tool_id\":\"";
const SEQ: &str = "\",\"seq\":";
const DATA: &str = ",\"data\":\"";

/// A canonical chunk frame, its data not yet validated.
pub(super) struct DirectChunk<'a> {
    pub(super) tool_id: &'a str,
    pub(super) seq: u64,
    /// The data's content, between its quotes, still escaped.
    pub(super) body: &'a str,
}

/// Parses `line` if it has the canonical shape.
pub(super) fn parse(line: &str) -> Option<DirectChunk<'_>> {
    let rest = line.strip_prefix(PREFIX)?;
    let end_id = memchr::memchr(b'"', rest.as_bytes())?;
    let (tool_id, rest) = rest.split_at_checked(end_id)?;
    if !json::is_plain(tool_id) {
        return None;
    }
    let rest = rest.strip_prefix(SEQ)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (number, rest) = rest.split_at_checked(digits)?;
    if number.is_empty() || (number.len() > 1 && number.starts_with('0')) {
        return None;
    }
    let seq = number.parse::<u64>().ok()?;
    let body = rest.strip_prefix(DATA)?.strip_suffix("\"}")?;
    Some(DirectChunk { tool_id, seq, body })
}

/// Appends the validated, unescaped `body` to `out`; on a bad literal
/// restores `out` and returns `false`.
pub(super) fn append(body: &str, out: &mut alloc::string::String) -> bool {
    let start = out.len();
    if json::validate_unescape_into(body, out).is_ok() {
        true
    } else {
        out.truncate(start);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_canonical_shape() {
        let c = parse(r#"{"type":"tool_result_chunk","tool_id":"a-1","seq":12,"data":"x\"y"}"#)
            .unwrap();
        assert_eq!((c.tool_id, c.seq, c.body), ("a-1", 12, r#"x\"y"#));
        for bad in [
            r#"{"type":"tool_result_chunk","tool_id":"a\u0041","seq":1,"data":"x"}"#,
            r#"{"type":"tool_result_chunk","tool_id":"a","seq":01,"data":"x"}"#,
            r#"{"type":"tool_result_chunk","tool_id":"a","seq":99999999999999999999,"data":"x"}"#,
            r#"{"type":"tool_result_chunk","tool_id":"a","seq":1,"data":"x"} "#,
            r#"{"type":"tool_result_chunk", "tool_id":"a","seq":1,"data":"x"}"#,
            r#"{"type":"tool_result_chunk","tool_id":"a","seq":-1,"data":"x"}"#,
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
        let mut out = alloc::string::String::from("k");
        assert!(!append("a\"b", &mut out));
        assert!(!append("\\ud800", &mut out));
        assert_eq!(out, "k");
        assert!(append("a\\nb", &mut out));
        assert_eq!(out, "ka\nb");
    }
}
