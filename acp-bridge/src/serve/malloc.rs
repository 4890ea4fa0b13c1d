//! The server's settings for glibc's allocator, made once at its start
//! before any thread runs ([`tune`]).
//!
//! A team server starting hundreds of agents at once allocates and frees
//! small buffers on every worker thread. With glibc's defaults each thread
//! gets an arena of its own, grown a few pages at a time by `mprotect`
//! (each step a system call and fresh pages to fault in), and an arena
//! gives its top back to the system as soon as a few hundred KiB are free.
//! The settings below keep one arena for the whole process (grown with
//! `brk` 4 MiB at a time; each thread's small blocks still come from its
//! own cache without a lock), keep up to 32 MiB free at the arena's top,
//! and leave `mmap` to blocks of 4 MiB and more (a long line's buffer
//! still goes back to the system when it is freed).
//!
//! Under the load bench (300 users at once, each starting a confined
//! agent, two cores; build against build, 21 and 41 reps) the server took
//! about 5% less CPU to start a user's agent and 3 to 4% less peak RSS;
//! its CPU per turn did not change. The trim and `mmap` settings alone
//! gave about half of the start's gain and none of the RSS. More cores
//! mean more threads on the one arena's lock, which was not measured:
//! there, `MALLOC_ARENA_MAX` sets the number of arenas.
//!
//! An operator's own setting wins: a parameter whose `MALLOC_*` variable
//! is set, or that `GLIBC_TUNABLES` names, is left as glibc read it. On a
//! system without glibc (musl, other kernels) nothing is set.

/// One `mallopt` parameter this server sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setting {
    /// glibc's tunable, as `GLIBC_TUNABLES` names it.
    pub tunable: &'static str,
    /// The environment variable by which glibc reads it too.
    pub env: &'static str,
    /// `mallopt`'s parameter (glibc's `M_*` constant).
    pub param: i32,
    /// The value set.
    pub value: i32,
}

const MIB: i32 = 1024 * 1024;

/// The settings [`tune`] makes, each unless the operator made it.
pub const SETTINGS: [Setting; 4] = [
    Setting {
        tunable: "glibc.malloc.arena_max",
        env: "MALLOC_ARENA_MAX",
        param: -8, // M_ARENA_MAX
        value: 1,
    },
    Setting {
        tunable: "glibc.malloc.trim_threshold",
        env: "MALLOC_TRIM_THRESHOLD_",
        param: -1, // M_TRIM_THRESHOLD
        value: 32 * MIB,
    },
    Setting {
        tunable: "glibc.malloc.top_pad",
        env: "MALLOC_TOP_PAD_",
        param: -2, // M_TOP_PAD
        value: 4 * MIB,
    },
    Setting {
        tunable: "glibc.malloc.mmap_threshold",
        env: "MALLOC_MMAP_THRESHOLD_",
        param: -3, // M_MMAP_THRESHOLD
        value: 4 * MIB,
    },
];

/// The settings to make given the environment (`var` reads one
/// variable): those the operator did not set, in [`SETTINGS`]' order.
pub fn chosen(var: impl Fn(&str) -> Option<String>) -> Vec<Setting> {
    let tunables = var("GLIBC_TUNABLES").unwrap_or_default();
    let named = |tunable: &str| {
        tunables
            .split(':')
            .any(|item| item.split('=').next() == Some(tunable))
    };
    SETTINGS
        .into_iter()
        .filter(|s| var(s.env).is_none() && !named(s.tunable))
        .collect()
}

/// Makes the [`chosen`] settings for this process's environment. Call it
/// first thing in `main`, before any thread starts. Returns the tunables
/// glibc refused (none on glibc; every one is left alone elsewhere).
pub fn tune() -> Vec<&'static str> {
    let settings = chosen(|name| std::env::var(name).ok());
    let mut refused = Vec::new();
    for s in settings {
        if !set(s.param, s.value) {
            refused.push(s.tunable);
        }
    }
    refused
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn set(param: i32, value: i32) -> bool {
    // The parameters above are glibc's own numbers, checked here against
    // the libc crate's.
    const _: () = assert!(
        SETTINGS[0].param == libc::M_ARENA_MAX
            && SETTINGS[1].param == libc::M_TRIM_THRESHOLD
            && SETTINGS[2].param == libc::M_TOP_PAD
            && SETTINGS[3].param == libc::M_MMAP_THRESHOLD
    );
    // SAFETY: `mallopt` takes two integers and returns one; it takes
    // glibc's arena lock itself. It is called before any other thread of
    // this program runs.
    unsafe { libc::mallopt(param, value) == 1 }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn set(_param: i32, _value: i32) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with(vars: &[(&str, &str)]) -> Vec<&'static str> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        chosen(|name| vars.get(name).cloned())
            .into_iter()
            .map(|s| s.tunable)
            .collect()
    }

    #[test]
    fn an_empty_environment_gets_every_setting() {
        assert_eq!(
            with(&[]),
            [
                "glibc.malloc.arena_max",
                "glibc.malloc.trim_threshold",
                "glibc.malloc.top_pad",
                "glibc.malloc.mmap_threshold"
            ]
        );
    }

    #[test]
    fn the_operators_variable_or_tunable_wins() {
        assert_eq!(
            with(&[
                ("MALLOC_ARENA_MAX", "8"),
                (
                    "GLIBC_TUNABLES",
                    "glibc.malloc.tcache_count=0:glibc.malloc.mmap_threshold=65536"
                ),
            ]),
            ["glibc.malloc.trim_threshold", "glibc.malloc.top_pad"]
        );
        // A tunable's name must match whole: a longer one is another.
        assert_eq!(
            with(&[("GLIBC_TUNABLES", "glibc.malloc.top_pad_x=1")]).len(),
            4
        );
    }

    #[test]
    fn glibc_takes_every_setting() {
        // This test process's allocator is tuned too: that changes where
        // and when memory is taken from the system, nothing the other
        // tests see.
        for s in SETTINGS {
            assert!(set(s.param, s.value), "{}", s.tunable);
        }
    }
}
