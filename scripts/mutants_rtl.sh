#!/usr/bin/env bash
# Mutation check of the RTL's assertions (`make mutants`, not part of `make test`;
# docs/architecture.md, "Assertions"): plants one violation per assertion class in a copy of
# rtl/ (a flit sent without a credit, a VC or switch grant that is not one-hot, a FIFO written
# when full or read when empty, credits returned above the buffer depth, a semaphore taken below
# zero, a queue's pc past its program), verilates the 4x4 chip from that copy with the same
# flags as the build (--assert among them), relinks tpusim against it and runs RTL workloads
# (random programs of every kind on a 2x2 pod, a GEMM, an all-reduce). A mutant is caught when
# the run fails with that assertion's message; the message is printed. Exits 1 if any mutant
# survives or fails otherwise, 2 if a mutation no longer applies (the source moved on: update its
# pattern here).
#
# Each mutant is built in build/mutants_rtl/NAME/ (warnings not fatal: a mutant may leave a
# signal unused; its C++ compiled at -O0 to keep the build
# short: it runs a few small workloads only).
#
# usage: scripts/mutants_rtl.sh BUILD_DIR VERILATOR "VFLAGS" "CHIP_GFLAGS" CXX "LINK_LIBS LDLIBS"
#   (the Makefile's `mutants` target passes its own Verilator flags, the 4x4 chip's parameters
#   and its libraries)
set -euo pipefail
build_arg=$1 build=$(cd "$1" && pwd) verilator=$2 vflags=$3 gflags=$4 cxx=$5 libs=$6
top=chip_top_4x4
lib=vlt/$top/V${top}__ALL.a  # (LINK_LIBS names it under the build directory as given)
cli_obj=$build/obj/csim/cli/tpusim.o
out=$build/mutants_rtl
mkdir -p "$out"

# name | file | what it plants | the assertion's message (a grep pattern) | sed expression
mutants=(
  "router_sends_without_credit|rtl/noc_router.sv|switch allocation ignores the output VC's credits|sent a flit without a credit|s/ \&\& (credits\[ivc_port\[p\]\[v\]\]\[ivc_vc\[p\]\[v\]\] != '0)//"
  "router_reads_empty_vc|rtl/noc_router.sv|switch allocation offers an input VC with no flit|read when empty|s/if (!in_req\[p\] \&\& (count\[p\]\[v\] != '0) \&\& ivc_active\[p\]\[v\] \&\&/if (!in_req[p] \&\& ivc_active[p][v] \&\&/"
  "router_va_not_one_hot|rtl/noc_router.sv|VC allocation may give one input VC two output VCs|granted a second output VC|s/ \& ~granted;/;/"
  "router_sa_not_one_hot|rtl/noc_router.sv|switch allocation may give one output to two inputs|switch grant not one-hot|s/if (!out_won\[o\] \&\& in_req\[p\] \&\&/if (in_req[p] \&\&/"
  "rdma_ignores_credits|rtl/chip_rdma.sv|a remote-DMA engine sends whether or not it holds a credit|without a credit|s/assign send      = cur_active_q \&\& (credits_q != 4'd0);/assign send      = cur_active_q;/"
  "rdma_credit_twice|rtl/chip_rdma.sv|a remote-DMA receiver returns each credit on two VCs|credits above the buffer depth|s/credit_q\[v\] <= 1'b1;/credit_q <= '1;/"
  "dma_fifo_written_when_full|rtl/chip_dma.sv|the DMA engine takes a descriptor when its FIFO is full|descriptor FIFO written when full|s/assign desc_ready_o = (fifo_count_q != 2'd2);/assign desc_ready_o = 1'b1;/"
  "sem_wait_not_checked|rtl/chip_core.sv|a SEM_WAIT is granted whatever the semaphore holds|taken below zero|s/sem_grant\[0\] = sem_wait\[0\] \&\& (v0 >= sem_value\[0\]);/sem_grant[0] = sem_wait[0];/"
  "cmdq_runs_past_end|rtl/chip_cmdq.sv|a queue without HALT runs past its program's last command|outside the program|s/end else if ({1'b0, pc_q} >= len_q) begin/end else if (1'b0) begin/"
)

run_workloads() {  # TPUSIM LOG: fails when a run fails
  local bin=$1 log=$2
  "$bin" randprog --pod 2x2 --mxu 4x4 --kind all --count 60 --seed 7 >"$log" 2>&1 &&
    "$bin" gemm --mxu 4x4 --m 24 --k 20 --n 16 --seed 1 >>"$log" 2>&1 &&
    "$bin" collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 4096 --algo torus2d >>"$log" 2>&1
}

# verilate the 4x4 chip from RTL_DIR into DIR/vlt and build its library there
build_chip() {
  local rtl=$1 dir=$2
  mkdir -p "$dir/vlt"
  # shellcheck disable=SC2086  # the flags are word lists
  (cd "$rtl/.." && $verilator $vflags -Wno-fatal $gflags --Mdir "$dir/vlt" --prefix V$top --top-module chip_top \
     rtl/lint.vlt "$build"/gen/chip_isa_pkg.sv "$build"/gen/chip_obs_pkg.sv rtl/*_pkg.sv rtl/chip_top.sv) \
    >"$dir/verilate.log" 2>&1 &&
    make -s -C "$dir/vlt" -f V$top.mk V${top}__ALL.a OPT_FAST=-O0 OPT_SLOW=-O0 >"$dir/build.log" 2>&1
}

link() {  # DIR: DIR/tpusim against DIR's chip library
  # shellcheck disable=SC2086  # the libraries are a word list
  $cxx -o "$1/tpusim" "$cli_obj" ${libs//$build_arg\/$lib/$1/vlt/V${top}__ALL.a}
}

echo "mutants_rtl: the unmutated RTL first (it must pass)" >&2
start=$(date +%s)
if ! run_workloads "$build/tpusim" "$out/baseline.log"; then
  cat "$out/baseline.log" >&2
  echo "mutants_rtl: the workloads fail without a mutant; fix that first" >&2
  exit 1
fi
survived=0
for m in "${mutants[@]}"; do
  IFS='|' read -r name src what message expr <<<"$m"
  dir=$out/$name
  rm -rf "$dir" && mkdir -p "$dir"
  cp -a rtl "$dir/rtl"
  sed -i "$expr" "$dir/$src"
  if cmp -s "$src" "$dir/$src"; then
    echo "mutants_rtl: $name: the pattern no longer matches $src" >&2
    exit 2
  fi
  if ! build_chip "$dir/rtl" "$dir" || ! link "$dir"; then
    cat "$dir/verilate.log" "$dir/build.log" >&2
    echo "mutants_rtl: $name does not build" >&2
    exit 2
  fi
  if run_workloads "$dir/tpusim" "$dir/run.log"; then
    printf '%-28s SURVIVED  %s\n' "$name" "$what"
    survived=$((survived + 1))
  elif report=$(grep -m1 -E "Assertion failed.*$message|$message" "$dir/run.log"); then
    printf '%-28s caught    %s\n%30s%s\n' "$name" "$what" "" "$report"
  else
    printf '%-28s FAILED    %s, but not with \"%s\" (see %s)\n' "$name" "$what" "$message" "$dir/run.log"
    survived=$((survived + 1))
  fi
done
echo "mutants_rtl: $(( $(date +%s) - start )) s" >&2
if [ "$survived" -gt 0 ]; then
  echo "mutants_rtl: $survived of ${#mutants[@]} not caught by their assertion" >&2
  exit 1
fi
echo "mutants_rtl: all ${#mutants[@]} caught by their assertion" >&2
