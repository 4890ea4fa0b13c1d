#!/usr/bin/env python3
"""Where a load run's server CPU goes, from `perf script -F tid,ip,sym`
output (acp-bridge/scripts/load_profile.sh runs it).

Reads DIR/{0,3}-{plain,bridge}.txt: the samples of the server process of
a load run with 0 turns and with N turns. Prints a Markdown table: per
place, the server's CPU in ms per user for the start (the 0-turn run:
connect, start the agent, close) and per turn (the N-turn run less the
0-turn run, over the users' turns), for the plain relay and acp-bridge.

A sample's place:
- in the kernel (its innermost frame is a kernel address): by what it
  was doing, read from its kernel frames (a system call's own frames, a
  page fault, a wake-up);
- in user space: the allocator when its innermost frame is one of
  malloc's; otherwise the first frame, from the innermost out, that
  belongs to a component below (the frames of no component, such as
  `core`, `alloc`, serde, futures and libc's, are passed over, so a
  `memcpy` counts for the code that called it).
"""

import argparse
import collections
import os

KERNEL_MIN = 0xFFFF800000000000

# Kernel: the first rule whose frame is in the sample's kernel frames.
KERNEL = [
    ("kernel: page faults, mmap, mprotect, munmap",
     ("asm_exc_page_fault", "__x64_sys_mprotect", "__x64_sys_munmap", "__x64_sys_mmap",
      "vm_mmap_pgoff", "__x64_sys_brk", "__x64_sys_madvise")),
    ("kernel: starting and ending agents (clone, pipes, pidfd, wait, kill)",
     ("__do_sys_clone3", "kernel_clone", "__x64_sys_pipe2", "__x64_sys_pidfd_open",
      "__do_sys_wait4", "__x64_sys_waitid", "__x64_sys_kill", "__x64_sys_prlimit64",
      "__x64_sys_pidfd_send_signal")),
    ("kernel: TCP sends to clients", ("tcp_sendmsg",)),
    ("kernel: writes to agents' stdin (pipes)", ("anon_pipe_write",)),
    ("kernel: log writes (files, stderr)", ("ext4_buffered_write_iter", "ext4_file_write_iter",
                                           "tty_write", "write_null")),
    ("kernel: reads (TCP, agents' stdout)", ("tcp_recvmsg", "anon_pipe_read", "ksys_read",
                                            "__x64_sys_recvfrom")),
    ("kernel: epoll, eventfd and futex wake-ups",
     ("__x64_sys_epoll_wait", "__x64_sys_epoll_ctl", "__x64_sys_epoll_pwait", "eventfd_write",
      "eventfd_read", "__x64_sys_futex", "do_futex")),
    ("kernel: accept, close, files (open, stat)",
     ("__x64_sys_accept4", "__x64_sys_close", "__x64_sys_openat", "__x64_sys_statx",
      "__x64_sys_mkdir", "__x64_sys_mkdirat", "__x64_sys_shutdown", "__x64_sys_fcntl",
      "__x64_sys_ioctl", "__x64_sys_getrandom", "__x64_sys_socket", "__x64_sys_setsockopt")),
]
KERNEL_OTHER = "kernel: other (scheduling, interrupts, other calls)"
ALLOCATOR_LABEL = "allocator (malloc, free)"

ALLOCATOR = ("malloc", "_int_malloc", "__GI___libc_malloc", "free", "cfree", "_int_free",
             "__GI___libc_free", "realloc", "_int_realloc", "__GI___libc_realloc", "sysmalloc",
             "calloc", "__libc_calloc", "_int_memalign", "_mid_memalign", "__posix_memalign",
             "malloc_consolidate", "tcache_get", "tcache_put", "unlink_chunk", "grow_heap",
             "__rustc::__rdl_alloc", "__rustc::__rdl_dealloc", "__rustc::__rdl_realloc",
             "cfree@GLIBC_2.2.5", "_int_free_merge_chunk", "_int_free_create_chunk",
             "_int_free_maybe_consolidate")

# User space: the first component whose prefix a frame's name has.
USER = [
    ("logs (tracing, the log files)",
     ("tracing", "<tracing", "acp_bridge::serve::log::", "<acp_bridge::serve::log::",
      "acp_bridge::serve::driver::Driver::log_line", "acp_bridge::serve::driver::Driver::note")),
    ("starting the agent (command, room, limits, launch)",
     ("acp_bridge::supervisor", "acp_bridge::room", "acp_bridge::limits", "acp_bridge::sandbox",
      "acp_bridge::serve::mcp", "std::process", "<std::process", "std::sys::process",
      "<std::sys::process", "tokio::process", "<tokio::process", "__posix_spawn", "__spawni")),
    ("the codec's server core (acp_codec)", ("acp_codec", "<acp_codec")),
    ("WebSocket (tungstenite)", ("tungstenite", "<tungstenite", "tokio_tungstenite",
                                 "<tokio_tungstenite")),
    ("HTTP (hyper, axum, tower)", ("hyper", "<hyper", "axum", "<axum", "tower", "<tower",
                                   "http::", "<http::", "httparse")),
    ("the server's own tasks (acp_bridge, plain_relay)",
     ("acp_bridge", "<acp_bridge", "plain_relay", "<plain_relay")),
    ("tokio (scheduler, I/O driver, channels, timers)", ("tokio", "<tokio", "mio", "<mio")),
]
LIBC = "libc's memcpy, memcmp, memset, calls (their caller not unwound)"
USER_OTHER = "user: other"

