//! Agents started as a process tree that ends as one: every process an
//! agent starts (a tool's child, a dev server, a daemon that called
//! `setsid` or forked twice) ends when the agent is stopped, or when the
//! program that started it exits or is killed.
//!
//! The program (`acp-bridge`, `acp-client`) re-executes itself as a small
//! launcher for each agent ([`command`], then [`spawn`]):
//!
//! ```text
//! bridge ──> launcher ──> init (PID 1 of a new PID namespace) ──> agent ──> its children
//! ```
//!
//! - The launcher asks for `SIGKILL` when its parent ends
//!   (`PR_SET_PDEATHSIG`; then checks its parent is still the one that
//!   started it, so a parent that died first is not missed), enters a new
//!   user namespace (the same user and group ids mapped) and a new PID
//!   namespace, applies the agent's Landlock rules to itself when it has
//!   any ([`crate::sandbox`]) and starts the init.
//! - The init is PID 1 of the new namespace. It too dies with its parent
//!   (the launcher), starts the agent, reaps every orphan the agent leaves
//!   (so none lingers as a zombie), and exits with the agent's status when
//!   the agent exits.
//! - When PID 1 of a PID namespace ends, the kernel kills every other
//!   process in it. So stopping an agent is `SIGKILL` to its launcher (what
//!   `tokio::process::Child::kill` sends): the init dies of its parent's
//!   death, and the namespace with it. The same chain runs when the bridge
//!   exits or is killed with `SIGKILL`: the launcher dies of its parent's
//!   death.
//!
//! The parent-death signal follows the thread that forked, not the
//! process: [`spawn`] forks every launcher from one thread that lives as
//! long as the program, never from a pool thread that may end first.
//!
//! A program that starts agents this way calls [`run_if_launcher`] first in
//! its `main`, before any thread starts (a tokio runtime included):
//!
//! ```rust,ignore
//! fn main() -> std::process::ExitCode {
//!     if let Some(code) = acp_bridge::supervisor::run_if_launcher() {
//!         return code; // this process was the launcher (or init) of an agent
//!     }
//!     tokio::runtime::Runtime::new().unwrap().block_on(async {
//!         let launch = Launch::new(vec!["gemini".into(), "--acp".into()]);
//!         let mut cmd = supervisor::command(launch).unwrap();
//!         cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).kill_on_drop(true);
//!         let mut agent = supervisor::spawn(cmd).await.unwrap();
//!         // ... speak ACP on its stdin and stdout ...
//!         agent.kill().await.unwrap(); // the agent and everything it started end
//!         std::process::ExitCode::SUCCESS
//!     })
//! }
//! ```
//!
//! Where the kernel refuses an unprivileged user namespace (a sysctl or a
//! security module may), a launcher run with [`Launch::strict`] refuses to
//! start the agent; otherwise it logs why on its stderr and starts a
//! keeper in place of the init (the same program, no namespace):
//!
//! ```text
//! bridge ──> launcher ──> keeper (child subreaper) ──> agent ──> its children
//! ```
//!
//! The keeper watches the launcher (a pidfd) rather than dying with it,
//! adopts every process the agent's tree orphans (`PR_SET_CHILD_SUBREAPER`),
//! and when the launcher or the agent ends, kills the whole tree: its
//! children, then each orphan they leave it, until none is left. The agent
//! also dies with the keeper (`PR_SET_PDEATHSIG`). What escapes it: a
//! process that a `SIGKILL` of the keeper itself orphans, and one that
//! leaves the tree by other means (none an agent has without privileges).
//!
//! The environment variable [`NO_NAMESPACES`], set in the launcher's
//! environment, makes it behave as on a host that refuses namespaces: for
//! tests of that path only.
//!
//! Each launcher also puts itself (so the agent's whole tree) under the
//! agent's limits ([`crate::limits`]) before it starts anything.

use std::io;
use std::process::ExitCode;
use std::sync::mpsc;
use std::sync::OnceLock;

use rustix::process::{Pid, Signal, WaitOptions};
use serde::{Deserialize, Serialize};

