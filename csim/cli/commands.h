/*
 * commands: the `tpusim` subcommands. Each takes its own argv (argv[0] is the command
 * name), prints results on stdout (one JSON object with --json), progress and errors on
 * stderr, and returns the process exit status (cli.h: 0 ok, 1 failed check, 2 bad usage).
 */
#ifndef COMMANDS_H
#define COMMANDS_H

#include <stdbool.h>

#include "fw/collective_args.h"
#include "runtime/status.h"
#include "chip/chip_core.h"
#include "pod/machine.h"
#include "profile/profile.h"
#include "util/cli.h"
#include "util/report.h"
#include "util/stopwatch.h"

int cmd_dot(int argc, char **argv);
int cmd_gemm(int argc, char **argv);
int cmd_net(int argc, char **argv);
int cmd_chip(int argc, char **argv);
int cmd_collective(int argc, char **argv);
int cmd_step(int argc, char **argv);
int cmd_randprog(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_infer(int argc, char **argv);

/* Shared by the commands (cli_shared.c). --slice X0,Y0,WxH into an fw_slice_t (a CLI_CUSTOM
 * parser: numbers 0..255, an empty slice is refused later with the pod). */
bool cmd_parse_slice(const char *cmd, const char *opt, const char *text, void *dst);
/* The machine a command runs (pod/machine.h, docs/machines.md), from its options: --machine
 * FILE or --chip NAME (a preset), then the options that set one field each, over the command's
 * defaults (each command puts its defaults into the fields before parsing). --print-machine
 * prints the machine the options resolve to and exits without simulating. Also the chips'
 * model (docs/scale.md) and --rtl-chips LIST (chip indices y * w + x and ranges a-b): those
 * chips run the Verilated RTL inside a pod of fast (or checked) ones, e.g. to trace one. */
typedef struct {
  const char *machine_path; /* --machine FILE, or NULL */
  bool print_machine;       /* --print-machine */
  int chip;                 /* --chip NAME: a machine_preset index, when chip_given */
  unsigned pod[2], mxu[2];  /* --pod XxY, --mxu RxC */
  unsigned mxus, cores, clock_mhz, hbm_bw, hbm_latency, flit_words, link_bytes, link_latency, threads;
  int model;                /* a chip_model_t (its index in CHIP_MODEL_CHOICES) */
  const char *rtl_chips;    /* --rtl-chips LIST, or NULL */
  bool chip_given, pod_given, mxu_given, mxus_given, cores_given, clock_given, hbm_bw_given, hbm_latency_given,
      flit_given, link_bytes_given, link_latency_given, threads_given, model_given;
  machine_t machine;        /* cmd_machine_resolve's result: machine.pod is the pod_config_t to run */
  bool *rtl_flags;          /* --rtl-chips resolved (machine.pod.rtl_chips; freed by cmd_machine_free) */
} cmd_machine_t;
/* The command's defaults for the fields the options set, before cli_parse: machine_default()'s
 * with a w x h pod of rows x cols chips. */
void cmd_machine_init(cmd_machine_t *m, unsigned w, unsigned h, unsigned rows, unsigned cols);
void cmd_machine_free(cmd_machine_t *m);
/* The options every command that builds chips takes: the machine, the chip's shape, clock,
 * HBM and ICI, the model. The pod commands add CMD_POD_OPTS and their own --pod. */
#define CMD_MACHINE_OPTS(m)                                                                                         \
  CLI_OPT("machine", CLI_INPUT, &(m)->machine_path), CLI_OPT("print-machine", CLI_FLAG, &(m)->print_machine),      \
  CLI_OPT("chip", CLI_CHOICE, &(m)->chip, .shape = machine_preset_names(), .given = &(m)->chip_given),              \
  CLI_OPT("mxu", CLI_DIMS, (m)->mxu, .min = 1, .max = 4096, .shape = "RxC", .given = &(m)->mxu_given),            \
  CLI_OPT("mxus", CLI_UINT, &(m)->mxus, .min = 1, .max = CHIP_MAX_MXUS, .given = &(m)->mxus_given),                \
  CLI_OPT("cores", CLI_UINT, &(m)->cores, .min = 1, .max = CHIP_MAX_CORES, .given = &(m)->cores_given),            \
  CLI_OPT("clock-mhz", CLI_UINT, &(m)->clock_mhz, .min = 1, .max = CHIP_MAX_CLOCK_MHZ, .given = &(m)->clock_given), \
  CLI_OPT("hbm-bw", CLI_UINT, &(m)->hbm_bw, .min = 1, .max = CHIP_MAX_HBM_BYTES_PER_CYCLE,                        \
          .given = &(m)->hbm_bw_given),                                                                             \
  CLI_OPT("hbm-latency", CLI_UINT, &(m)->hbm_latency, .min = 1, .max = CHIP_MAX_HBM_LATENCY,                      \
          .given = &(m)->hbm_latency_given),                                                                        \
  CLI_OPT("flit-words", CLI_UINT, &(m)->flit_words, .min = 1, .max = NOC_FLIT_MAX_WORDS, .given = &(m)->flit_given), \
  CLI_OPT("link-bytes", CLI_UINT, &(m)->link_bytes, .min = 1, .max = 8 * NOC_FLIT_MAX_WORDS,                      \
          .given = &(m)->link_bytes_given),                                                                         \
  CLI_OPT("model", CLI_CHOICE, &(m)->model, .shape = CHIP_MODEL_CHOICES, .given = &(m)->model_given)
#define CMD_POD_OPTS(m)                                                                                             \
  CLI_OPT("link-latency", CLI_UINT, &(m)->link_latency, .min = 0, .max = POD_MAX_LINK_LATENCY,                    \
          .given = &(m)->link_latency_given),                                                                       \
  CLI_OPT("threads", CLI_UINT, &(m)->threads, .min = 1, .max = 255, .given = &(m)->threads_given),                \
  CLI_OPT("rtl-chips", CLI_STR, &(m)->rtl_chips)
#define CMD_MACHINE_HELP                                                                               \
  "--machine FILE: the machine from a JSON file (docs/machines.md; csim/pod/machines/ holds the\n"    \
  "presets'); --chip small|v2|v3: a preset (docs/fidelity.md): v2 two cores of one 128x128 MXU at\n" \
  "700 MHz, v3 two cores of two at 940 MHz, both with 128-byte flits on links of 96 bytes a cycle;\n" \
  "small one 4x4 with 64-bit flits. An option setting what the preset or file sets is refused\n"   \
  "(--mxu, --mxus, --cores, --clock-mhz, --hbm-*, --flit-words, --link-bytes; and what a file\n"  \
  "sets of the pod, links, model, threads): to vary a machine, --print-machine > m.json, edit\n"  \
  "m.json and give --machine m.json. --print-machine prints the machine as a file and exits.\n"  \
  "--model rtl|fast|check: the chips' model (default rtl): the Verilated RTL, the fast C model\n"      \
  "(csim/fast, cycle-equal to the RTL), or both in lockstep, compared every cycle (a difference\n"    \
  "stops the run, exit 1, naming the cycle, chip, unit and both values).\n"                          \
  "--mxus X (default 1): X MXUs per core, the kernels' output tiles going round them; --cores K\n" \
  "(default 1): K cores per chip (the GEMM's rows split over them, training's examples too, each\n" \
  "core a data-parallel replica; the collectives run on core 0). The RTL where RxC[xX][cK] is\n" \
  "built, the fast model up to 2 cores of 4 MXUs (docs/isa.md, \"MXUs\", \"Cores\").\n"            \
  "--clock-mhz F (default 940): the clock reports turn cycles into time with. --hbm-bw B (bytes a\n" \
  "cycle, default 957) and --hbm-latency L (cycles, default 100): each chip's HBM.\n"               \
  "--flit-words W (default 1): ICI flits of W 64-bit words,\n"                                      \
  "a link moving 8W bytes a cycle each way; W > 1 on the fast model only, a power of two up to\n" \
  "16 and a VMEM line (docs/fidelity.md, \"ICI\"). --link-bytes B (default: a flit's): a link\n" \
  "carries B bytes a cycle each way, a token bucket holding flits back (docs/timing.md).\n"
#define CMD_POD_HELP                                                                                   \
  "--link-latency L (default 0): extra cycles on every link each way. --rtl-chips LIST (chip\n"       \
  "indices y*w+x and ranges a-b, comma-separated): those chips run the RTL in a pod of fast or\n"  \
  "checked ones, e.g. to trace one (a fast chip has no waveform). --threads N (default 1): the\n"   \
  "pod's rows split into N bands, each run by a thread, meeting every link latency + 1 cycles;\n"  \
  "results and cycles identical to one thread's (N at most the pod's rows). docs/scale.md.\n"
/* What kind of command resolves the machine: one MXU alone (no chip is built, so none is
 * checked), one chip (a machine file for a bigger pod, or more threads, is refused) or a pod. */
typedef enum { CMD_LONE_MXU, CMD_LONE_CHIP, CMD_POD } cmd_machine_kind_t;
/* The machine of the options (cmd_machine_t's precedence), checked (pod_check, with the chips
 * of --rtl-chips; trace_chip, or -1, must run the RTL): CLI_EXIT_OK; a usage error naming the
 * option or the machine file's key; or CLI_HELP when --print-machine printed it (the command
 * then exits 0 without simulating). */
int cmd_machine_resolve(const char *cmd, cmd_machine_t *m, cmd_machine_kind_t kind, long trace_chip);
/* cmd_machine_resolve in two halves, for a command with checks of its own between them that
 * say more than the machine check would (gemm's square-MXU rules): the machine of the options
 * into m->machine, then its check and --print-machine. */
int cmd_machine_build(const char *cmd, cmd_machine_t *m, cmd_machine_kind_t kind);
int cmd_machine_check(const char *cmd, cmd_machine_t *m, cmd_machine_kind_t kind, long trace_chip);


/* --threads T on a w x h pod, split over the MPI job's ranks (dist.h): each rank takes whole
 * rows and each thread whole rows of its rank's. CLI_EXIT_OK, or a usage error. */
int cmd_split_check(const char *cmd, unsigned threads, unsigned w, unsigned h);
/* A job's failure as a command reports it: a request the machine cannot run (RT_INVALID) is a
 * usage error, exit 2; anything else a failure, exit 1. */
int cmd_job_error(const char *cmd, rt_status_t rs, const char *err);

/* Progress of a long pod run on stderr (pod_config_t.progress; docs/profiling.md): the cycles so
 * far, the rate and, when the run's length is known (expected, 0: not), the time left; for
 * training the step and the last loss (step_total 0: not training). On a terminal a line
 * updated in place every half second; otherwise a line every five seconds (TPUSIM_PROGRESS_SECONDS
 * sets another interval, 0: every call); nothing with --quiet. */
typedef struct {
  const char *cmd;
  ticker_t ticker;
  stopwatch_t watch;
  uint64_t expected;
  uint64_t base;            /* cycles of the runs before this one (training: earlier steps) */
  unsigned step, step_total;
  double loss;
} cmd_progress_t;
/* The environment variables a command reads (TPUSIM_PROGRESS_SECONDS), checked before it runs:
 * CLI_EXIT_OK, or a usage error naming the variable and its range. */
int cmd_check_env(const char *cmd);
void cmd_progress_init(cmd_progress_t *p, const char *cmd);
void cmd_progress(void *ctx, uint64_t cycles);

/* --profile FILE.json, --profile-chips LIST, --op-profile and --quiet, on every command that runs
 * chips (docs/profiling.md). */
typedef struct {
  const char *path;     /* --profile: the Chrome / Perfetto trace to write */
  const char *chips;    /* --profile-chips LIST (indices y*w+x and ranges a-b) */
  bool op, quiet;       /* --op-profile (the op profile without a trace), --quiet */
  profile_t *prof;
  profile_summary_t sum;
  char keys[PROFILE_MAX_PHASES + 8][8][48];
  char tmpl[PROFILE_MAX_PHASES + 8][320];
} cmd_profile_t;
#define CMD_PROFILE_OPTS(o)                                \
  CLI_OPT("profile", CLI_OUTPUT, &(o)->path),              \
  CLI_OPT("profile-chips", CLI_STR, &(o)->chips),          \
  CLI_OPT("op-profile", CLI_FLAG, &(o)->op),               \
  CLI_OPT("quiet", CLI_FLAG, &(o)->quiet)
#define CMD_PROFILE_HELP                                                                                 \
  "--profile FILE.json: a Chrome/Perfetto trace of the run (a process per chip, a track per queue,\n"  \
  "unit and semaphore, link and HBM counters; open it in ui.perfetto.dev) and the op profile in the\n" \
  "report; --op-profile: the op profile alone; --profile-chips LIST (indices y*w+x, ranges a-b):\n"   \
  "the chips to profile (default the first 64). --quiet: no progress on stderr. docs/profiling.md.\n"
/* The profile options' checks alone (before --check returns): --profile-chips needs --profile or
 * --op-profile, and names chips of the w x h pod. CLI_EXIT_OK or a usage error. */
int cmd_profile_check(const char *cmd, const cmd_profile_t *o, unsigned w, unsigned h);
/* After parsing: sets --quiet, checks the list against the w x h pod (a usage error outside it)
 * and makes the profile when asked for (o->prof; NULL when not). CLI_EXIT_OK or the error. */
int cmd_profile_begin(const char *cmd, cmd_profile_t *o, unsigned w, unsigned h, double clock_mhz, unsigned rows,
                      unsigned cols);
/* After a run that worked: writes the trace (if asked for) and puts the op profile in r (its
 * values under "profile", its lines after the report's). CLI_EXIT_OK, or the failure. Under
 * mpirun every rank calls it: rank 0 gathers the ranks' chips (profile_gather) and writes. */
int cmd_profile_end(const char *cmd, cmd_profile_t *o, report_t *r);
void cmd_profile_free(cmd_profile_t *o);

/* Runs scripts/<script_name> (found from the tpusim binary's directory) with python3 on csv,
 * writing png with a title. 0 on success, else -1 with what went wrong in err (the script
 * prints its own reason on stderr). */
int cmd_plot(const char *exe_dir, const char *script_name, const char *csv, const char *png, const char *title,
             char *err, size_t errlen);

#endif
