//! Deterministic, realistic traffic for the benches.
#![allow(dead_code)]

/// A tiny deterministic generator (no `rand` needed).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() as usize) % (hi - lo)
    }
}

fn text(rng: &mut Lcg, len: usize) -> String {
    const WORDS: &[&str] = &[
        "the",
        "agent",
        "reads",
        "src/main.rs",
        "and",
        "finds",
        "a",
        "bug",
        "in",
        "parse()",
        "—",
        "naïve",
        "fix",
    ];
    let mut s = String::with_capacity(len + 16);
    while s.len() < len {
        s.push_str(WORDS[rng.range(0, WORDS.len())]);
        s.push(' ');
    }
    s
}

fn chunk_line(rng: &mut Lcg, len: usize) -> String {
    chunk_json(&text(rng, len))
}

fn chunk_json(text: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{{\"sessionId\":\"3f6c1a2e-8d4b-4c1e-9a7f-2b5d8e0c4a91\",\"update\":{{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{{\"type\":\"text\",\"text\":\"{text}\"}}}}}}}}\n"
    )
}

fn tool_line(rng: &mut Lcg, len: usize) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{{\"sessionId\":\"3f6c1a2e-8d4b-4c1e-9a7f-2b5d8e0c4a91\",\"update\":{{\"sessionUpdate\":\"tool_call_update\",\"toolCallId\":\"run_shell_command-1732230000000-{}\",\"status\":\"completed\",\"content\":[{{\"type\":\"content\",\"content\":{{\"type\":\"text\",\"text\":\"{}\"}}}}]}}}}}}\n",
        rng.next() % 1000,
        text(rng, len).replace(' ', "\\n")
    )
}

/// `total` bytes of mixed ACP traffic: mostly 100-600-byte message chunks,
/// some 2-30 KiB tool updates, a few 1-5 MiB lines.
pub fn mixed(total: usize) -> Vec<u8> {
    let mut rng = Lcg(7);
    let mut out = Vec::with_capacity(total + (5 << 20));
    let mut big_every = 0usize;
    while out.len() < total {
        let roll = rng.range(0, 1000);
        let line = if roll < 940 {
            let len = rng.range(0, 450);
            chunk_line(&mut rng, len)
        } else {
            big_every += 1;
            let len = if big_every % 120 == 0 {
                rng.range(1 << 20, 5 << 20)
            } else {
                rng.range(2 << 10, 30 << 10)
            };
            tool_line(&mut rng, len)
        };
        out.extend_from_slice(line.as_bytes());
    }
    out
}

/// `total` bytes of ~80-byte lines.
pub fn short(total: usize) -> Vec<u8> {
    let mut rng = Lcg(11);
    let mut out = Vec::with_capacity(total + 128);
    while out.len() < total {
        let n = rng.range(40, 60);
        let mut t = text(&mut rng, n);
        while t.len() > n {
            t.pop();
        }
        out.extend_from_slice(
            format!(
                "{{\"type\":\"message\",\"n\":{},\"t\":\"{t}\"}}\n",
                rng.next() % 1000
            )
            .as_bytes(),
        );
    }
    out
}

/// `total` bytes of 100-600-byte message chunks in Chinese: text that is
/// mostly not ASCII (three bytes a character).
pub fn cjk(total: usize) -> Vec<u8> {
    const WORDS: &[&str] = &["代码", "文件", "读取", "修复", "错误", "函数", "。", "，"];
    let mut rng = Lcg(13);
    let mut out = Vec::with_capacity(total + 1024);
    while out.len() < total {
        let len = rng.range(100, 600);
        let mut text = String::with_capacity(len + 8);
        while text.len() < len {
            text.push_str(WORDS[rng.range(0, WORDS.len())]);
        }
        out.extend_from_slice(chunk_json(&text).as_bytes());
    }
    out
}
