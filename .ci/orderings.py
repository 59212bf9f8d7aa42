#!/usr/bin/env python3
"""Lists the atomic operations whose ordering has no stated reason.

Usage: orderings.py [FILE.rs ...]   (default: every tracked .rs file)

The developers' guide asks for a one-line reason beside every atomic
ordering weaker than SeqCst. A use of `Relaxed`, `Acquire`, `Release` or
`AcqRel` passes when a comment naming one of them (`// Relaxed: ...`)
sits within the WINDOW lines above it, on its line or on the line just
below, or earlier in the enclosing function or in its doc comment (one
reason for several accesses, or the function's documented ordering).
Imports and comments themselves are skipped. A heuristic: it cannot tell
a good reason from a bad one, only that one was written down.

Prints `path:line: code` for each use without one and exits 1 if any.
"""

import re
import subprocess
import sys

WINDOW = 12
ORDERING = re.compile(r"\b(Relaxed|Acquire|Release|AcqRel)\b")
FN = re.compile(r"^(\s*)(pub(\([^)]*\))?\s+)?((const|unsafe|async|extern \S+)\s+)*fn\s")


def comment_of(line):
    """The comment part of a line of Rust, or '' (strings are not parsed:
    a `//` inside a string literal counts, which only makes it lenient)."""
    at = line.find("//")
    return line[at:] if at >= 0 else ""


def unexplained(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        code = line.split("//", 1)[0]
        stripped = code.strip()
        if not ORDERING.search(code) or stripped.startswith(("use ", "Ordering::{")):
            continue
        near = lines[max(0, i - WINDOW) : i + 2]
        if not any(ORDERING.search(comment_of(n)) for n in near + enclosing(lines, i)):
            yield i + 1, line.strip()


def enclosing(lines, i):
    """The lines of the function around line `i`, from its doc comment to
    line `i` (none outside a function)."""
    indent = len(lines[i]) - len(lines[i].lstrip())
    for start in range(i, -1, -1):
        header = FN.match(lines[start])
        if header and len(header.group(1)) < indent:
            while start > 0 and lines[start - 1].strip().startswith(("///", "#[")):
                start -= 1
            return lines[start:i]
    return []


def main(paths):
    if not paths:
        out = subprocess.run(
            ["git", "ls-files", "*.rs"], capture_output=True, text=True, check=True
        )
        paths = out.stdout.split()
    missing = 0
    for path in paths:
        for number, code in unexplained(path):
            print(f"{path}:{number}: {code}")
            missing += 1
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
