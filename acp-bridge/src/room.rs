//! Each agent's room: what `acp-bridge` gives an agent it starts (its
//! directories, its environment, its Landlock rules) and the checks it
//! makes before it starts any.
//!
//! A user's own agent (a token file's user) gets:
//!
//! - read-write: its `HOME`, working directory and temporary directory
//!   (`TMPDIR`), all under the state directory, and the operator's
//!   `--agent-rw` paths and the user's `agentRw`;
//! - read-only and executable: the system ([`crate::sandbox::SYSTEM_READ_ONLY`]),
//!   the agent's install directory ([`agent_dirs`]), this program's
//!   directory, the operator's `--agent-ro` paths and the user's `agentRo`;
//! - nothing else: not another user's room, not the state directory's
//!   listing, not the token file, not the logs;
//! - the environment: the allow-list [`ENV_ALLOW`] (and `--agent-env`
//!   names) from the bridge's own, then the user's `env` from the token
//!   file, then `HOME` and `TMPDIR`. No other variable of the bridge's
//!   reaches it.
//!
//! The shared agent (no token file) is the operator's: it runs in the
//! bridge's working directory with the bridge's `HOME` and `TMPDIR` (when
//! allowed), and is confined only with `--confine` (then to those three,
//! read-write, and the same read-only paths). Its working directory,
//! `HOME` and `TMPDIR` must then not hold the bridge's own files (its log
//! directory, its token file): [`Rooms::check`] refuses to start otherwise.
//!
//! Every agent's tree, the shared agent's too, runs under the limits of
//! [`crate::limits`]: `--agent-max-processes` and `--agent-max-memory`, or
//! a user's own `maxProcesses` and `maxMemory` from the token file.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use crate::limits::{self, Limits};
use crate::sandbox::{Policy, SYSTEM_READ_ONLY};
use crate::supervisor::{self, Launch};
use crate::users::UserRoom;

/// The variables of the bridge's environment every agent gets (when set):
/// where programs are, language, time zone, terminal, who runs it, where
/// certificates are. Anything else (tokens, API keys) needs `--agent-env
/// NAME` or a user's `env` in the token file.
pub const ENV_ALLOW: &[&str] = &[
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "LC_COLLATE",
    "LC_NUMERIC",
    "LC_TIME",
    "TZ",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "USER",
    "LOGNAME",
    "SHELL",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];

/// An agent's whole environment, from the bridge's (`server`): the
/// variables of [`ENV_ALLOW`] and `extra_allowed` that `server` has; then,
/// for a user's own agent, the user's `env` from the token file and `HOME`
/// and `TMPDIR` set to their room (in that order, the later winning); for
/// the shared agent, the bridge's own `HOME` and `TMPDIR`. Nothing else.
pub fn agent_env<I>(
    server: I,
    extra_allowed: &[String],
    user: Option<(&UserDirs, &UserRoom)>,
) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let allowed = |name: &OsString| {
        let room_own = user.is_none() && (name == "HOME" || name == "TMPDIR");
        room_own
            || ENV_ALLOW.iter().any(|a| name == a)
            || extra_allowed.iter().any(|a| name == a.as_str())
    };
    let mut env: Vec<(OsString, OsString)> =
        server.into_iter().filter(|(k, _)| allowed(k)).collect();
    if let Some((dirs, room)) = user {
        let mut set = |name: OsString, value: OsString| {
            env.retain(|(k, _)| *k != name);
            env.push((name, value));
        };
        for (name, value) in &room.env {
            set(name.into(), value.into());
        }
        set("HOME".into(), dirs.home.clone().into_os_string());
        set("TMPDIR".into(), dirs.tmp.clone().into_os_string());
    }
    env
}

