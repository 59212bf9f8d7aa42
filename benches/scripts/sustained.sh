#!/usr/bin/env bash
# Sustained fills, where compaction sets the pace: lsm-demo bench and
# RocksDB's db_bench on the same flags (4 MiB memtables, no compression,
# compactions on), alternating, at growing database sizes; then overwrite
# and readrandom on the largest filled database.
#
#   bash benches/scripts/sustained.sh [OUT_DIR]
#
# Environment: ROUNDS (default 3), SIZES (keys, default "1500000 3000000
# 6000000"), CONFIGS (default "defaults same small-base"), AFTER (1: also
# overwrite + readrandom at the largest size, default 1), READS (default
# 1000000), LSM_DEMO (a built binary; default: build it), DB_BENCH (default:
# db_bench on PATH).
#
# Configurations, each given to both programs:
#   defaults    nothing more: each engine's own defaults
#   same        db_bench 7.8.3's defaults spelled out (256 MiB base level,
#               64 MiB files, static level targets)
#   small-base  16 MiB base level, 4 MiB files, dynamic level targets (what
#               RocksDB's tuning guide advises for 4 MiB memtables, and what
#               lsm-demo derives by default)
#
# Writes OUT_DIR/sustained.csv (round,config,engine,keys,benchmark,ops,wamp)
# and OUT_DIR/sustained.svg (plot-sustained.py), and prints the medians.
set -euo pipefail
cd "$(dirname "$0")/../.."

out=${1:-target/sustained}
rounds=${ROUNDS:-3}
sizes=${SIZES:-"1500000 3000000 6000000"}
configs=${CONFIGS:-"defaults same small-base"}
after=${AFTER:-1}
reads=${READS:-1000000}
mkdir -p "$out"

ours=${LSM_DEMO:-}
if [ -z "$ours" ]; then
  cargo build --release -q -p lsm-demo
  ours=target/release/lsm-demo
fi
rocks=${DB_BENCH:-$(command -v db_bench || true)}
[ -n "$rocks" ] || { echo "db_bench not found (apt-get install rocksdb-tools)" >&2; exit 3; }

key_size=16 value_size=100
common="--write_buffer_size=4194304 --key_size=$key_size --value_size=$value_size --threads=1 --seed=1"
flags() {
  case $1 in
    defaults) echo "" ;;
    same) echo "--max_bytes_for_level_base=268435456 --target_file_size_base=67108864 --level_compaction_dynamic_level_bytes=0" ;;
    small-base) echo "--max_bytes_for_level_base=16777216 --target_file_size_base=4194304 --level_compaction_dynamic_level_bytes=1" ;;
    *) echo "unknown config $1" >&2; exit 2 ;;
  esac
}

# Every result line of one program's output, as CSV rows; the write
# amplification of the fill: ours prints it, RocksDB's comes from its stats:
# (compaction and flush writes + WAL bytes, in GiB with two decimals) over
# the keys and values written. Not over its "ingest", which counts each
# write batch's 15 bytes of framing too and would flatter it by 13%.
parse_ours() { # round config keys < output
  awk -v r="$1" -v c="$2" -v k="$3" '
    /^(fillrandom|overwrite|readrandom) / { name=$1; ops[name]=$5; order[++n]=name }
    /write amplification/ && !w { w=$3; sub(":", "", w) }
    END { for (i=1;i<=n;i++) { nm=order[i]; print r","c",lsm-demo,"k","nm","ops[nm]","(nm=="fillrandom"?w:"") } }'
}
parse_rocks() {
  awk -v r="$1" -v c="$2" -v k="$3" -v kv=$((key_size + value_size)) '
    /^(fillrandom|overwrite|readrandom) / { name=$1; ops[name]=$5; order[++n]=name }
    /^Cumulative compaction:/ && !cw { cw=$3 }
    /^Cumulative WAL:/ && !wal { for (i=1;i<=NF;i++) if ($i=="written:") wal=$(i+1) }
    END { user=k*kv/1073741824; w=(user>0&&cw!="")?sprintf("%.2f",(cw+wal)/user):"";
          for (i=1;i<=n;i++) { nm=order[i]; print r","c",rocksdb,"k","nm","ops[nm]","(nm=="fillrandom"?w:"") } }'
}

run_pair() { # round config keys benchmarks
  local r=$1 c=$2 k=$3 b=$4 extra dir
  extra=$(flags "$c")
  dir=$(mktemp -d)
  # shellcheck disable=SC2086
  "$ours" bench --benchmarks="$b" --num="$k" --reads="$reads" --db="$dir/ours" --quiet $common $extra \
    | parse_ours "$r" "$c" "$k" >>"$csv"
  # The fill's stats are printed right after it (before overwrite adds to them).
  # shellcheck disable=SC2086
  "$rocks" --benchmarks="${b/fillrandom/fillrandom,stats}" --num="$k" --reads="$reads" --db="$dir/rocks" \
    --compression_type=none --statistics=0 $common $extra 2>/dev/null \
    | parse_rocks "$r" "$c" "$k" >>"$csv"
  rm -rf "$dir"
}

csv="$out/sustained.csv"
echo "round,config,engine,keys,benchmark,ops,wamp" >"$csv"
largest=$(echo "$sizes" | tr ' ' '\n' | sort -n | tail -1)
for r in $(seq 1 "$rounds"); do
  for c in $configs; do
    for k in $sizes; do
      if [ "$after" = 1 ] && [ "$k" = "$largest" ]; then
        run_pair "$r" "$c" "$k" fillrandom,overwrite,readrandom
      else
        run_pair "$r" "$c" "$k" fillrandom
      fi
    done
  done
done
python3 benches/scripts/plot-sustained.py "$csv" "$out/sustained.svg"
