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
}

impl Log {
    /// Opens (rotating first if the file is already past the limit).
    pub fn open(path: &Path, limit: u64) -> Self {
        let mut log = Self {
            path: path.to_owned(),
            limit,
            file: None,
            size: 0,
        };
        let size = fs::metadata(&log.path).map(|m| m.len()).unwrap_or(0);
        if size > limit {
            log.rotate();
        } else {
            log.reopen();
        }
        log
    }

    fn reopen(&mut self) {
        self.file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .ok();
        self.size = fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0);
    }

    fn rotate(&mut self) {
        self.file = None;
        let mut old = self.path.clone().into_os_string();
        old.push(".old");
        let _ = fs::rename(&self.path, old);
        self.reopen();
    }

    /// Appends bytes, rotating once the file is past the limit.
    pub fn write(&mut self, bytes: &[u8]) {
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