/// How the bridge rooms its agents (its `--agent-*`, `--confine` and
/// `--unconfined` flags).
#[derive(Debug, Clone, Default)]
pub struct Rooms {
    /// `--agent-ro`: more paths every confined agent may read.
    pub read_only: Vec<PathBuf>,
    /// `--agent-rw`: more paths every confined agent may read and write.
    pub read_write: Vec<PathBuf>,
    /// `--agent-env`: more variables of the bridge's environment agents get.
    pub env_allow: Vec<String>,
    /// `--agent-net`: the only TCP ports confined agents may connect to.
    pub tcp_connect: Option<Vec<u16>>,
    /// `--confine`: the shared agent is confined too.
    pub confine_shared: bool,
    /// `--unconfined`: no agent is confined, anywhere, whatever the kernel
    /// could do (their process trees still end with them, and their limits
    /// hold).
    pub unconfined: bool,
    /// `--agent-max-processes` and `--agent-max-memory`: every agent's
    /// limits unless its user's token-file entry sets their own.
    pub limits: Limits,
    /// The bridge's own files no agent may reach, each with what to call
    /// it: the token file, the log and state directories (every user's
    /// room is in the state directory). A path granted to agents, by the
    /// operator or by a user's token-file entry, may neither cover one nor
    /// lie inside one.
    pub protected: Vec<(String, PathBuf)>,
}

/// A user's room on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserDirs {
    /// The agent's `HOME`.
    pub home: PathBuf,
    /// Its working directory.
    pub work: PathBuf,
    /// Its `TMPDIR`.
    pub tmp: PathBuf,
}

impl UserDirs {
    /// The room of the user whose `HOME` is `home` and working directory
    /// `work`: its temporary directory is `tmp` beside `home`.
    pub fn beside(home: &Path, work: &Path) -> Self {
        let tmp = home
            .parent()
            .map_or_else(|| home.join("tmp"), |p| p.join("tmp"));
        Self {
            home: home.to_owned(),
            work: work.to_owned(),
            tmp,
        }
    }
}

impl Rooms {
    /// Whether a user's agent (`per_user`) or the shared agent is confined.
    pub fn confines(&self, per_user: bool) -> bool {
        !self.unconfined && (per_user || self.confine_shared)
    }

    /// The launcher command for `agent` (program and arguments): a user's
    /// own agent with `user` (their room on disk, made by the launcher
    /// when missing, and what the token file gives them), the shared agent with `None`. Set stdio on it and start
    /// it with [`supervisor::spawn`].
    ///
    /// # Errors
    ///
    /// When this program's path cannot be found, or the shared agent's
    /// working directory cannot be read.
    pub fn command(
        &self,
        agent: &[String],
        user: Option<(&UserDirs, &UserRoom)>,
    ) -> io::Result<tokio::process::Command> {
        self.limited_command(agent, user, &limits::Applied::default())
    }

    /// The limits of an agent: its user's own from the token file
    /// (`room`), else the bridge's.
    pub fn limits_of(&self, room: Option<&UserRoom>) -> Limits {
        Limits {
            max_processes: room
                .and_then(|r| r.max_processes)
                .unwrap_or(self.limits.max_processes),
            max_memory: room
                .and_then(|r| r.max_memory)
                .unwrap_or(self.limits.max_memory),
        }
    }

    /// As [`Rooms::command`], the launcher putting the agent's tree under
    /// `limits` (from [`limits::AgentCgroup::plan`] with
    /// [`Rooms::limits_of`]).
    ///
    /// What depends only on the agent's command and the bridge's own
    /// environment (the variables agents may get, the agent's
    /// [`agent_dirs`]) is worked out at the command's first start and
    /// kept; the directories are checked at each start against the
    /// program's file where `PATH` finds it (a `stat`), and worked out
    /// again when it moved or changed.
    ///
    /// # Errors
    ///
    /// As [`Rooms::command`].
    pub fn limited_command(
        &self,
        agent: &[String],
        user: Option<(&UserDirs, &UserRoom)>,
        limits: &limits::Applied,
    ) -> io::Result<tokio::process::Command> {
        let confined = self.confines(user.is_some());
        let (env, dirs) = fixed(agent, &self.env_allow, confined);
        let sandbox = if confined {
            Some(self.policy(dirs, user)?)
        } else {
            None
        };
        let mut launch = Launch::new(agent.to_vec());
        launch.sandbox = sandbox;
        launch.strict = confined;
        launch.limits = limits.clone();
        if let Some((dirs, _)) = user {
            // The launcher makes the room when missing and starts in it.
            launch.room = vec![dirs.home.clone(), dirs.work.clone(), dirs.tmp.clone()];
            launch.cwd = Some(dirs.work.clone());
        }
        let mut cmd = supervisor::command(launch)?;
        cmd.env_clear().envs(agent_env(env, &self.env_allow, user));
        Ok(cmd)
    }

