#!/usr/bin/env bash
# Renders a GTKWave session to a PNG under a virtual X server (for README and docs).
# usage: scripts/screenshot.sh TRACE.fst SESSION.gtkw OUT.png
set -euo pipefail
fst=$1 gtkw=$2 out=$3
for tool in xvfb-run gtkwave import; do
  command -v "$tool" >/dev/null || { echo "error: '$tool' is not installed; run 'make deps'" >&2; exit 127; }
done
mkdir -p "$(dirname "$out")"
tcl=$(mktemp --suffix=.tcl)
tmp_png=$(mktemp --suffix=.png)
trap 'rm -f "$tcl" "$tmp_png"' EXIT
cat >"$tcl" <<'TCL'
gtkwave::/Time/Zoom/Zoom_Best_Fit
TCL
xvfb-run -a -s "-screen 0 1600x1000x24" bash -c "
  gtkwave -S '$tcl' '$fst' '$gtkw' >/dev/null 2>&1 &
  pid=\$!
  sleep 4
  import -window root '$tmp_png'
  kill \$pid 2>/dev/null || true"
mv "$tmp_png" "$out"
echo "screenshot: wrote $out"
