#!/usr/bin/env bash
# Bounded fuzzing of lsm-demo's readers of on-disk data (issue 8): every
# cargo-fuzz target in lsm-demo/fuzz (WAL, table, manifest) runs for
# FUZZ_SECONDS (default 20) with the pinned nightly (.ci/toolchain.sh),
# starting from the committed seeds plus the local corpus. A crash, a leak, an allocation above
# FUZZ_MALLOC_LIMIT_MB (default 64) or a timeout fails the script; libFuzzer
# leaves the input under lsm-demo/fuzz/artifacts/<target>/.
#
# Long run: FUZZ_SECONDS=3600 bash .ci/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/../lsm-demo/fuzz"
export CARGO_TERM_COLOR=never

seconds=${FUZZ_SECONDS:-20}
malloc_limit_mb=${FUZZ_MALLOC_LIMIT_MB:-64}

# shellcheck source=.ci/toolchain.sh
source ../../.ci/toolchain.sh
install_nightly
if ! cargo "+$NIGHTLY" fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked || ci_fail "could not install cargo-fuzz"
fi

targets=$(cargo "+$NIGHTLY" fuzz list)
cargo "+$NIGHTLY" fuzz build
summary=""
for t in $targets; do
  echo "=== fuzz: $t (${seconds} s)"
  mkdir -p "corpus/$t" "artifacts/$t"
  log=$(mktemp)
  if ! cargo "+$NIGHTLY" fuzz run "$t" "corpus/$t" "seeds/$t" -- \
    -max_total_time="$seconds" -malloc_limit_mb="$malloc_limit_mb" \
    -timeout=10 -print_final_stats=1 >"$log" 2>&1; then
    echo "fuzz: $t FAILED (input under lsm-demo/fuzz/artifacts/$t/)"
    tail -60 "$log"
    exit 1
  fi
  grep -E '^(INFO: (Seed|Loaded|[0-9]+ files found)|Done|stat::)' "$log" || true
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
  summary+="$t: ${runs} runs in ${seconds} s, cov ${cov}, no crash"$'\n'
  rm -f "$log"
done
echo
echo "=== fuzz summary"
printf '%s' "$summary"
