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
//! - [`unescape`]: decoding escape sequences.
//!
//! Everything here is crate-internal; the public types that carry JSON are
//! `acp::RawJson` and the typed messages.

pub(crate) mod scan;
pub(crate) mod swar;

#[cfg(feature = "alloc")]
pub(crate) mod escape;
#[cfg(feature = "alloc")]
pub(crate) mod unescape;

#[cfg(feature = "alloc")]
pub(crate) use escape::{
    digits, escaped_len_capped, is_plain, push_escaped_within, push_string, push_u64,
};
#[cfg(feature = "alloc")]
pub(crate) use unescape::{literal_body, unescape_into, unescaped_len, validate_unescape_into};