use crate::limits;
use crate::sandbox::{self, Policy};

/// Set in the launcher's environment, it behaves as if the kernel refused
/// unprivileged user namespaces (for tests of that path only; the bridge
/// passes it to the shared agent's launcher with `--agent-env`).
pub const NO_NAMESPACES: &str = "ACP_LAUNCHER_NO_NAMESPACES";

/// The hidden first argument that turns `acp-bridge` or `acp-client` into
/// the launcher: `PROGRAM --acp-launcher SPEC`.
pub const LAUNCHER_FLAG: &str = "--acp-launcher";

/// How the launcher exits when it refuses to start the agent.
const REFUSED: u8 = 125;

/// One agent to launch: its command and confinement. Its environment,
/// working directory and stdio are the launcher command's own (set them
/// on what [`command`] returns): the launcher passes them on unchanged.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Launch {
    /// The agent's program and arguments.
    pub command: Vec<String>,
    /// Landlock rules for the agent; `None`: not confined.
    pub sandbox: Option<Policy>,
    /// Refuse to start the agent without its own PID namespace.
    pub strict: bool,
    /// The cgroups and resource limits the launcher puts itself under.
    #[serde(default)]
    pub limits: limits::Applied,
    /// Directories the launcher makes (with their parents, private to
    /// this OS user: mode `0700`) when missing, before anything else: a
    /// user's room, made by the agent's own process rather than by the
    /// program that starts it.
    #[serde(default)]
    pub room: Vec<std::path::PathBuf>,
    /// The agent's working directory, entered by the launcher once
    /// [`Launch::room`] is made (`None`: the launcher's own).
    #[serde(default)]
    pub cwd: Option<std::path::PathBuf>,
    /// The pid the launcher's (or init's) parent must have.
    #[serde(default)]
    parent: u32,
    /// Launcher or init.
    #[serde(default)]
    init: bool,
    /// An init without a namespace: the keeper.
    #[serde(default)]
    keeper: bool,
}

impl Launch {
    /// `command` (program and arguments), not confined, started even where
    /// no PID namespace can be made.
    pub fn new(command: Vec<String>) -> Self {
        Self {
            command,
            ..Self::default()
        }
    }
}

/// An agent's command line as `--agent` takes it: words split on
/// whitespace, where `'…'` and `"…"` quote whitespace (and the other
/// quote) into a word, as a shell would without its expansions:
/// `sh -c 'echo a b'` is `sh`, `-c`, `echo a b`. Both programs read
/// `--agent` through it.
///
/// # Errors
///
/// A quote left open, or no word at all.
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    if quote.is_some() {
        return Err("unbalanced quote".to_owned());
    }
    words.extend(word.take());
    if words.is_empty() {
        return Err("needs a command".to_owned());
    }
    Ok(words)
}

/// The launcher's command for `launch`: this program, re-executed with
/// [`LAUNCHER_FLAG`]. Set its environment, working directory and stdio,
/// then start it with [`spawn`]; `kill` on the child stops the agent and
/// everything it started.
///
/// # Errors
///
/// When this program's path cannot be found.
pub fn command(launch: Launch) -> io::Result<tokio::process::Command> {
    let exe = this_program()?;
    let spec = Launch {
        parent: std::process::id(),
        init: false,
        ..launch
    };
    let mut cmd = tokio::process::Command::new(exe);
    cmd.arg(LAUNCHER_FLAG).arg(encode(&spec)?);
    Ok(cmd)
}

/// This program's path ([`std::env::current_exe`]), read once per process:
/// every agent's launcher (and its MCP relay) is this program, so a
/// program that starts many reads `/proc/self/exe` once, not at each
/// start. A program whose file is replaced while it runs (an upgrade)
/// keeps starting the file at that path, as it would with the path read
/// at each start (where the kernel would name the replaced file
/// `PATH (deleted)`, which cannot be run).
///
/// # Errors
///
/// When this program's path cannot be found (at each call, then).
pub fn this_program() -> io::Result<&'static std::path::Path> {
    static EXE: OnceLock<std::path::PathBuf> = OnceLock::new();
    if let Some(exe) = EXE.get() {
        return Ok(exe);
    }
    let exe = std::env::current_exe()?;
    Ok(EXE.get_or_init(|| exe))
}

