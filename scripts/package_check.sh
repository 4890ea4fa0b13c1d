#!/usr/bin/env bash
# Packaging check: the crate must build from its published file list alone.
#
#   scripts/package_check.sh                 # on a clean checkout (CI)
#   scripts/package_check.sh --allow-dirty   # with uncommitted changes
#
# Extra arguments go to `cargo package` and `cargo publish`. Steps:
#  1. `cargo package --list`: the published files, which must all be the
#     library's sources and the top-level docs and licenses (no tests,
#     fixtures, benches, examples, fuzz, scripts or target; the one test
#     file the library's own unit tests include is the exception);
#  2. `cargo package`: builds the .crate and compiles it, unpacked, with
#     default features (cargo's own verification);
#  3. the unpacked package again, without and with all features, and its
#     doctests (the crate docs and the README, which src/lib.rs includes
#     with `include_str!`), so every file the library pulls in at compile
#     time is proven to be inside the package (the doctests and unit
#     tests skipped with PACKAGE_CHECK_TESTS=0: the builds prove the files);
#  4. `cargo publish --dry-run`: everything but the upload (needs access
#     to the crates.io index).
# Prints the file count and the .crate size. Needs only cargo.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export CARGO_TERM_COLOR=never

# The package at the root (the workspace also holds the application,
# acp-bridge, whose package needs acp-codec published first).
name=$(cargo metadata --no-deps --format-version 1 |
  ROOT="$root" python3 -c 'import json,os,sys; p=[p for p in json.load(sys.stdin)["packages"] if p["manifest_path"] == os.environ["ROOT"] + "/Cargo.toml"][0]; print(p["name"], p["version"])')
version=${name#* }
name=${name% *}

echo "== files published by $name $version"
list=$(cargo package --list "$@")
count=$(printf '%s\n' "$list" | wc -l)
unexpected=$(printf '%s\n' "$list" | grep -Ev '^(src/.*\.rs|Cargo\.toml|Cargo\.toml\.orig|Cargo\.lock|\.cargo_vcs_info\.json|README\.md|CHANGELOG\.md|LICENSE-MIT|LICENSE-APACHE)$' || true)
if [ -n "$unexpected" ]; then
  echo "unexpected files in the package:" >&2
  printf '  %s\n' "$unexpected" >&2
  exit 1
fi
for required in README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE src/lib.rs; do
  printf '%s\n' "$list" | grep -qx "$required" || { echo "missing from the package: $required" >&2; exit 1; }
done
echo "$count files"

echo "== cargo package (build from the packaged files, default features)"
cargo package "$@"
crate="$root/target/package/$name-$version.crate"
unpacked="$root/target/package/$name-$version"
[ -f "$crate" ] && [ -d "$unpacked" ] || { echo "no $crate" >&2; exit 1; }

echo "== the unpacked package: no_std, all features, doctests (crate docs and README), unit tests"
# Same target dir and lock file as the checkout, so dependencies are reused.
(
  cd "$unpacked"
  export CARGO_TARGET_DIR="$root/target"
  cargo check --lib --no-default-features
  cargo check --lib --all-features
  # PACKAGE_CHECK_TESTS=0 (CI, where scripts/test ran them from the same
  # files) skips these.
  if [ "${PACKAGE_CHECK_TESTS:-1}" != 0 ]; then
    cargo test --doc --all-features --quiet
    # The library's unit tests, from the published files alone.
    cargo test --lib --all-features --quiet
  fi
)

echo "== cargo publish --dry-run"
# The same .crate `cargo package` built and compiled above: not again.
cargo publish --dry-run --no-verify "$@"

size=$(wc -c <"$crate")
printf '\n%s %s: %s files, .crate %s bytes (%s KiB)\n' \
  "$name" "$version" "$count" "$size" "$(( (size + 1023) / 1024 ))"

# The application's package: its file list only (building it from the
# packaged files needs acp-codec on crates.io first).
echo "== files published by acp-bridge"
app=$(cargo package -p acp-bridge --list "$@")
unexpected=$(printf '%s\n' "$app" | grep -Ev '^(src/.*\.rs|deploy/.*|Cargo\.toml|Cargo\.toml\.orig|Cargo\.lock|\.cargo_vcs_info\.json|README\.md)$' || true)
if [ -n "$unexpected" ]; then
  echo "unexpected files in acp-bridge's package:" >&2
  printf '  %s\n' "$unexpected" >&2
  exit 1
fi
printf '%s\n' "$app" | grep -qx 'src/bin/acp-bridge/main.rs' || { echo "acp-bridge's package has no server" >&2; exit 1; }
echo "$(printf '%s\n' "$app" | wc -l) files"
