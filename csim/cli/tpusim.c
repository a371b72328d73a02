/* tpusim: the project's command-line tool; dispatches to the commands in commands.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "util/dist.h"
#include "util/cli.h"
#include "util/outfile.h"

typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
  bool mpi; /* runs a pod that mpirun can split over ranks (docs/scale.md "MPI") */
} command_t;

static const command_t commands[] = {
    {"dot", cmd_dot, "bf16 dot product through the RTL arithmetic units, checked bit-exact", false},
    {"chip", cmd_chip, "host time per simulated cycle of a chip: idle, GEMM, routing", false},
    {"collective", cmd_collective, "a collective (all-reduce...) as firmware on a slice of a pod, checked bit-exact",
     true},
    {"train", cmd_train, "trains an MLP on a slice: data, model or both parallel, checked bit-exact per step", true},
    {"step", cmd_step, "a data-parallel training step on a pod: per-chip GEMMs, then an all-reduce", true},
    {"net", cmd_net, "synthetic traffic on a torus of RTL routers: latency, throughput, scoreboard", false},
    {"infer", cmd_infer, "a model from an ONNX file (ResNet, BERT) compiled to firmware, data parallel, checked bit-exact",
     false},
    {"gemm", cmd_gemm, "C = A x B on the RTL MXU (systolic array), checked bit-exact and cycle-exact", false},
    {"randprog", cmd_randprog, "random command programs on chips or pods, every run judged (robustness)", true},
};

static void usage(FILE *out) {
  fprintf(out,
          "usage: tpusim COMMAND [options]   (tpusim COMMAND --help for its options)\n\n"
          "A cycle-accurate model of a TPU pod: Verilated RTL driven from C.\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
}

/* Under mpirun every rank runs the command; rank 0 alone prints (the others' output would be
 * the same, the host's program being the same on every rank). */
static int run_command(const command_t *c, int argc, char **argv) {
  char err[256];
  const int d = dist_init(&argc, &argv, err, sizeof err);
  if (d) {
    if (dist_rank() == 0) fprintf(stderr, "tpusim: %s\n", err);
    const int rc = d == -2 ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
    dist_finalize(rc);
    return rc;
  }
  if (dist_active() && !c->mpi) {
    if (dist_rank() == 0)
      fprintf(stderr, "tpusim %s: runs no pod to split over MPI ranks: run it without mpirun (under mpirun: "
              "collective, step, train, randprog)\n", c->name);
    dist_finalize(CLI_EXIT_USAGE);
    return CLI_EXIT_USAGE;
  }
  const bool quiet_rank = dist_rank() > 0 && !getenv("TPUSIM_DEBUG_RANKS"); /* (docs/scale.md "MPI") */
  if (quiet_rank && (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))) dist_abort(1);
  /* the outputs are renamed into place, or removed, whatever the command did */
  int rc = cmd_check_env(c->name);
  if (rc == CLI_EXIT_OK) rc = outfile_finish(c->name, c->run(argc - 1, argv + 1));
  dist_finalize(rc); /* (stops the job if the other ranks do not end too) */
  return rc;
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
    if (!strcmp(argv[1], commands[i].name)) return run_command(&commands[i], argc, argv);
  fprintf(stderr, "tpusim: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return CLI_EXIT_USAGE;
}
