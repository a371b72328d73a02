#!/usr/bin/env python3
"""Checks that every signal a GTKWave session (.gtkw) shows exists, with that width, in
the trace it is made for: catches sessions left behind by RTL changes.

usage: check_gtkw.py SESSION.gtkw TRACE.fst     (needs fst2vcd, from the gtkwave package)
Exit status 1 and a list of the missing signals if any is missing."""
import re
import subprocess
import sys


def trace_signals(fst):
    """Full names 'TOP.a.b.sig[msb:lsb]' (or without a range for 1-bit signals)."""
    out = subprocess.run(["fst2vcd", fst], capture_output=True, text=True, check=True).stdout
    names, scope = set(), []
    for line in out.splitlines():
        if line.startswith("$enddefinitions"):
            break
        m = re.match(r"\$scope \w+ (\S+) \$end", line)
        if m:
            scope.append(m.group(1))
            continue
        if line.startswith("$upscope"):
            scope.pop()
            continue
        m = re.match(r"\$var \w+ (\d+) \S+ (\S+)(?: (\[\d+:\d+\]))? \$end", line)
        if m:
            width, name, rng = int(m.group(1)), m.group(2), m.group(3)
            full = ".".join(scope + [name])
            names.add(full + rng if rng else full)
            if width == 1:
                names.add(full)
    return names


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    have = trace_signals(argv[2])
    missing = []
    with open(argv[1]) as f:
        for line in f:
            line = line.strip()
            if line.startswith("TOP.") and line not in have:
                missing.append(line)
    for m in missing:
        print(f"{argv[1]}: {m} is not in {argv[2]}")
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main(sys.argv)
