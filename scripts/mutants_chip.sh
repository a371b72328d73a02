#!/usr/bin/env bash
# Mutation check of the chip's fast models (`make mutants`, with scripts/mutants.sh for the
# router; not part of `make test`): plants one-bit and one-cycle errors in the units of
# csim/fast (the command queue, the DMA engine, the MXU unit, the vector unit, the remote-DMA
# engines and the chip's own wiring: MXU selection, per-MXU fences, the cores' HBM ports),
# one at a time, and runs the lockstep (--model check: the RTL and the fast model side by
# side, every visible event compared every cycle) on random command programs on a 2x2 pod, a
# 16x16 chip and a two-MXU chip (every opcode, remote DMA between chips, invalid and mutated
# programs), a GEMM with transposed operands, a GEMM over two cores of two MXUs, an
# all-reduce, and the chip suites (CHIP_SUITES in the Makefile: tests/test_chip.c, test_cmdq.c,
# test_dma.c, test_vec.c, test_gemm.c, test_chip_mxus.c, test_chip_cores.c: their directed
# cases, e.g. two waits on one semaphore in one cycle, or an RDMA from one core to the other,
# which random programs never make). A mutant is caught when the
# lockstep reports a divergence; its report is printed. Exits 1 if any mutant survives, 2 if a
# mutation no longer applies (the source moved on: update its pattern here).
#
# Each mutant is built in build/mutants_chip/NAME/: only the mutated object is recompiled and
# swapped into a copy of libtpusim.a, and tpusim and the chip suites are relinked against it.
#
# usage: scripts/mutants_chip.sh BUILD_DIR "CC CFLAGS" CXX "LINK_LIBS LDLIBS" "CRITERION_LIBS" "SUITE..."
set -euo pipefail
# shellcheck source=scripts/mutant_lib.sh
. "$(dirname "$0")/mutant_lib.sh"
build=$1 cc=$2 cxx=$3 libs=$4 criterion=$5
read -r -a suites <<<"$6"
cli_obj=$build/obj/csim/cli/tpusim.o
out=$build/mutants_chip
mkdir -p "$out"

# name | file | what it plants | sed expression
mutants=(
  "cmdq_end_one_late|csim/fast/cmdq_fast.c|the command queue runs one command past the program's end before error 9|s/if (q->pc >= q->len) v->err = ISA_ERR_END;/if (q->pc > q->len) v->err = ISA_ERR_END;/"
  "dma_copy_one_early|csim/fast/dma_fast.c|a VMEM -> VMEM copy starts before earlier HBM transfers have landed|s/const bool v2v_step = d->cur_active \&\& cur_is_v2v \&\& d->pend_count == 0;/const bool v2v_step = d->cur_active \&\& cur_is_v2v;/"
  "mxu_row_one_cycle_late|csim/fast/mxu_unit_fast.c|an accumulator row written one cycle after the array writes it|s/latency = R + C + 1;/latency = R + C + 2;/"
  "mxu_transpose_ignored|csim/fast/mxu_unit_fast.c|a transposed weight load taken as a plain one|s/if (transpose \&\& u->rows == C) w/if (!transpose \&\& u->rows == C \&\& 0) w/"
  "vec_starts_before_stores|csim/fast/vec_unit_fast.c|a VEC starts before the MXU stores issued before it are done|s/ \&\& mxu->stores_done >= v->pend_stores;/;/"
  "rdma_signal_bit|csim/fast/rdma_fast.c|the header flit's signal-on-arrival bit one position off|s/(uint64_t)sig << 29/(uint64_t)sig << 30/"
  "sem_grants_not_serialised|csim/fast/chip_fast.c|the DMA queue's wait granted against the value before the compute queue's grant|s/if (grant0 \&\& y->qv\[1\].sem_idx == y->qv\[0\].sem_idx) v1 -= y->qv\[0\].sem_value;/(void)grant0;/"
  "release_fence_ignores_stores|csim/fast/chip_fast.c|a compute-queue SEM_SIGNAL fires before the MXU stores before it are done|s/ \&\& u->stores_done >= rh->stores\[m\];/;/"
  "mxu_field_ignored|csim/fast/chip_fast.c|every MXU command goes to MXU 0, whatever its MXU field|s/y->sel = mxu_op ? isa_mxu(q0->cmd) : 0;/y->sel = 0;/"
  "release_fence_mxu0_only|csim/fast/chip_fast.c|a compute-queue SEM_SIGNAL waits for MXU 0's work only|s/for (unsigned m = 0; m < c->nmxu \&\& y->rel_fire; m++)/for (unsigned m = 0; m < 1 \&\& y->rel_fire; m++)/"
  "hbm_ports_crossed|csim/fast/chip_fast.c|every core's DMA engine sees core 0's HBM port ready|s/hbm_ready \&\& hbm_ready\[k\]/hbm_ready \&\& hbm_ready[0]/"
  "rdma_core_ignored|csim/fast/rdma_fast.c|a packet lands in core 0 whatever core its header names|s/rx->core = (uint8_t)((ej->data >> 30) \& 3);/rx->core = 0;/"
)

