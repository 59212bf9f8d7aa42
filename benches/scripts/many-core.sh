#!/usr/bin/env bash
# The scaling figures for a many-core machine, in about six minutes: the
# write group's tree wake-up and fan-out with synced groups, its contenders up
# to 64 writers, the arena's shards, ordered publication, one log file
# written from many threads, the vector memtable's and the skiplist's
# scaling, and the engine from 1 to 64 threads (without the log, with it
# in stripes or in one file, mapped or drained, synced; RocksDB's db_bench
# beside it where one is at hand).
#
# Usage: benches/scripts/many-core.sh OUT_DIR [BIN_DIR]
#
# BIN_DIR holds the bench executables named arena, write_group, skiplist,
# vecmem, ordered_publish, shared_file and an `lsm-demo` binary, for a
# machine without a Rust toolchain (and, optionally, `db_bench` with its
# shared libraries in BIN_DIR/lib); without it they are built here. The
# vector memtable's targets and the fan-out run with criterion's full
# sampling; the rest in its `--quick` mode (no warm-up; iterations double
# until two agree within 5%), coarse figures for the shape of the scaling.
# One log per part lands in OUT_DIR, and engine-summary.md sets the
# engine's figures against its scaling targets (many-core-summary.py).
set -uo pipefail

out=${1:?usage: many-core.sh OUT_DIR [BIN_DIR]}
bin=${2:-}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/../.." && pwd)

if [[ -z $bin ]]; then
    bin=$(mktemp -d)
    # Both builds report where their executables are, wherever the target
    # directory is (CARGO_TARGET_DIR included).
    (cd "$root" && cargo build --release -p lsm-demo --message-format=json &&
        cargo bench -p benches --no-run --message-format=json) |
        python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    if "bench" in m["target"]["kind"] or m["target"]["name"] == "lsm-demo":
        shutil.copy(m["executable"], sys.argv[1] + "/" + m["target"]["name"])
' "$bin" || exit 1
fi

# fdatasync on tmpfs returns at once: sync figures need a real disk.
if [[ $(df --output=fstype /tmp | tail -1) == tmpfs ]]; then
    export TMPDIR=$root/target/many-core-tmp
    mkdir -p "$TMPDIR"
fi
export CRITERION_HOME=${TMPDIR:-/tmp}/criterion

start=$(date +%s)
part() { echo "== $* (at $(($(date +%s) - start)) s)"; }
# quick SECONDS BENCH FILTER: one bench binary in quick mode, time-limited.
quick() { timeout "$1" "$bin/$2" --bench --quick --noplot "${@:3}" 2>&1; }

{
    part machine
    date -u
    uname -a
    nproc
    grep -m1 'model name' /proc/cpuinfo
    lscpu | grep -E '^(CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)|L3)'
    free -g | head -2
    cat /sys/kernel/mm/transparent_hugepage/enabled
    df -T "${TMPDIR:-/tmp}" | tail -1
} >"$out/machine.txt" 2>&1

{
    # Criterion's full sampling here: these ratios decide a target.
    part vecmem
    BENCH_THREADS=1,2,4,16 timeout 150 "$bin/vecmem" --bench --noplot \
        'append_prefaulted/(vecmem/t[0-9]+_b100|std_mutex_vec/|per_thread_vec_bound/)' 2>&1
} >"$out/vecmem.log"

{
    part fan-out
    BENCH_THREADS=16,64 timeout 150 "$bin/write_group" --bench --noplot 'write_group_fanout/' 2>&1
    part "contenders"
    BENCH_THREADS=1,4,16,32,64 quick 200 write_group \
        'write_group/(mem|parallel|fsync|fsync_parallel)/'
} >"$out/write_group.log"

{
    part arena
    BENCH_THREADS=1,2,4,8,16 quick 100 arena \
        'arena/prefaulted/(ConcurrentArena|Mutex<Bump>|bumpalo-herd|Bump per thread)'
} >"$out/arena.log"

{
    # Ordered publication against a mutex and the write group, and the log
    # buffer that writers fill in parallel against a Mutex<Vec<u8>>.
    part ordered-publish
    BENCH_THREADS=1,4,16 quick 100 ordered_publish 'ordered_publish/|log_buffer/'
} >"$out/ordered_publish.log"

{
    # One log file written from many threads: a pwrite each, copies into a
    # map, a Mutex<File>, the write group's one write per group.
    part shared-file
    BENCH_THREADS=1,4,16 quick 100 shared_file 'shared_file/append_work/'
} >"$out/shared_file.log"

