/*
 * The pod split over Open MPI ranks (`mpirun -np R build/tpusim ...`, csim/util/dist.h,
 * docs/scale.md "MPI"): every pod command reports what one process reports, field for field
 * but host time, on 2 and 4 ranks (oversubscribed on these 2 cores), with threads within the
 * ranks too; the refusals (ranks or threads that do not divide the rows, a command without a
 * pod, ranks given different arguments, files every rank would write), each exit 2; a profile
 * (--profile, --op-profile) gathered from the ranks is one process's, byte for byte; and a rank
 * that dies stops the job with a message instead of leaving the others waiting.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_run.h"

/* mpirun as these machines need it: as root in CI, more ranks than cores. Under `make sanitize`
 * the ranks' leak check is off: Open MPI's own plugins keep memory to the end (hundreds of
 * blocks in libraries it loads and unloads, not ours to free); the runs without mpirun keep it. */
#define MPIRUN                                                                                        \
  "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 mpirun " \
  "-x ASAN_OPTIONS=detect_leaks=0 "

TestSuite(pod_mpi, .timeout = 900);

/* `tpusim ARGS --json` in one process and on each rank count: the same report. */
static void same_on_ranks(const char *args, const unsigned *ranks, unsigned nranks) {
  char line[2048];
  snprintf(line, sizeof line, "%s %s --json", tpusim(), args);
  run_t one = run_shell(line);
  cr_assert_eq(one.status, 0, "%s: %s", line, one.err);
  without_host_fields(one.out);
  for (unsigned k = 0; k < nranks; k++) {
    snprintf(line, sizeof line, MPIRUN "-np %u %s %s --json", ranks[k], tpusim(), args);
    run_t r = run_shell(line);
    cr_assert_eq(r.status, 0, "%s: %s", line, r.err);
    without_host_fields(r.out);
    cr_expect_str_eq(r.out, one.out, "%s:\n%s\none process:\n%s", line, r.out, one.out);
  }
}

Test(pod_mpi, collectives_report_what_one_process_reports) {
  static const unsigned ranks[] = {2, 4};
  same_on_ranks("collective --pod 4x4 --mxu 4x4 --op allreduce --algo torus2d --bytes 16384 --seed 4 --model fast",
                ranks, 2);
  same_on_ranks("collective --pod 3x4 --mxu 4x4 --op all_to_all --bytes 1536 --link-latency 0 --model fast", ranks, 2);
  same_on_ranks("collective --pod 2x4 --mxu 4x4 --op allreduce --bytes 1024 --model fast --rtl-chips 1,6", ranks, 2);
  static const unsigned two[] = {2};
  same_on_ranks("collective --pod 4x5 --mxu 4x4 --op reduce_scatter --bytes 4096 --link-latency 3 --model fast "
                "--threads 2",
                two, 1);
}

/* Wide ICI flits (the v2/v3 presets' kind): their words beyond the first cross between ranks
 * beside the flits. */
Test(pod_mpi, wide_flits_report_what_one_process_reports) {
  static const unsigned ranks[] = {2, 4};
  same_on_ranks("collective --pod 4x4 --mxu 16x16 --flit-words 4 --op allreduce --bytes 65536 --model fast", ranks, 2);
  same_on_ranks("collective --chip v3 --pod 2x2 --op reduce_scatter --algo ring --bytes 262144 --model fast", ranks, 1);
}

Test(pod_mpi, step_and_training_report_what_one_process_reports) {
  static const unsigned ranks[] = {2, 4};
  same_on_ranks("step --pod 2x4 --mxu 4x4 --m 8 --k 12 --n 8 --seed 6 --model fast", ranks, 2);
  same_on_ranks("train --pod 4x4 --dp 4 --mp 4 --mxu 16x16 --batch 128 --steps 2 --lr 0.5 --seed 1 --model fast", ranks,
                2);
  /* chips of two cores, each a replica (the hand-overs between cores stay inside a rank's chips) */
  same_on_ranks("train --pod 2x2 --mxu 4x4 --mxus 2 --cores 2 --data synthetic --examples 300 --features 8 --classes 4 "
                "--hidden 16 --batch 32 --steps 3 --model fast", ranks, 1);
}

