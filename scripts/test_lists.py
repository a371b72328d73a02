#!/usr/bin/env python3
"""Where every Criterion test went: lists each test of the test binaries in OLD_DIR (binary,
suite, test, from `BIN --list`) and finds it in NEW_DIR by its test name. Prints one line per old
test, `old-binary suite::test -> new-binary suite::test`, then the counts, and exits 1 if a test
of OLD_DIR is in none of NEW_DIR's binaries, or a name matches two places (say which instead).
For moving and renaming suites (docs/testing.md): keep the old binaries, build the new ones,
compare.

usage: scripts/test_lists.py OLD_DIR NEW_DIR
"""
import os
import re
import subprocess
import sys

SUITE = re.compile(r"^(\S+): (\d+) tests?$")
TEST = re.compile(r"^[├└]── (\S+)$")


def listing(directory):
    """{(binary, suite, test)} of every test_* binary in directory."""
    tests = set()
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if not name.startswith("test_") or not os.access(path, os.X_OK) or not os.path.isfile(path):
            continue
        out = subprocess.run([path, "--list"], capture_output=True, text=True, check=False)
        suite = None
        for line in (out.stdout + out.stderr).splitlines():
            if m := SUITE.match(line):
                suite = m.group(1)
            elif (m := TEST.match(line)) and suite:
                tests.add((name, suite, m.group(1)))
    return tests


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    old, new = listing(argv[1]), listing(argv[2])
    by_name = {}
    for b, s, t in new:
        by_name.setdefault(t, []).append((b, s))
    # a test that kept its binary and suite claims that place, so a namesake elsewhere does not
    claimed = {(b, s, t) for b, s, t in old if (b, s, t) in new}
    missing = ambiguous = 0
    for b, s, t in sorted(old):
        places = by_name.get(t, [])
        if (b, s, t) in claimed:
            places = [(b, s)]
        else:
            places = [p for p in places if (p[0], p[1], t) not in claimed]
        if not places:
            print(f"{b} {s}::{t} -> MISSING")
            missing += 1
        elif len(places) > 1:
            print(f"{b} {s}::{t} -> one of " + ", ".join(f"{nb} {ns}::{t}" for nb, ns in sorted(places)))
            ambiguous += 1
        else:
            nb, ns = places[0]
            print(f"{b} {s}::{t} -> {nb} {ns}::{t}")
    print(f"old: {len(old)} tests in {len({x[0] for x in old})} binaries; "
          f"new: {len(new)} tests in {len({x[0] for x in new})} binaries; {missing} missing, {ambiguous} ambiguous")
    return 1 if missing or ambiguous else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
