//! Re-chunks a stream-json stream so no line exceeds the frame limit (seed
//! 000), or joins chunked results back into legacy `tool_result` lines.
//!
//! ```text
//! gemini -p "…" -o stream-json | acp-rechunk > safe.jsonl
//! acp-rechunk --join < safe.jsonl > legacy.jsonl
//! ```
//!
//! Options: `--join`, `--frame-bytes N` (default 32768),
//! `--max-result-bytes N` (default 52428800). Every line that needs no change
//! passes through byte-for-byte. Faults go to stderr, one line each, and the
//! stream goes on; the exit status is non-zero only for an I/O failure or bad
//! arguments.

use std::io::{self, BufWriter, Read, Write};
use std::process::ExitCode;

use acp_codec::chunk::{ChunkEncoder, LineError, Pushed, Reassembler};
use acp_codec::limits::{DEFAULT_FRAME_LEN, DEFAULT_MAX_RESULT_BYTES};
use acp_codec::stream_json::Event;
use acp_codec::{FrameError, Limits, LineSplitter};
use clap::Parser;

/// Re-chunks a stream-json stream (stdin to stdout) so no line exceeds the
/// frame limit, or joins chunked results back into legacy `tool_result` lines.
#[derive(Parser, Debug)]
#[command(name = "acp-rechunk", version)]
struct Options {
    /// Join chunked results back into legacy `tool_result` lines
    #[arg(long)]
    join: bool,
    /// Longest output line (bytes)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_FRAME_LEN)]
    frame_bytes: usize,
    /// Largest tool result accepted (bytes)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_RESULT_BYTES)]
    max_result_bytes: usize,
}

/// Byte offset of `part` inside `whole` (a subslice of it).
fn offset_in(whole: &[u8], part: &[u8]) -> usize {
    (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize)
}

struct Rechunk<W: Write> {
    opts: Options,
    out: W,
    reassembler: Reassembler,
    frame: Vec<u8>,
}

impl<W: Write> Rechunk<W> {
    fn fault(&self, e: &dyn std::fmt::Display) {
        eprintln!("acp-rechunk: {e}");
    }

    /// Handles one line; `raw` is the line as read, with its `\r\n`/`\n`.
    fn line(&mut self, text: &str, raw: &[u8]) -> io::Result<()> {
        if self.opts.join {
            self.join(text, raw)
        } else {
            self.split(text, raw)
        }
    }

    fn split(&mut self, text: &str, raw: &[u8]) -> io::Result<()> {
        let line_len = raw.strip_suffix(b"\n").unwrap_or(raw).len();
        if line_len <= self.opts.frame_bytes {
            return self.out.write_all(raw);
        }
        let result = match Event::decode(text) {
            Ok(Event::ToolResult(r)) => r,
            Ok(e) => {
                self.fault(&format!(
                    "dropped a {} line of {} bytes: over the {}-byte frame limit and not a tool_result",
                    e.kind(),
                    text.len(),
                    self.opts.frame_bytes
                ));
                return Ok(());
            }
            Err(e) => {
                self.fault(&format!(
                    "dropped a line of {} bytes over the frame limit: {e}",
                    text.len()
                ));
                return Ok(());
            }
        };
        let size = result.output.as_ref().map_or(0, |o| o.len());
        if size > self.opts.max_result_bytes {
            self.fault(&format!(
                "dropped tool_result {:?}: output of {size} bytes exceeds the {}-byte limit",
                &*result.tool_id, self.opts.max_result_bytes
            ));
            return Ok(());
        }
        let mut encoder = match ChunkEncoder::new(&result, self.opts.frame_bytes) {
            Ok(e) => e,
            Err(e) => {
                self.fault(&format!("dropped tool_result {:?}: {e}", &*result.tool_id));
                return Ok(());
            }
        };
        while encoder.next_frame(&mut self.frame).is_some() {
            self.out.write_all(&self.frame)?;
            self.frame.clear();
        }
        Ok(())
    }

    fn join(&mut self, text: &str, raw: &[u8]) -> io::Result<()> {
        // Only frames need decoding; everything else passes as read.
        if memchr::memmem::find(text.as_bytes(), b"\"tool_result_").is_none() {
            return self.out.write_all(raw);
        }
        match self.reassembler.push_line(text) {
            Ok(Pushed::Event(_)) | Err(LineError::Event(_)) => self.out.write_all(raw),
            Ok(Pushed::Consumed | Pushed::Dropped) => Ok(()),
            Ok(Pushed::Complete(result)) => {
                self.frame.clear();
                Event::ToolResult(result)
                    .encode(&mut self.frame)
                    .map_err(io::Error::other)?;
                self.out.write_all(&self.frame)?;
                self.frame = Vec::new();
                Ok(())
            }
            Err(e) => {
                self.fault(&e);
                Ok(())
            }
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        for e in self.reassembler.finish() {
            self.fault(&e);
        }
        self.out.flush()
    }
}

fn run(opts: Options) -> io::Result<()> {
    // A tool_result line of the largest output, every byte escaped, fits.
    let max_line = opts
        .max_result_bytes
        .saturating_mul(6)
        .saturating_add(1 << 20);
    let limits = Limits::default()
        .with_max_line_len(max_line)
        .with_frame_len(opts.frame_bytes)
        .with_max_result_bytes(opts.max_result_bytes)
        .with_max_buffered_bytes(opts.max_result_bytes);
    let mut splitter = LineSplitter::with_limits(&limits);
    let stdout = io::stdout().lock();
    let mut r = Rechunk {
        opts,
        out: BufWriter::with_capacity(1 << 16, stdout),
        reassembler: Reassembler::with_limits(&limits),
        frame: Vec::new(),
    };
    let mut input = io::stdin().lock();
    let mut buf: Vec<u8> = Vec::new();
    let mut eof = false;
    loop {
        let mut start = 0;
        loop {
            let rest = &buf[start..];
            let decoded = if eof {
                splitter.decode_eof(rest)
            } else {
                splitter.decode(rest)
            };
            let consumed = decoded.consumed;
            match decoded.item {
                Some(Ok(line)) => {
                    let from = offset_in(rest, line.as_bytes());
                    let raw = &rest[from..consumed];
                    r.line(line.as_str(), raw)?;
                }
                Some(Err(FrameError::InvalidUtf8 { len, .. })) => {
                    r.fault(&format!("dropped a line of {len} bytes that is not utf-8"));
                }
                Some(Err(e)) => r.fault(&e),
                None => {
                    start += consumed;
                    break;
                }
            }
            start += consumed;
        }
        buf.drain(..start);
        if eof {
            break;
        }
        let old = buf.len();
        buf.resize(old + (1 << 16), 0);
        let n = loop {
            match input.read(&mut buf[old..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        buf.truncate(old + n);
        eof = n == 0;
    }
    r.finish()
}

fn main() -> ExitCode {
    match run(Options::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("acp-rechunk: i/o error: {e}");
            ExitCode::FAILURE
        }
    }
}
