//! Limits on an agent's whole process tree: how many processes (threads
//! count) and how much memory one agent and everything it starts may take,
//! so that one user's agent cannot starve the others.
//!
//! Enforced by the best mechanism the host offers ([`Mechanism`]):
//!
//! - A cgroup per agent, made beneath the bridge's own cgroup where this
//!   OS user may write it: cgroup v2 (`pids.max`, `memory.max`; the
//!   bridge's cgroup delegated, as `Delegate=yes` does in a systemd unit)
//!   or cgroup v1 (`pids.max`, `memory.limit_in_bytes`). Both limits then
//!   hold for the whole tree; the memory limit counts what the tree really
//!   uses (resident memory and page cache), and the kernel's OOM killer
//!   ends the tree's largest process past it.
//! - Otherwise resource limits, set by the launcher on itself and
//!   inherited by the agent: `RLIMIT_NPROC`, which the kernel counts per
//!   user and user namespace (Linux 5.14), so per room when each agent has
//!   its own user namespace (not for root, whom the kernel lets past it);
//!   and `RLIMIT_DATA`, per process (private writable memory: what a
//!   program allocates, not the address space Node.js reserves and never
//!   uses, which `RLIMIT_AS` would count).
//!
//! [`probe`] tells which one this host has; `acp-bridge
//! --check-confinement` prints it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// The default `--agent-max-processes`: processes and threads of one
/// agent's tree. A Node.js agent alone runs about a dozen threads; its
/// tools (a shell, git, a build or test run with a worker per core) add
/// tens to hundreds. 1024 leaves a real agent's work room and stops a
/// fork bomb early.
pub const DEFAULT_MAX_PROCESSES: u64 = 1024;

/// The default `--agent-max-memory`: 4 GiB for one agent's tree. A Node.js
/// agent (Gemini CLI, Qwen Code) takes a few hundred MiB resident; a build
/// or test run it starts may take a few GiB more.
pub const DEFAULT_MAX_MEMORY: u64 = 4 << 30;

/// The limits of one agent's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Most processes and threads at once.
    pub max_processes: u64,
    /// Most bytes of memory.
    pub max_memory: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_processes: DEFAULT_MAX_PROCESSES,
            max_memory: DEFAULT_MAX_MEMORY,
        }
    }
}

/// Parses a byte count: digits with an optional `K`, `M`, `G` or `T`
/// suffix (powers of 1024; `KiB`, `MB` and the like read the same).
///
/// # Errors
///
/// When it is not such a count, is 0 or overflows.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(format!("{text:?} is not a byte count (N, NK, NM, NG)")),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a byte count (N, NK, NM, NG)"))?;
    match n.checked_mul(1u64 << shift) {
        Some(0) => Err("must be at least 1".to_owned()),
        Some(bytes) => Ok(bytes),
        None => Err(format!("{text:?} is too large")),
    }
}

/// A byte count as an operator reads it (`64 MiB`, `4 GiB`, `1000 bytes`).
pub fn show_bytes(bytes: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

/// How this host enforces the limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mechanism {
    /// A cgroup v2 per agent, beneath this directory (the bridge's own,
    /// delegated).
    CgroupV2(PathBuf),
    /// A cgroup v1 per agent in the `pids` and `memory` hierarchies,
    /// beneath these directories.
    CgroupV1 {
        /// The bridge's cgroup in the `pids` hierarchy.
        pids: PathBuf,
        /// The bridge's cgroup in the `memory` hierarchy.
        memory: PathBuf,
    },
    /// `RLIMIT_NPROC` per user namespace and `RLIMIT_DATA` per process.
    Rlimits {
        /// Whether `RLIMIT_NPROC` holds (not for root).
        nproc: bool,
    },
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CgroupV2(dir) => write!(
                f,
                "process limit: enforced on the whole tree (cgroup v2 pids.max beneath {d})\n\
                 memory limit: enforced on the whole tree (cgroup v2 memory.max beneath {d})",
                d = dir.display()
            ),
            Self::CgroupV1 { pids, memory } => write!(
                f,
                "process limit: enforced on the whole tree (cgroup v1 pids.max beneath {})\n\
                 memory limit: enforced on the whole tree (cgroup v1 memory.limit_in_bytes beneath {})",
                pids.display(),
                memory.display()
            ),
            Self::Rlimits { nproc } => {
                if *nproc {
                    writeln!(f, "process limit: enforced on the whole tree (RLIMIT_NPROC, counted per user namespace)")?;
                } else {
                    writeln!(f, "process limit: missing (root passes RLIMIT_NPROC and no writable cgroup was found; run as another user or delegate a cgroup)")?;
                }
                write!(f, "memory limit: per process only (RLIMIT_DATA; no writable cgroup for the whole tree)")
            }
        }
    }
}

