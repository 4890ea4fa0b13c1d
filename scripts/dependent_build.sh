#!/usr/bin/env bash
# How long a crate that depends on acp-codec takes to build: a clean
# release build of `examples/tap` as a dependent crate would build it
# (acp-codec with `tokio-util`, plus tokio), from nothing, dependencies
# included, with the workspace's Cargo.lock.
#
#   scripts/dependent_build.sh [--features F] [ROUNDS] [CHECKOUT[+F2] ...]
#
# Each CHECKOUT (default: this one) is a directory holding the crate;
# `+F2` adds features to that one's build (`. .+v2`: this checkout without
# and with feature `v2`, in the same run);
# with several, the builds alternate round by round so that drift in the
# machine's speed falls on all of them alike. Prints one line per build
# (seconds of wall time, and of CPU: user plus system, the figure that
# holds when other work shares the machine) and each checkout's medians.
set -euo pipefail
cd "$(dirname "$0")/.."
features=""
if [ "${1:-}" = "--features" ]; then
  features=",$2"
  shift 2
fi
rounds=3
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  rounds=$1
  shift
fi
checkouts=("$@")
[ ${#checkouts[@]} -gt 0 ] || checkouts=("$(pwd)")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
i=0
for entry in "${checkouts[@]}"; do
  extra=""
  [[ "$entry" == *+* ]] && extra=",${entry#*+}"
  checkout=$(cd "${entry%%+*}" && pwd)
  all="$features$extra"
  dir="$work/dependent$i"
  mkdir -p "$dir/src"
  cp "$checkout/examples/tap.rs" "$dir/src/main.rs"
  cp "$checkout/Cargo.lock" "$dir/Cargo.lock"
  cat >"$dir/Cargo.toml" <<TOML
[package]
name = "dependent"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
acp-codec = { path = "$checkout", features = ["tokio-util"$(printf '%s' "${all:+, \"${all#,}\"}" | sed 's/,/", "/2g')] }
tokio = { version = "1.38", features = ["rt", "macros", "io-util", "io-std", "process", "sync"] }

[workspace]
TOML
  # Fetch once, outside the timing.
  (cd "$dir" && cargo fetch -q)
  i=$((i + 1))
done

declare -A times cpus
for round in $(seq 1 "$rounds"); do
  i=0
  for checkout in "${checkouts[@]}"; do
    dir="$work/dependent$i"
    rm -rf "$dir/target"
    (cd "$dir" && CARGO_INCREMENTAL=0 /usr/bin/time -f '%e %U %S' -o "$work/time" \
      cargo build -q --release --offline)
    read -r t user sys <"$work/time"
    cpu=$(python3 -c "print(f'{$user + $sys:.1f}')")
    echo "round $round  $checkout  ${t} s wall  ${cpu} s cpu"
    times[$i]="${times[$i]:-} $t"
    cpus[$i]="${cpus[$i]:-} $cpu"
    i=$((i + 1))
  done
done
i=0
for checkout in "${checkouts[@]}"; do
  python3 -c "import statistics,sys; v=[float(x) for x in sys.argv[2].split()]; c=[float(x) for x in sys.argv[3].split()]; print(f'median {statistics.median(v):.1f} s wall  {statistics.median(c):.1f} s cpu  {sys.argv[1]}')" "$checkout" "${times[$i]}" "${cpus[$i]}"
  i=$((i + 1))
done
