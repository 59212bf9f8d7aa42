#!/usr/bin/env bash
# The engine's write rate against threads, beside RocksDB's db_bench on the
# same flags: fillrandom with the log (unsynced) and without it, each
# engine run alternately, every thread count writing the same total; ours
# also with the log written through a memory map (lsm-demo-mmap).
#
#   bash benches/scripts/thread-scaling.sh [OUT_DIR]
#
# Environment: ROUNDS (default 3), THREADS (default "1 2 4 8"), TOTAL
# (writes per run, default 400000), DURATION (seconds: each thread then
# writes for that long instead of TOTAL / threads times, keys drawn from
# TOTAL; default 0, off), LSM_DEMO (a built binary; default: build it),
# DB_BENCH (default: db_bench on PATH, skipped when missing).
# Writes OUT_DIR/scaling.csv (round,engine,wal,threads,ops) and
# OUT_DIR/scaling.svg (medians; plot-scaling.py), and prints the medians.
set -euo pipefail
cd "$(dirname "$0")/../.."

out=${1:-target/thread-scaling}
rounds=${ROUNDS:-3}
threads=${THREADS:-"1 2 4 8"}
total=${TOTAL:-400000}
duration=${DURATION:-0}
mkdir -p "$out"

ours=${LSM_DEMO:-}
if [ -z "$ours" ]; then
  cargo build --release -q -p lsm-demo
  ours=target/release/lsm-demo
fi
rocks=${DB_BENCH:-$(command -v db_bench || true)}
[ -n "$rocks" ] || echo "db_bench not found: lsm-demo alone" >&2

# RocksDB only: the same work as ours (no compression; flushes, not
# compactions, during the run), as benches/scripts/vs-rocksdb.sh.
rocks_only="--compression_type=none --disable_auto_compactions=1 --max_write_buffer_number=64 --min_write_buffer_number_to_merge=64 --enable_pipelined_write=0 --statistics=0"

ops() { # command... -> ops/sec of its fillrandom line
  "$@" 2>&1 | awk '/^fillrandom/ {print $5}'
}

csv="$out/scaling.csv"
echo "round,engine,wal,threads,ops" >"$csv"
for r in $(seq 1 "$rounds"); do
  for t in $threads; do
    if [ "$duration" -gt 0 ]; then
      length="--num=$total --duration=$duration"
    else
      length="--num=$((total / t))"
    fi
    for wal in 1 0; do
      common="--benchmarks=fillrandom $length --threads=$t --memtablerep=skip_list --allow_concurrent_memtable_write=1 --disable_wal=$((1 - wal)) --sync=0"
      echo "$r,lsm-demo,$wal,$t,$(ops "$ours" bench $common)" >>"$csv"
      if [ "$wal" = 1 ]; then
        # The log through a memory map (allow_mmap_writes, off by default).
        echo "$r,lsm-demo-mmap,$wal,$t,$(ops "$ours" bench $common --mmap_write=1)" >>"$csv"
      fi
      if [ -n "$rocks" ]; then
        dir=$(mktemp -d)
        # shellcheck disable=SC2086
        echo "$r,rocksdb,$wal,$t,$(ops "$rocks" --db="$dir" $common $rocks_only)" >>"$csv"
        rm -rf "$dir"
      fi
    done
  done
done
python3 benches/scripts/plot-scaling.py "$csv" "$out/scaling.svg"
