#!/usr/bin/env python3
"""The engine's scaling from a many-core.sh run, against the write path's
targets (issue #22): one table per configuration, writes per second at
each thread count, and the ratios the targets name.

Usage: benches/scripts/many-core-summary.py OUT_DIR   (reads OUT_DIR/engine.log)

many-core.sh writes one part per run, headed `== NAME (at N s)`, with
`lsm-demo bench`'s (or db_bench's) result line and, for ours, the lines
under it: how long all threads ran together (`threads: the first done at
X s of Y s`), how the writers' waits for one another ended and how often
their reservations lost a race (`sequencer waits: ...`), and for the runs
with `--perf_level`, named `engine perf, ...`, where the writes' time went
(`perf context (all threads): ...`, shown per write). The targets: 16
threads at 8x one without the log and 5x with it unsynced, and 1.5x
RocksDB's db_bench at 16 threads.
Prints Markdown, for the results file. `bash .ci/run lint` checks it
against testdata/many-core (regenerate engine-summary.md there when the
output is meant to change).
"""

import re
import sys
from collections import defaultdict

PART = re.compile(r"^== (?P<name>.+?) \(at \d+ s\)$")
RESULT = re.compile(r"^fillrandom\s+:.*?(?P<rate>\d+) ops/sec .*? (?P<ops>\d+) operations")
PERF = re.compile(r"perf context \(all threads\): (?P<counts>.*)$")
FIRST_DONE = re.compile(r"threads: the first done at (?P<first>[\d.]+) s of (?P<all>[\d.]+) s")
WAITS = re.compile(
    r"sequencer waits: (?P<spun>\d+) ended spinning, (?P<yielded>\d+) yielding, (?P<slept>\d+) asleep"
    r"(; (?P<retried>\d+) reservations retried)?"
)
ENGINE = re.compile(r"^engine (?P<config>.+?) (?P<threads>\d+) threads$")
ROCKSDB = re.compile(r"^rocksdb (?P<threads>\d+) threads disable_wal=(?P<off>[01])$")


def parse(lines):
    """{configuration: {threads: run}}, a run being the part's figures."""
    runs = defaultdict(dict)
    current = None
    for line in lines:
        line = line.rstrip("\n")
        part = PART.match(line)
        if part:
            name = part.group("name")
            engine, rocks = ENGINE.match(name), ROCKSDB.match(name)
            if engine:
                current = runs[engine.group("config")].setdefault(
                    int(engine.group("threads")), {}
                )
            elif rocks:
                config = "RocksDB, " + ("no log" if rocks.group("off") == "1" else "log")
                current = runs[config].setdefault(int(rocks.group("threads")), {})
            else:
                current = None
            continue
        if current is None:
            continue
        result = RESULT.match(line)
        if result and "rate" not in current:
            current["rate"] = int(result.group("rate"))
            current["ops"] = int(result.group("ops"))
        perf = PERF.search(line)
        if perf:
            pairs = (p.split(" = ") for p in perf.group("counts").split(", ") if " = " in p)
            current["perf"] = {name: int(value) for name, value in pairs}
        done = FIRST_DONE.search(line)
        if done:
            current["together"] = float(done.group("first")) / float(done.group("all"))
        waits = WAITS.search(line)
        if waits:
            current["waits"] = {k: int(v) for k, v in waits.groupdict().items() if v is not None}
    return runs


# many-core.sh's part names, as the tables show them.
LABELS = {
    "no WAL": "ours, no log",
    "skip_list": "ours, log (stripes)",
    "vector": "ours, vector memtable, log",
    "mmap log": "ours, mapped log",
    "one log file": "ours, log in one file",
    "drained log": "ours, drained log",
    "sync": "ours, synced",
}


def label(config):
    return LABELS.get(config, config)


def timed(config):
    """Runs with the perf context on: slowed by their clock readings."""
    return config.startswith("perf, ")


# The perf context's parts of a write, as the table shows them; "others"
# is the time waiting for other writers, "rest" what else the
# pre-and-post time holds (reserving without the log, finishing).
PARTS = [
    ("log", "write_wal_time"),
    ("memtable", "write_memtable_time"),
    ("others", "write_thread_wait_nanos"),
    ("stalls", "write_delay_time"),
    ("switches", "write_scheduling_flushes_compactions_time"),
]


