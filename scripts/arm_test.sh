#!/usr/bin/env bash
# The test suite on 64-bit and 32-bit ARM (aarch64-unknown-linux-gnu,
# armv7-unknown-linux-gnueabihf) under qemu-user, built with a real Rust
# 1.85 (the crate's MSRV): for each target the library's tests with every
# feature are built and run (below: the integration suite on request); on the targets in
# ARM_CORE_TARGETS (armv7 by default) also the no_std core
# (`--no-default-features --lib --tests`), and the criterion benches are
# checked (`cargo check --benches`: they compile on ARM with 1.85; they
# run once natively in `scripts/test`). The application's library and
# binaries are checked (`cargo check --workspace --lib --bins`) on the targets in
# ARM_APP_CHECK_TARGETS (armv7, a Raspberry Pi's 32-bit OS, by default:
# where a 64-bit assumption would break), and built and tested on the
# targets in ARM_APP_TARGETS (none by default; aarch64 is a Pi's 64-bit
# OS). On the targets in ARM_LIB_TARGETS (both by default) only the
# library's own tests run (`--all-features --lib`): what differs on ARM
# (NEON in the UTF-8 check, the dense unescaping stage and the
# word-at-a-time scans on aarch64; 32-bit `usize` and word-by-word scans
# on armv7) is in the library and tested there, beside oracles, and the
# no_std core's integration tests run on armv7 too. The every-feature
# integration suite holds no code of its own per architecture and runs
# natively; `ARM_LIB_TARGETS=` (empty) runs it on both targets. Timed on
# two cores, building it for armv7 under optimization (with the library
# built a second time, outside its unit tests) cost about 700 s of CPU and
# running it under qemu about 200 s more: a third of CI's CPU on ARM, for
# tests that differ from the native run only in the width of `usize`.
# Fails when anything fails on either target.
#
# Runs as root (binfmt_misc) on Debian bookworm or any machine that can
# reach deb.debian.org; installs nothing into the system (see
# scripts/arm_env.sh). The toolchain is unpacked once under target/arm/root
# and reused by later runs; the builds go to target/arm/build.
#
#   scripts/arm_test.sh                      # both targets
#   ARM_TARGETS=armv7-unknown-linux-gnueabihf scripts/arm_test.sh
#   ARM_APP_TARGETS=aarch64-unknown-linux-gnu scripts/arm_test.sh   # the application's tests too
#
# The application's build (tokio, hyper, rustls with ring) under
# optimization for two targets took longer than the rest of CI (20 minutes
# for aarch64 alone on two cores), so CI checks it and leaves its tests on
# ARM to a run by hand with ARM_APP_TARGETS.
#
# Time on two cores: everything is built first (both targets' builds use
# both cores), then the two targets' runs go concurrently: most of a run is
# a few long single-threaded tests under emulation, so one target alone
# leaves a core idle.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/arm_env.sh
source scripts/arm_env.sh
read -r -a targets <<<"${ARM_TARGETS:-aarch64-unknown-linux-gnu armv7-unknown-linux-gnueabihf}"
app_targets=" ${ARM_APP_TARGETS:-} "
app_check_targets=" ${ARM_APP_CHECK_TARGETS:-armv7-unknown-linux-gnueabihf} "
# The no_std core's own run and the benches' check on ARM: on the 32-bit
# target by default, where a width assumption would break; on aarch64 the
# every-feature run covers the same code (its NEON paths included).
core_targets=" ${ARM_CORE_TARGETS:-armv7-unknown-linux-gnueabihf} "
lib_targets=" ${ARM_LIB_TARGETS-aarch64-unknown-linux-gnu armv7-unknown-linux-gnueabihf} "
with_app() { [[ "$app_targets" == *" $1 "* ]]; }
with_app_check() { [[ "$app_check_targets" == *" $1 "* ]]; }
with_core() { [[ "$core_targets" == *" $1 "* ]]; }
suite() { if [[ "$lib_targets" == *" $1 "* ]]; then echo --lib; else echo --lib --tests; fi; }
start=$(date +%s)
elapsed() { echo $(($(date +%s) - $1)); }
note() { printf '\n--- %s (%ss)\n' "$*" "$(elapsed "$start")"; }

trap arm_cleanup EXIT
trap 'exit 143' TERM INT
note "toolchain: Debian bookworm's rustc-web/cargo-web, cross gcc, qemu-user-static (into $ARM_ROOT)"
arm_setup
arm_env
arm_binfmt
cargo -V
rustc -V
# The point of this run is the MSRV: refuse anything but the declared one.
msrv=$(sed -n 's/^rust-version *= *"\(.*\)"/\1/p' Cargo.toml)
case "$(rustc -V)" in
"rustc $msrv."*) ;;
*) echo "expected rustc $msrv, got $(rustc -V)" >&2; exit 1 ;;
esac

