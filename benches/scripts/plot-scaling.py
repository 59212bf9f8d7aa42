#!/usr/bin/env python3
"""Medians of thread-scaling.sh's CSV, printed as a table and drawn as an
SVG line chart (ops/s against threads, one line per engine and log
setting), with nothing beyond the standard library.

    python3 benches/scripts/plot-scaling.py scaling.csv scaling.svg
"""
import csv
import statistics
import sys
from collections import defaultdict

COLOURS = {"lsm-demo": "#1f77b4", "rocksdb": "#d62728"}
W, H, PAD = 640, 400, 60


def medians(path):
    runs = defaultdict(list)
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["ops"]:
                key = (row["engine"], row["wal"] == "1", int(row["threads"]))
                runs[key].append(int(row["ops"]))
    return {k: statistics.median(v) for k, v in runs.items()}


def svg(points, path):
    threads = sorted({t for (_, _, t) in points})
    top = max(points.values()) * 1.1
    x = lambda i: PAD + i * (W - 2 * PAD) / max(1, len(threads) - 1)
    y = lambda v: H - PAD - v / top * (H - 2 * PAD)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
        f'<line x1="{PAD}" y1="{H - PAD}" x2="{W - PAD}" y2="{H - PAD}" stroke="black"/>',
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{H - PAD}" stroke="black"/>',
        f'<text x="{W / 2}" y="{H - 15}" text-anchor="middle">threads (fillrandom, same total writes)</text>',
        f'<text x="15" y="{H / 2}" transform="rotate(-90 15 {H / 2})" text-anchor="middle">ops/s</text>',
    ]
    for i, t in enumerate(threads):
        parts.append(f'<text x="{x(i)}" y="{H - PAD + 18}" text-anchor="middle">{t}</text>')
    for k in range(5):
        v = top * k / 4
        parts.append(f'<text x="{PAD - 6}" y="{y(v) + 4}" text-anchor="end">{v / 1e6:.1f}M</text>')
    legend = 0
    for engine in sorted({e for (e, _, _) in points}):
        for wal in (True, False):
            line = [(i, points[(engine, wal, t)]) for i, t in enumerate(threads) if (engine, wal, t) in points]
            if not line:
                continue
            dash = "" if wal else ' stroke-dasharray="6 4"'
            coords = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in line)
            colour = COLOURS.get(engine, "black")
            parts.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
            label = f"{engine}, {'log unsynced' if wal else 'no log'}"
            ly = PAD + 16 * legend
            parts.append(f'<line x1="{W - PAD - 150}" y1="{ly}" x2="{W - PAD - 125}" y2="{ly}" stroke="{colour}" stroke-width="2"{dash}/>')
            parts.append(f'<text x="{W - PAD - 120}" y="{ly + 4}">{label}</text>')
            legend += 1
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def main():
    points = medians(sys.argv[1])
    print("| engine | log | " + " | ".join(f"{t} threads" for t in sorted({t for (_, _, t) in points})) + " |")
    for engine in sorted({e for (e, _, _) in points}):
        for wal in (True, False):
            row = [points.get((engine, wal, t)) for t in sorted({t for (_, _, t) in points})]
            if any(row):
                cells = " | ".join(f"{v / 1e3:,.0f} k" if v else "" for v in row)
                print(f"| {engine} | {'unsynced' if wal else 'off'} | {cells} |")
    if len(sys.argv) > 2:
        svg(points, sys.argv[2])


if __name__ == "__main__":
    main()
