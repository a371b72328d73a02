/*
 * Tests of `tpusim train` (docs/training.md): a short run of each layout agrees with the
 * reference trainer and reports its figures in --json; the loss CSV and the plot are
 * written; every bad input -- a batch or hidden size that does not divide, dp x mp against
 * the slice, a missing or corrupt data file, a learning rate that is not a finite positive
 * number, options that do not belong together -- exits 2 with a message naming it, and
 * weights that become non-finite stop the run with exit 1 and the step; a failed run leaves
 * no output file behind.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"

TestSuite(train_cli, .timeout = 120);

/* (each option at most once: a case that varies the pod, the MXU or the width starts from SMALL_DATA) */
#define SMALL_DATA "train --data synthetic --examples 300 --features 8 --classes 4 "
#define SMALL SMALL_DATA "--pod 2x2 --mxu 4x4 --hidden 8 "

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* `args` must exit 2 with `want` in the message. */
static void refused(const char *args, const char *want) {
  run_t r = run(args);
  cr_assert_eq(r.status, 2, "%s: exit %d, %s", args, r.status, r.err);
  cr_assert(strstr(r.err, want), "%s: message '%s' does not say '%s'", args, r.err, want);
}

Test(train_cli, each_layout_agrees_with_the_reference_and_reports) {
  const char *layouts[] = {"--batch 16 --hidden 8", "--mp 4 --batch 12 --hidden 16", "--dp 2 --mp 2 --batch 16 --hidden 16"};
  for (unsigned i = 0; i < 3; i++) {
    char args[512];
    snprintf(args, sizeof args, SMALL_DATA "--pod 2x2 --mxu 4x4 --steps 4 --json %s", layouts[i]);
    run_t r = run(args);
    cr_assert_eq(r.status, 0, "%s: %s", args, r.err);
    cr_assert(strstr(r.out, "\"reference_bit_exact\":true"), "%s", r.out);
    cr_assert_eq(json_int(r.out, "steps_checked"), 4);
    cr_assert_eq(json_int(r.out, "chips"), 4);
    cr_assert_gt(json_int(r.out, "step_cycles"), 0);
    cr_assert_geq(json_int(r.out, "step_cycles"), json_int(r.out, "compute_cycles"));
    cr_assert_gt(json_int(r.out, "comm_cycles"), 0);
    cr_assert(strstr(r.err, "train: step 4/4  loss"), "no progress on stderr: %s", r.err);
  }
}

Test(train_cli, writes_the_loss_curve_and_its_plot) {
  char dir[] = "/tmp/train_cli_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char args[1024], csv[128], png[128];
  snprintf(csv, sizeof csv, "%s/loss.csv", dir);
  snprintf(png, sizeof png, "%s/loss.png", dir);
  snprintf(args, sizeof args, SMALL "--batch 16 --steps 3 --loss-csv %s --plot %s", csv, png);
  run_t r = run(args);
  cr_assert_eq(r.status, 0, "%s", r.err);
  FILE *f = fopen(csv, "r");
  cr_assert_not_null(f);
  char line[256];
  unsigned lines = 0;
  while (fgets(line, sizeof line, f)) lines++;
  fclose(f);
  cr_assert_eq(lines, 4, "the CSV has a header and a line per step");
  f = fopen(png, "rb");
  cr_assert_not_null(f);
  unsigned char magic[4] = {0};
  cr_assert_eq(fread(magic, 1, 4, f), 4);
  fclose(f);
  cr_assert(magic[1] == 'P' && magic[2] == 'N' && magic[3] == 'G');
  unlink(csv), unlink(png), rmdir(dir);
}

Test(train_cli, refuses_layouts_that_do_not_divide) {
  refused(SMALL "--batch 18", "not divisible by the data-parallel degree 4");
  refused(SMALL_DATA "--pod 2x2 --mxu 4x4 --batch 16 --mp 4 --hidden 10", "not divisible by the model-parallel degree 4");
  refused(SMALL "--batch 20 --cores 2 --model fast", "not divisible by the chip's 2 cores");
  refused(SMALL "--batch 16 --dp 2 --mp 1", "the slice has 4 chips");
  refused(SMALL_DATA "--mxu 4x4 --hidden 8 --batch 16 --pod 4x2 --slice 0,0,4x1 --dp 2 --mp 2", "the slice must be 2x2");
  refused(SMALL_DATA "--pod 2x2 --hidden 8 --batch 16 --mxu 4x8", "no chip with a 4x8 MXU"); /* non-square: refused by the plan (test_train) */
  refused("train --pod 2x2 --mxu 4x4 --batch 16", "10 classes");
}

Test(train_cli, check_validates_without_simulating_and_refuses_what_does_not_fit) {
  run_t r = run(SMALL "--batch 16 --check");
  cr_assert_eq(r.status, 0, "%s", r.err);
  refused(SMALL_DATA "--mxu 4x4 --batch 16 --hidden 400 --pod 1x1 --check", "a queue holds");
  refused(SMALL_DATA "--pod 2x2 --mxu 4x4 --batch 16 --hidden 3000", "3000 hidden units");
  refused("train --pod 1x1 --mxu 4x4 --data synthetic --features 8 --classes 4 --hidden 2000 --batch 2000 "
          "--examples 4000", "VMEM lines");
  refused(SMALL "--batch 16 --export /nonexistent/dir", "--export /nonexistent/dir");
}