    /// The Landlock rules of an agent's room, its code in `agent_dirs`.
    fn policy(
        &self,
        agent_dirs: Vec<PathBuf>,
        user: Option<(&UserDirs, &UserRoom)>,
    ) -> io::Result<Policy> {
        let mut read_only = self.read_only.clone();
        let mut read_write = self.read_write.clone();
        read_only.extend(agent_dirs);
        match user {
            Some((dirs, room)) => {
                for path in room.read_only.iter().chain(&room.read_write) {
                    self.refuse_protected(path)
                        .map_err(|e| io::Error::new(io::ErrorKind::PermissionDenied, e))?;
                }
                read_only.extend(room.read_only.iter().cloned());
                read_write.extend(room.read_write.iter().cloned());
                read_write.extend([dirs.home.clone(), dirs.work.clone(), dirs.tmp.clone()]);
            }
            None => {
                read_write.push(std::env::current_dir()?);
                read_write.push(std::env::var_os("HOME").map_or_else(PathBuf::new, PathBuf::from));
                read_write.push(std::env::temp_dir());
                read_write.retain(|p| !p.as_os_str().is_empty());
            }
        }
        Ok(Policy {
            read_only,
            read_write,
            tcp_connect: self.tcp_connect.clone(),
        })
    }

    /// Checks, before the bridge starts any agent, that its rooms hold:
    /// the operator's paths exist; no secret of the bridge
    /// ([`Rooms::protected`]) lies beneath a path a confined agent may
    /// read, and no operator's path lies inside one; and the
    /// kernel confines (this program run with `--check-confinement`, which
    /// `acp-bridge` answers). `per_user`: there is a token file.
    ///
    /// With `--confine`, also refuses a shared agent whose working
    /// directory, `HOME` or `TMPDIR` holds one of those files.
    ///
    /// Returns a warning to log loudly (`--unconfined`, or a kernel that
    /// confines only partly: its report), or `None`.
    ///
    /// # Errors
    ///
    /// What is wrong, naming what is missing.
    pub fn check(&self, agent: &[String], per_user: bool) -> Result<Option<String>, String> {
        for p in self.read_only.iter().chain(&self.read_write) {
            if !p.is_absolute() || !p.exists() {
                return Err(format!(
                    "agent path {} is not an existing absolute path",
                    p.display()
                ));
            }
        }
        if self.unconfined {
            return Ok(Some(
                "WARNING: --unconfined: agents are NOT confined: each may read and write every file this OS user can, other users' rooms and the token file included".to_owned(),
            ));
        }
        if !self.confines(per_user) {
            return Ok(None);
        }
        let granted: Vec<PathBuf> = SYSTEM_READ_ONLY
            .iter()
            .map(PathBuf::from)
            .chain(self.read_only.iter().cloned())
            .chain(self.read_write.iter().cloned())
            .chain(agent_dirs(agent))
            .chain(
                supervisor::this_program()
                    .ok()
                    .and_then(|e| e.parent().map(Path::to_owned)),
            )
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .collect();
        for (what, path) in &self.protected {
            let Some(path) = resolve_existing_part(path) else {
                continue;
            };
            if let Some(g) = granted.iter().find(|g| path.starts_with(g)) {
                return Err(format!(
                    "the {what} {} is beneath {}, which confined agents may read: move it elsewhere",
                    path.display(),
                    g.display()
                ));
            }
        }
        for path in self.read_only.iter().chain(&self.read_write) {
            self.refuse_protected(path)?;
        }
        if !per_user {
            self.refuse_shared_reach()?;
        }
        probe_kernel()
    }