/* Random program sets: errors, time-outs and the pod's drain after them (every rank's chips
 * aborted and run until quiet together), remote DMA; RTL chips and lockstep too. */
Test(pod_mpi, random_program_sets_end_as_on_one_process) {
  static const unsigned ranks[] = {2, 4};
  same_on_ranks("randprog --pod 4x4 --count 45 --seed 29 --model fast", ranks, 2);
  static const unsigned two[] = {2};
  same_on_ranks("randprog --pod 2x4 --count 9 --seed 3 --threads 2 --model fast", two, 1);
  same_on_ranks("randprog --pod 2x2 --count 6 --seed 5 --model check", two, 1);
}

static void expect_refused(const char *line, const char *needle) {
  run_t r = run_shell(line);
  cr_expect_eq(r.status, 2, "%s exited %d: %s", line, r.status, r.err);
  cr_expect(strstr(r.err, needle), "%s: expected '%s' in: %s", line, needle, r.err);
  cr_expect_eq(r.out[0], 0, "%s printed a result: %s", line, r.out);
}

Test(pod_mpi, refusals) {
  char line[2048];
  snprintf(line, sizeof line, MPIRUN "-np 4 %s collective --pod 4x2 --mxu 4x4 --op allreduce --bytes 256", tpusim());
  expect_refused(line, "4 MPI ranks for the 4x2 pod: a rank takes whole rows, so at most 2 ranks");
  snprintf(line, sizeof line, MPIRUN "-np 2 %s randprog --pod 2x3 --count 1 --threads 2", tpusim());
  expect_refused(line, "--threads 2: each of the 2 MPI ranks gets 1 row or more of the 2x3 pod");
  snprintf(line, sizeof line, MPIRUN "-np 2 %s gemm --mxu 4x4 --m 4 --k 4 --n 4", tpusim());
  expect_refused(line, "runs no pod to split over MPI ranks");
  snprintf(line, sizeof line, MPIRUN "-np 1 %s step --pod 2x2 --mxu 4x4 --m 4 --k 4 --n 4 --seed 1 : -np 1 %s step "
           "--pod 2x2 --mxu 4x4 --m 4 --k 4 --n 4 --seed 2", tpusim(), tpusim());
  expect_refused(line, "the 2 ranks were started with different arguments");
  snprintf(line, sizeof line, MPIRUN "-np 2 %s train --pod 2x2 --mxu 4x4 --steps 1 --loss-csv build/tests/never.csv",
           tpusim());
  expect_refused(line, "every rank would write the same files");
  cr_expect_neq(access("build/tests/never.csv", F_OK), 0, "a refused run wrote its file");
}

/* A whole file's bytes (*n of them; the caller frees them), or NULL. */
static char *slurp(const char *path, size_t *n) {
  *n = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *b = NULL;
  size_t cap = 0;
  for (;;) {
    if (*n == cap && !(b = realloc(b, cap = cap ? 2 * cap : 1 << 20))) break;
    const size_t got = fread(b + *n, 1, cap - *n, f);
    *n += got;
    if (!got) break;
  }
  fclose(f);
  return b;
}

/* `tpusim ARGS --profile FILE --json` in one process and on each rank count: the same trace,
 * byte for byte (rank 0 gathers every rank's chips: profile_gather), and the same report with
 * its op profile; `--op-profile` alone likewise. */
static void same_profile_on_ranks(const char *args, const unsigned *ranks, unsigned nranks) {
  static const char *const one_path = "build/tests/mpi_profile_one.json", *const path = "build/tests/mpi_profile.json";
  char line[2048];
  snprintf(line, sizeof line, "%s %s --quiet --profile %s --json", tpusim(), args, one_path);
  run_t one = run_shell(line);
  cr_assert_eq(one.status, 0, "%s: %s", line, one.err);
  cr_assert(strstr(one.out, "\"profile\":{"), "%s: no op profile in %s", line, one.out);
  without_host_fields(one.out);
  size_t n1, n;
  char *want = slurp(one_path, &n1);
  cr_assert(want && n1 > 0, "%s wrote no trace", line);
  for (unsigned k = 0; k < nranks; k++) {
    remove(path);
    snprintf(line, sizeof line, MPIRUN "-np %u %s %s --quiet --profile %s --json", ranks[k], tpusim(), args, path);
    run_t r = run_shell(line);
    cr_assert_eq(r.status, 0, "%s: %s", line, r.err);
    without_host_fields(r.out);
    cr_expect_str_eq(r.out, one.out, "%s:\n%s\none process:\n%s", line, r.out, one.out);
    char *got = slurp(path, &n);
    cr_expect(got && n == n1 && !memcmp(got, want, n), "%s: the trace (%zu bytes) is not one process's (%zu bytes)",
              line, n, n1);
    free(got);
    snprintf(line, sizeof line, "%s --op-profile", args);
    const unsigned np[1] = {ranks[k]};
    same_on_ranks(line, np, 1);
  }
  free(want);
  remove(path), remove(one_path);
}