{
    part skiplist
    BENCH_THREADS=1,16 quick 150 skiplist \
        'skiplist_insert_random/(skiplist|skipmap|mutex_btreemap)/|skiplist_lookup/(skiplist|skipmap)/'
} >"$out/skiplist.log"

{
    for memtable in skip_list vector; do
        for threads in 1 4 16; do
            part "engine $memtable $threads threads"
            timeout 60 "$bin/lsm-demo" bench --benchmarks fillrandom --num 200000 \
                --threads "$threads" --memtablerep "$memtable" --quiet
        done
    done
    # Without the log: what ordering the writes costs by itself (the
    # sequencer's reservations and the published position).
    for threads in 1 2 4 8 16; do
        part "engine no WAL $threads threads"
        timeout 60 "$bin/lsm-demo" bench --benchmarks fillrandom --num 200000 \
            --threads "$threads" --disable_wal --quiet
    done
    # Where a write's time goes (the perf context: its log, memtable insert,
    # waits for the writes before it, the rest), at 1 and 16 threads. The
    # clock readings slow these runs; their rates are not the ones above.
    for threads in 1 16; do
        part "engine perf, no WAL $threads threads"
        timeout 60 "$bin/lsm-demo" bench --benchmarks fillrandom --num 200000 \
            --threads "$threads" --disable_wal --perf_level=3 --quiet
        part "engine perf, log $threads threads"
        timeout 60 "$bin/lsm-demo" bench --benchmarks fillrandom --num 200000 \
            --threads "$threads" --perf_level=3 --quiet
    done
    for threads in 4 16 64; do
        part "engine sync $threads threads"
        timeout 60 "$bin/lsm-demo" bench --benchmarks fillrandom --num 300 --sync \
            --threads "$threads" --quiet
    done
    # The log through a memory map (allow_mmap_writes): writers copy their
    # own records into it, the engine's fastest logged path.
    for threads in 1 2 4 8 16; do
        part "engine mmap log $threads threads"
        timeout 60 "$bin/lsm-demo" bench --benchmarks fillrandom --num 200000 \
            --threads "$threads" --mmap_write=1 --quiet
    done
    # The drained log (one thread at a time appends every record posted so
    # far with one write), and every writer's pwrite into the one log file
    # (no stripes), beside the default, in which writers that meet write
    # into stripe files of their own: what the stripes are worth once many
    # cores write.
    for threads in 1 4 16; do
        part "engine drained log $threads threads"
        timeout 60 "$bin/lsm-demo" bench --benchmarks fillrandom --num 200000 \
            --threads "$threads" --allow_concurrent_log_write=0 --quiet
        part "engine one log file $threads threads"
        timeout 60 "$bin/lsm-demo" bench --benchmarks fillrandom --num 200000 \
            --threads "$threads" --wal_stripes=0 --quiet
    done
    # RocksDB's db_bench on the same unsynced workload, where one is at hand
    # (`apt-get install rocksdb-tools`; or `db_bench` and its libraries in
    # BIN_DIR and BIN_DIR/lib), with vs-rocksdb.sh's RocksDB-only flags.
    rocks=$(command -v "$bin/db_bench" || command -v db_bench || true)
    if [[ -n $rocks ]]; then
        export LD_LIBRARY_PATH=$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        for threads in 1 4 16; do
            for wal in 0 1; do
                part "rocksdb $threads threads disable_wal=$wal"
                db=$(mktemp -d)
                timeout 60 "$rocks" --benchmarks=fillrandom --num=100000 --threads="$threads" \
                    --disable_wal="$wal" --sync=0 --memtablerep=skip_list \
                    --allow_concurrent_memtable_write=1 --compression_type=none \
                    --disable_auto_compactions=1 --max_write_buffer_number=64 \
                    --min_write_buffer_number_to_merge=64 --enable_pipelined_write=0 \
                    --statistics=0 --db="$db" 2>&1 | tr '\r' '\n' | grep -E '^fillrandom'
                rm -rf "$db"
            done
        done
    fi
    part done
} >"$out/engine.log" 2>&1

# The engine's figures against the write path's targets, for the results
# file (the summary can be made again elsewhere from engine.log).
if command -v python3 >/dev/null; then
    python3 "$root/benches/scripts/many-core-summary.py" "$out" >"$out/engine-summary.md"
fi