    /// With `--confine`, the shared agent may write the bridge's working
    /// directory, `HOME` and `TMPDIR`: refuses when one of them holds one
    /// of the bridge's own files (Landlock only allows; a file inside a
    /// tree the agent may write cannot be taken out of it).
    fn refuse_shared_reach(&self) -> Result<(), String> {
        let writable: Vec<(&str, PathBuf)> = [
            ("working directory", std::env::current_dir().ok()),
            ("HOME", std::env::var_os("HOME").map(PathBuf::from)),
            ("TMPDIR", Some(std::env::temp_dir())),
        ]
        .into_iter()
        .filter_map(|(what, p)| Some((what, std::fs::canonicalize(p?).ok()?)))
        .collect();
        for (what, path) in &self.protected {
            let Some(path) = resolve_existing_part(path) else {
                continue;
            };
            if let Some((dir_is, dir)) = writable.iter().find(|(_, d)| path.starts_with(d)) {
                return Err(format!(
                    "with --confine the shared agent may write its {dir_is} {}, which holds the bridge's {what} {}: move it outside (--log-dir DIR for the log)",
                    dir.display(),
                    path.display()
                ));
            }
        }
        Ok(())
    }

    /// Refuses a path granted to agents that covers one of the bridge's
    /// own files ([`Rooms::protected`]) or lies inside one (another
    /// user's room in the state directory, say), or that is not absolute:
    /// compared with symlinks and `..` resolved as far as the path exists.
    ///
    /// # Errors
    ///
    /// Which path, and what of the bridge's it would reach.
    pub fn refuse_protected(&self, path: &Path) -> Result<(), String> {
        if !path.is_absolute() {
            return Err(format!("agent path {} is not absolute", path.display()));
        }
        // What does not exist yet is compared where it would be; the
        // launcher refuses a rule on a path that is not there.
        let granted = resolve_existing_part(path).unwrap_or_else(|| lexical(path));
        for (what, mine) in &self.protected {
            let Some(mine) = resolve_existing_part(mine) else {
                continue;
            };
            if mine.starts_with(&granted) || granted.starts_with(&mine) {
                return Err(format!(
                    "agent path {} would reach the {what} {}: refused",
                    path.display(),
                    mine.display()
                ));
            }
        }
        Ok(())
    }
}

/// What every start of one agent command shares, worked out at its first
/// start and kept for the next ones ([`fixed`]).
struct Fixed {
    /// The agent's program and arguments.
    command: Vec<String>,
    /// The `--agent-env` names `env` was taken with.
    env_allow: Vec<String>,
    /// The bridge's variables an agent may get: as [`agent_env`] takes
    /// them for the shared agent, which keeps of them what a user's
    /// agent gets too (the bridge's environment does not change while
    /// it runs).
    env: Vec<(OsString, OsString)>,
    /// The agent's [`agent_dirs`] (`None`: not worked out yet).
    dirs: Option<Vec<PathBuf>>,
    /// The interpreter its program names (`#!`), when it does.
    interpreter: Option<String>,
    /// The files `dirs` were worked out from, as they were found.
    found: Vec<Option<Found>>,
}

/// A file as found for an agent's [`agent_dirs`]: where, and which file it
/// was (its device, inode and modification time, its symlinks followed).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    path: PathBuf,
    dev: u64,
    ino: u64,
    mtime: (i64, i64),
}

impl Found {
    /// `path` when it exists (a file only, when `file`).
    fn at(path: PathBuf, file: bool) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(&path).ok()?;
        if file && !m.is_file() {
            return None;
        }
        Some(Self {
            path,
            dev: m.dev(),
            ino: m.ino(),
            mtime: (m.mtime(), m.mtime_nsec()),
        })
    }
}