fn encode(spec: &Launch) -> io::Result<String> {
    serde_json::to_string(spec).map_err(io::Error::other)
}

type Job = (
    tokio::process::Command,
    tokio::sync::oneshot::Sender<io::Result<tokio::process::Child>>,
);

static SPAWNER: OnceLock<mpsc::Sender<Job>> = OnceLock::new();

/// Starts `cmd` (a launcher from [`command`]) from the one long-lived
/// spawning thread, so the launcher's parent-death signal fires when this
/// program ends, not when some worker thread does. Call it inside a tokio
/// runtime.
///
/// # Errors
///
/// When the process cannot be started.
pub async fn spawn(cmd: tokio::process::Command) -> io::Result<tokio::process::Child> {
    let tx = SPAWNER.get_or_init(|| {
        let handle = tokio::runtime::Handle::current();
        let (tx, rx) = mpsc::channel::<Job>();
        // A failure to start the thread drops `rx`: the send below fails.
        let _ = std::thread::Builder::new()
            .name("acp-spawner".to_owned())
            .spawn(move || {
                let _runtime = handle.enter();
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            });
        tx
    });
    let (reply, answer) = tokio::sync::oneshot::channel();
    tx.send((cmd, reply))
        .map_err(|_| io::Error::other("the spawning thread is gone"))?;
    answer
        .await
        .map_err(|_| io::Error::other("the spawning thread is gone"))?
}

/// Runs the launcher (or its init) when this process was started as one
/// (`PROGRAM --acp-launcher SPEC`): call it first in `main`, before any
/// thread starts (a multi-threaded process cannot enter a new user
/// namespace). `None`: this is not a launcher, go on.
pub fn run_if_launcher() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != LAUNCHER_FLAG {
        return None;
    }
    let spec = args
        .next()
        .and_then(|s| serde_json::from_str::<Launch>(&s.to_string_lossy()).ok());
    let Some(spec) = spec else {
        eprintln!("acp launcher: bad launch spec");
        return Some(ExitCode::from(REFUSED));
    };
    Some(if spec.init && spec.keeper {
        keeper(&spec)
    } else if spec.init {
        init(&spec)
    } else {
        launcher(spec)
    })
}

/// Dies with the parent, and makes sure the parent is still `expected`
/// (it may have died before the signal was asked for).
fn die_with_parent(parent_now: impl Fn() -> Option<u32>, expected: u32) -> Result<(), String> {
    rustix::process::set_parent_process_death_signal(Some(Signal::KILL))
        .map_err(|e| format!("cannot ask for a parent-death signal: {e}"))?;
    match parent_now() {
        Some(p) if p == expected => Ok(()),
        _ => Err("the process that started it is gone".to_owned()),
    }
}