impl Mechanism {
    /// Whether both limits hold for the whole tree.
    pub fn whole_tree(&self) -> bool {
        !matches!(self, Self::Rlimits { .. })
    }
}

/// What the launcher does to put an agent under its limits (part of its
/// launch spec).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// The cgroups the launcher makes, with their limits, before it
    /// enters them (the bridge only names them, and removes them once the
    /// agent has exited).
    #[serde(default)]
    pub make: Vec<CgroupDir>,
    /// `cgroup.procs` files the launcher writes itself into.
    pub cgroup_procs: Vec<PathBuf>,
    /// `RLIMIT_NPROC`, set once in its own user namespace.
    pub nproc: Option<u64>,
    /// `RLIMIT_DATA`.
    pub data: Option<u64>,
}

/// This host's mechanism, found once per process (the agents' cgroups
/// that bridges no longer running left behind, empty, are removed then).
pub fn probe() -> &'static Mechanism {
    static FOUND: OnceLock<Mechanism> = OnceLock::new();
    FOUND.get_or_init(|| {
        let found = find();
        match &found {
            Mechanism::CgroupV2(dir) => sweep(dir),
            Mechanism::CgroupV1 { pids, memory } => {
                sweep(pids);
                sweep(memory);
            }
            Mechanism::Rlimits { .. } => {}
        }
        found
    })
}

/// Removes the empty `acp-agent-PID-N` cgroups in `dir` whose bridge (PID)
/// is gone: a bridge killed with `SIGKILL` leaves them.
fn sweep(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("acp-agent-"))
            .and_then(|n| n.split('-').next())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

fn find() -> Mechanism {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    if let Some(dir) = v2_dir(&cgroup, &mountinfo) {
        if prepare_v2(&dir) {
            return Mechanism::CgroupV2(dir);
        }
    }
    let v1 = |controller: &str| {
        let dir = v1_dir(&cgroup, &mountinfo, controller)?;
        writable(&dir).then_some(dir)
    };
    if let (Some(pids), Some(memory)) = (v1("pids"), v1("memory")) {
        return Mechanism::CgroupV1 { pids, memory };
    }
    Mechanism::Rlimits {
        nproc: !rustix::process::getuid().is_root(),
    }
}

/// Whether this process may make a directory in `dir` (tried for real:
/// a cgroup file system answers for itself).
fn writable(dir: &Path) -> bool {
    let probe = dir.join(format!("acp-probe-{}", std::process::id()));
    let made = std::fs::create_dir(&probe).is_ok();
    if made {
        let _ = std::fs::remove_dir(&probe);
    }
    made
}

/// Mount point of each mount whose type is `fstype` and whose super
/// options hold `option` (any, when empty), from `/proc/self/mountinfo`.
fn mount_of(mountinfo: &str, fstype: &str, option: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let mount_point = left.split(' ').nth(4)?;
        let mut right = right.split(' ');
        let (kind, _source, options) = (right.next()?, right.next()?, right.next()?);
        let holds = option.is_empty() || options.split(',').any(|o| o == option);
        (kind == fstype && holds).then(|| PathBuf::from(mount_point))
    })
}

