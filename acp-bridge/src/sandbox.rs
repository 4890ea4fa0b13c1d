//! Landlock confinement of an agent's files (and, when asked, its TCP
//! connections): the rules a [`Policy`] names, applied by the launcher to
//! itself before it starts the agent, so the agent and everything it starts
//! inherit them while the bridge itself stays unconfined.
//!
//! What this module requires of the kernel, and refuses to run without (no
//! silent downgrade):
//!
//! - Landlock ABI 3 (Linux 6.2) for files: read, write, execute, list,
//!   create, remove, rename and link across directories (`refer`) and
//!   truncate are denied outside the policy's paths. ABI 1 and 2 leave
//!   `truncate(2)` unchecked, which would let an agent empty any file the
//!   bridge's OS user can write, so they are not enough.
//! - Landlock ABI 4 (Linux 6.7) for [`Policy::tcp_connect`] only.
//!
//! Enforced where the kernel has them, named by [`probe`] when it does not:
//! device `ioctl`s (ABI 5, Linux 6.10) and the scopes of ABI 6 (Linux 6.12):
//! no signal to a process outside the room (the bridge, another user's
//! agent) and no connection to an abstract UNIX socket made outside it.
//! Every ABI also keeps a confined process from `ptrace`-class access to an
//! unconfined one (`/proc/PID/environ`, `/proc/PID/mem` of the bridge or of
//! another user's agent).

use std::fmt;
use std::path::PathBuf;

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus,
    NetPort, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
use serde::{Deserialize, Serialize};

/// The system an agent reads and runs from: read-only and executable when
/// they exist (`/proc` too: an agent reads its own process's files there).
pub const SYSTEM_READ_ONLY: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/proc",
    "/sys",
    // Where `/etc/resolv.conf` points under systemd-resolved.
    "/run/systemd/resolve",
    "/dev/urandom",
    "/dev/random",
];

/// The devices an agent writes to: the null sink, terminals it opens for
/// its tools.
pub const SYSTEM_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// What a confined agent may reach. Paths that do not exist are skipped
/// (callers check the operator's own paths before they get here).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// Read, list and execute beneath these.
    pub read_only: Vec<PathBuf>,
    /// Everything beneath these (read, write, create, remove, execute).
    pub read_write: Vec<PathBuf>,
    /// `Some`: TCP connections to these ports only (Landlock ABI 4);
    /// `None`: the network is not restricted.
    pub tcp_connect: Option<Vec<u16>>,
}

/// Why confinement could not be applied.
#[derive(Debug)]
#[non_exhaustive]
pub enum SandboxError {
    /// The kernel lacks what the policy needs: what is missing.
    Unsupported(String),
    /// A Landlock system call failed.
    Landlock(landlock::RulesetError),
}

impl fmt::Display for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unsupported(what) => write!(f, "cannot confine the agent: {what}"),
            Self::Landlock(e) => write!(f, "landlock: {e}"),
        }
    }
}

impl std::error::Error for SandboxError {}

impl From<landlock::RulesetError> for SandboxError {
    fn from(e: landlock::RulesetError) -> Self {
        Self::Landlock(e)
    }
}

/// The file rights required of every kernel (ABI 3: `refer` and
/// `truncate` included).
fn required_fs() -> landlock::BitFlags<AccessFs> {
    AccessFs::from_all(ABI::V3)
}

/// The file rights used where the kernel has them (ABI 5: device ioctls).
fn best_fs() -> landlock::BitFlags<AccessFs> {
    AccessFs::from_all(ABI::V5)
}

/// What a confined process got, for the launcher's log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The Landlock ABI in force.
    pub abi: i32,
    /// Whether every right asked for is enforced (`false`: the optional
    /// ones, device ioctls or scopes, are missing on this kernel).
    pub complete: bool,
}

/// Confines the calling thread, and everything it starts from now on, to
/// `policy`. Call it in a single-threaded process (the launcher), right
/// before it starts the agent.
///
/// # Errors
///
/// [`SandboxError::Unsupported`] when the kernel lacks Landlock ABI 3 (or
/// ABI 4 with [`Policy::tcp_connect`]); [`SandboxError::Landlock`] when a
/// system call fails.
pub fn apply(policy: &Policy) -> Result<Applied, SandboxError> {
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(required_fs())
        .map_err(|_| missing("landlock abi 3 (linux 6.2): files, refer and truncate"))?
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(best_fs())?
        .scope(Scope::from_all(ABI::V6))?;
    if policy.tcp_connect.is_some() {
        ruleset = ruleset
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessNet::ConnectTcp)
            .map_err(|_| missing("landlock abi 4 (linux 6.7): tcp connect, for --agent-net"))?;
    }
    let mut created = ruleset
        .create()?
        .set_compatibility(CompatLevel::BestEffort)
        .add_rules(path_beneath_rules(
            SYSTEM_READ_ONLY,
            AccessFs::from_read(ABI::V5),
        ))?
        .add_rules(path_beneath_rules(
            &policy.read_only,
            AccessFs::from_read(ABI::V5),
        ))?
        .add_rules(path_beneath_rules(SYSTEM_DEVICES, best_fs()))?
        .add_rules(path_beneath_rules(&policy.read_write, best_fs()))?;
    for port in policy.tcp_connect.iter().flatten() {
        created = created.add_rule(NetPort::new(*port, AccessNet::ConnectTcp))?;
    }
    let status = created.restrict_self()?;
    let abi = match status.landlock {
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => kernel_abi.unwrap_or(effective_abi as i32),
        _ => 0,
    };
    match status.ruleset {
        RulesetStatus::NotEnforced => Err(missing("landlock is not enforced on this kernel")),
        RulesetStatus::PartiallyEnforced => Ok(Applied {
            abi,
            complete: false,
        }),
        RulesetStatus::FullyEnforced => Ok(Applied {
            abi,
            complete: true,
        }),
    }
}

