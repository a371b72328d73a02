# Sourced by the mutation scripts (mutants.sh, mutants_chip.sh, mutants_pod.sh): builds one
# mutant's library.
#
# mutant_library WHO DIR SRC EXPR "CC CFLAGS" BASE_LIB
#   copies SRC into DIR, applies the sed expression EXPR to the copy, compiles it and puts DIR/libtpusim.a = BASE_LIB with that object swapped in.
#   Exits 2 (with WHO in the message) when the pattern no longer matches SRC or the mutant does
#   not compile: the source moved on, update the pattern.
mutant_library() {
  local who=$1 dir=$2 src=$3 expr=$4 cc=$5 base_lib=$6
  local base
  base=$(basename "$src" .c)
  rm -rf "$dir" && mkdir -p "$dir"
  cp "$src" "$dir/$base.c"
  sed -i "$expr" "$dir/$base.c"
  if cmp -s "$src" "$dir/$base.c"; then
    echo "$who: $(basename "$dir"): the pattern no longer matches $src" >&2
    exit 2
  fi
  # shellcheck disable=SC2086  # the flags are a word list; a mutant may leave something unused
  if ! $cc -Wno-error -c "$dir/$base.c" -o "$dir/$base.o" 2>"$dir/build.log"; then
    cat "$dir/build.log" >&2
    echo "$who: $(basename "$dir") does not compile" >&2
    exit 2
  fi
  cp "$base_lib" "$dir/libtpusim.a"
  ar r "$dir/libtpusim.a" "$dir/$base.o" 2>/dev/null
}
