#!/usr/bin/env bash
# Mutation check of the fast router (`make mutants`, not part of `make test`): plants one-bit
# and one-cycle errors in csim/fast/noc_fast.c, one at a time, and runs the lockstep tests
# (tests/test_noc_fast.c, networks in CHIP_MODEL_CHECK under every traffic pattern and load)
# against each. A mutant is caught when the lockstep fails; the first divergence report is
# printed. Exits 1 if any mutant survives, 2 if a mutation no longer applies (the source moved
# on: update its pattern here).
#
# Each mutant is built in build/mutants/NAME/ from a copy of noc_fast.c: only that object is
# recompiled, swapped into a copy of libtpusim.a, and the test binary relinked against it.
#
# usage: scripts/mutants.sh BUILD_DIR "CC CFLAGS" CXX "LINK_LIBS LDLIBS"
#   (the Makefile's `mutants` target passes its own compiler, flags and libraries)
set -euo pipefail
# shellcheck source=scripts/mutant_lib.sh
. "$(dirname "$0")/mutant_lib.sh"
build=$1 cc=$2 cxx=$3 libs=$4
src=csim/fast/noc_fast.c
test_obj=$build/obj/tests/test_noc_fast.o
filter='noc_fast/lockstep_every_pattern_and_load'
out=$build/mutants
mkdir -p "$out"

# name | what it plants | sed expression on noc_fast.c
mutants=(
  "sa_input_pointer_stuck|switch allocation's per-input round-robin pointer not advanced|s/RR_SA_IN(r, V, P)\[p\] = (uint8_t)((v + 1) \& (V - 1u));/RR_SA_IN(r, V, P)[p] = (uint8_t)(v \& (V - 1u));/"
  "sa_output_pointer_off_by_one|switch allocation's per-output pointer set to the winner, not the one after|s/RR_SA_OUT(r, V, P)\[o\] = (uint8_t)(p + 1u == P ? 0 : p + 1);/RR_SA_OUT(r, V, P)[o] = (uint8_t)p;/"
  "va_pointer_stuck|VC allocation's round-robin pointer not advanced|s/oc->rr_va = (uint8_t)(pick + 1 == P \* V ? 0 : pick + 1);/oc->rr_va = (uint8_t)pick;/"
  "credit_one_cycle_late|a departing flit's credit returned one cycle late (queued as a dropped flit's, returned at the start of the next edge)|s/^    r->credit_out |= 1u << i;$/    DROP_CREDITS(r, V, P)[i]++, r->drop_pending++;/; /^  if (r->drop_pending) return_drop_credits(r, k, V, P, LINKED);$/d; s/^  if (r->nonempty) {\(.*\)$/  if (r->drop_pending) return_drop_credits(r, k, V, P, LINKED);\n  if (r->nonempty) {\1/"
  "dateline_class_bit|the hop over the dateline also allowed class 0 (one bit of the class mask)|s/if ((r->dateline >> o) \& 1) return o | 2u << 4;/if ((r->dateline >> o) \& 1) return o | 3u << 4;/"
  "tail_bit_flipped|the tail bit of every output flit inverted|s/const uint32_t out_meta = (uint32_t)flags << 16 | META_VALID/const uint32_t out_meta = (uint32_t)(flags ^ FRONT_TAIL) << 16 | META_VALID/"
  "switch_one_iteration|switch allocation without its second iteration|s/for (uint32_t lost = in_req \& ~in_done; lost;/for (uint32_t lost = 0; lost;/"
)

echo "mutants: the unmutated fast router first (it must pass)" >&2
if ! TPU_SEED=1 "$build/tests/test_noc_fast" --jobs 2 --filter "$filter" >"$out/baseline.log" 2>&1; then
  cat "$out/baseline.log" >&2
  echo "mutants: the lockstep tests fail without a mutant; fix that first" >&2
  exit 1
fi

# one copy of the library for every mutant (the build directory may be rebuilt meanwhile)
cp "$build/libtpusim.a" "$out/libtpusim.base.a"
survived=0
for m in "${mutants[@]}"; do
  IFS='|' read -r name what expr <<<"$m"
  dir=$out/$name
  mutant_library mutants "$dir" "$src" "$expr" "$cc" "$out/libtpusim.base.a"
  # shellcheck disable=SC2086
  $cxx -o "$dir/test_noc_fast" "$test_obj" ${libs//$build\/libtpusim.a/$dir/libtpusim.a}
  if TPU_SEED=1 "$dir/test_noc_fast" --jobs 2 --filter "$filter" >"$dir/test.log" 2>&1; then
    printf '%-30s SURVIVED  %s\n' "$name" "$what"
    survived=$((survived + 1))
  else
    report=$(grep -m1 -oE 'cycle [0-9]+, router \([0-9]+,[0-9]+\): .*' "$dir/test.log" || true)
    printf '%-30s caught    %s\n%32s%s\n' "$name" "$what" "" "${report:-(the lockstep test failed without a divergence report: see $dir/test.log)}"
  fi
done
if [ "$survived" -gt 0 ]; then
  echo "mutants: $survived of ${#mutants[@]} survived the lockstep tests" >&2
  exit 1
fi
echo "mutants: all ${#mutants[@]} caught by the lockstep tests" >&2