fn launcher(mut spec: Launch) -> ExitCode {
    let parent = || {
        let p = Pid::as_raw(rustix::process::getppid());
        u32::try_from(p).ok()
    };
    if let Err(e) = die_with_parent(parent, spec.parent) {
        eprintln!("acp launcher: {e}");
        return ExitCode::from(REFUSED);
    }
    if let Err(e) = make_room(&spec) {
        eprintln!("acp launcher: refusing to start the agent: {e}");
        return ExitCode::from(REFUSED);
    }
    if let Err(e) = limits::enter(&spec.limits) {
        eprintln!("acp launcher: refusing to start the agent: {e}");
        return ExitCode::from(REFUSED);
    }
    let namespace = enter_namespaces();
    if let Err(e) = &namespace {
        if spec.strict {
            eprintln!("acp launcher: refusing to start the agent: no pid namespace: {e}");
            return ExitCode::from(REFUSED);
        }
        eprintln!(
            "acp launcher: WARNING: no pid namespace ({e}): a keeper ends the agent's tree instead"
        );
    } else if let Err(e) = limits::enter_nproc(&spec.limits) {
        // Counted per user namespace: set once this one exists.
        eprintln!("acp launcher: refusing to start the agent: {e}");
        return ExitCode::from(REFUSED);
    }
    let exe = std::env::current_exe();
    if let Some(policy) = &mut spec.sandbox {
        // The init is this program: it must stay runnable.
        if let Some(dir) = exe.as_ref().ok().and_then(|e| e.parent()) {
            policy.read_only.push(dir.to_owned());
        }
        match sandbox::apply(policy) {
            Ok(applied) if !applied.complete => eprintln!(
                "acp launcher: WARNING: landlock abi {} enforces only part of the room's rules; missing: {}",
                applied.abi,
                sandbox::missing_rights()
            ),
            Ok(_) => {}
            Err(e) => {
                eprintln!("acp launcher: refusing to start the agent: {e}");
                return ExitCode::from(REFUSED);
            }
        }
    }
    // PID 1 of the new namespace, or the keeper without one.
    let init = Launch {
        parent: std::process::id(),
        init: true,
        keeper: namespace.is_err(),
        sandbox: None,
        room: Vec::new(),
        cwd: None,
        ..spec
    };
    let child = match (exe, encode(&init)) {
        (Ok(exe), Ok(arg)) => std::process::Command::new(exe)
            .arg(LAUNCHER_FLAG)
            .arg(arg)
            .spawn(),
        (Err(e), _) | (_, Err(e)) => Err(e),
    };
    let child = child.inspect(|_| let_go_of_stdio());
    match child.and_then(|mut c| c.wait()) {
        Ok(status) => exit_code(status.code(), signal_of(&status)),
        Err(e) => {
            eprintln!("acp launcher: {e}");
            ExitCode::from(REFUSED)
        }
    }
}

/// Makes the directories of `spec`'s room that are missing, then enters
/// its working directory.
fn make_room(spec: &Launch) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    for dir in &spec.room {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    if let Some(cwd) = &spec.cwd {
        std::env::set_current_dir(cwd)
            .map_err(|e| format!("cannot enter {}: {e}", cwd.display()))?;
    }
    Ok(())
}

/// Points this process's stdin and stdout at `/dev/null` once its child
/// has them: the agent's stdout must end (its reader sees end of file)
/// when the agent closes it, not when the last process holding a copy
/// does. Stderr stays, for the launcher's own messages.
fn let_go_of_stdio() {
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        let _ = rustix::stdio::dup2_stdin(&null);
        let _ = rustix::stdio::dup2_stdout(&null);
    }
}

fn signal_of(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

/// An exit status as a shell reports it: the code, or 128 + the signal.
fn exit_code(code: Option<i32>, signal: Option<i32>) -> ExitCode {
    let n = match (code, signal) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        (None, None) => 1,
    };
    ExitCode::from(u8::try_from(n & 0xff).unwrap_or(1))
}

/// Starts the agent, dying with this process (its init or keeper):
/// `SIGKILL` when it ends, and no start at all when it ended first.
fn start_agent(command: &[String]) -> io::Result<std::process::Child> {
    use std::os::unix::process::CommandExt;
    let Some((program, args)) = command.split_first() else {
        return Err(io::Error::other("no agent command"));
    };
    let me = rustix::process::getpid();
    let mut cmd = std::process::Command::new(program);
    cmd.args(args);
    // SAFETY: the closure runs in the forked child before `exec`; it makes
    // two system calls (async-signal-safe) and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
            if rustix::process::getppid() != Some(me) {
                return Err(io::Error::from(io::ErrorKind::BrokenPipe));
            }
            Ok(())
        });
    }
    cmd.spawn()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot start {program}: {e}")))
}