def perf_table(runs):
    rows = []
    for config in sorted(runs):
        for threads, run in sorted(runs[config].items()):
            perf, ops = run.get("perf"), run.get("ops")
            if not perf or not ops:
                continue
            cells = [perf.get(name, 0) / ops for _, name in PARTS]
            rest = perf.get("write_pre_and_post_process_time", 0) - perf.get("write_thread_wait_nanos", 0)
            cells.append(max(rest, 0) / ops)
            rows.append(f"| {config[len('perf, '):]} | {threads} | " + " | ".join(f"{c:,.0f}" for c in cells) + " |")
    if not rows:
        return []
    heads = [head for head, _ in PARTS] + ["rest"]
    return [
        "",
        "Where the writers' time went, in nanoseconds per write (the perf context, whose clock readings slow these runs):",
        "",
        "| ours | threads | " + " | ".join(heads) + " |",
        "|---|---:|" + "---:|" * len(heads),
    ] + rows


def rate(runs, config, threads):
    return runs.get(config, {}).get(threads, {}).get("rate")


def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"


def summary(runs):
    out = []
    counts = sorted({t for c, by in runs.items() if not timed(c) for t in by})
    names = [f"{t} thread" if t == 1 else f"{t} threads" for t in counts]
    out.append("| configuration | " + " | ".join(names) + " | most / 1 |")
    out.append("|---|" + "---:|" * (len(counts) + 1))
    for config in sorted(c for c in runs if not timed(c)):
        by = runs[config]
        cells = [f"{by[t]['rate']:,}" if t in by and "rate" in by[t] else "" for t in counts]
        most = max((t for t in by if "rate" in by[t]), default=None)
        out.append(
            f"| {label(config)} | " + " | ".join(cells) + f" | {ratio(rate(runs, config, most), rate(runs, config, 1))} |"
        )
    out.append("")
    out.append("| target | measured | target ratio |")
    out.append("|---|---:|---:|")
    # RocksDB beside us at the most threads both ran (16 on many-core.sh's
    # machine; its --num differs from ours, the rates do not depend on it).
    both = [t for t in counts if rate(runs, "skip_list", t) and rate(runs, "RocksDB, log", t)]
    most = max(both, default=16)
    checks = [
        ("16 / 1 threads, no log", rate(runs, "no WAL", 16), rate(runs, "no WAL", 1), "8x"),
        ("16 / 1 threads, log unsynced", rate(runs, "skip_list", 16), rate(runs, "skip_list", 1), "5x"),
        (f"ours / RocksDB, {most} threads, no log", rate(runs, "no WAL", most), rate(runs, "RocksDB, no log", most), "1.5x at 16"),
        (f"ours / RocksDB, {most} threads, log", rate(runs, "skip_list", most), rate(runs, "RocksDB, log", most), "1.5x at 16"),
    ]
    for name, a, b, target in checks:
        out.append(f"| {name} | {ratio(a, b)} | {target} |")
    out.append("")
    out.append(
        "| ours | threads | all threads together | waits that ended spinning, yielding, asleep | reservations retried |"
    )
    out.append("|---|---:|---:|---|---:|")
    for config in sorted(c for c in runs if not timed(c)):
        for threads, run in sorted(runs[config].items()):
            if "together" not in run and "waits" not in run:
                continue
            together = f"{run['together']:.0%}" if "together" in run else ""
            waits = run.get("waits")
            waited = f"{waits['spun']:,}, {waits['yielded']:,}, {waits['slept']:,}" if waits else ""
            retried = f"{waits['retried']:,}" if waits and "retried" in waits else ""
            out.append(f"| {label(config)} | {threads} | {together} | {waited} | {retried} |")
    out.extend(perf_table(runs))
    return "\n".join(out)


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(f"{argv[1]}/engine.log", encoding="utf-8", errors="replace") as log:
        runs = parse(log)
    if not runs:
        print(f"no engine runs in {argv[1]}/engine.log", file=sys.stderr)
        return 1
    print(summary(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
