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

COLOURS = {"lsm-demo": "#1f77b4", "rocksdb": "#d62728"}
DASHES = {"defaults": "", "same": ' stroke-dasharray="6 4"', "small-base": ' stroke-dasharray="2 3"'}
W, H, PAD = 680, 420, 60


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
    top = max(fills.values()) * 1.1
    x = lambda i: PAD + i * (W - 2 * PAD) / max(1, len(sizes) - 1)
    y = lambda v: H - PAD - v / top * (H - 2 * PAD)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
        f'<line x1="{PAD}" y1="{H - PAD}" x2="{W - PAD}" y2="{H - PAD}" stroke="black"/>',
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{H - PAD}" stroke="black"/>',
        f'<text x="{W / 2}" y="{H - 15}" text-anchor="middle">keys written by fillrandom (16-byte keys, 100-byte values, 4 MiB memtables)</text>',
        f'<text x="15" y="{H / 2}" transform="rotate(-90 15 {H / 2})" text-anchor="middle">ops/s</text>',
    ]
    for i, k in enumerate(sizes):
        parts.append(f'<text x="{x(i)}" y="{H - PAD + 18}" text-anchor="middle">{k / 1e6:g} M</text>')
    for t in range(5):
        v = top * t / 4
        parts.append(f'<text x="{PAD - 6}" y="{y(v) + 4}" text-anchor="end">{v / 1e3:.0f}k</text>')
    legend = 0
    for c in sorted({c for (c, _, _) in fills}):
        for e in ("lsm-demo", "rocksdb"):
            line = [(i, fills[(c, e, k)]) for i, k in enumerate(sizes) if (c, e, k) in fills]
            if not line:
                continue
            colour, dash = COLOURS.get(e, "black"), DASHES.get(c, "")
            coords = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in line)
            parts.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
            ly = PAD + 16 * legend
            parts.append(f'<line x1="{W - PAD - 170}" y1="{ly}" x2="{W - PAD - 145}" y2="{ly}" stroke="{colour}" stroke-width="2"{dash}/>')
            parts.append(f'<text x="{W - PAD - 140}" y="{ly + 4}">{e}, {c}</text>')
            legend += 1
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def main():
    ops, wamp, runs = load(sys.argv[1])
    tables(ops, wamp, runs)
    if len(sys.argv) > 2:
        svg(ops, sys.argv[2])


if __name__ == "__main__":
    main()
