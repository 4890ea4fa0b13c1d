//! A program run in a pseudo-terminal, as a person at a terminal runs it:
//! the pty is its controlling terminal (Ctrl-C typed there is SIGINT),
//! its stdin, stdout and stderr. The test types into the master side and
//! waits, boundedly, for text to appear; escape codes are stripped before
//! matching, and the cursor-position query a line editor sends is
//! answered as a terminal would.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The running program and what it printed.
pub struct Pty {
    master: std::fs::File,
    pub child: Child,
    /// Everything printed so far, escape codes stripped.
    seen: Arc<Mutex<String>>,
    /// Where the next [`Pty::expect`] starts looking.
    cursor: usize,
}

impl Pty {
    /// Starts `cmd` in a new pty (120 columns, `TERM=xterm`).
    pub fn spawn(cmd: &mut Command) -> Self {
        let (mut master, mut slave) = (-1, -1);
        let size = libc::winsize {
            ws_row: 40,
            ws_col: 120,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty writes two descriptors into the locals; the name
        // and termios pointers may be null, the window size is read only.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened by openpty and are
        // owned by nothing else.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let io = |fd: &OwnedFd| Stdio::from(fd.try_clone().unwrap());
        cmd.stdin(io(&slave))
            .stdout(io(&slave))
            .stderr(io(&slave))
            .env("TERM", "xterm");
        // SAFETY: between fork and exec only async-signal-safe calls:
        // setsid, then the pty (now stdin) made the controlling terminal.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("spawn in a pty");
        drop(slave);
        let master = std::fs::File::from(master);
        let seen = Arc::new(Mutex::new(String::new()));
        let (mut reader, mut answerer) = (master.try_clone().unwrap(), master.try_clone().unwrap());
        let shared = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            let mut raw = Vec::new();
            // Ends when every copy of the slave is closed (EIO).
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                raw.extend_from_slice(&buf[..n]);
                while let Some(at) = find(&raw, b"\x1b[6n") {
                    raw.drain(at..at + 4);
                    let _ = answerer.write_all(b"\x1b[1;1R");
                }
                // Keep a trailing partial escape sequence, or a partial
                // character, for the next read.
                let partial = raw.iter().rposition(|&b| b == 0x1b).filter(|&i| {
                    !raw[i + 1..]
                        .iter()
                        .skip(1)
                        .any(|b| b.is_ascii_alphabetic() || *b == b'~')
                });
                let mut cut = partial.unwrap_or(raw.len());
                if let Err(e) = std::str::from_utf8(&raw[..cut]) {
                    if e.error_len().is_none() {
                        cut = e.valid_up_to();
                    }
                }
                let text = strip(&String::from_utf8_lossy(&raw[..cut]));
                shared.lock().unwrap().push_str(&text);
                raw.drain(..cut);
            }
        });
        Self {
            master,
            child,
            seen,
            cursor: 0,
        }
    }

    /// Types `text` (`\r` is Enter, `\x03` Ctrl-C, `\x04` Ctrl-D).
    pub fn send(&mut self, text: &str) {
        self.master.write_all(text.as_bytes()).unwrap();
        self.master.flush().unwrap();
    }

    /// Waits up to `secs` for `needle` after the last match; moves past it.
    pub fn expect(&mut self, needle: &str, secs: u64) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            {
                let seen = self.seen.lock().unwrap();
                if let Some(at) = seen[self.cursor..].find(needle) {
                    self.cursor += at + needle.len();
                    return;
                }
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let seen = self.seen.lock().unwrap();
                panic!(
                    "no {needle:?} within {secs} s; after the last match:\n{}\n--- all:\n{seen}",
                    &seen[self.cursor..]
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the main prompt (`> ` at the start of a line), then types
    /// `line` and Enter.
    pub fn line(&mut self, line: &str) {
        self.expect("\n> ", 20);
        // Let the editor finish drawing the prompt.
        std::thread::sleep(Duration::from_millis(50));
        self.send(&format!("{line}\r"));
    }

    /// Everything printed so far.
    pub fn seen(&self) -> String {
        self.seen.lock().unwrap().clone()
    }

    /// The exit status, within `secs` (killed and a panic after that).
    pub fn wait(&mut self, secs: u64) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("still running after {secs} s:\n{}", self.seen());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// `text` without CSI escape sequences (`ESC [ … letter`) and carriage
/// returns.
fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' if chars.peek() == Some(&'[') => {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() || c == '~' {
                        break;
                    }
                }
            }
            '\x1b' | '\r' => {}
            c => out.push(c),
        }
    }
    out
}
