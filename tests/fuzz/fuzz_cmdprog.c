/*
 * fuzz_cmdprog: libFuzzer harness for command programs on an RTL chip, `make fuzz`. The
 * input is a program pair (a byte: the compute queue's command count, its 32-byte
 * commands, then the DMA queue's); it runs on one 4x4 chip that lives through every input
 * and is judged as a mutated random-program set (verify/randprog_run.h): each queue must
 * halt, stop or wait where the golden command checker allows, the chip must be usable for
 * the next input. Seeds: tests/fuzz/corpus/cmdprog (`tpusim randprog --save`).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw/hal.h"
#include "verify/randprog.h"
#include "verify/randprog_run.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_COMMANDS = 64, MAX_CYCLES = 5000 };
static randprog_bench_t *bench;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  char err[512];
  bench = randprog_bench_new(1, 1, 4, 4, 1, 1, 1, CHIP_MODEL_RTL, 1, err, sizeof err);
  if (!bench) {
    fprintf(stderr, "fuzz_cmdprog: %s\n", err);
    abort();
  }
  return 0;
}

static size_t take(fw_prog_t *p, const uint8_t *data, size_t size, size_t count) {
  size_t n = 0;
  for (; n < count && n < MAX_COMMANDS && (n + 1) * 32 <= size; n++) {
    uint32_t w[ISA_CMD_WORDS];
    memcpy(w, data + n * 32, sizeof w);
    fw_raw(p, w);
  }
  return n * 32;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  fw_prog_t progs[1][2];
  fw_prog_init(&progs[0][0]);
  fw_prog_init(&progs[0][1]);
  size_t used = 1 + take(&progs[0][ISA_QUEUE_COMPUTE], data + 1, size - 1, data[0]);
  take(&progs[0][ISA_QUEUE_DMA], data + used, size - used, MAX_COMMANDS);
  randprog_t p = {.kind = RANDPROG_MUTATED, .seed = size, .chips = 1, .prog = progs, .max_cycles = MAX_CYCLES};
  snprintf(p.what, sizeof p.what, "a fuzzed program pair");
  randprog_stats_t st = {0};
  char why[2048];
  if (randprog_bench_run(bench, &p, &st, why, sizeof why)) {
    fprintf(stderr, "fuzz_cmdprog: %s\n", why);
    __builtin_trap();
  }
  fw_prog_free(&progs[0][0]);
  fw_prog_free(&progs[0][1]);
  return 0;
}