Test(pod_mpi, profiles_are_what_one_process_writes) {
  static const unsigned two[] = {2}, ranks[] = {2, 4};
  same_profile_on_ranks("collective --pod 2x2 --mxu 16x16 --op allreduce --bytes 65536 --model fast", two, 1);
  same_profile_on_ranks("train --pod 2x2 --mxu 16x16 --batch 32 --steps 2 --seed 1 --model fast", two, 1);
  /* model parallel along Y, across the ranks; a chip list that the ranks share unevenly */
  same_profile_on_ranks("train --pod 2x4 --dp 2 --mp 4 --mxu 16x16 --batch 64 --steps 1 --model fast", ranks, 2);
  same_profile_on_ranks("step --pod 2x4 --mxu 4x4 --m 8 --k 12 --n 8 --seed 6 --model fast --profile-chips 1,3-6", ranks,
                        2);
}

/* An unwritable --profile path: every rank refuses it before the run (exit 2, no file, no hang). */
Test(pod_mpi, an_unwritable_profile_path_is_refused_on_every_rank) {
  char line[2048];
  snprintf(line, sizeof line, MPIRUN "-np 2 %s collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 1024 --model fast "
           "--profile build/tests/no-such-dir/p.json", tpusim());
  const time_t t0 = time(NULL);
  expect_refused(line, "--profile: cannot write 'build/tests/no-such-dir/p.json': directory 'build/tests/no-such-dir' "
                 "does not exist");
  cr_expect_lt(time(NULL) - t0, 20, "the refusal took %lld s", (long long)(time(NULL) - t0));
  cr_expect_neq(access("build/tests/no-such-dir", F_OK), 0, "a refused run made its directory");
}

/* A rank killed in the middle of a run: mpirun stops the others and says which rank died. */
Test(pod_mpi, a_rank_that_dies_stops_the_job) {
  char line[2048];
  snprintf(line, sizeof line,
           "(" MPIRUN "-np 2 %s collective --pod 8x8 --mxu 16x16 --op allreduce --bytes 4194304 --model fast --seed 4242 "
           ">/dev/null & job=$!; "
           "for i in $(seq 100); do n=$(pgrep -f '^%s collective --pod 8x8 .*--seed 4242' | wc -l); "
           "[ \"$n\" -ge 2 ] && break; sleep 0.1; done; sleep 1; "
           "kill -KILL $(pgrep -f '^%s collective --pod 8x8 .*--seed 4242' | tail -1); "
           "start=$(date +%%s); wait $job; rc=$?; echo \"rc=$rc secs=$(( $(date +%%s) - start ))\")",
           tpusim(), tpusim(), tpusim());
  run_t r = run_shell(line);
  int rc = -1, secs = -1;
  cr_assert_eq(sscanf(strstr(r.out, "rc=") ? strstr(r.out, "rc=") : "", "rc=%d secs=%d", &rc, &secs), 2, "%s\n%s",
               r.out, r.err);
  cr_expect_neq(rc, 0, "the job ended well with a rank killed: %s", r.err);
  cr_expect_lt(secs, 60, "the job took %d s to stop after a rank died", secs);
  cr_expect(strstr(r.err, "signal 9") || strstr(r.err, "Killed"), "no message naming the dead rank: %s", r.err);
}

/* A rank that fails alone without crashing (its host program stops where the others' go on
 * into a shared chip operation): it waits TPUSIM_END_WAIT_S for the others to end, then stops
 * the job with a message, so nobody waits for ever. */
