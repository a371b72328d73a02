/*
 * fuzz_cli: libFuzzer harness for the command lines of every `tpusim` command, `make fuzz`.
 * The input is argv, one argument per line (the first names the command); the harness puts
 * --check before the rest, so the command parses and checks everything (files included)
 * and then stops before simulating. It must return 0 or 2, never crash or hang. Runs in a temporary
 * directory (output checks create and remove probe files). Seeds: tests/fuzz/corpus/cli.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
  const char *name;
  int (*run)(int, char **);
} commands[] = {{"dot", cmd_dot},   {"gemm", cmd_gemm},       {"net", cmd_net},           {"chip", cmd_chip},
                {"collective", cmd_collective}, {"step", cmd_step}, {"randprog", cmd_randprog}};

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  char dir[] = "/tmp/fuzz_cli_XXXXXX";
  if (!mkdtemp(dir) || chdir(dir)) abort();
  return 0;
}

enum { MAX_ARGS = 24, MAX_ARG = 256 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char text[MAX_ARGS * MAX_ARG];
  char *tok[MAX_ARGS], *argv[MAX_ARGS + 2];
  int ntok = 0;
  size_t i = 0, used = 0;
  while (i < size && ntok < MAX_ARGS) {
    size_t start = i;
    while (i < size && data[i] != '\n' && data[i] != 0) i++;
    size_t n = i - start < MAX_ARG - 1 ? i - start : MAX_ARG - 1;
    memcpy(text + used, data + start, n);
    text[used + n] = 0;
    tok[ntok++] = text + used;
    used += n + 1;
    i++;
  }
  if (ntok == 0) return 0;
  /* the command, then --check first: no option can take it as its value */
  int argc = 0;
  argv[argc++] = tok[0];
  argv[argc++] = "--check";
  for (int t = 1; t < ntok; t++) argv[argc++] = tok[t];
  argv[argc] = NULL;
  for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
    if (!strcmp(argv[0], commands[c].name)) {
      int rc = commands[c].run(argc, argv);
      if (rc != 0 && rc != 2) {
        fprintf(stderr, "fuzz_cli: %s exited %d under --check\n", argv[0], rc);
        __builtin_trap();
      }
      return 0;
    }
  return 0;
}
