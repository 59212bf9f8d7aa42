#!/usr/bin/env bash
# ThreadSanitizer over the concurrent tests (issue 8): every multi-threaded
# integration test file (one that uses std::thread) under arena/, write-group/,
# skiplist/, vecmem/ and ordered-publish/ tests/, except the loom models, and the engine's
# multi-threaded tests in lsm-demo. The pinned nightly (.ci/toolchain.sh) with
# -Zbuild-std, so the standard library is instrumented too. No suppressions:
# any report fails the run.
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

tsan() {
  local crate=$1
  shift
  echo "=== tsan: $crate $*"
  local started=$SECONDS
  # By manifest: folders keep short names (skiplist/ holds inline-skiplist).
  cargo "+$NIGHTLY" test -Zbuild-std --target "$target" --manifest-path "$crate/Cargo.toml" "$@"
  echo "=== tsan: $crate clean ($((SECONDS - started)) s)"
}

for crate in arena write-group skiplist vecmem ordered-publish; do
  args=()
  for f in "$crate"/tests/*.rs; do
    [ -e "$f" ] || continue
    name=$(basename "$f" .rs)
    [ "$name" = loom ] && continue
    grep -q 'thread' "$f" || continue
    args+=(--test "$name")
  done
  if [ ${#args[@]} -eq 0 ]; then
    echo "=== tsan: $crate has no integration tests besides loom; skipped"
    continue
  fi
  tsan "$crate" "${args[@]}"
done

# The engine: its multi-threaded tests only (the single-threaded model and
# fault tests add nothing under TSan and take long).
tsan lsm-demo --test engine -- concurrent_sync_writers parallel_and_serial logged_and_unlogged
tsan lsm-demo --test fault_injection -- synced_writes_survive random_faults_with_concurrent a_flush_backlog
tsan lsm-demo --test leveled -- compactions_run_beside snapshot_keeps
echo "=== tsan: all clean"
