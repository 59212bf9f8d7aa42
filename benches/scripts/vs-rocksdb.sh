#!/usr/bin/env bash
# lsm-demo against RocksDB: runs RocksDB's own `db_bench` and `lsm-demo bench`
# on the same scenarios with the same flags, taking turns (RocksDB, lsm-demo,
# RocksDB, lsm-demo, ...), and prints one line per scenario with the median
# ops/sec of each program and the ratio lsm-demo / RocksDB.
#
# Usage (from anywhere in the repository):
#   benches/scripts/vs-rocksdb.sh [--reps N] [--quick] [--only NAME]
#
#   --reps N     runs of each program per scenario (default 3; the median is
#                the middle run, the lower middle one for an even N)
#   --quick      a fifth of the operations in every scenario
#   --only NAME  only the scenario NAME (first column of the table)
#
# Needs `db_bench` (Debian's rocksdb-tools, RocksDB 7.8.3 on Debian 12): the
# script installs it with apt-get when it is missing. It builds lsm-demo in
# release itself. `lsm-demo bench` takes db_bench's flag names and prints
# db_bench's result line, `<benchmark> : <x> micros/op <n> ops/sec ...`,
# which is what both programs' ops/sec are read from.
#
# The write scenarios (a fill measured) then run both programs again as
# many times with --histogram=1, and a second table gives the median over
# those runs of each program's P50, P99 and P99.9 microseconds per write,
# read from the `Percentiles:` line of db_bench's histogram layout, which
# lsm-demo prints too. The throughput of the first table comes from the runs
# without histograms: timing each write costs both programs a clock read
# per write, a tenth of the fastest fills.
#
# The first table is read by `cargo run -p benches --bin report`; keep its
# columns (the report skips the second table's rows, which have more).
set -euo pipefail

usage() { sed -n '7,13p' "$0" | sed 's/^# \{0,1\}//'; }

reps=3
divisor=1
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --reps)
      [ $# -ge 2 ] || { echo "--reps needs a number" >&2; exit 2; }
      reps=$2; shift 2 ;;
    --quick) divisor=5; shift ;;
    --only)
      [ $# -ge 2 ] || { echo "--only needs a scenario name" >&2; exit 2; }
      only=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done
case "$reps" in
  ''|*[!0-9]*|0) echo "--reps wants a positive whole number, not '$reps'" >&2; exit 2 ;;
esac

# Given to db_bench only, so that RocksDB does the same work as lsm-demo here:
# no compression, no compactions, enough memtables that none is flushed while
# the benchmark runs, writes not pipelined, no statistics.
rocksdb_flags="--compression_type=none --disable_auto_compactions=1 --max_write_buffer_number=64 --min_write_buffer_number_to_merge=64 --enable_pipelined_write=0 --statistics=0"

# One seed for both, so both write the same keys.
seed=1722808058

