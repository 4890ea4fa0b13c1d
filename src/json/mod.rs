//! JSON text handling, written once for the whole crate.
//!
//! `serde_json` parses values; these helpers do the jobs around it that it
//! does not expose: finding where a value ends without building it, walking
//! an object's members as slices, reading a key, escaping text with exact
//! sizes, and unescaping a string token into a borrowed-or-owned string.
//!
//! - [`swar`]: the eight-bytes-at-a-time search for `"`, `\\` and control
//!   characters, shared by scanning and escaping;
//! - [`scan`]: skipping and validating values, keys and object members
//!   (no allocation; the framing layer's id peek uses it without `alloc`);
//! - [`escape`]: writing JSON strings and numbers;
//! - [`unescape`]: decoding escape sequences;
//! - [`string_end`]: where a string ends, escapes passed over unchecked
//!   (or, for `scan::skip_str`'s long text, checked a block at a time);
//! - `vector` (SSE2 on x86, NEON on 64-bit ARM): sixty-four bytes of
//!   string text classified at once, for the unescaper (whose `dense`
//!   submodule builds text dense with escapes in a buffer on the stack)
//!   and for the ACP reader's search for where a string ends.
//!
//! Everything here is crate-internal; the public types that carry JSON are
//! `acp::RawJson` and the typed messages.

pub(crate) mod scan;
pub(crate) mod swar;

#[cfg(feature = "alloc")]
pub(crate) mod escape;
#[cfg(feature = "alloc")]
pub(crate) mod string_end;
#[cfg(feature = "alloc")]
pub(crate) mod unescape;
// The unescaper's block classifier, where the target has fast vector
// compares (the same cfg as the `wide` dependency in Cargo.toml).
#[cfg(all(
    feature = "alloc",
    any(
        target_feature = "sse2",
        all(target_arch = "aarch64", target_feature = "neon")
    )
))]
pub(crate) mod vector;

#[cfg(feature = "alloc")]
pub(crate) use escape::{
    digits, escaped_len_capped, is_plain, push_escaped_within, push_string, push_u64,
};
#[cfg(feature = "alloc")]
pub(crate) use unescape::{literal_body, unescape_into, unescaped_len, validate_unescape_into};

/// For the string tests: text dense with what JSON strings make special
/// (every escape, good and bad, a lone backslash, a raw quote and control
/// character) and with characters of every width, as runs of every length
/// around them, so that runs and escapes fall at every offset of a word.
#[cfg(all(test, feature = "alloc"))]
pub(crate) fn dense_string_text() -> impl proptest::strategy::Strategy<Value = alloc::string::String>
{
    use proptest::strategy::Strategy;
    let parts = alloc::vec![
        "a",
        "bc",
        "defghij",
        "klmnopqrstuvwxyz0123",
        "\\\"",
        "\\\\",
        "\\\\\\\"",
        "\\n",
        "\\t",
        "\\/",
        "\\b",
        "\\u00e9",
        "\\u0041",
        "\\u07FF",
        "\\u0800",
        "\\u2713",
        "\\uffff",
        "\\uD83D\\uDE00",
        "\\uDBFF\\uDFFF",
        "\\uD83D",
        "\\uD83D\\u0041",
        "\\uDC00",
        "\\u00G0",
        "\\u12",
        "\\x",
        "\\",
        "\"",
        "\t",
        "\u{1}",
        "é",
        "✓",
        "🦀",
        "ab✓",
        "abcdefg🦀",
    ];
    proptest::collection::vec(proptest::sample::select(parts), 0..40).prop_map(|p| p.concat())
}
