#!/usr/bin/env bash
# Write-path throughput of the engine: 1, 2, 8 threads x both memtables x WAL on/off.
# Build first: cargo build --release -p lsm-demo
B=${B:-target/release/lsm-demo}
printf '| memtable | WAL | threads | ops/s | mean group size |\n|---|---|---:|---:|---:|\n'
for rep in skip_list vector; do
  for wal in 1 0; do
    for t in 1 2 8; do
      n=$((400000 / t))
      out=$($B bench --benchmarks=fillrandom --num=$n --threads=$t --memtablerep=$rep --disable_wal=$((1-wal)) --seed=1722808058 --quiet)
      ops=$(echo "$out" | awk '$1=="fillrandom" {print $5}')
      g=$(echo "$out" | sed -n 's/.*write group: \([0-9.]*\) members.*/\1/p')
      printf '| %s | %s | %d | %s | %s |\n' $rep $([ $wal = 1 ] && echo on || echo off) $t "$ops" "$g"
    done
  done
done