/// The bridge's cgroup v2 directory, when its `pids` and `memory`
/// controllers are available there.
fn v2_dir(cgroup: &str, mountinfo: &str) -> Option<PathBuf> {
    let path = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = beneath(mount_of(mountinfo, "cgroup2", "")?, path);
    let controllers = std::fs::read_to_string(dir.join("cgroup.controllers")).ok()?;
    let has = |c: &str| controllers.split_whitespace().any(|x| x == c);
    (has("pids") && has("memory")).then_some(dir)
}

/// The bridge's cgroup v1 directory in `controller`'s hierarchy.
fn v1_dir(cgroup: &str, mountinfo: &str, controller: &str) -> Option<PathBuf> {
    let path = cgroup.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| c == controller)
            .then_some(path)
    })?;
    Some(beneath(mount_of(mountinfo, "cgroup", controller)?, path))
}

/// `path` (a cgroup's, `/` its hierarchy's root) beneath `mount`.
fn beneath(mount: PathBuf, path: &str) -> PathBuf {
    match path.trim().trim_start_matches('/') {
        "" => mount,
        rest => mount.join(rest),
    }
}

/// Makes `dir` (the bridge's cgroup v2) able to hold agents' cgroups: the
/// bridge moves into a leaf `dir/bridge` (a cgroup with processes cannot
/// give controllers to children), then `pids` and `memory` are enabled
/// for the children.
fn prepare_v2(dir: &Path) -> bool {
    let leaf = dir.join("bridge");
    let enabled = |d: &Path| {
        std::fs::read_to_string(d.join("cgroup.subtree_control")).is_ok_and(|s| {
            s.split_whitespace().any(|c| c == "pids") && s.split_whitespace().any(|c| c == "memory")
        })
    };
    if enabled(dir) {
        return writable(dir);
    }
    if !writable(dir) {
        return false;
    }
    let _ = std::fs::create_dir(&leaf);
    let moved = std::fs::write(leaf.join("cgroup.procs"), std::process::id().to_string()).is_ok();
    moved && std::fs::write(dir.join("cgroup.subtree_control"), "+pids +memory").is_ok()
}

/// A cgroup the launcher makes: its directory and the limit files it
/// writes there (`pids.max`, `memory.max`...), in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CgroupDir {
    /// The cgroup's directory.
    pub dir: PathBuf,
    /// Each limit: the file (in `dir`) and the value written to it.
    pub limits: Vec<(String, String)>,
}

/// A limit file a kernel may lack (no swap, or no swap accounting):
/// nothing to limit then.
const OPTIONAL_LIMITS: &[&str] = &["memory.swap.max"];

/// One agent's cgroup (or none, with resource limits): named by the
/// bridge, made by its launcher (before it starts anything: a `mkdir` in
/// a cgroup file system is costly, and the launcher is the agent's own
/// process), removed by the bridge once the agent has exited.
#[derive(Debug)]
pub struct AgentCgroup {
    dirs: Vec<PathBuf>,
    v2: bool,
}

