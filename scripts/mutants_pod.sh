#!/usr/bin/env bash
# Mutation check of the pod on threads and MPI ranks (`make mutants`; docs/scale.md "Threads"
# and "MPI"): plants one error at a time in csim/pod/pod.c, of the kinds that would make a
# split pod differ from one thread by a cycle or a flit, and runs the comparisons the tests
# make: tests/test_pod_threads.c (random sets, collectives on 1 to 4 threads, the run whose end
# needs the check before a quiet chip's own step) and tests/pod_probe and a collective on
# 2 and 4 ranks against one process. A mutant is caught when a comparison fails. Exits 1 if one
# survives, 2 if a mutation no longer applies (the source moved on: update its pattern here).
#
# Each mutant is built in build/mutants_pod/NAME/: pod.o is recompiled from the mutated copy
# and swapped into a copy of libtpusim.a; tpusim, the suite and the probe are relinked.
#
# usage: scripts/mutants_pod.sh BUILD_DIR "CC CFLAGS" CXX "LINK_LIBS LDLIBS" "CRITERION_LIBS"
set -euo pipefail
# shellcheck source=scripts/mutant_lib.sh
. "$(dirname "$0")/mutant_lib.sh"
build=$1 cc=$2 cxx=$3 libs=$4 criterion=$5
out=$build/mutants_pod
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

# name | what it plants | sed expression on csim/pod/pod.c
mutants=(
  "quiet_step_unchecked|a band steps a quiet chip woken by its own timer without checking the pod went on|s/if (!arrived \&\& nd->quiet \&\& b->threaded \&\& !no_end_before(p, b, t)) return false;/(void)no_end_before;/"
  "mpi_pause_ignored|under MPI a band goes on where only the meeting can clear the step|s/b->paused = true;/b->paused = false; continue;/"
  "ring_one_quantum|link rings of latency + 2 slots: a band's writes land where another still reads|s/p->depth = cfg->threads > 1 || ranks > 1 ? 2 \* (cfg->link_latency + 1) : cfg->link_latency + 2;/p->depth = cfg->link_latency + 2;/"
  "credits_not_announced|a credit from another rank is not counted as on its way: the chip may sleep through it|s/if (in->flit.valid || in->credits) p->node\[p->node\[i\].nb\[d\]\].incoming++;/if (in->flit.valid) p->node[p->node[i].nb[d]].incoming++;/"
)

probe_one=$out/probe_one.txt
collective="collective --pod 4x4 --mxu 4x4 --op allreduce --algo torus2d --bytes 8192 --link-latency 2 --model fast --json"
strip() { sed -E 's/,"sim_seconds":[^,}]*//; s/,"peak_rss_MB":[^,}]*//'; }

run_workloads() {  # DIR with tpusim, test_pod_threads and pod_probe; fails on any difference
  local d=$1 log=$2
  "$d/test_pod_threads" --jobs 2 >"$log" 2>&1 || return 1
  for np in 2 4; do
    mpirun -np "$np" "$d/pod_probe" >"$d/probe_$np.txt" 2>>"$log" || return 1
    cmp -s "$probe_one" "$d/probe_$np.txt" || { echo "pod_probe on $np ranks differs" >>"$log"; return 1; }
    # shellcheck disable=SC2086  # the command's words
    [ "$(mpirun -np "$np" "$d/tpusim" $collective 2>>"$log" | strip)" = "$(strip <"$out/collective_one.json")" ] ||
      { echo "the collective on $np ranks differs" >>"$log"; return 1; }
  done
  mpirun -np 2 "$d/pod_probe" 2 >"$d/probe_2t.txt" 2>>"$log" || return 1
  cmp -s "$probe_one" "$d/probe_2t.txt" || { echo "pod_probe on 2 ranks of 2 threads differs" >>"$log"; return 1; }
}

link() {  # DIR LIBRARY
  # shellcheck disable=SC2086  # the libraries are a word list
  $cxx -o "$1/tpusim" "$build/obj/csim/cli/tpusim.o" ${libs//$build\/libtpusim.a/$2} &&
    $cxx -o "$1/test_pod_threads" "$build/obj/tests/test_pod_threads.o" ${libs//$build\/libtpusim.a/$2} $criterion &&
    $cxx -o "$1/pod_probe" "$build/obj/tests/pod_probe.o" ${libs//$build\/libtpusim.a/$2}
}

echo "mutants_pod: the unmutated pod first (it must pass)" >&2
cp "$build/libtpusim.a" "$out/libtpusim.base.a"
link "$out" "$out/libtpusim.base.a"
"$out/pod_probe" >"$probe_one"
# shellcheck disable=SC2086
"$out/tpusim" $collective >"$out/collective_one.json" 2>/dev/null
if ! run_workloads "$out" "$out/baseline.log"; then
  cat "$out/baseline.log" >&2
  echo "mutants_pod: the comparisons fail without a mutant; fix that first" >&2
  exit 1
fi
survived=0
for m in "${mutants[@]}"; do
  IFS='|' read -r name what expr <<<"$m"
  dir=$out/$name
  mutant_library mutants_pod "$dir" csim/pod/pod.c "$expr" "$cc" "$out/libtpusim.base.a"
  link "$dir" "$dir/libtpusim.a"
  if timeout 600 bash -c "$(declare -f run_workloads strip); probe_one=$probe_one out=$out collective='$collective' run_workloads $dir $dir/run.log"; then
    printf '%-26s SURVIVED  %s\n' "$name" "$what"
    survived=$((survived + 1))
  else
    why=$(grep -m1 -E 'differs|Assertion|FAIL|Timed out' "$dir/run.log" || echo "(see $dir/run.log)")
    printf '%-26s caught    %s\n%28s%s\n' "$name" "$what" "" "$why"
  fi
done
if [ "$survived" -gt 0 ]; then
  echo "mutants_pod: $survived of ${#mutants[@]} not caught" >&2
  exit 1
fi
echo "mutants_pod: all ${#mutants[@]} caught" >&2
