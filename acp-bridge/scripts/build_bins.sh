#!/usr/bin/env bash
# Builds the application's binaries for the scripts beside this one and
# prints the directory they are in (`<target>/debug`).
#
# By default: `cargo build -p acp-bridge --bins`. Set ACP_BINS_BUILD to
# other cargo arguments to build them the way an earlier step already did:
# `scripts/test` and CI set it to the test build's own arguments
# (`test --workspace --all-features --all-targets --no-run`), whose
# binaries are the ones the tests ran, so the scripts build nothing again.
# A plain `cargo build -p acp-bridge` after the test build is not a no-op:
# without the dev-dependencies, features resolve differently (tokio, hyper,
# syn, the codec itself), and about 40 crates would build a second time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
read -r -a args <<<"${ACP_BINS_BUILD:-build -p acp-bridge --bins}"
(cd "$root" && cargo "${args[@]}" --quiet) >&2
target="${CARGO_TARGET_DIR:-$root/target}"
[[ "$target" = /* ]] || target="$root/$target"
echo "$target/debug"
