#!/usr/bin/env python3
"""Lengths of the C and C++ functions in csim/ and fw/ (docs/architecture.md, "Code size").

A function is a definition that starts at column 0 (the project's style: the return type and
name on one line, its body's opening brace on that line or a later one) and ends at the first
column-0 closing brace after it. Its length is its lines from the name to the closing brace.

usage: scripts/function_lengths.py [--top N] [--max LINES] [DIR ...]   (from the project root)
  --top N      print the N longest (default 10)
  --max LINES  exit 1 listing every function longer than LINES (make test: 120)
"""
import argparse
import os
import re
import sys

# a definition's first line: not a statement, a preprocessor line, a comment, a declaration
# ending in ';', a struct/enum/typedef or a label; an identifier followed by '('
HEAD = re.compile(r"^(?!\s)(?!#)(?!/[/*])(?!typedef\b)(?!struct\b[^(]*[{;]?$)(?!enum\b)(?!union\b)"
                  r"[A-Za-z_][\w\s\*,:<>&~\[\]]*?\b([A-Za-z_]\w*(?:::~?\w+)?)\s*\(")


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = HEAD.match(lines[i])
        if not m or lines[i].rstrip().endswith(";"):
            i += 1
            continue
        # the signature runs until a '{' (a definition) or a ';' (a declaration)
        j = i
        while j < len(lines) and "{" not in lines[j] and not lines[j].rstrip().endswith(";"):
            j += 1
        if j >= len(lines) or "{" not in lines[j] or (lines[j].rstrip().endswith(";") and "}" in lines[j]):
            i = j + 1
            continue
        if lines[j].rstrip().endswith("}") and lines[j].count("{") == lines[j].count("}"):
            out.append((1 + j - i, path, i + 1, m.group(1)))  # a body on one line
            i = j + 1
            continue
        k = j + 1
        while k < len(lines) and not lines[k].startswith("}"):
            k += 1
        if k < len(lines):
            out.append((k - i + 1, path, i + 1, m.group(1)))
        i = k + 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--max", type=int, default=0)
    ap.add_argument("dirs", nargs="*", default=["csim", "fw"])
    a = ap.parse_args()
    found = []
    for d in a.dirs:
        for dirpath, _, names in os.walk(d):
            for name in sorted(names):
                if name.endswith((".c", ".cpp", ".h", ".hpp")):
                    found += functions(os.path.join(dirpath, name))
    found.sort(key=lambda t: (-t[0], t[1], t[2]))
    if a.max:
        long = [t for t in found if t[0] > a.max]
        for n, path, line, name in long:
            print(f"{path}:{line}: {name} is {n} lines (at most {a.max}: split it)", file=sys.stderr)
        if long:
            return 1
        print(f"function lengths: {len(found)} functions, none over {a.max} lines")
        return 0
    for n, path, line, name in found[: a.top]:
        print(f"{n:5d}  {path}:{line}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
