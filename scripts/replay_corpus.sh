#!/usr/bin/env bash
# Replays every input of the fuzz corpora (tests/fuzz/corpus/NAME: the seeds and each past
# finding, kept as a regression test) through its harness, built without libFuzzer
# (BIN_DIR/replay_NAME). Part of `make test` and `make sanitize`.
# usage: scripts/replay_corpus.sh BIN_DIR NAME...
set -euo pipefail
dir=$1
shift
total=0
for name in "$@"; do
  files=("$(realpath tests/fuzz/corpus/"$name")"/*)
  "$dir/replay_$name" "${files[@]}" >/dev/null 2>"$dir/replay_$name.log" || {
    echo "fuzz corpus: replay_$name failed on one of tests/fuzz/corpus/$name:" >&2
    tail -n 20 "$dir/replay_$name.log" >&2
    exit 1
  }
  total=$((total + ${#files[@]}))
done
echo "fuzz corpus: $total inputs of $* replayed, every check held"
