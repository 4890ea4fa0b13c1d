//! The bridge's log files: appended to, rotated to `.old` past a size.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A log file (`gemini-acp.log`, or one user agent's), rotated to
/// `NAME.old` past the limit, at startup and while running.
pub struct Log {
    path: PathBuf,
    limit: u64,
    file: Option<File>,
    size: u64,
    /// The file was opened (or tried).
    opened: bool,
    /// Bytes written just before the next ones ([`Log::hold`]).
    held: Vec<u8>,
}

impl Log {
    /// Opens (rotating first if the file is already past the limit).
    pub fn open(path: &Path, limit: u64) -> Self {
        let mut log = Self::lazy(path, limit);
        log.open_now();
        log
    }

    /// As [`Log::open`], at the first write: a log nothing is written to
    /// (the log of an agent that says nothing on stderr) is no file, and
    /// costs no file system inode and no descriptor.
    pub fn lazy(path: &Path, limit: u64) -> Self {
        Self {
            path: path.to_owned(),
            limit,
            file: None,
            size: 0,
            opened: false,
            held: Vec::new(),
        }
    }

    fn open_now(&mut self) {
        self.opened = true;
        self.reopen();
        if self.size > self.limit {
            self.rotate();
        }
    }

    /// Keeps `line` to be written just before the next bytes (an agent
    /// run's start line, before what the run writes on stderr); a line
    /// kept and not written yet is replaced (a run that wrote nothing
    /// leaves nothing).
    pub fn hold(&mut self, line: Vec<u8>) {
        self.held = line;
    }

    /// Opens the file, its size read from the open file (an `fstat`, not
    /// a second lookup of its path).
    fn reopen(&mut self) {
        self.file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .ok();
        self.size = self
            .file
            .as_ref()
            .and_then(|f| f.metadata().ok())
            .map_or(0, |m| m.len());
    }

    fn rotate(&mut self) {
        self.file = None;
        let mut old = self.path.clone().into_os_string();
        old.push(".old");
        let _ = fs::rename(&self.path, old);
        self.reopen();
    }

    /// Appends bytes (after a line [`Log::hold`] kept), rotating once the
    /// file is past the limit.
    pub fn write(&mut self, bytes: &[u8]) {
        if !self.opened {
            self.open_now();
        }
        if !self.held.is_empty() {
            let held = std::mem::take(&mut self.held);
            self.append(&held);
        }
        self.append(bytes);
    }

    fn append(&mut self, bytes: &[u8]) {
        if let Some(f) = &mut self.file {
            if f.write_all(bytes).is_ok() {
                self.size = self.size.saturating_add(bytes.len() as u64);
            }
        }
        if self.size > self.limit {
            self.rotate();
        }
    }
}

/// The format of the lines on stderr (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line a message: time, level, spans and their fields, text.
    Human,
    /// One JSON object a line (`timestamp`, `level`, `fields`,
    /// `target`, `span`, `spans`).
    Json,
}

/// The least severe events written to stderr (`--log-level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Level {
    /// Nothing (the log files under `--log-dir` are still written).
    Off,
    /// Errors only.
    Error,
    /// Errors and warnings (refusals are warnings).
    Warn,
    /// Also a line a connection, a turn and an agent start or stop.
    Info,
    /// Also the latency of each turn's first update.
    Debug,
}

impl Level {
    fn filter(self) -> tracing_subscriber::filter::LevelFilter {
        use tracing_subscriber::filter::LevelFilter;
        match self {
            Self::Off => LevelFilter::OFF,
            Self::Error => LevelFilter::ERROR,
            Self::Warn => LevelFilter::WARN,
            Self::Info => LevelFilter::INFO,
            Self::Debug => LevelFilter::DEBUG,
        }
    }
}

/// Sends `tracing`'s events from `level` up to stderr in `format`.
pub fn init(format: Format, level: Level) {
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level.filter())
        .with_ansi(false);
    // A second call (none in this program) would keep the first.
    let _ = match format {
        Format::Human => builder.try_init(),
        Format::Json => builder.json().flatten_event(false).try_init(),
    };
}