/// A new user namespace (this user and group mapped to themselves) and a
/// new PID namespace for the children of this (single-threaded) process.
fn enter_namespaces() -> io::Result<()> {
    use rustix::thread::UnshareFlags;
    if std::env::var_os(NO_NAMESPACES).is_some() {
        return Err(io::Error::other(format!(
            "refused for a test ({NO_NAMESPACES} is set)"
        )));
    }
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    // SAFETY: `unshare_unsafe` is unsafe only for `CLONE_FILES` (threads
    // that would see another descriptor table); these flags do not include
    // it, and the launcher is single-threaded.
    unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER | UnshareFlags::NEWPID) }?;
    std::fs::write("/proc/self/setgroups", "deny")?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    Ok(())
}

/// The agent started, the launcher's stdio let go; exit code 127 (said on
/// stderr) when it cannot start.
fn start_in_place(spec: &Launch) -> Result<std::process::Child, ExitCode> {
    match start_agent(&spec.command) {
        Ok(agent) => {
            let_go_of_stdio();
            Ok(agent)
        }
        Err(e) => {
            eprintln!("acp launcher: {e}");
            Err(ExitCode::from(127))
        }
    }
}

/// PID 1 of the agent's namespace: starts the agent, reaps every process
/// orphaned into the namespace, exits with the agent's status.
fn init(spec: &Launch) -> ExitCode {
    if let Err(e) = die_with_parent(parent_in_host, spec.parent) {
        eprintln!("acp launcher: {e}");
        return ExitCode::from(REFUSED);
    }
    let agent = match start_in_place(spec) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let agent_pid = i32::try_from(agent.id()).unwrap_or(0);
    loop {
        match rustix::process::wait(WaitOptions::empty()) {
            Ok(Some((pid, status))) if pid.as_raw_nonzero().get() == agent_pid => {
                return exit_code(status.exit_status(), status.terminating_signal());
            }
            Ok(_) => {}
            Err(e) if e == rustix::io::Errno::INTR => {}
            Err(e) => {
                eprintln!("acp launcher: wait: {e}");
                return ExitCode::from(REFUSED);
            }
        }
    }
}

/// The keeper, in place of an init where there is no PID namespace: starts
/// the agent as a child subreaper, and when the launcher (a pidfd says)
/// or the agent ends, ends every process left in the tree; exits with the
/// agent's status (137 when the launcher went first).
fn keeper(spec: &Launch) -> ExitCode {
    use rustix::event::{PollFd, PollFlags};
    use rustix::process::PidfdFlags;
    let me = rustix::process::getpid();
    let launcher = i32::try_from(spec.parent)
        .ok()
        .and_then(Pid::from_raw)
        .ok_or_else(|| io::Error::other("no launcher pid"))
        .and_then(|p| Ok(rustix::process::pidfd_open(p, PidfdFlags::empty())?));
    let launcher = match launcher {
        // Opened before the check: a launcher gone after it still wakes us.
        Ok(fd) if parent_in_host() == Some(spec.parent) => fd,
        Ok(_) => {
            eprintln!("acp launcher: the process that started it is gone");
            return ExitCode::from(REFUSED);
        }
        Err(e) => {
            eprintln!("acp launcher: cannot watch the launcher: {e}");
            return ExitCode::from(REFUSED);
        }
    };
    if let Err(e) = rustix::process::set_child_subreaper(Some(me)) {
        eprintln!("acp launcher: cannot adopt the agent's orphans: {e}");
        return ExitCode::from(REFUSED);
    }
    let agent = match start_in_place(spec) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let agent_pid = Pid::from_child(&agent);
    let agent_fd = match rustix::process::pidfd_open(agent_pid, PidfdFlags::empty()) {
        Ok(fd) => fd,
        Err(e) => {
            eprintln!("acp launcher: cannot watch the agent: {e}");
            end_tree(me);
            return ExitCode::from(REFUSED);
        }
    };
    let second = rustix::fs::Timespec {
        tv_sec: 1,
        tv_nsec: 0,
    };
    loop {
        let mut fds = [
            PollFd::new(&launcher, PollFlags::IN),
            PollFd::new(&agent_fd, PollFlags::IN),
        ];
        let _ = rustix::event::poll(&mut fds, Some(&second));
        let launcher_gone = !fds[0].revents().is_empty();
        // Reap: the agent's status, or orphans the tree left here.
        while let Ok(Some((pid, status))) = rustix::process::wait(WaitOptions::NOHANG) {
            if pid == agent_pid {
                end_tree(me);
                return exit_code(status.exit_status(), status.terminating_signal());
            }
        }
        if launcher_gone {
            end_tree(me);
            return ExitCode::from(137);
        }
    }
}

