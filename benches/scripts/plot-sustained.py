#!/usr/bin/env python3
"""Medians of sustained.sh's CSV, printed as tables (fill rate and write
amplification against database size, and the benchmarks after the fill)
and drawn as an SVG chart of fill ops/s against keys, one line per engine
and configuration, with nothing beyond the standard library.

    python3 benches/scripts/plot-sustained.py sustained.csv sustained.svg
"""
import csv
import statistics
import sys
from collections import defaultdict

from svgchart import line_chart

COLOURS = {"lsm-demo": "#1f77b4", "rocksdb": "#d62728"}
DASHES = {"defaults": "", "same": "6 4", "small-base": "2 3"}


def load(path):
    ops, wamp = defaultdict(list), defaultdict(list)
    with open(path) as f:
        for row in csv.DictReader(f):
            key = (row["config"], row["engine"], int(row["keys"]), row["benchmark"])
            if row["ops"]:
                ops[key].append(float(row["ops"]))
            if row["wamp"]:
                wamp[key].append(float(row["wamp"]))
    med = lambda d: {k: statistics.median(v) for k, v in d.items()}
    return med(ops), med(wamp), {k: len(v) for k, v in ops.items()}


def tables(ops, wamp, runs):
    configs = sorted({c for (c, _, _, _) in ops})
    sizes = sorted({k for (_, _, k, b) in ops if b == "fillrandom"})
    print("| config | keys | RocksDB ops/s | lsm-demo ops/s | ratio | RocksDB W-Amp | lsm-demo W-Amp | runs |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for c in configs:
        for k in sizes:
            r, o = ops.get((c, "rocksdb", k, "fillrandom")), ops.get((c, "lsm-demo", k, "fillrandom"))
            if not (r and o):
                continue
            rw, ow = wamp.get((c, "rocksdb", k, "fillrandom")), wamp.get((c, "lsm-demo", k, "fillrandom"))
            fmt = lambda v: f"{v:.2f}" if v else "-"
            n = runs.get((c, "lsm-demo", k, "fillrandom"), 0)
            print(f"| {c} | {k / 1e6:g} M | {r:,.0f} | {o:,.0f} | {o / r:.2f} | {fmt(rw)} | {fmt(ow)} | {n} |")
    print()
    print("| config | engine | largest / smallest fill rate |")
    print("|---|---|---:|")
    for c in configs:
        for e in ("rocksdb", "lsm-demo"):
            lo, hi = ops.get((c, e, sizes[0], "fillrandom")), ops.get((c, e, sizes[-1], "fillrandom"))
            if lo and hi and len(sizes) > 1:
                print(f"| {c} | {e} | {hi / lo:.2f} |")
    after = sorted({(c, k, b) for (c, _, k, b) in ops if b != "fillrandom"})
    if after:
        print()
        print("| config | keys | benchmark | RocksDB ops/s | lsm-demo ops/s | ratio |")
        print("|---|---:|---|---:|---:|---:|")
        for c, k, b in after:
            r, o = ops.get((c, "rocksdb", k, b)), ops.get((c, "lsm-demo", k, b))
            if r and o:
                print(f"| {c} | {k / 1e6:g} M | {b} | {r:,.0f} | {o:,.0f} | {o / r:.2f} |")


def svg(ops, path):
    fills = {(c, e, k): v for (c, e, k, b), v in ops.items() if b == "fillrandom"}
    sizes = sorted({k for (_, _, k) in fills})
    lines = []
    for c in sorted({c for (c, _, _) in fills}):
        for e in ("lsm-demo", "rocksdb"):
            pts = [(i, fills[(c, e, k)]) for i, k in enumerate(sizes) if (c, e, k) in fills]
            if pts:
                lines.append((f"{e}, {c}", COLOURS.get(e, "black"), DASHES.get(c, ""), pts))
    xlabel = "keys written by fillrandom (16-byte keys, 100-byte values, 4 MiB memtables)"
    line_chart(path, [f"{k / 1e6:g} M" for k in sizes], lines, xlabel, lambda v: f"{v / 1e3:.0f}k")


def main():
    ops, wamp, runs = load(sys.argv[1])
    tables(ops, wamp, runs)
    if len(sys.argv) > 2:
        svg(ops, sys.argv[2])


if __name__ == "__main__":
    main()