# Fields: name | benchmarks | flags for both | db_bench only | lsm-demo only.
# readwhilewriting runs --threads readers and one writer more; its ops/sec
# counts the readers' reads only, as db_bench's.
# --mmap_write=1: both write through memory maps (RocksDB its log and its
# tables, lsm-demo its log only).
# In fillrandom-vector-t2-cc lsm-demo inserts into the vector memtable from
# both threads at once; RocksDB 7.8 cannot, so it keeps serial inserts.
scenarios='
fillseq-skiplist-t1|fillseq|--threads=1 --num=1000000 --memtablerep=skip_list --allow_concurrent_memtable_write=1 --disable_wal=1||
fillrandom-skiplist-t1|fillrandom|--threads=1 --num=1000000 --memtablerep=skip_list --allow_concurrent_memtable_write=1 --disable_wal=1||
fillrandom-skiplist-t2|fillrandom|--threads=2 --num=500000 --memtablerep=skip_list --allow_concurrent_memtable_write=1 --disable_wal=1||
fillrandom-skiplist-t8|fillrandom|--threads=8 --num=125000 --memtablerep=skip_list --allow_concurrent_memtable_write=1 --disable_wal=1||
fillrandom-vector-t1|fillrandom|--threads=1 --num=1000000 --memtablerep=vector --allow_concurrent_memtable_write=0 --disable_wal=1||
fillrandom-vector-t2|fillrandom|--threads=2 --num=500000 --memtablerep=vector --allow_concurrent_memtable_write=0 --disable_wal=1||
fillrandom-vector-t2-cc|fillrandom|--threads=2 --num=500000 --memtablerep=vector --disable_wal=1|--allow_concurrent_memtable_write=0|--allow_concurrent_memtable_write=1 --unordered_write=1
fillrandom-wal-t2|fillrandom|--threads=2 --num=500000 --memtablerep=skip_list --allow_concurrent_memtable_write=1 --disable_wal=0 --sync=0||
fillrandom-wal-t2-mmap|fillrandom|--threads=2 --num=500000 --memtablerep=skip_list --allow_concurrent_memtable_write=1 --disable_wal=0 --sync=0 --mmap_write=1||
fillsync-wal-t8|fillrandom|--threads=8 --num=1000 --memtablerep=skip_list --allow_concurrent_memtable_write=1 --disable_wal=0 --sync=1||
readrandom-t1|fillrandom,readrandom|--threads=1 --num=300000 --memtablerep=skip_list --allow_concurrent_memtable_write=1 --disable_wal=1||
readwhilewriting-t1|fillrandom,readwhilewriting|--threads=1 --num=300000 --memtablerep=skip_list --allow_concurrent_memtable_write=1 --disable_wal=1||
readrandomwriterandom-t1|fillrandom,readrandomwriterandom|--threads=1 --num=300000 --readwritepercent=90 --memtablerep=skip_list --allow_concurrent_memtable_write=1 --disable_wal=1||
seekrandom-t1|fillrandom,seekrandom|--threads=1 --num=300000 --seek_nexts=10 --memtablerep=skip_list --allow_concurrent_memtable_write=1 --disable_wal=1||
'

if [ -n "$only" ] && ! printf '%s\n' "$scenarios" | cut -d'|' -f1 | grep -qxF -- "$only"; then
  echo "no scenario named '$only'; the scenarios are:" >&2
  printf '%s\n' "$scenarios" | cut -d'|' -f1 | sed '/^$/d; s/^/  /' >&2
  exit 2
fi

# The workspace root is two levels above this script.
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

# --- db_bench ---------------------------------------------------------------
install_db_bench() {
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || return 1
    sudo=(sudo)
  fi
  echo "db_bench not found: installing rocksdb-tools with apt-get" >&2
  "${sudo[@]}" apt-get install -y -qq rocksdb-tools >/dev/null 2>&1 \
    || { "${sudo[@]}" apt-get update -qq >/dev/null 2>&1 \
         && "${sudo[@]}" apt-get install -y -qq rocksdb-tools >/dev/null 2>&1; }
}
if ! command -v db_bench >/dev/null 2>&1; then
  if ! install_db_bench || ! command -v db_bench >/dev/null 2>&1; then
    cat >&2 <<'EOF'
error: db_bench is not installed and `apt-get install -y rocksdb-tools` failed
(it needs root or sudo, and a Debian or Ubuntu package source). Install
RocksDB's db_bench by hand so that `db_bench` is on PATH, then rerun.
EOF
    exit 3
  fi
fi

# --- lsm-demo ---------------------------------------------------------------
cargo build --release -q -p lsm-demo
lsm_demo="${CARGO_TARGET_DIR:-target}/release/lsm-demo"
[ -x "$lsm_demo" ] || { echo "error: no $lsm_demo after the build" >&2; exit 3; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# run_once BENCHMARK PROGRAM ARGS...: runs the program on a fresh database and
# prints the ops/sec of the last result line for BENCHMARK (0 if none, with
# the end of the program's output on stderr), then the P50, P99 and P99.9 of
# the first histogram after that line (`-` for each when there is none).
run_once() {
  local benchmark=$1; shift
  local db="$scratch/db" log="$scratch/out"
  rm -rf "$db"; mkdir -p "$db"
  "$@" --db="$db" >"$log" 2>&1 || true
  local result
  result=$(awk -v b="$benchmark" '
    $1 == b && $2 == ":" {
      for (i = 3; i < NF; i++) if ($(i + 1) == "ops/sec") v = $i
      p50 = p99 = p999 = "-"; want = 1
    }
    want && $1 == "Percentiles:" {
      for (i = 2; i < NF; i++) {
        if ($i == "P50:") p50 = $(i + 1)
        if ($i == "P99:") p99 = $(i + 1)
        if ($i == "P99.9:") p999 = $(i + 1)
      }
      want = 0
    }
    END { if (v != "") print v, p50, p99, p999 }' "$log")
  if [ -z "$result" ]; then
    echo "warning: no '$benchmark' result from $1; its output ended with:" >&2
    tail -n 5 "$log" >&2
    result="0 - - -"
  fi
  echo "$result"
}

# Whether BENCHMARK writes (its scenario gets the latency columns).
is_write() { case "$1" in fillseq|fillrandom|fillbatch|fillsync|overwrite) return 0 ;; *) return 1 ;; esac; }