/// Kills every child of `me` (a child subreaper), then each orphan they
/// leave it, until it has no child left (bounded: about ten seconds).
fn end_tree(me: Pid) {
    for _ in 0..2000 {
        for child in children_of(me) {
            let _ = rustix::process::kill_process(child, Signal::KILL);
        }
        match rustix::process::wait(WaitOptions::NOHANG) {
            Ok(Some(_)) => {}
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(5)),
            Err(_) => return,
        }
    }
}

/// The processes whose parent is `parent`, from `/proc`.
fn children_of(parent: Pid) -> Vec<Pid> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parent = parent.as_raw_nonzero().get();
    dir.filter_map(|e| {
        let pid: i32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let rest = stat.get(stat.rfind(')')?.checked_add(1)?..)?;
        let ppid: i32 = rest.split_whitespace().nth(1)?.parse().ok()?;
        (ppid == parent).then(|| Pid::from_raw(pid))?
    })
    .collect()
}

/// The init's parent as the bridge's PID namespace sees it (`getppid` says
/// 0 to PID 1 of a namespace): from `/proc/self/stat`, whose `/proc` is the
/// bridge's.
fn parent_in_host() -> Option<u32> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
    let rest = stat.get(stat.rfind(')')?.checked_add(1)?..)?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// How `--check-confinement` exits when every right, the PID namespace
/// and limits on the whole tree hold.
pub const FULLY_CONFINED: u8 = 0;
/// How `--check-confinement` exits when agents cannot be confined (no
/// Landlock ABI 3 or no unprivileged PID namespace).
pub const NOT_CONFINED: u8 = 1;
/// How `--check-confinement` exits when agents can be confined but some
/// right is missing, or the limits hold per process only.
pub const PARTLY_CONFINED: u8 = 3;

