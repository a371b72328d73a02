#!/usr/bin/env bash
# Runs the tpusim CLI tests (every command, good and bad input, its error paths) with tpusim
# under valgrind: a leak (definite or indirect) or a memory error in any run fails the run,
# and its valgrind log is printed. usage: scripts/memcheck.sh TPUSIM CLI_TEST_BINARY
set -euo pipefail
tpusim=$(realpath "$1")
tests=$2
command -v valgrind >/dev/null || { echo "error: 'valgrind' is not installed; run 'make deps'" >&2; exit 127; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/tpusim" <<WRAP
#!/usr/bin/env bash
log=\$(mktemp "$dir/log.XXXXXX")
valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --log-file="\$log" \
  "$tpusim" "\$@"
rc=\$?
if [ \$rc = 99 ]; then { echo "== tpusim \$*"; cat "\$log"; } >>"$dir/failures"; fi
rm -f "\$log"
exit \$rc
WRAP
chmod +x "$dir/tpusim"
TPUSIM="$dir/tpusim" TPU_SEED=1 "$tests" --jobs 2 >"$dir/out" 2>&1 || true
if [ -s "$dir/failures" ] || ! grep -q 'Failing: 0 | Crashing: 0' "$dir/out"; then
  cat "$dir/out" "$dir/failures" 2>/dev/null
  echo "memcheck: tpusim leaked or misused memory (above)" >&2
  exit 1
fi
echo "memcheck: $(grep -o 'Tested: [0-9]*' "$dir/out" | head -1) CLI tests under valgrind, no leaks, no memory errors"
