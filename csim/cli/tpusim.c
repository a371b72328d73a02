/* tpusim: the project's command-line tool; dispatches to the commands in commands.h. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "util/cli.h"

typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} command_t;

static const command_t commands[] = {
    {"dot", cmd_dot, "bf16 dot product through the RTL arithmetic units, checked bit-exact"},
    {"chip", cmd_chip, "host time per simulated cycle of a chip: idle, GEMM, routing"},
    {"collective", cmd_collective, "a collective (all-reduce...) as firmware on a slice of a pod, checked bit-exact"},
    {"train", cmd_train, "trains an MLP on a slice: data, model or both parallel, checked bit-exact per step"},
    {"step", cmd_step, "a data-parallel training step on a pod: per-chip GEMMs, then an all-reduce"},
    {"net", cmd_net, "synthetic traffic on a torus of RTL routers: latency, throughput, scoreboard"},
    {"gemm", cmd_gemm, "C = A x B on the RTL MXU (systolic array), checked bit-exact and cycle-exact"},
    {"randprog", cmd_randprog, "random command programs on chips or pods, every run judged (robustness)"},
};

static void usage(FILE *out) {
  fprintf(out,
          "usage: tpusim COMMAND [options]   (tpusim COMMAND --help for its options)\n\n"
          "A cycle-accurate model of a TPU pod: Verilated RTL driven from C.\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_EXIT_USAGE;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return CLI_EXIT_OK;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "tpusim: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return CLI_EXIT_USAGE;
}
