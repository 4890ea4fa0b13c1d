#!/usr/bin/env bash
# The fuzz campaign (issue 8): every cargo-fuzz target for SECONDS (default
# 600) with memory capped near the crate's documented limits, then a summary
# table (executions, exec/s, corpus, coverage, crashes) for fuzz/README.md.
# Outside CI (CI runs a 15 s smoke run per target).
#
#   scripts/fuzz_campaign.sh [TARGET...]        # default: every target
#   SECONDS_PER_TARGET=60 scripts/fuzz_campaign.sh line_splitter
#   SUMMARY_ONLY=1 scripts/fuzz_campaign.sh      # the table from the last logs
#
# New inputs go to fuzz/campaign/<target>/ (ignored by git); the committed
# seeds in fuzz/seeds/<target>/ are read, not written. Crashes land in
# fuzz/artifacts/<target>/; commit each as a seed once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTC_BOOTSTRAP=1
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
secs=${SECONDS_PER_TARGET:-600}
# Largest documented limit is the 50 MiB result budget: one allocation above
# 64 MiB is a bug, and the process (fuzzer included) stays under 512 MiB.
rss_mb=${RSS_LIMIT_MB:-512}
malloc_mb=${MALLOC_LIMIT_MB:-64}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cd fuzz && cargo fuzz list)
fi
[ -n "${SUMMARY_ONLY:-}" ] || cargo fuzz build -O >/dev/null
mkdir -p fuzz/campaign
for t in "${targets[@]}"; do
  [ -z "${SUMMARY_ONLY:-}" ] || break
  mkdir -p "fuzz/campaign/$t"
  max_len=()
  case "$t" in line_splitter|acp_codec) max_len=(-max_len=131072) ;; esac
  log="fuzz/campaign/$t.log"
  status=ok
  cargo fuzz run -O "$t" "fuzz/campaign/$t" "fuzz/seeds/$t" -- \
    -max_total_time="$secs" -rss_limit_mb="$rss_mb" -malloc_limit_mb="$malloc_mb" \
    -print_final_stats=1 "${max_len[@]}" >"$log" 2>&1 || status=failed
  echo "$t: $status ($log)"
done
echo
echo "| target | seconds | executions | exec/s | corpus (files) | coverage (cov / ft) | crashes |"
echo "|---|---|---|---|---|---|---|"
for t in "${targets[@]}"; do
  log="fuzz/campaign/$t.log"
  [ -f "$log" ] || continue
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  crashes=$(grep -cE '^==[0-9]+==ERROR|^SUMMARY: libFuzzer|panicked at' "$log" || true)
  echo "| $t | $secs | ${execs:-?} | ${rate:-?} | ${corp:-?} | ${cov:-?} / ${ft:-?} | $crashes |"
done
