#!/usr/bin/env bash
# Instructions per operation, ours against RocksDB's db_bench, under
# callgrind: deterministic counts (whatever else loads the machine) for the
# scenarios of benches/scripts/vs-rocksdb.sh, with the same flags, plus the
# functions where each program spends them. Feeds benches/PROFILES.md.
#
# Usage (from the workspace root): benches/scripts/callgrind-vs-rocksdb.sh [SCENARIO...]
# Needs valgrind and db_bench (apt-get install -y valgrind rocksdb-tools).
set -euo pipefail
out=${OUT:-target/profiles}
mkdir -p "$out"
cargo build --release -q -p lsm-demo
ours=$PWD/target/release/lsm-demo
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
rocks_only="--compression_type=none --disable_auto_compactions=1 --max_write_buffer_number=64 --min_write_buffer_number_to_merge=64 --enable_pipelined_write=0 --statistics=0"
# name | benchmarks | ops in total | flags for both | RocksDB only | ours only
scenarios=$(cat <<'S'
fillseq-skiplist-t1|fillseq|100000|--threads=1 --num=100000 --memtablerep=skip_list --allow_concurrent_memtable_write=1 --disable_wal=1||
fillrandom-skiplist-t1|fillrandom|100000|--threads=1 --num=100000 --memtablerep=skip_list --allow_concurrent_memtable_write=1 --disable_wal=1||
fillrandom-skiplist-t2|fillrandom|100000|--threads=2 --num=50000 --memtablerep=skip_list --allow_concurrent_memtable_write=1 --disable_wal=1||
fillrandom-vector-t2-cc|fillrandom|100000|--threads=2 --num=50000 --memtablerep=vector --disable_wal=1|--allow_concurrent_memtable_write=0|--allow_concurrent_memtable_write=1 --unordered_write=1
fillrandom-wal-t2|fillrandom|100000|--threads=2 --num=50000 --memtablerep=skip_list --allow_concurrent_memtable_write=1 --disable_wal=0 --sync=0||
fillsync-wal-t8|fillrandom|8000|--threads=8 --num=1000 --memtablerep=skip_list --allow_concurrent_memtable_write=1 --disable_wal=0 --sync=1||
S
)
printf '%-24s %12s %12s %8s\n' scenario rocksdb_ir/op ours_ir/op ratio
while IFS='|' read -r name benches ops flags rextra oextra; do
  [ -n "$name" ] || continue
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi
  for who in rocksdb ours; do
    rm -rf "$work/db"; mkdir -p "$work/db"
    # Only the write call is counted (the key and value generation of each
    # program, opening, flushing and closing are not): RocksDB's
    # `DBImpl::Write` (db_bench itself is stripped) and our `DB::write_batch`,
    # with everything they call, on whichever thread runs them.
    if [ "$who" = rocksdb ]; then
      cmd=(db_bench); extra=$rextra; toggle='rocksdb::DBImpl::Write(*'
    else
      cmd=("$ours" bench); extra=$oextra; toggle='lsm_demo::db::DB::write_batch*'
    fi
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --toggle-collect="$toggle" --callgrind-out-file="$out/$name.$who.cg" \
      "${cmd[@]}" --benchmarks="$benches" $flags $extra --db="$work/db" --seed=1722808058 \
      $([ "$who" = rocksdb ] && echo "$rocks_only") >"$out/$name.$who.log" 2>&1
  done
  r=$(grep -m1 'Collected' "$out/$name.rocksdb.log" | awk '{print $NF}')
  o=$(grep -m1 'Collected' "$out/$name.ours.log" | awk '{print $NF}')
  awk -v n="$name" -v r="$r" -v o="$o" -v ops="$ops" \
    'BEGIN { printf "%-24s %12.0f %12.0f %8.2f\n", n, r/ops, o/ops, r/o }'
done <<< "$scenarios"
echo "callgrind outputs: $out/*.cg (callgrind_annotate FILE | head -40)"