# The middle one of the numbers on stdin (the lower middle for an even count).
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR == 0 ? 0 : v[int((NR + 1) / 2)]) }'; }

# field N: the Nth whitespace-separated field of each line on stdin.
field() { awk -v n="$1" '{ print $n }'; }

# The median of the numbers on stdin, or `-` when there are none.
median_or_dash() { awk '$1 != "-"' | median | sed 's/^0$/-/'; }

# --num=N becomes --num=N/divisor (whole numbers), other flags stay.
scale_num() { awk -v d="$divisor" '{ for (i = 1; i <= NF; i++) if ($i ~ /^--num=/) $i = "--num=" int(substr($i, 7) / d); print }'; }

printf '%-24s %14s %14s %8s\n' scenario rocksdb_ops/s lsm-demo_ops/s ratio
latency_rows=()
while IFS='|' read -r name benchmarks common rocksdb_only ours_only; do
  [ -n "$name" ] || continue
  if [ -n "$only" ] && [ "$name" != "$only" ]; then continue; fi
  measured=${benchmarks##*,} # the result of the last benchmark is the one kept
  common=$(printf '%s\n' "$common" | scale_num)
  read -ra common_args <<<"$common"
  read -ra rocksdb_args <<<"$rocksdb_only $rocksdb_flags"
  read -ra ours_args <<<"$ours_only"
  rocksdb_runs=()
  ours_runs=()
  for _ in $(seq "$reps"); do
    rocksdb_runs+=("$(run_once "$measured" db_bench --benchmarks="$benchmarks" \
      "${common_args[@]}" "${rocksdb_args[@]}" --seed="$seed")")
    ours_runs+=("$(run_once "$measured" "$lsm_demo" bench --benchmarks="$benchmarks" \
      "${common_args[@]}" "${ours_args[@]}" --seed="$seed")")
  done
  rocksdb_median=$(printf '%s\n' "${rocksdb_runs[@]}" | field 1 | median)
  ours_median=$(printf '%s\n' "${ours_runs[@]}" | field 1 | median)
  ratio=$(awk -v o="$ours_median" -v r="$rocksdb_median" \
    'BEGIN { if (r > 0) printf "%.2f", o / r; else print "n/a" }')
  printf '%-24s %14s %14s %8s\n' "$name" "$rocksdb_median" "$ours_median" "$ratio"
  if is_write "$measured"; then
    rocksdb_runs=()
    ours_runs=()
    for _ in $(seq "$reps"); do
      rocksdb_runs+=("$(run_once "$measured" db_bench --benchmarks="$benchmarks" \
        "${common_args[@]}" "${rocksdb_args[@]}" --seed="$seed" --histogram=1)")
      ours_runs+=("$(run_once "$measured" "$lsm_demo" bench --benchmarks="$benchmarks" \
        "${common_args[@]}" "${ours_args[@]}" --seed="$seed" --histogram=1)")
    done
    row=$(printf '%-24s' "$name")
    for runs in rocksdb ours; do
      for n in 2 3 4; do
        if [ "$runs" = rocksdb ]; then
          p=$(printf '%s\n' "${rocksdb_runs[@]}" | field "$n" | median_or_dash)
        else
          p=$(printf '%s\n' "${ours_runs[@]}" | field "$n" | median_or_dash)
        fi
        row+=$(printf ' %14s' "$p")
      done
    done
    latency_rows+=("$row")
  fi
done <<<"$scenarios"

if [ ${#latency_rows[@]} -gt 0 ]; then
  echo
  echo "Write scenarios: microseconds per write (separate runs with --histogram=1), medians"
  printf '%-24s %14s %14s %14s %14s %14s %14s\n' scenario rocksdb_p50 rocksdb_p99 \
    rocksdb_p99.9 lsm-demo_p50 lsm-demo_p99 lsm-demo_p99.9
  printf '%s\n' "${latency_rows[@]}"
fi