Test(pod_mpi, a_rank_that_fails_alone_stops_the_job) {
  run_t r = run_shell("(start=$(date +%s); " MPIRUN "-x TPUSIM_END_WAIT_S=2 -np 2 build/tests/pod_probe fail-alone; "
                      "echo \"rc=$? secs=$(( $(date +%s) - start ))\")");
  int rc = -1, secs = -1;
  cr_assert_eq(sscanf(strstr(r.out, "rc=") ? strstr(r.out, "rc=") : "", "rc=%d secs=%d", &rc, &secs), 2, "%s\n%s",
               r.out, r.err);
  cr_expect_neq(rc, 0, "the job ended well with a rank failed: %s", r.err);
  cr_expect_lt(secs, 30, "the job took %d s to stop after a rank failed alone", secs);
  cr_expect(strstr(r.err, "the other ranks have not within 2 s"), "no message: %s", r.err);
  cr_expect(!strstr(r.err, "the write came back"), "rank 0 went on: %s", r.err);
}

/* Issue 27: TPUSIM_END_WAIT_S=-1 (or 0, or abc) turned a correct MPI run into MPI_ABORT, exit 1,
 * after "correct": true. It is checked at start-up on every rank: a usage error (exit 2) naming
 * the variable and its range, before anything is simulated (no report); also without mpirun.
 * A value in the range, and an empty one (the default), run as usual. */
Test(pod_mpi, a_bad_end_wait_is_refused_before_the_run) {
  static const char *const bad[] = {"-1", "0", "abc", "0.5", "1e9", "5s", "' 5'"};
  static const char *const said[] = {"-1", "0", "abc", "0.5", "1e9", "5s", " 5"};
  const char *cmd = "collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 256 --model fast --json";
  char line[2048], want[256];
  for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(want, sizeof want, "TPUSIM_END_WAIT_S is '%s': it must be a number of seconds from 1 to 86400", said[i]);
    if (i < 3) { /* the values under mpirun (each job takes a second or two to start) */
      snprintf(line, sizeof line, MPIRUN "-x TPUSIM_END_WAIT_S=%s -np 2 %s %s", bad[i], tpusim(), cmd);
      expect_refused(line, want);
    }
    snprintf(line, sizeof line, "TPUSIM_END_WAIT_S=%s %s %s", bad[i], tpusim(), cmd);
    expect_refused(line, want);
  }
  static const char *const good[] = {"2.5", "\"\""};
  for (unsigned i = 0; i < sizeof good / sizeof good[0]; i++) {
    snprintf(line, sizeof line, MPIRUN "-x TPUSIM_END_WAIT_S=%s -np 2 %s %s", good[i], tpusim(), cmd);
    run_t r = run_shell(line);
    cr_expect_eq(r.status, 0, "%s exited %d: %s", line, r.status, r.err);
    cr_expect(strstr(r.out, "\"correct\":true"), "%s: %s", line, r.out);
  }
}

/* The runs of tests/pod_scenarios.h (printed by tests/pod_probe.c): a packet dropped at a
 * slice's edge, whose end needs the bands to meet before a quiet chip's own step, and a chip
 * sleeping while its last credits come back from another rank. The same end cycles, chip clocks
 * and last busy cycles on 2 and 4 ranks, and with two threads a rank. */
Test(pod_mpi, scenarios_end_in_the_same_cycle_on_every_rank_count) {
  run_t one = run_shell("build/tests/pod_probe");
  cr_assert_eq(one.status, 0, "%s", one.err);
  cr_assert(strstr(one.out, "out of the slice: rc -1, 11 cycles"), "%s", one.out);
  cr_assert(strstr(one.out, "credits back to a sleeping chip: rc 0, 172 cycles"), "%s", one.out);
  static const char *const jobs[] = {"-np 2 build/tests/pod_probe", "-np 4 build/tests/pod_probe",
                                     "-np 2 build/tests/pod_probe 2"};
  for (unsigned k = 0; k < sizeof jobs / sizeof jobs[0]; k++) {
    char line[512];
    snprintf(line, sizeof line, MPIRUN "%s", jobs[k]);
    run_t r = run_shell(line);
    cr_assert_eq(r.status, 0, "%s: %s", line, r.err);
    cr_expect_str_eq(r.out, one.out, "%s:\n%s\none process:\n%s", line, r.out, one.out);
  }
}
