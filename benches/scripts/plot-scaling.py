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

from svgchart import line_chart

COLOURS = {"lsm-demo": "#1f77b4", "lsm-demo-mmap": "#2ca02c", "rocksdb": "#d62728"}


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
    lines = []
    for engine in sorted({e for (e, _, _) in points}):
        for wal in (True, False):
            pts = [(i, points[(engine, wal, t)]) for i, t in enumerate(threads) if (engine, wal, t) in points]
            if pts:
                label = f"{engine}, {'log unsynced' if wal else 'no log'}"
                lines.append((label, COLOURS.get(engine, "black"), "" if wal else "6 4", pts))
    line_chart(path, threads, lines, "threads (fillrandom, same total writes)", lambda v: f"{v / 1e6:.1f}M")


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
