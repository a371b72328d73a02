#!/usr/bin/env bash
# Opens a trace in GTKWave with its session; fails (exit 1) when GTKWave cannot open a
# window, which GTKWave itself reports only on stderr while exiting 0.
# usage: scripts/view.sh TRACE.fst SESSION.gtkw
set -euo pipefail
fst=$1 gtkw=$2
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "error: no display (DISPLAY and WAYLAND_DISPLAY are unset): GTKWave cannot open a window." >&2
  echo "       Run it where there is one (ssh -X), or render the sessions to PNG: make screenshot" >&2
  exit 1
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
gtkwave "$fst" "$gtkw" 2> >(tee "$log" >&2) || status=$?
wait  # for tee
if grep -q "Could not initialize GTK" "$log"; then
  echo "error: GTKWave could not open the display '${DISPLAY:-$WAYLAND_DISPLAY}'" >&2
  exit 1
fi
exit "$status"