/// Refusals logged per reason in one second, at most: a flood of them
/// writes a few lines a second, and the next line after it says how many
/// were left out.
pub const REFUSALS_PER_SECOND: u32 = 10;

/// One reason's window.
#[derive(Debug, Clone, Copy)]
struct Window {
    start: Option<std::time::Instant>,
    logged: u32,
    suppressed: u64,
}

/// Rate limit of refusals' log lines, per reason.
#[derive(Debug)]
pub struct Throttle {
    windows: std::sync::Mutex<[Window; acp_codec::remote::Refusal::COUNT]>,
}

impl Default for Throttle {
    fn default() -> Self {
        let w = Window {
            start: None,
            logged: 0,
            suppressed: 0,
        };
        Self {
            windows: std::sync::Mutex::new([w; acp_codec::remote::Refusal::COUNT]),
        }
    }
}

impl Throttle {
    /// Whether a line for `reason` may be written now: `Some` with how
    /// many were left out since the last one written, `None` to leave
    /// this one out.
    pub fn admit(&self, reason: acp_codec::remote::Refusal) -> Option<u64> {
        self.admit_at(reason, std::time::Instant::now())
    }

    fn admit_at(&self, reason: acp_codec::remote::Refusal, now: std::time::Instant) -> Option<u64> {
        let mut windows = self
            .windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let w = windows.get_mut(reason.index())?;
        let fresh = w
            .start
            .is_none_or(|s| now.duration_since(s) >= std::time::Duration::from_secs(1));
        if fresh {
            w.start = Some(now);
            w.logged = 0;
        }
        if w.logged >= REFUSALS_PER_SECOND {
            w.suppressed = w.suppressed.saturating_add(1);
            return None;
        }
        w.logged += 1;
        Some(std::mem::take(&mut w.suppressed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_codec::remote::Refusal;
    use std::time::{Duration, Instant};

    #[test]
    fn a_lazy_log_is_a_file_from_its_first_write_with_its_held_line_first() {
        let dir = std::env::temp_dir().join(format!("acp-log-lazy-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("agent.log");
        let mut log = Log::lazy(&path, 1 << 20);
        // A run that writes nothing: no file, its line never written.
        log.hold(b"[bridge] run 1 started\n".to_vec());
        log.hold(b"[bridge] run 2 started\n".to_vec());
        assert!(!path.exists());
        log.write(b"run 2 says\n");
        log.write(b"and more\n");
        log.hold(b"[bridge] run 3 started\n".to_vec());
        log.write(b"run 3 says\n");
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "[bridge] run 2 started\nrun 2 says\nand more\n[bridge] run 3 started\nrun 3 says\n"
        );
        // Past its limit at its first write: rotated first, as at an open.
        let mut log = Log::lazy(&path, 8);
        log.write(b"fresh\n");
        assert_eq!(fs::read_to_string(&path).unwrap(), "fresh\n");
        let mut old = path.clone().into_os_string();
        old.push(".old");
        assert_eq!(fs::read_to_string(old).unwrap(), text);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_flood_writes_the_limit_a_second_then_says_how_many_were_left_out() {
        let t = Throttle::default();
        let t0 = Instant::now();
        let admitted = (0..1000)
            .filter(|_| t.admit_at(Refusal::PerAddress, t0).is_some())
            .count();
        assert_eq!(admitted, REFUSALS_PER_SECOND as usize);
        // Another reason has its own window.
        assert_eq!(t.admit_at(Refusal::WrongToken, t0), Some(0));
        let later = t0 + Duration::from_secs(1);
        assert_eq!(
            t.admit_at(Refusal::PerAddress, later),
            Some(1000 - u64::from(REFUSALS_PER_SECOND))
        );
        assert_eq!(t.admit_at(Refusal::PerAddress, later), Some(0));
    }
}