run_suites() {  # DIR LOG: every chip suite in DIR in lockstep; fails at the first that fails
  local s
  for s in "${suites[@]}"; do TPU_MODEL=check TPU_SEED=1 "$1/$s" --jobs 2 >>"$2" 2>&1 || return 1; done
}

run_workloads() {  # DIR with tpusim and the chip suites; fails when the lockstep finds a difference
  local bin=$1/tpusim log=$2
  : >"$log"
  run_suites "$1" "$log" &&
    "$bin" randprog --pod 2x2 --mxu 4x4 --model check --count 300 --seed 7 >>"$log" 2>&1 &&
    "$bin" randprog --pod 1x1 --mxu 16x16 --model check --count 120 --seed 11 >>"$log" 2>&1 &&
    "$bin" gemm --mxu 16x16 --m 40 --k 48 --n 36 --transposed-a --transposed-b --relu --model check >>"$log" 2>&1 &&
    "$bin" collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 2048 --algo torus2d --model check >>"$log" 2>&1 &&
    "$bin" randprog --pod 1x1 --mxu 4x4 --mxus 2 --model check --count 300 --seed 13 >>"$log" 2>&1 &&
    "$bin" gemm --mxu 4x4 --mxus 2 --cores 2 --m 40 --k 36 --n 44 --model check >>"$log" 2>&1
}

echo "mutants_chip: the unmutated fast chip first (it must pass)" >&2
cp "$build/libtpusim.a" "$out/libtpusim.base.a"
link() {  # DIR LIBRARY: tpusim and the chip suites against that library
  local s
  # shellcheck disable=SC2086  # the libraries are a word list
  $cxx -o "$1/tpusim" "$cli_obj" ${libs//$build\/libtpusim.a/$2} || return 1
  for s in "${suites[@]}"; do
    # shellcheck disable=SC2086
    $cxx -o "$1/$s" "$build/obj/tests/$s.o" ${libs//$build\/libtpusim.a/$2} $criterion || return 1
  done
}
link "$out" "$out/libtpusim.base.a"
if ! run_workloads "$out" "$out/baseline.log"; then
  cat "$out/baseline.log" >&2
  echo "mutants_chip: the lockstep fails without a mutant; fix that first" >&2
  exit 1
fi
survived=0
for m in "${mutants[@]}"; do
  IFS='|' read -r name src what expr <<<"$m"
  dir=$out/$name
  mutant_library mutants_chip "$dir" "$src" "$expr" "$cc" "$out/libtpusim.base.a"
  link "$dir" "$dir/libtpusim.a"
  if run_workloads "$dir" "$dir/run.log"; then
    printf '%-30s SURVIVED  %s\n' "$name" "$what"
    survived=$((survived + 1))
  else
    report=$(grep -m1 -oE 'the fast model diverged[^;]*' "$dir/run.log" || true)
    printf '%-30s caught    %s\n%32s%s\n' "$name" "$what" "" "${report:-(no divergence report: see $dir/run.log)}"
    [ -n "$report" ] || survived=$((survived + 1))  # a failure other than a divergence does not count
  fi
done
if [ "$survived" -gt 0 ]; then
  echo "mutants_chip: $survived of ${#mutants[@]} not caught by the lockstep" >&2
  exit 1
fi
echo "mutants_chip: all ${#mutants[@]} caught by the lockstep" >&2