impl AgentCgroup {
    /// Names the cgroup of one agent with `limits` (none with resource
    /// limits), and says what the launcher must do: make it, write its
    /// limits, enter it ([`enter`]). Touches no file.
    pub fn plan(limits: Limits) -> (Self, Applied) {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "acp-agent-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let make: Vec<CgroupDir> = match probe() {
            Mechanism::Rlimits { nproc } => {
                let applied = Applied {
                    make: Vec::new(),
                    cgroup_procs: Vec::new(),
                    nproc: nproc.then_some(limits.max_processes),
                    data: Some(limits.max_memory),
                };
                let none = Self {
                    dirs: Vec::new(),
                    v2: false,
                };
                return (none, applied);
            }
            Mechanism::CgroupV2(dir) => vec![CgroupDir {
                dir: dir.join(&name),
                limits: vec![
                    ("pids.max".to_owned(), limits.max_processes.to_string()),
                    ("memory.max".to_owned(), limits.max_memory.to_string()),
                    ("memory.swap.max".to_owned(), "0".to_owned()),
                ],
            }],
            Mechanism::CgroupV1 { pids, memory } => vec![
                CgroupDir {
                    dir: pids.join(&name),
                    limits: vec![("pids.max".to_owned(), limits.max_processes.to_string())],
                },
                CgroupDir {
                    dir: memory.join(&name),
                    limits: vec![(
                        "memory.limit_in_bytes".to_owned(),
                        limits.max_memory.to_string(),
                    )],
                },
            ],
        };
        let cgroup = Self {
            dirs: make.iter().map(|c| c.dir.clone()).collect(),
            v2: matches!(probe(), Mechanism::CgroupV2(_)),
        };
        let applied = Applied {
            cgroup_procs: make.iter().map(|c| c.dir.join("cgroup.procs")).collect(),
            make,
            nproc: None,
            data: None,
        };
        (cgroup, applied)
    }

    /// Which limits the tree ran into, for the agent's exit status
    /// (`None`: none, or not known).
    pub fn hit(&self, limits: Limits) -> Option<String> {
        let count = |file: &str, key: &str| {
            self.dirs.iter().find_map(|d| {
                let text = std::fs::read_to_string(d.join(file)).ok()?;
                text.lines().find_map(|l| {
                    let (k, v) = l.split_once(' ')?;
                    (k == key).then(|| v.trim().parse::<u64>().ok())?
                })
            })
        };
        let oom = if self.v2 {
            count("memory.events", "oom_kill")
        } else {
            count("memory.oom_control", "oom_kill")
        };
        let mut hit = Vec::new();
        if count("pids.events", "max").is_some_and(|n| n > 0) {
            hit.push(format!(
                "process limit of {} reached (--agent-max-processes)",
                limits.max_processes
            ));
        }
        if oom.is_some_and(|n| n > 0) {
            hit.push(format!(
                "memory limit of {} reached, a process killed (--agent-max-memory)",
                show_bytes(limits.max_memory)
            ));
        }
        (!hit.is_empty()).then(|| hit.join("; "))
    }

    /// Removes the cgroup once its processes are gone (they go soon after
    /// the launcher is killed: waits up to a second).
    pub fn remove(self) {
        for dir in &self.dirs {
            for _ in 0..100 {
                match std::fs::remove_dir(dir) {
                    // Not made: its launcher did not get that far.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                    Err(_) => {}
                    Ok(()) => break,
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
}

/// Puts the calling process (the launcher, before it starts anything)
/// under `applied`'s cgroups (made first, with their limits) and the
/// limits that hold before its user namespace exists (`RLIMIT_DATA`).
///
/// # Errors
///
/// What could not be made or set.
pub fn enter(applied: &Applied) -> Result<(), String> {
    for cgroup in &applied.make {
        make(cgroup)?;
    }
    for procs in &applied.cgroup_procs {
        std::fs::write(procs, "0")
            .map_err(|e| format!("cannot enter the cgroup {}: {e}", procs.display()))?;
    }
    if let Some(bytes) = applied.data {
        set(rustix::process::Resource::Data, bytes)?;
    }
    Ok(())
}

/// Sets `RLIMIT_NPROC` when asked: call it in the agent's own user
/// namespace, so that the kernel counts this room's processes alone.
///
/// # Errors
///
/// When it cannot be set.
pub fn enter_nproc(applied: &Applied) -> Result<(), String> {
    match applied.nproc {
        Some(n) => set(rustix::process::Resource::Nproc, n),
        None => Ok(()),
    }
}

/// Makes one cgroup and writes its limits.
fn make(cgroup: &CgroupDir) -> Result<(), String> {
    let dir = &cgroup.dir;
    std::fs::create_dir(dir)
        .map_err(|e| format!("cannot make the cgroup {}: {e}", dir.display()))?;
    for (file, value) in &cgroup.limits {
        if let Err(e) = std::fs::write(dir.join(file), value) {
            if !OPTIONAL_LIMITS.contains(&file.as_str()) {
                return Err(format!("cannot write {}/{file}: {e}", dir.display()));
            }
        }
    }
    Ok(())
}

fn set(resource: rustix::process::Resource, value: u64) -> Result<(), String> {
    let limit = rustix::process::Rlimit {
        current: Some(value),
        maximum: Some(value),
    };
    rustix::process::setrlimit(resource, limit)
        .map_err(|e| format!("cannot set the limit {resource:?} to {value}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_take_suffixes() {
        assert_eq!(parse_bytes("512"), Ok(512));
        assert_eq!(parse_bytes("64K"), Ok(64 * 1024));
        assert_eq!(parse_bytes("64M"), Ok(64 * 1024 * 1024));
        assert_eq!(parse_bytes("4G"), Ok(4 * 1024 * 1024 * 1024));
        assert_eq!(parse_bytes("2gib"), Ok(2 << 30));
        for bad in ["", "G", "0", "1X", "-1", "1.5G", "99999999999999T"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
        assert_eq!(show_bytes(4 << 30), "4 GiB");
        assert_eq!(show_bytes(64 << 20), "64 MiB");
        assert_eq!(show_bytes(1000), "1000 bytes");
    }

    #[test]
    fn a_planned_cgroup_is_made_with_its_limits_by_its_launcher() {
        let base = std::env::temp_dir().join(format!("acp-cgroup-make-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let cgroup = CgroupDir {
            dir: base.join("acp-agent-1-0"),
            limits: vec![
                ("pids.max".to_owned(), "64".to_owned()),
                ("memory.max".to_owned(), "4096".to_owned()),
            ],
        };
        make(&cgroup).unwrap();
        let read = |f: &str| std::fs::read_to_string(cgroup.dir.join(f)).unwrap();
        assert_eq!(
            (read("pids.max"), read("memory.max")),
            ("64".into(), "4096".into())
        );
        // Made once: a second launcher with the same name is refused.
        let again = make(&cgroup).unwrap_err();
        assert!(again.starts_with("cannot make the cgroup"), "{again}");
        // A limit file that cannot be written is an error.
        let bad = CgroupDir {
            dir: base.join("acp-agent-1-1"),
            limits: vec![("no/such/file".to_owned(), "0".to_owned())],
        };
        let err = make(&bad).unwrap_err();
        assert!(err.starts_with("cannot write"), "{err}");
        // The bridge names the cgroups without touching a file: a plan
        // makes no directory.
        let (planned, applied) = AgentCgroup::plan(Limits::default());
        for c in &applied.make {
            assert!(!c.dir.exists(), "{}", c.dir.display());
        }
        assert_eq!(planned.dirs.len(), applied.make.len());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn cgroups_are_found_in_proc() {
        let mountinfo = "\
30 25 0:26 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs rw,mode=755
35 30 0:31 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
40 30 0:36 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids
41 30 0:37 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
42 30 0:38 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct";
        let cgroup = "8:pids:/svc\n4:memory:/mem/x\n1:cpu,cpuacct:/\n0::/svc";
        assert_eq!(
            v1_dir(cgroup, mountinfo, "cpu"),
            Some(PathBuf::from("/sys/fs/cgroup/cpu,cpuacct"))
        );
        assert_eq!(
            v1_dir(cgroup, mountinfo, "pids"),
            Some(PathBuf::from("/sys/fs/cgroup/pids/svc"))
        );
        assert_eq!(
            v1_dir(cgroup, mountinfo, "memory"),
            Some(PathBuf::from("/sys/fs/cgroup/memory/mem/x"))
        );
        assert_eq!(v1_dir(cgroup, mountinfo, "blkio"), None);
        assert_eq!(
            mount_of(mountinfo, "cgroup2", ""),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
    }
}