/// `program` where [`which`] finds it, not resolved (one `stat` for a
/// path, one for each directory of `PATH` tried).
fn locate(program: &str) -> Option<Found> {
    if program.contains('/') {
        return Found::at(PathBuf::from(program), false);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find_map(|dir| Found::at(dir.join(program), true))
}

/// The files an agent's [`agent_dirs`] come from: its program and the
/// program's `interpreter` where they are found now, and each argument
/// that is an absolute path.
fn agent_files(agent: &[String], interpreter: Option<&str>) -> Vec<Option<Found>> {
    let Some((program, args)) = agent.split_first() else {
        return Vec::new();
    };
    let mut files = vec![locate(program), interpreter.and_then(locate)];
    files.extend(
        args.iter()
            .filter(|a| Path::new(a).is_absolute())
            .map(|a| Found::at(PathBuf::from(a), true)),
    );
    files
}

/// The command of the last agent started, and what its starts share.
static FIXED: std::sync::Mutex<Option<Fixed>> = std::sync::Mutex::new(None);

/// For a start of `agent`: the bridge's variables it may get (with
/// `env_allow`; see [`Fixed::env`]), and, when it is `confined`, its
/// [`agent_dirs`].
///
/// Both are worked out at the first start of a command and kept. The
/// directories are checked at each start against the files they came
/// from (a `stat` of the program where `PATH` finds it, of its
/// interpreter, of each absolute argument): a program moved, replaced or
/// linked elsewhere (an upgrade), or found elsewhere on `PATH`, has them
/// worked out again (symlinks followed, the program's `#!` line read), as
/// every start did before. A start costs a `stat` or two, not a
/// `readlink` a path component and a read of the program.
fn fixed(
    agent: &[String],
    env_allow: &[String],
    confined: bool,
) -> (Vec<(OsString, OsString)>, Vec<PathBuf>) {
    let mut slot = FIXED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let current = slot
        .as_ref()
        .is_some_and(|f| f.command == agent && f.env_allow == env_allow);
    let fixed = if current { slot.as_mut() } else { None };
    let fixed = match fixed {
        Some(f) => f,
        None => slot.insert(Fixed {
            command: agent.to_vec(),
            env_allow: env_allow.to_vec(),
            env: agent_env(std::env::vars_os(), env_allow, None),
            dirs: None,
            interpreter: None,
            found: Vec::new(),
        }),
    };
    if !confined {
        return (fixed.env.clone(), Vec::new());
    }
    let found = match &fixed.dirs {
        Some(_) => agent_files(agent, fixed.interpreter.as_deref()),
        None => Vec::new(),
    };
    if fixed.dirs.is_none() || found != fixed.found {
        fixed.interpreter = agent
            .first()
            .and_then(|p| which(p))
            .and_then(|p| interpreter(&p));
        fixed.found = agent_files(agent, fixed.interpreter.as_deref());
        fixed.dirs = Some(agent_dirs(agent));
    }
    (fixed.env.clone(), fixed.dirs.clone().unwrap_or_default())
}

/// `path` absolute with its symlinks followed as far as it exists (a
/// state directory not made yet still counts where it will be).
pub(crate) fn resolve_existing_part(path: &Path) -> Option<PathBuf> {
    let absolute = std::env::current_dir().ok()?.join(path);
    let mut rest = Vec::new();
    let mut at = absolute.as_path();
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            return Some(rest.iter().rev().fold(real, |p, name| p.join(name)));
        }
        rest.push(at.file_name()?.to_owned());
        at = at.parent()?;
    }
}