fn missing(what: &str) -> SandboxError {
    SandboxError::Unsupported(what.to_owned())
}

/// What this kernel enforces: one line per group of rights.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// Files: read, write, execute, list, make, remove, refer, truncate
    /// (ABI 3; required).
    pub files: bool,
    /// Device ioctls (ABI 5).
    pub device_ioctl: bool,
    /// TCP connect by port (ABI 4; required by `--agent-net`).
    pub tcp_connect: bool,
    /// Signals and abstract UNIX sockets scoped to the room (ABI 6).
    pub scopes: bool,
}

/// Asks the kernel which of the groups of [`Probe`] it enforces (each by
/// creating a ruleset that requires it; nothing is restricted).
pub fn probe() -> Probe {
    fn fs(access: landlock::BitFlags<AccessFs>) -> bool {
        Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(access)
            .and_then(Ruleset::create)
            .is_ok()
    }
    Probe {
        files: fs(required_fs()),
        device_ioctl: fs(AccessFs::IoctlDev.into()),
        tcp_connect: Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessNet::ConnectTcp)
            .and_then(Ruleset::create)
            .is_ok(),
        scopes: Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .scope(Scope::from_all(ABI::V6))
            .and_then(Ruleset::create)
            .is_ok(),
    }
}

/// One Landlock right (or scope) an agent's room uses, and whether this
/// kernel enforces it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Right {
    /// What it guards, as Landlock names it (`files: WriteFile`,
    /// `scope: Signal`, `net: ConnectTcp`).
    pub name: String,
    /// The Landlock ABI that brought it.
    pub abi: u8,
    /// Whether the kernel enforces it.
    pub enforced: bool,
}

/// The ABIs in order, with their numbers.
const ABIS: [(ABI, u8); 6] = [
    (ABI::V1, 1),
    (ABI::V2, 2),
    (ABI::V3, 3),
    (ABI::V4, 4),
    (ABI::V5, 5),
    (ABI::V6, 6),
];

/// Every right an agent's room asks for (files up to ABI 5, TCP connect,
/// the scopes of ABI 6), each probed alone: one ruleset that requires it.
pub fn rights() -> Vec<Right> {
    fn first_abi<A: Access>(right: A) -> u8 {
        ABIS.iter()
            .find(|(abi, _)| A::from_all(*abi).contains(right))
            .map_or(0, |(_, n)| *n)
    }
    let mut out = Vec::new();
    for right in best_fs().iter() {
        let enforced = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(right)
            .and_then(Ruleset::create)
            .is_ok();
        out.push(Right {
            name: format!("files: {right:?}"),
            abi: first_abi(right),
            enforced,
        });
    }
    let enforced = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessNet::ConnectTcp)
        .and_then(Ruleset::create)
        .is_ok();
    out.push(Right {
        name: "net: ConnectTcp, for --agent-net".to_owned(),
        abi: 4,
        enforced,
    });
    for scope in Scope::from_all(ABI::V6).iter() {
        let enforced = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .scope(scope)
            .and_then(Ruleset::create)
            .is_ok();
        out.push(Right {
            name: format!("scope: {scope:?}"),
            abi: 6,
            enforced,
        });
    }
    out
}

/// The rights of [`rights`] this kernel does not enforce, for a log line
/// (`files: IoctlDev (abi 5), scope: Signal (abi 6)`); empty when none.
pub fn missing_rights() -> String {
    rights()
        .iter()
        .filter(|r| !r.enforced)
        .map(|r| format!("{} (abi {})", r.name, r.abi))
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let yes = |b: bool| if b { "enforced" } else { "missing" };
        writeln!(
            f,
            "files (read, write, execute, list, make, remove, refer, truncate; landlock abi 3, required): {}",
            yes(self.files)
        )?;
        writeln!(f, "device ioctl (abi 5): {}", yes(self.device_ioctl))?;
        writeln!(
            f,
            "tcp connect by port (abi 4, needed by --agent-net): {}",
            yes(self.tcp_connect)
        )?;
        write!(
            f,
            "signals and abstract unix sockets kept inside the room (abi 6): {}",
            yes(self.scopes)
        )
    }
}
