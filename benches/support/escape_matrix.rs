// Shared by benches/acp_traffic.rs (the `acp/escapes/...` groups) and
// benches/unescape_ab.rs (the same strings through both unescapers).

/// A string of [`MATRIX_ESCAPES`] escapes (`\\n`, `\\"`, `\\\\`, `\\t`, `\\u00e9` in
/// turn) with plain text between them: `gap` bytes of it on average, ASCII
/// or CJK (three-byte characters, as many as fit in the gap, one at
/// least), every gap the same (`regular`) or drawn between half and one
/// and a half times it (`irregular`, a fixed pseudo-random sequence).
pub fn escape_matrix_token(gap: usize, cjk: bool, irregular: bool) -> String {
    let escapes = [r"\n", r#"\""#, r"\\", r"\t", r"\u00e9"];
    let mut token = String::from("\"");
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    for k in 0..MATRIX_ESCAPES {
        let len = if irregular {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let spread = gap.max(2) as u64;
            (gap / 2) + (state % spread) as usize
        } else {
            gap
        };
        if cjk {
            for c in "代码审查的第一条规则是先读测试"
                .chars()
                .cycle()
                .take((len / 3).max(1))
            {
                token.push(c);
            }
        } else {
            for c in "the quick brown fox jumps over the lazy dog "
                .chars()
                .cycle()
                .take(len)
            {
                token.push(c);
            }
        }
        token.push_str(escapes[k % escapes.len()]);
    }
    token.push('"');
    token
}

/// Escapes in each string of the escape matrix.
pub const MATRIX_ESCAPES: usize = 512;
