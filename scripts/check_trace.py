#!/usr/bin/env python3
"""Checks a trace written by `tpusim ... --profile FILE.json` (docs/profiling.md).

usage: check_trace.py TRACE.json [FIRST_US END_US]

The file must be JSON with the fields the Chrome trace-event format and Perfetto need: an
object with "traceEvents" (a list) and "displayTimeUnit"; every event a "ph" and a "pid"; "X"
events name, cat, tid, ts and dur >= 0, and per (pid, tid) track they do not overlap; "C"
events name, ts and numeric args; "M" events name and args; every flow end ("f") has its
start ("s") with the same id, no later. With FIRST_US and END_US every event lies within that
span (the run). Prints a summary; exits 1 with the first problem.
"""
import json
import sys


def fail(msg):
    print("check_trace: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) not in (2, 4):
        fail("usage: check_trace.py TRACE.json [FIRST_US END_US]")
    with open(sys.argv[1]) as f:
        try:
            d = json.load(f)
        except ValueError as e:
            fail("not JSON: %s" % e)
    span = (float(sys.argv[2]), float(sys.argv[3])) if len(sys.argv) == 4 else None
    if not isinstance(d, dict) or not isinstance(d.get("traceEvents"), list) or "displayTimeUnit" not in d:
        fail("no traceEvents list or displayTimeUnit")
    tracks = {}
    flows = {}
    counts = {}
    eps = 1e-3  # timestamps are printed to 0.1 ns
    for i, e in enumerate(d["traceEvents"]):
        ph = e.get("ph")
        if ph is None or "pid" not in e:
            fail("event %d has no ph or pid: %r" % (i, e))
        counts[ph] = counts.get(ph, 0) + 1
        if ph == "X":
            for k in ("name", "cat", "tid", "ts", "dur"):
                if k not in e:
                    fail("X event %d has no %s: %r" % (i, k, e))
            if e["dur"] < 0:
                fail("X event %d has a negative duration" % i)
            tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"], i))
        elif ph == "C":
            if "name" not in e or "ts" not in e or not all(isinstance(v, (int, float)) for v in e.get("args", {}).values()):
                fail("C event %d malformed: %r" % (i, e))
        elif ph == "M":
            if "name" not in e or "args" not in e:
                fail("M event %d malformed: %r" % (i, e))
        elif ph in ("s", "f"):
            if "id" not in e or "ts" not in e or "tid" not in e:
                fail("flow event %d malformed: %r" % (i, e))
            flows.setdefault(e["id"], {})[ph] = e["ts"]
        else:
            fail("event %d has an unexpected ph %r" % (i, ph))
        if span and "ts" in e:
            end = e["ts"] + e.get("dur", 0)
            if e["ts"] < span[0] - eps or end > span[1] + eps:
                fail("event %d [%g, %g] outside the run [%g, %g]" % (i, e["ts"], end, span[0], span[1]))
    for key, sl in tracks.items():
        sl.sort()
        for a, b in zip(sl, sl[1:]):
            if b[0] < a[1] - eps:
                fail("slices overlap on pid %s tid %s: events %d and %d" % (key[0], key[1], a[2], b[2]))
    for fid, f in flows.items():
        if "s" not in f or "f" not in f or f["f"] < f["s"]:
            fail("flow %s incomplete or backwards: %r" % (fid, f))
    print("check_trace: ok, %d events (%s), %d tracks, %d flows" % (
        len(d["traceEvents"]), ", ".join("%s %d" % kv for kv in sorted(counts.items())), len(tracks), len(flows)))


main()