def samples(path):
    """Yields each sample's frames, innermost first, as (is_kernel, name)."""
    frames = []
    with open(path) as f:
        for line in f:
            if not line.strip():
                if frames:
                    yield frames
                frames = []
                continue
            if not line.startswith("\t"):
                continue  # the sample's thread id (frames start with a tab)
            parts = line.strip().split(None, 1)
            try:
                ip = int(parts[0], 16)
            except ValueError:
                continue
            name = parts[1].split(" (")[0] if len(parts) > 1 else "[unknown]"
            frames.append((ip >= KERNEL_MIN, name))
    if frames:
        yield frames


def place(frames):
    if frames[0][0]:
        names = {n for k, n in frames if k}
        for label, marks in KERNEL:
            if names.intersection(marks):
                return label
        return KERNEL_OTHER
    user = [n for k, n in frames if not k]
    if user[0] in ALLOCATOR:
        return ALLOCATOR_LABEL
    for name in user:
        for label, prefixes in USER:
            if name.startswith(prefixes):
                return label
    # glibc's assembly string functions and system call stubs often leave
    # DWARF unwinding without a caller.
    if user[0].startswith(("__mem", "__GI_", "__libc_", "epoll_", "__strlen", "__str")):
        return LIBC
    return USER_OTHER


def count(path):
    c = collections.Counter()
    for frames in samples(path):
        c[place(frames)] += 1
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--users", type=int, required=True)
    ap.add_argument("--turns", type=int, required=True)
    ap.add_argument("--hz", type=int, required=True)
    a = ap.parse_args()
    ms = 1000.0 / a.hz
    runs = {(t, k): count(os.path.join(a.dir, f"{t}-{k}.txt"))
            for t in (0, a.turns) for k in ("plain", "bridge")}
    for (t, k), c in runs.items():
        if not c:
            raise SystemExit(f"load_profile: no samples of the {k} server's run with {t} turns")
        if not any(c[l] for l, _ in KERNEL) and not c[KERNEL_OTHER]:
            raise SystemExit(f"load_profile: no kernel samples in the {k} server's run with "
                             f"{t} turns: perf may not sample the kernel here (run as root, or "
                             f"set kernel.perf_event_paranoid to 1 or less)")
    labels = [l for l, _ in KERNEL] + [KERNEL_OTHER, ALLOCATOR_LABEL] + \
        [l for l, _ in USER] + [LIBC, USER_OTHER]

    def start(k, label):
        return runs[(0, k)][label] * ms / a.users

    def turn(k, label):
        return (runs[(a.turns, k)][label] - runs[(0, k)][label]) * ms / (a.users * a.turns)

    print("| where (server CPU, ms) | start, plain relay | start, acp-bridge "
          "| per turn, plain relay | per turn, acp-bridge |")
    print("|---|---:|---:|---:|---:|")
    for label in labels:
        print(f"| {label} | {start('plain', label):.3f} | {start('bridge', label):.3f} "
              f"| {turn('plain', label):.3f} | {turn('bridge', label):.3f} |")
    tot = {(k, f): sum(f(k, l) for l in labels) for k in ("plain", "bridge") for f in (start, turn)}
    kern = {(k, f): sum(f(k, l) for l in labels if l.startswith("kernel"))
            for k in ("plain", "bridge") for f in (start, turn)}
    print(f"| **all (kernel)** | **{tot[('plain', start)]:.3f}** ({kern[('plain', start)]:.3f}) "
          f"| **{tot[('bridge', start)]:.3f}** ({kern[('bridge', start)]:.3f}) "
          f"| **{tot[('plain', turn)]:.3f}** ({kern[('plain', turn)]:.3f}) "
          f"| **{tot[('bridge', turn)]:.3f}** ({kern[('bridge', turn)]:.3f}) |")
    print()
    print(f"{a.users} users; perf's CPU-clock samples at {a.hz} Hz of the server process "
          f"(its threads, not its agents'); start: the run with 0 turns (connect, start, "
          f"close; the server's own start and exit included); per turn: the run with "
          f"{a.turns} turns less that one, over {a.users * a.turns} turns.")


if __name__ == "__main__":
    main()
