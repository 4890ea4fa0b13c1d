//! Tool names in Gemini's generated tool-call ids.

/// The tool name in a tool-call id that Gemini CLI generated,
/// `NAME-<millis>-<counter>`; `None` for any other id, which stays opaque.
///
/// `NAME` must be non-empty and both numbers non-empty ASCII digits; the name
/// may itself contain `-` (only the last two `-` separate the numbers).
///
/// ```
/// use acp_codec::title::tool_name_from_id;
///
/// assert_eq!(tool_name_from_id("run_shell_command-1761234567890-3"), Some("run_shell_command"));
/// assert_eq!(tool_name_from_id("my-mcp-tool-1761234567890-12"), Some("my-mcp-tool"));
/// assert_eq!(tool_name_from_id("call_8f2a"), None);
/// assert_eq!(tool_name_from_id("-1-2"), None);
/// ```
pub fn tool_name_from_id(id: &str) -> Option<&str> {
    let (rest, counter) = id.rsplit_once('-')?;
    let (name, millis) = rest.rsplit_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (!name.is_empty() && digits(millis) && digits(counter)).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert_eq!(tool_name_from_id("read_file-1-2"), Some("read_file"));
        assert_eq!(tool_name_from_id("read_file-1-"), None);
        assert_eq!(tool_name_from_id("read_file--2"), None);
        assert_eq!(tool_name_from_id("read_file-1a-2"), None);
        assert_eq!(tool_name_from_id("read_file-1-2x"), None);
        assert_eq!(tool_name_from_id("1-2"), None);
        assert_eq!(tool_name_from_id(""), None);
        assert_eq!(tool_name_from_id("é-1-2"), Some("é"));
    }
}