/// `acp-bridge --check-confinement`: prints what this kernel enforces,
/// right by right (each Landlock right and scope an agent's room uses),
/// the PID namespace and the limits' mechanism, then confines this process
/// to check it for real. Exits [`FULLY_CONFINED`] (0), [`PARTLY_CONFINED`]
/// (3: agents are confined, something named above is missing) or
/// [`NOT_CONFINED`] (1). Call it before any thread starts.
pub fn check_confinement() -> ExitCode {
    let probe = sandbox::probe();
    let rights = sandbox::rights();
    let limits = limits::probe();
    println!("landlock rights an agent's room uses:");
    for r in &rights {
        let state = if r.enforced { "enforced" } else { "missing" };
        println!("  {} (abi {}): {state}", r.name, r.abi);
    }
    println!("limits (--agent-max-processes, --agent-max-memory):");
    for line in limits.to_string().lines() {
        println!("  {line}");
    }
    let namespace = enter_namespaces();
    match &namespace {
        Ok(()) => println!("pid namespace in an unprivileged user namespace (every process an agent starts ends with it): yes"),
        Err(e) => println!("pid namespace in an unprivileged user namespace (every process an agent starts ends with it): missing ({e})"),
    }
    let applied = sandbox::apply(&Policy::default());
    match &applied {
        Ok(a) => println!(
            "landlock applied to this process: abi {}, {}",
            a.abi,
            if a.complete {
                "every right"
            } else {
                "some rights missing"
            }
        ),
        Err(e) => println!("landlock applied to this process: {e}"),
    }
    let confined = probe.files && namespace.is_ok() && applied.is_ok();
    let full = rights.iter().all(|r| r.enforced)
        && applied.as_ref().is_ok_and(|a| a.complete)
        && limits.whole_tree();
    if confined && full {
        println!("per-user agents can be confined: fully (exit 0)");
        ExitCode::from(FULLY_CONFINED)
    } else if confined {
        println!("per-user agents can be confined: partly, as missing above (exit 3)");
        ExitCode::from(PARTLY_CONFINED)
    } else {
        println!("per-user agents can be confined: no (exit 1; acp-bridge refuses to start them unless --unconfined)");
        ExitCode::from(NOT_CONFINED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_shell() {
        assert_eq!(exit_code(Some(3), None), ExitCode::from(3));
        assert_eq!(exit_code(None, Some(9)), ExitCode::from(137));
        assert_eq!(exit_code(None, None), ExitCode::from(1));
    }

    #[test]
    fn the_parent_is_read_from_proc() {
        let expected = Pid::as_raw(rustix::process::getppid());
        assert_eq!(parent_in_host().map(|p| p as i32), Some(expected));
    }

    #[test]
    fn the_launcher_makes_a_missing_room_private() {
        use std::os::unix::fs::PermissionsExt;
        let base = std::env::temp_dir().join(format!("acp-make-room-{}", std::process::id()));
        let spec = Launch {
            room: vec![base.join("ana/home"), base.join("ana/work")],
            ..Launch::default()
        };
        make_room(&spec).unwrap();
        for dir in &spec.room {
            let mode = std::fs::metadata(dir).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{}", dir.display());
        }
        // Already there: nothing to do.
        make_room(&spec).unwrap();
        // A room that cannot be made is refused, naming it.
        std::fs::write(base.join("file"), "").unwrap();
        let blocked = Launch {
            room: vec![base.join("file/home")],
            ..Launch::default()
        };
        let err = make_room(&blocked).unwrap_err();
        assert!(
            err.contains("cannot create") && err.contains("file/home"),
            "{err}"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_spec_survives_its_encoding() {
        let spec = Launch {
            command: vec!["agent".to_owned(), "--acp".to_owned()],
            sandbox: Some(Policy {
                read_only: vec!["/opt/agent".into()],
                read_write: vec!["/srv/rooms/ana/home".into()],
                tcp_connect: Some(vec![443]),
            }),
            strict: true,
            limits: limits::Applied {
                make: vec![limits::CgroupDir {
                    dir: "/sys/fs/cgroup/a".into(),
                    limits: vec![("pids.max".to_owned(), "64".to_owned())],
                }],
                cgroup_procs: vec!["/sys/fs/cgroup/a/cgroup.procs".into()],
                nproc: Some(64),
                data: None,
            },
            room: vec!["/srv/rooms/ana/home".into(), "/srv/rooms/ana/work".into()],
            cwd: Some("/srv/rooms/ana/work".into()),
            parent: 7,
            init: true,
            keeper: false,
        };
        let back: Launch = serde_json::from_str(&encode(&spec).unwrap()).unwrap();
        assert_eq!(back.command, spec.command);
        assert_eq!(back.sandbox, spec.sandbox);
        assert!(back.strict && back.init);
        assert_eq!(back.parent, 7);
        assert_eq!(back.limits, spec.limits);
        assert_eq!((&back.room, &back.cwd), (&spec.room, &spec.cwd));
    }

    #[test]
    fn a_command_line_splits_as_a_shell_would_without_expansions() {
        let cases: [(&str, &[&str]); 5] = [
            ("sh -c 'echo a b'", &["sh", "-c", "echo a b"]),
            ("  agent\t--acp  ", &["agent", "--acp"]),
            (r#"say "it's" ''"#, &["say", "it's", ""]),
            (r#"a'b c'"d e""#, &["ab cd e"]),
            ("gemini", &["gemini"]),
        ];
        for (line, words) in cases {
            assert_eq!(split_command(line).unwrap(), words, "{line}");
        }
        assert_eq!(
            split_command("sh -c 'echo").unwrap_err(),
            "unbalanced quote"
        );
        assert_eq!(split_command(" \t ").unwrap_err(), "needs a command");
    }
}