/// [`resolve_existing_part`] of `path`, beneath `base` (a user's room
/// beneath the state directory), with `base` resolved at the first call
/// that finds it and kept (the bridge's directories stay where they are
/// while it runs): only the components below `base` are looked at, an
/// `lstat` each while they exist, and `path` is resolved in full only
/// when one of them is a symbolic link. The same answer, for two system
/// calls instead of a `readlink` for every component of `path`.
pub(crate) fn resolve_beneath(base: &Path, path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    static BASE: std::sync::Mutex<Option<(PathBuf, PathBuf)>> = std::sync::Mutex::new(None);
    let Ok(below) = path.strip_prefix(base) else {
        return resolve_existing_part(path);
    };
    let resolved = {
        let mut slot = BASE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match slot.as_ref() {
            Some((b, r)) if b == base => Some(r.clone()),
            _ => std::fs::canonicalize(base)
                .ok()
                .inspect(|r| *slot = Some((base.to_owned(), r.clone()))),
        }
    };
    let Some(resolved) = resolved else {
        return resolve_existing_part(path);
    };
    let mut at = base.to_owned();
    for c in below.components() {
        let Component::Normal(name) = c else {
            return resolve_existing_part(path);
        };
        at.push(name);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => return resolve_existing_part(path),
            Ok(_) => {}
            // Not made yet: neither is what lies below it.
            Err(_) => break,
        }
    }
    Some(resolved.join(below))
}

/// `path` with `.` and `..` taken out by their names alone: for a path whose
/// missing part has a `..` (`resolve_existing_part` cannot name it).
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Runs this program with `--check-confinement` (a fresh, single-threaded
/// process, which can try a user namespace): `Err` with its report when
/// the kernel cannot confine, a warning with it when only partly.
fn probe_kernel() -> Result<Option<String>, String> {
    let exe = supervisor::this_program().map_err(|e| format!("cannot find this program: {e}"))?;
    let out = std::process::Command::new(exe)
        .arg("--check-confinement")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot check confinement: {e}"))?;
    let report = String::from_utf8_lossy(&out.stdout);
    if out.status.success() {
        return Ok(None);
    }
    if out.status.code() == Some(i32::from(supervisor::PARTLY_CONFINED)) {
        return Ok(Some(format!(
            "WARNING: agents are only partly confined on this kernel:\n{}",
            report.trim_end()
        )));
    }
    Err(format!(
        "this kernel cannot confine agents (pass --unconfined to run them unconfined anyway):\n{}",
        report.trim_end()
    ))
}

/// Where an agent's code lies, read-only and executable in its room: the
/// [`install_dirs`] of its program, and for each argument that is an
/// absolute path to a file (`node /opt/agent/main.js`), that file's
/// directory the same way (its whole `node_modules` tree when it lies in
/// one).
pub fn agent_dirs(agent: &[String]) -> Vec<PathBuf> {
    let Some((program, args)) = agent.split_first() else {
        return Vec::new();
    };
    let mut dirs = install_dirs(program);
    for arg in args.iter().map(Path::new) {
        if arg.is_absolute() && arg.is_file() {
            if let Ok(file) = std::fs::canonicalize(arg) {
                dirs.extend(package_dir(&file));
            }
        }
    }
    dirs
}

/// The directories an agent's program runs from, to be readable and
/// executable: the program found on `PATH` with its symlinks followed,
/// with its whole `node_modules` tree when it lies in one (see
/// `package_dir`), else its own directory; and the same for the
/// interpreter of a script (`#!/usr/bin/env node` gives `node`'s).
pub fn install_dirs(program: &str) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let Some(path) = which(program) else {
        return dirs;
    };
    dirs.extend(package_dir(&path));
    if let Some(interpreter) = interpreter(&path) {
        if let Some(found) = which(&interpreter) {
            dirs.extend(package_dir(&found));
        }
    }
    dirs
}

/// `program` resolved on `PATH` (or as given, when it holds a `/`), with
/// its symlinks followed.
fn which(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return std::fs::canonicalize(program).ok();
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .and_then(|p| std::fs::canonicalize(p).ok())
}

/// Where a resolved program's code lies: for a program inside a
/// `node_modules` tree, the outermost `node_modules` directory on its path
/// (npm hoists a package's dependencies beside it, and Node.js looks for
/// them in every `node_modules` above it); else its own directory.
fn package_dir(path: &Path) -> Option<PathBuf> {
    let parts: Vec<_> = path.components().collect();
    match parts.iter().position(|c| c.as_os_str() == "node_modules") {
        Some(at) => parts.get(..=at).map(|p| p.iter().collect()),
        None => path.parent().map(Path::to_owned),
    }
}

