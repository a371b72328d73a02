/*
 * test_infer_cli: `tpusim infer` end to end on the small exported models (build/models, made by
 * `make models-small` from scripts/export_models.py): every layer bit-exact against the golden
 * model on the RTL, the fast model and in lockstep; the same output bits on one chip, on two
 * data-parallel chips and on chips of several cores and MXUs; --print-plan; and each bad input
 * refused with exit 2 before anything is simulated, leaving no --out behind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"

TestSuite(infer_cli, .timeout = 600);

#define CNN "build/models/cnn_small.onnx"
#define CNN_IN "build/models/cnn_small_input.npy"

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static void need_models(void) {
  cr_assert(exists(CNN) && exists(CNN_IN), "the small models are missing: make models-small");
}

/* Runs the CNN with `opts`, expecting success and bit-exactness; its output written to `out`. */
static run_t run_cnn(const char *opts, const char *out) {
  need_models();
  char args[1024];
  snprintf(args, sizeof args, "infer --onnx " CNN " --input " CNN_IN " --json --out %s %s", out, opts);
  run_t r = run(args);
  cr_assert_eq(r.status, 0, "tpusim %s: exit %d\n%s%s", args, r.status, r.out, r.err);
  cr_assert(strstr(r.out, "\"bit_exact\":true"), "%s", r.out);
  cr_assert(strstr(r.out, "\"layers\":[{\"name\""), "%s", r.out);
  cr_assert_gt(json_int(r.out, "cycles"), 0);
  return r;
}

static bool same_file(const char *a, const char *b) {
  char line[512];
  snprintf(line, sizeof line, "cmp -s %s %s", a, b);
  return system(line) == 0;
}

Test(infer_cli, cnn_bit_exact_on_rtl_fast_and_lockstep_with_the_same_cycles) {
  char dir[] = "/tmp/infer_cli_XXXXXX", a[64], b[64], c[64];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(a, sizeof a, "%s/rtl.npy", dir), snprintf(b, sizeof b, "%s/fast.npy", dir), snprintf(c, sizeof c, "%s/check.npy", dir);
  run_t rtl = run_cnn("--mxu 16x16 --model rtl", a);
  run_t fast = run_cnn("--mxu 16x16 --model fast", b);
  run_t check = run_cnn("--mxu 16x16 --model check", c);
  cr_assert_eq(json_int(rtl.out, "cycles"), json_int(fast.out, "cycles"), "rtl %s\nfast %s", rtl.out, fast.out);
  cr_assert_eq(json_int(rtl.out, "cycles"), json_int(check.out, "cycles"));
  cr_assert(same_file(a, b) && same_file(a, c), "the models' outputs differ");
  char line[256];
  snprintf(line, sizeof line, "rm -rf %s", dir);
  cr_assert_eq(system(line), 0);
}

/* Each pixel's arithmetic does not depend on which chip, core or MXU computes it. */
Test(infer_cli, data_parallel_chips_cores_and_mxus_give_the_same_bits) {
  char dir[] = "/tmp/infer_cli_XXXXXX", one[64], two[64], cores[64];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(one, sizeof one, "%s/one.npy", dir), snprintf(two, sizeof two, "%s/two.npy", dir);
  snprintf(cores, sizeof cores, "%s/cores.npy", dir);
  run_cnn("--mxu 16x16 --model fast", one);
  run_t dp = run_cnn("--mxu 16x16 --model fast --pod 2x1", two);
  cr_assert_eq(json_int(dp.out, "chips"), 2);
  cr_assert_eq(json_int(dp.out, "images_per_chip"), 1);
  run_cnn("--mxu 16x16 --mxus 2 --cores 2 --model fast", cores);
  cr_assert(same_file(one, two), "two data-parallel chips changed the output");
  cr_assert(same_file(one, cores), "two cores of two MXUs changed the output");
  char line[256];
  snprintf(line, sizeof line, "rm -rf %s", dir);
  cr_assert_eq(system(line), 0);
}

Test(infer_cli, print_plan_shows_the_schedule_and_the_memory_plan) {
  need_models();
  run_t r = run("infer --onnx " CNN " --mxu 16x16 --print-plan");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "schedule:") && strstr(r.out, "memory plan"), "%s", r.out);
  cr_assert(strstr(r.out, "Conv+Add+Relu"), "the residual is not fused:\n%s", r.out);
  cr_assert(strstr(r.out, "maxpool") && strstr(r.out, "gap"), "%s", r.out);
}