export CARGO_TARGET_DIR="$arm_work/build"
export CARGO_TERM_COLOR=never
# Optimized test builds: under emulation every instruction costs, and the
# unoptimized build spends minutes in the 50 MiB reassembly tests alone.
# Debug assertions and overflow checks stay on (they are separate profile
# settings), so the tests check what they check on x86_64.
export CARGO_PROFILE_DEV_OPT_LEVEL=1
# Disk: no incremental caches and no debug info (panic messages keep their
# file:line; only backtraces lose it). Debug info, even line tables only,
# made the two targets' test builds 4 GiB.
export CARGO_INCREMENTAL=0
export CARGO_PROFILE_DEV_DEBUG=0
export CARGO_PROFILE_DEV_STRIP=debuginfo
unset CARGO_BUILD_TARGET

declare -A timing
build() {
  local t=$1 s
  s=$(date +%s)
  # The no_std core: the codec alone (the root package).
  if with_core "$t"; then
    CARGO_BUILD_TARGET=$t cargo test --no-default-features --lib --tests --no-run --quiet
  fi
  timing["$t build core"]=$(elapsed "$s")
  s=$(date +%s)
  if with_app "$t"; then
    # Both crates: the application's tests spawn its binaries (the server
    # runs on Raspberry Pis too), which cargo builds with them.
    CARGO_BUILD_TARGET=$t cargo test --workspace --all-features --lib --bins --tests --no-run --quiet
  else
    # shellcheck disable=SC2046 # suite's words are flags
    CARGO_BUILD_TARGET=$t cargo test --all-features $(suite "$t") --no-run --quiet
    if with_app_check "$t"; then
      # The application still has to build here: checked, not run; its
      # library and binaries (what a Pi builds), not its tests (10,000
      # lines, run natively).
      CARGO_BUILD_TARGET=$t cargo check --workspace --all-features --lib --bins --quiet
    fi
  fi
  # The benches compile (they run once natively, in scripts/test).
  if with_core "$t"; then
    CARGO_BUILD_TARGET=$t cargo check --all-features --benches --quiet
  fi
  timing["$t build all"]=$(elapsed "$s")
}

# One target's runs, in order; each step's time goes to the log.
run() {
  local t=$1 s
  export CARGO_BUILD_TARGET=$t QEMU_LD_PREFIX
  QEMU_LD_PREFIX=$(arm_sysroot "$t")
  s=$(date +%s)
  if with_core "$t"; then
    cargo test --no-default-features --lib --tests
  fi
  echo "TIMING $t run core $(elapsed "$s")"
  s=$(date +%s)
  # The flood test (10,000 connections) is for the native run: under
  # emulation it would take most of the stage's time.
  if with_app "$t"; then
    # Each agent's room (Landlock, user and PID namespaces) is checked
    # natively only: qemu's user mode does not pass those system calls
    # through as the kernel would. Here the bridge runs its agents
    # unconfined and the bridge_rooms tests say so and do nothing.
    echo "NOTE $t: confinement tests (bridge_rooms) run natively only; agents run with GEMINI_BRIDGE_UNCONFINED=1 under qemu"
    GEMINI_BRIDGE_UNCONFINED=1 \
    cargo test --workspace --all-features --lib --bins --tests -- --skip front_door_under_flood
  else
    # shellcheck disable=SC2046 # suite's words are flags
    cargo test --all-features $(suite "$t")
  fi
  echo "TIMING $t run all $(elapsed "$s")"
}

for t in "${targets[@]}"; do
  note "build $t"
  build "$t"
done

note "run ${targets[*]} under qemu (concurrently)"
for t in "${targets[@]}"; do
  if [[ "$lib_targets" == *" $t "* ]]; then
    echo "$t: the library's tests only; the every-feature integration suite runs natively (ARM_LIB_TARGETS=, empty, runs it here)"
  fi
done
declare -A pids
for t in "${targets[@]}"; do
  (run "$t") >"$arm_work/run-$t.log" 2>&1 &
  pids[$t]=$!
done
failed=()
for t in "${targets[@]}"; do
  wait "${pids[$t]}" || failed+=("$t")
done
for t in "${targets[@]}"; do
  note "log of $t ($arm_work/run-$t.log)"
  grep -E '^(test result|     Running|TIMING|error|failures:|---- )|panicked|FAILED|Success|Testing ' "$arm_work/run-$t.log" || true
done

note "times (seconds)"
for t in "${targets[@]}"; do
  for k in "build core" "build all"; do
    printf '%-32s %-14s %s\n' "$t" "$k" "${timing["$t $k"]}"
  done
  sed -n "s/^TIMING $t \(.*\) \([0-9]*\)$/\1 \2/p" "$arm_work/run-$t.log" |
    while read -r a b secs; do printf '%-32s %-14s %s\n' "$t" "$a $b" "$secs"; done
done
if [ ${#failed[@]} -gt 0 ]; then
  for t in "${failed[@]}"; do
    note "FAILED on $t; the end of its log:"
    tail -80 "$arm_work/run-$t.log"
  done
  exit 1
fi
note "ARM: all passed on ${targets[*]}"
