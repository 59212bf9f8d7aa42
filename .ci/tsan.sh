#!/usr/bin/env bash
# ThreadSanitizer over the concurrent tests (issue 8): the multi-threaded
# integration test files of arena/, write-group/, skiplist/, vecmem/,
# ordered-publish/ and shared-file/ (not the loom models), and the engine's
# multi-threaded tests in lsm-demo, all named in the list below. The pinned
# nightly (.ci/toolchain.sh) with -Zbuild-std, so the standard library is
# instrumented too. No suppressions: any report fails the run.
#
# The list is explicit, and every entry must run at least one test: a file
# or test renamed away from it fails the run instead of silently leaving
# TSan's coverage. A new multi-threaded test file or engine test goes into
# the list by hand.
#
# The first run builds std and the workspace with TSan (several minutes on
# 2 cores); later runs reuse target/tsan.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

# shellcheck source=.ci/toolchain.sh
source .ci/toolchain.sh
install_nightly

target=x86_64-unknown-linux-gnu
export RUSTFLAGS="-Zsanitizer=thread -Cforce-frame-pointers=yes"
export RUSTDOCFLAGS="-Zsanitizer=thread"
export TSAN_OPTIONS="halt_on_error=1 abort_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
export CARGO_TARGET_DIR="${TSAN_TARGET_DIR:-target/tsan}"
# Fewer proptest cases: TSan slows code 5 to 15 times.
export PROPTEST_CASES="${PROPTEST_CASES:-32}"

# tsan CRATE_FOLDER TEST_FILE [TEST_NAME...]
# Runs tests/TEST_FILE.rs of the crate under TSan: all of its tests, or only
# those named (exact names). Fails if a named test does not exist or if no
# test ran.
tsan() {
  local crate=$1 file=$2
  shift 2
  echo "=== tsan: $crate/tests/$file.rs $*"
  local started=$SECONDS
  # By manifest: folders keep short names (skiplist/ holds inline-skiplist).
  local cargo_test=(cargo "+$NIGHTLY" test -Zbuild-std --target "$target"
    --manifest-path "$crate/Cargo.toml" --test "$file")
  local filter=()
  if [ $# -gt 0 ]; then
    filter=(--exact "$@")
    local name listed
    for name in "$@"; do
      listed=$("${cargo_test[@]}" -- --list --exact "$name" | grep -c ': test$' || true)
      [ "$listed" -eq 1 ] ||
        ci_fail "tsan: $crate/tests/$file.rs has no test named $name; update .ci/tsan.sh"
    done
  fi
  local log
  log=$(mktemp)
  "${cargo_test[@]}" -- "${filter[@]}" 2>&1 | tee "$log"
  local passed
  passed=$(sed -n 's/^test result: ok\. \([0-9][0-9]*\) passed.*/\1/p' "$log" | head -1)
  rm -f "$log"
  [ "${passed:-0}" -gt 0 ] ||
    ci_fail "tsan: no test ran in $crate/tests/$file.rs${*:+ (selected: $*)}; update .ci/tsan.sh"
  echo "=== tsan: $crate/tests/$file.rs clean: $passed passed ($((SECONDS - started)) s)"
}

# The crates' multi-threaded test files, whole.
tsan arena stress
tsan write-group stress
tsan skiplist concurrent
tsan skiplist stress
tsan vecmem concurrent
tsan vecmem model
tsan ordered-publish stress
# One round per backing: each writes some 40 MB through the sanitizer.
STRESS_ROUNDS=1 tsan shared-file stress

# The engine: its multi-threaded tests only (the single-threaded model and
# fault tests add nothing under TSan and take long).
tsan lsm-demo engine \
  concurrent_sync_writers_survive_reopen \
  parallel_and_serial_memtable_paths_agree \
  logged_and_unlogged_writers_publish_in_order
tsan lsm-demo rocksdb_api \
  multi_gets_answer_every_key_at_one_point_in_time
tsan lsm-demo power_loss \
  synced_writes_survive_power_loss_skiplist \
  synced_writes_survive_power_loss_vector
tsan lsm-demo fault_injection \
  random_faults_with_concurrent_synced_writers \
  a_flush_backlog_keeps_the_logs_of_waiting_memtables
# Writers that copy their own records into the mapped log.
tsan lsm-demo mapped_log
tsan lsm-demo leveled \
  compactions_run_beside_writers_and_readers \
  a_snapshot_keeps_its_versions_through_compactions \
  compact_range_runs_beside_writers
echo "=== tsan: all clean"