/* A bad request: exit 2 naming `want`, nothing simulated, no --out left. */
static void refused(const char *args, const char *want) {
  cr_assert_lt(strlen(args), 900);
  char dir[] = "/tmp/infer_cli_XXXXXX", full[1024], out[64];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(out, sizeof out, "%s/y.npy", dir);
  snprintf(full, sizeof full, "infer %s --out %s", args, out);
  run_t r = run(full);
  cr_assert_eq(r.status, 2, "tpusim %s: exit %d, want 2\n%s%s", full, r.status, r.out, r.err);
  cr_assert(strstr(r.err, want), "tpusim %s: want '%s' in:\n%s", full, want, r.err);
  cr_assert(!exists(out), "tpusim %s left %s behind", full, out);
  char line[256];
  snprintf(line, sizeof line, "rm -rf %s", dir);
  cr_assert_eq(system(line), 0, "%s is not empty", dir);
}

Test(infer_cli, bad_model_files_are_refused) {
  refused("--onnx /nonexistent/m.onnx", "/nonexistent/m.onnx");
  cr_assert_eq(system("mkdir -p build/tmp && : > build/tmp/empty.onnx && head -c 3000 " CNN " > build/tmp/cut.onnx"
                      " && head -c 4096 /dev/urandom > build/tmp/noise.onnx"), 0);
  refused("--onnx build/tmp/empty.onnx", "empty.onnx");
  refused("--onnx build/tmp/cut.onnx", "cut.onnx");
  refused("--onnx build/tmp/noise.onnx", "noise.onnx");
  refused("", "--onnx");
}

Test(infer_cli, bad_inputs_and_layouts_are_refused) {
  need_models();
  /* an input of the wrong shape and of the wrong dtype */
  cr_assert_eq(system("/usr/bin/python3 -c \"import numpy as n; n.save('build/tmp/x3.npy', n.zeros((2,3,15,16), "
                      "n.float32)); n.save('build/tmp/x64.npy', n.zeros((2,3,16,16)))\""), 0);
  refused("--onnx " CNN " --input build/tmp/x3.npy", "has shape (2, 3, 15, 16)");
  refused("--onnx " CNN " --input build/tmp/x64.npy", "float32");
  refused("--onnx " CNN " --batch 3 --pod 2x1 --model fast", "does not divide the batch");
  refused("--onnx " CNN " --pod 2x1 --dp 1 --model fast", "--dp 1");
  refused("--onnx " CNN " --mp 2", "--mp 2");
  refused("--onnx " CNN " --batch 0", "--batch");
  /* a model that does not fit the chip's HBM, named with the bytes it needs */
  cr_assert_eq(system("echo '{\"chip\": {\"mxu_rows\": 16, \"mxu_cols\": 16, \"hbm_bytes\": 16384}}' > "
                      "build/tmp/tiny_hbm.json"), 0);
  refused("--onnx " CNN " --machine build/tmp/tiny_hbm.json", "bytes of HBM");
}

/* An op the compiler does not lower yet is named before anything runs (the transformer's
 * attention views: docs/models.md, "Status"). */
Test(infer_cli, an_op_not_lowered_is_named) {
  refused("--onnx build/models/transformer_small.onnx --mxu 16x16", "(Transpose): not lowered");
}

/* --profile: a phase a step in the op profile and a valid trace; the report keeps its layers. */
Test(infer_cli, the_profile_has_a_phase_per_layer) {
  need_models();
  cr_assert_eq(system("mkdir -p build/tmp && rm -f build/tmp/infer_profile.json"), 0);
  run_t r = run("infer --onnx " CNN " --mxu 16x16 --model fast --json --profile build/tmp/infer_profile.json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "\"layers\":[{") && strstr(r.out, "\"profile\":{"), "%s", r.out);
  cr_assert(strstr(r.out, "/stem/stem.0/Conv"), "no phase named by the first layer: %s", r.out);
  cr_assert_eq(system("/usr/bin/python3 scripts/check_trace.py build/tmp/infer_profile.json >/dev/null"), 0);
}