/// The interpreter a script names on its `#!` line (the program after
/// `env`).
fn interpreter(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    let head = head.get(..n)?;
    let line = head.strip_prefix(b"#!")?;
    let line = line.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    let first = words.next()?;
    if first.ends_with("/env") {
        words.find(|w| !w.starts_with('-')).map(str::to_owned)
    } else {
        Some(first.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::supervisor::Launch;

    #[test]
    fn no_granted_path_reaches_the_bridges_own_files() {
        let base = std::env::temp_dir().join(format!("acp-room-protected-{}", std::process::id()));
        let state = base.join("state");
        let other = base.join("elsewhere");
        for dir in [state.join("bo").join("home"), other.clone()] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let rooms = Rooms {
            protected: vec![("state directory".to_owned(), state.clone())],
            ..Rooms::default()
        };
        // Inside it (another user's room, also through `..`), covering it,
        // relative or missing: refused. Beside it: granted.
        for bad in [
            state.join("bo"),
            state.join("bo").join("..").join("bo").join("home"),
            state.clone(),
            base.clone(),
            PathBuf::from("state"),
            state.join("missing"),
            base.join("gone").join("..").join("state").join("bo"),
        ] {
            assert!(rooms.refuse_protected(&bad).is_err(), "{}", bad.display());
        }
        rooms.refuse_protected(&other).unwrap();
        rooms.refuse_protected(&base.join("missing")).unwrap();
        // A user's own token-file path is checked when their agent starts.
        let dirs = UserDirs::beside(
            &state.join("ana").join("home"),
            &state.join("ana").join("work"),
        );
        let room = UserRoom {
            read_write: vec![state.join("bo")],
            ..UserRoom::default()
        };
        let err = rooms
            .command(&["/bin/true".to_owned()], Some((&dirs, &room)))
            .unwrap_err();
        assert!(
            err.to_string().contains("would reach the state directory"),
            "{err}"
        );
        let fine = UserRoom {
            read_only: vec![other],
            ..UserRoom::default()
        };
        rooms
            .command(&["/bin/true".to_owned()], Some((&dirs, &fine)))
            .unwrap();
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn a_node_program_gets_its_whole_node_modules_tree() {
        let p = Path::new("/opt/n/lib/node_modules/@google/gemini-cli/dist/index.js");
        assert_eq!(
            package_dir(p),
            Some(PathBuf::from("/opt/n/lib/node_modules"))
        );
        let p = Path::new("/srv/peers/node_modules/qwen/node_modules/x/cli.js");
        assert_eq!(
            package_dir(p),
            Some(PathBuf::from("/srv/peers/node_modules"))
        );
        assert_eq!(
            package_dir(Path::new("/usr/bin/python3")),
            Some(PathBuf::from("/usr/bin"))
        );
    }

    #[test]
    fn a_script_names_its_interpreter() {
        let dir = std::env::temp_dir().join(format!("acp-room-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("agent");
        std::fs::write(&script, "#!/usr/bin/env -S node --no-warnings\n").unwrap();
        assert_eq!(interpreter(&script).as_deref(), Some("node"));
        std::fs::write(&script, "#!/bin/sh -e\necho\n").unwrap();
        assert_eq!(interpreter(&script).as_deref(), Some("/bin/sh"));
        std::fs::write(&script, "\x7fELF").unwrap();
        assert_eq!(interpreter(&script), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_agents_script_argument_is_part_of_its_install() {
        let dir = std::env::temp_dir().join(format!("acp-room-args-{}", std::process::id()));
        let pkg = dir.join("node_modules").join("agent");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::write(pkg.join("main.js"), "").unwrap();
        let main = pkg.join("main.js").to_string_lossy().into_owned();
        let dirs = agent_dirs(&["sh".to_owned(), "-x".to_owned(), main]);
        let tree = std::fs::canonicalize(dir.join("node_modules")).unwrap();
        assert!(dirs.contains(&tree), "{dirs:?}");
        // Flags and missing files add nothing.
        let none = agent_dirs(&[
            "/nonexistent/agent".to_owned(),
            "/nonexistent/x.js".to_owned(),
        ]);
        assert!(none.is_empty(), "{none:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_path_not_made_yet_resolves_where_it_will_be() {
        let real = std::fs::canonicalize(std::env::temp_dir()).unwrap();
        let later = std::env::temp_dir().join("acp-room-not-yet").join("agents");
        assert_eq!(
            resolve_existing_part(&later),
            Some(real.join("acp-room-not-yet").join("agents"))
        );
    }

    /// The read-only paths of the room `rooms` gives a user's agent
    /// `agent`, read back from its launcher's spec.
    fn read_only_of(rooms: &Rooms, agent: &[String], dirs: &UserDirs) -> Vec<PathBuf> {
        let cmd = rooms
            .command(agent, Some((dirs, &UserRoom::default())))
            .unwrap();
        let spec = cmd.as_std().get_args().nth(1).unwrap().to_str().unwrap();
        let launch: Launch = serde_json::from_str(spec).unwrap();
        launch.sandbox.unwrap().read_only
    }

    #[test]
    fn an_agents_directories_follow_its_program_when_it_moves() {
        let base = std::env::temp_dir().join(format!("acp-room-moves-{}", std::process::id()));
        let (one, two) = (base.join("v1"), base.join("v2"));
        for dir in [&one, &two] {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join("agent"), "#!/bin/sh\n").unwrap();
        }
        let link = base.join("agent");
        std::os::unix::fs::symlink(one.join("agent"), &link).unwrap();
        let agent = vec![link.to_string_lossy().into_owned()];
        let dirs = UserDirs::beside(&base.join("ana/home"), &base.join("ana/work"));
        let rooms = Rooms::default();
        let (one, two) = (
            std::fs::canonicalize(&one).unwrap(),
            std::fs::canonicalize(&two).unwrap(),
        );
        // The oracle: the directories worked out afresh, every time.
        for round in 0..3 {
            let got = read_only_of(&rooms, &agent, &dirs);
            assert_eq!(got, agent_dirs(&agent), "round {round}");
            assert!(got.contains(&one) && !got.contains(&two), "{got:?}");
        }
        // An upgrade links the program elsewhere: the next start follows.
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(two.join("agent"), &link).unwrap();
        let got = read_only_of(&rooms, &agent, &dirs);
        assert_eq!(got, agent_dirs(&agent));
        assert!(got.contains(&two) && !got.contains(&one), "{got:?}");
        // Its interpreter changes: so do its directories.
        std::fs::write(
            two.join("agent"),
            "#!/usr/bin/env acp-room-no-such-interpreter\n",
        )
        .unwrap();
        assert_eq!(read_only_of(&rooms, &agent, &dirs), agent_dirs(&agent));
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_room_resolves_beneath_its_base_as_in_full() {
        let base = std::env::temp_dir().join(format!("acp-room-beneath-{}", std::process::id()));
        let state = base.join("state");
        std::fs::create_dir_all(state.join("ana/work")).unwrap();
        std::fs::create_dir_all(base.join("elsewhere/work")).unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere"), state.join("bo")).unwrap();
        std::fs::create_dir_all(state.join("cy")).unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere/work"), state.join("cy/work")).unwrap();
        // Made, not made yet, linked elsewhere (the room or its working
        // directory), through `..`, outside the base: the full answer.
        for path in [
            state.join("ana/work"),
            state.join("dee/work"),
            state.join("ana/none/work"),
            state.join("bo/work"),
            state.join("cy/work"),
            state.join("ana/../bo/work"),
            base.join("elsewhere/work"),
        ] {
            for _ in 0..2 {
                assert_eq!(
                    resolve_beneath(&state, &path),
                    resolve_existing_part(&path),
                    "{}",
                    path.display()
                );
            }
        }
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn rooms_sit_beside_home() {
        let dirs = UserDirs::beside(Path::new("/s/ana/home"), Path::new("/s/ana/work"));
        assert_eq!(dirs.tmp, PathBuf::from("/s/ana/tmp"));
    }
}