Test(train_cli, export_writes_the_data_and_both_networks) {
  char dir[] = "/tmp/train_cli_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char args[512];
  snprintf(args, sizeof args, SMALL "--batch 16 --steps 2 --export %s", dir);
  run_t r = run(args);
  cr_assert_eq(r.status, 0, "%s", r.err);
  const char *names[] = {"x_train", "y_train", "w1_init", "b1_init", "w1_final", "b1_final", "w2_init", "b2_init",
                         "w2_final", "b2_final", "w3_init", "b3_init", "w3_final", "b3_final"};
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s.npy", dir, names[i]);
    cr_assert(exists(path), "no %s", path);
    unlink(path);
  }
  rmdir(dir);
}

Test(train_cli, refuses_bad_learning_rates) {
  const char *bad[] = {"0", "-0.1", "nan", "inf", "1e39", "1e-40", "abc", "0.1x", ""};
  for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char args[256];
    snprintf(args, sizeof args, SMALL "--batch 16 --lr '%s'", bad[i]);
    refused(args, "--lr must be a finite positive number");
  }
}

Test(train_cli, refuses_missing_and_corrupt_data) {
  refused("train --digits /nonexistent/digits.csv.gz", "/nonexistent/digits.csv.gz");
  char path[] = "/tmp/train_cli_digits_XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  cr_assert_eq(write(fd, "\x1f\x8b garbage, not a gzip stream", 29), 29);
  close(fd);
  char args[256];
  snprintf(args, sizeof args, "train --digits %s", path);
  run_t r = run(args);
  cr_assert_eq(r.status, 2, "%s", r.err);
  cr_assert(strstr(r.err, path), "the message names the file: %s", r.err);
  unlink(path);
  refused("train --examples 100", "--data synthetic");
  refused(SMALL "--digits /etc/hostname", "--digits is for --data digits");
}

/* Issue 27: at a learning rate this large the activations overflow, the MXU's inf x 0 puts NaN
 * in the pad lanes (lane 10 past the 10 classes, pad rows past the features), and the chips
 * and the reference trainer used to disagree there ("lane 10 is 0x7fc00000, the reference
 * trainer's 0x00000000"). They agree on every lane; the run stops with the documented
 * message, on every model. */
Test(train_cli, a_diverging_run_agrees_on_the_pad_lanes_and_says_non_finite, .timeout = 240) {
  const char *cases[] = {
      "train --pod 1x1 --mxu 16x16 --hidden 16 --batch 16 --lr 1e20 --steps 20 --model rtl",
      "train --pod 1x1 --mxu 16x16 --hidden 16 --batch 16 --lr 1e20 --steps 20 --model fast",
      "train --pod 1x1 --mxu 16x16 --hidden 16 --batch 16 --lr 1e20 --steps 20 --model check",
      "train --pod 2x2 --batch 64 --lr 1e5 --model fast",
      "train --pod 2x2 --batch 64 --lr 1e5 --model check",
      /* synthetic data: pad rows (10 features on 4 lanes) and pad lanes (3 classes) */
      "train --pod 2x2 --mxu 4x4 --data synthetic --features 10 --classes 3 --hidden 20 --batch 24 --steps 30 "
      "--lr 1e15 --model fast",
      "train --pod 2x2 --mxu 4x4 --mp 4 --data synthetic --features 9 --classes 3 --hidden 24 --batch 12 --steps 30 "
      "--lr 1e8 --model check",
  };
  const char *at_step[] = {"step 2 ", "step 2 ", "step 2 ", "step 4 ", "step 4 ", "step 2 ", "step 3 "};
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    run_t r = run(cases[i]);
    cr_assert_eq(r.status, 1, "%s: exit %d, %s", cases[i], r.status, r.err);
    cr_assert(!strstr(r.err, "reference trainer's"), "%s: the chips and the reference disagree: %s", cases[i], r.err);
    cr_assert(strstr(r.err, "the weights became non-finite at "), "%s: %s", cases[i], r.err);
    cr_assert(strstr(r.err, at_step[i]), "%s: not at %s: %s", cases[i], at_step[i], r.err);
  }
}

Test(train_cli, divergence_stops_with_the_step_and_leaves_no_output) {
  char dir[] = "/tmp/train_cli_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char args[1024], csv[128], fst[128];
  snprintf(csv, sizeof csv, "%s/loss.csv", dir);
  snprintf(fst, sizeof fst, "%s/t.fst", dir);
  snprintf(args, sizeof args, SMALL "--batch 16 --steps 50 --lr 1e30 --loss-csv %s --trace-chip 1 --trace %s", csv, fst);
  run_t r = run(args);
  cr_assert_eq(r.status, 1, "%s", r.err);
  cr_assert(strstr(r.err, "non-finite at step"), "%s", r.err);
  cr_assert(!exists(csv), "a failed run left %s", csv);
  cr_assert(!exists(fst), "a failed run left %s", fst);
  rmdir(dir);
}
