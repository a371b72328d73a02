/*
 * cmd_train: `tpusim train`, an MLP trained on a slice of a pod of RTL chips (docs/training.md):
 * load the data (digits or synthetic), initialise the network, run every step as firmware
 * on the chips (runtime/pod_train) and the reference trainer (golden/train_golden) beside
 * them, compare every chip's parameters and probabilities bit for bit after every step,
 * then report accuracy, the step's cycle split and throughput.
 */
#include <float.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "util/dist.h"
#include "golden/arith_golden.h"
#include "job/train_job.h"
#include "chip/chip.h"
#include "util/bits.h"
#include "util/cli.h"
#include "util/outfile.h"
#include "util/dataset.h"
#include "util/npy.h"
#include "util/report.h"
#include "util/rng.h"
#include "util/stopwatch.h"

typedef struct {
  unsigned dp, mp, hidden, batch, steps, examples, features, classes;
  unsigned trace_chip, trace_steps, print_every;
  uint64_t seed;
  fw_slice_t slice;
  const char *loss_csv, *plot, *trace, *digits, *export_dir;
  float lr;
  int data;  /* 0 digits, 1 synthetic */
  bool json, have_slice, have_dp, have_mp, have_tchip, have_tsteps, have_examples, have_features, have_classes,
      have_print_every;
  char exe_dir[4096];
  cmd_machine_t mach;      /* mach.machine.pod: the pod (its chips' seed: --seed) */
  cmd_profile_t prof;
  cmd_progress_t progress;
} train_opts_t;

#define PLOT_EXTENSIONS "png|svg|pdf"

static void train_help(void) {
  printf("usage: tpusim train [--pod XxY] [--slice X0,Y0,WxH] [--dp A] [--mp B] [--hidden H] [--batch B]\n"
         "                    [--steps S] [--lr LR] [--data digits|synthetic] [--examples N] [--features F]\n"
         "                    [--classes K] [--mxu RxC] [--seed S] [--loss-csv FILE] [--plot FILE.png]\n"
         "                    [--trace-chip N --trace FILE.fst [--trace-steps N]] [--digits FILE]\n"
         "                    [--export DIR] [--print-every N] [--clock-mhz F] [--link-latency L]\n"
         "                    [--model rtl|fast|check] [--rtl-chips LIST] [--json]\n"
         "                    [--profile FILE.json] [--profile-chips LIST] [--op-profile] [--quiet]\n\n"
         "Trains an MLP (input -> H -> H -> classes, ReLU, softmax cross-entropy, SGD) on a slice of\n"
         "RTL chips (default: the whole 4x4 pod of 16x16-MXU chips, data parallel, the digits data\n"
         "set, hidden 64, batch 256, 300 steps, lr 0.5). Every step runs as firmware: forward,\n"
         "backward, the all-reduces and the update. --dp A --mp B: data parallel along X, model\n"
         "parallel (Megatron-style) along Y of an A x B slice; --mp alone: model parallel over the\n"
         "slice. After every step each chip's parameters and probabilities are compared bit for bit\n"
         "with the reference trainer. Prints the loss as it goes (stderr), then accuracy, the step's\n"
         "cycles split into compute, communication and exposed communication, MXU utilisation and\n"
         "TFLOPS. --export DIR writes the data in step order and the initial and final weights as\n"
         ".npy (for scripts/train_numpy.py). Synthetic data: --examples, --features, --classes.\n"
         "--trace-steps N: the FST holds the first N steps only. --plot FILE: the loss curve drawn by\n"
         "scripts/plot_loss.py, as FILE's extension says (.png, .svg or .pdf). --print-every N: the\n"
         "loss on stderr every N steps (default a tenth of them; not with --quiet).\n"
         CMD_MACHINE_HELP CMD_POD_HELP CMD_PROFILE_HELP CLI_EXIT_STATUS_HELP);
}

static bool parse_lr(const char *cmd, const char *opt, const char *text, void *dst) {
  double v = 0;
  const bool number = cli_real(text, &v);
  float f = (float)v;
  /* the vector unit reads subnormals as zero (docs/numerics.md): such a rate would not train */
  if (!number || !(v > 0) || !isfinite(f) || !(f >= FLT_MIN)) {
    cli_usage_error(cmd, "%s must be a finite positive number of at least %g (fp32, not subnormal), got '%s'", opt,
                    (double)FLT_MIN, text);
    return false;
  }
  *(float *)dst = f;
  return true;
}

/* The files --export writes into its directory. */
static const char *const EXPORTS[] = {"x_train", "y_train", "w1_init", "b1_init", "w1_final", "b1_final", "w2_init",
                                      "b2_init", "w2_final", "b2_final", "w3_init", "b3_init", "w3_final", "b3_final"};
enum { EXPORT_FILES = sizeof EXPORTS / sizeof EXPORTS[0] };

static void export_path(const char *dir, unsigned i, char *path, size_t len) {
  snprintf(path, len, "%s/%s.npy", dir, EXPORTS[i]);
}

/* --export DIR: a directory; each file it will hold claimed as an output (a directory or
 * anything but a regular file in the way is refused now, not after the run). */
static int claim_exports(const char *dir) {
  if (!outfile_dir_ok("train", "--export", dir)) return CLI_EXIT_USAGE;
  char path[4400];
  for (unsigned i = 0; i < EXPORT_FILES; i++) {
    export_path(dir, i, path, sizeof path);
    if (!outfile_claim("train", "--export", path)) return CLI_EXIT_USAGE;
  }
  return CLI_EXIT_OK;
}

static int parse(int argc, char **argv, train_opts_t *o) {
  memset(o, 0, sizeof *o);
  cmd_machine_init(&o->mach, 4, 4, 16, 16);
  o->hidden = 64, o->batch = 256, o->steps = 300, o->lr = 0.5f, o->seed = 1;
  o->examples = 4096, o->features = 64, o->classes = 10;
  const cli_opt_t opts[] = {
      CLI_OPT("pod", CLI_DIMS, o->mach.pod, .min = 1, .max = POD_MAX_SIZE, .shape = "XxY", .given = &o->mach.pod_given),
      CLI_OPT("slice", CLI_CUSTOM, &o->slice, .given = &o->have_slice, .parse = cmd_parse_slice),
      CLI_OPT("dp", CLI_UINT, &o->dp, .min = 1, .max = 65025, .given = &o->have_dp),
      CLI_OPT("mp", CLI_UINT, &o->mp, .min = 1, .max = 65025, .given = &o->have_mp),
      CLI_OPT("hidden", CLI_UINT, &o->hidden, .min = 1, .max = 1u << 16),
      CLI_OPT("batch", CLI_UINT, &o->batch, .min = 1, .max = 1u << 20),
      CLI_OPT("steps", CLI_UINT, &o->steps, .min = 1, .max = 1u << 24),
      CLI_OPT("lr", CLI_CUSTOM, &o->lr, .parse = parse_lr),
      CLI_OPT("data", CLI_CHOICE, &o->data, .shape = "digits|synthetic"),
      CLI_OPT("examples", CLI_UINT, &o->examples, .min = 2, .max = DATASET_MAX_EXAMPLES, .given = &o->have_examples),
      CLI_OPT("features", CLI_UINT, &o->features, .min = 1, .max = 1u << 16, .given = &o->have_features),
      CLI_OPT("classes", CLI_UINT, &o->classes, .min = 2, .max = 4096, .given = &o->have_classes),
      CLI_OPT("seed", CLI_U64, &o->seed, .min = 0, .max = UINT64_MAX),
      CLI_OPT("loss-csv", CLI_OUTPUT, &o->loss_csv),
      CLI_OPT("plot", CLI_OUTPUT, &o->plot),
      CLI_OPT("trace-chip", CLI_UINT, &o->trace_chip, .min = 0, .max = 65535, .given = &o->have_tchip),
      CLI_OPT("trace", CLI_OUTPUT, &o->trace),
      CLI_OPT("trace-steps", CLI_UINT, &o->trace_steps, .min = 1, .max = 1u << 24, .given = &o->have_tsteps),
      CLI_OPT("digits", CLI_INPUT, &o->digits),
      CLI_OPT("export", CLI_STR, &o->export_dir),
      CLI_OPT("print-every", CLI_UINT, &o->print_every, .min = 0, .max = 1u << 24, .given = &o->have_print_every),
      CLI_OPT("json", CLI_FLAG, &o->json),
      CMD_MACHINE_OPTS(&o->mach),
      CMD_POD_OPTS(&o->mach),
      CMD_PROFILE_OPTS(&o->prof),
      {0}};
  int rc = cli_parse("train", argc, argv, opts, train_help);
  if (rc != CLI_EXIT_OK) return rc;
  if ((o->have_tchip || o->have_tsteps) && !o->trace)
    return cli_usage_error("train", "--trace-chip and --trace-steps need --trace FILE.fst");
  if (o->have_print_every && o->prof.quiet)
    return cli_usage_error("train", "--print-every sets how often the loss is printed on stderr, and --quiet prints none");
  /* matplotlib writes what the extension names (scripts/plot_loss.py): these three need no more packages */
  if (o->plot && !cli_output_ext("train", "--plot", o->plot, PLOT_EXTENSIONS)) return CLI_EXIT_USAGE;
  if ((rc = cmd_machine_resolve("train", &o->mach, CMD_POD, o->trace ? (long)o->trace_chip : -1)) != CLI_EXIT_OK)
    return rc;
  pod_config_t *pc = &o->mach.machine.pod;
  pc->chip.seed = o->seed;
  if (o->data == 0 && (o->have_examples || o->have_features || o->have_classes))
    return cli_usage_error("train", "--examples, --features and --classes are for --data synthetic (digits has "
                           "%u examples of %u features, %u classes)", DIGITS_EXAMPLES, DIGITS_FEATURES, DIGITS_CLASSES);
  if (o->data == 1 && o->digits) return cli_usage_error("train", "--digits is for --data digits");
  /* (the default data file is an input too: no output may replace it) */
  if (o->data == 0 && !o->digits && !outfile_input("train", "the digits data", DATASET_DIGITS_PATH)) return CLI_EXIT_USAGE;
  if (o->export_dir && (rc = claim_exports(o->export_dir)) != CLI_EXIT_OK) return rc;
  if (!o->have_slice) o->slice = (fw_slice_t){0, 0, pc->size_x, pc->size_y, 0, 0};
  const unsigned chips = o->slice.w * o->slice.h;
  if (!o->have_dp && !o->have_mp) o->dp = chips ? chips : 1, o->mp = 1;
  else if (!o->have_dp) o->dp = o->mp && chips % o->mp == 0 && chips >= o->mp ? chips / o->mp : 1;
  else if (!o->have_mp) o->mp = o->dp && chips % o->dp == 0 && chips >= o->dp ? chips / o->dp : 1;
  if ((o->plot || o->export_dir || o->loss_csv) && dist_active())
    return cli_usage_error("train", "--loss-csv, --plot and --export under mpirun: every rank would write the same "
                           "files; run without mpirun to write them");
  if (o->plot || o->export_dir)
    if (!cli_exe_dir(o->exe_dir, sizeof o->exe_dir)) return cli_fail("train", "cannot find the tpusim binary's directory");
  if (o->trace && o->trace_chip >= pc->size_x * pc->size_y)
    return cli_usage_error("train", "--trace-chip %u is outside the %ux%u pod", o->trace_chip, pc->size_x, pc->size_y);
  return CLI_EXIT_OK;
}

/* The data: the digits' fixed split or synthetic examples (80/20 the same way); the job
 * shuffles the training set from the seed. */
static int load_data(const train_opts_t *o, dataset_t *train, dataset_t *test) {
  dataset_t all = {0};
  char err[1024];
  int bad = o->data == 0 ? dataset_read_digits(o->digits, &all, err, sizeof err)
                         : dataset_synthetic(o->examples, o->features, o->classes, o->seed, &all, err, sizeof err);
  if (!bad) bad = dataset_split(&all, train, test, err, sizeof err);
  dataset_free(&all);
  return bad ? cli_usage_error("train", "%s", err) : CLI_EXIT_OK;
}

/* Writes export file i, rows x cols fp32 bit patterns, to its temporary; 0 or -1 with err. */
static int export_npy(const char *dir, unsigned i, const uint32_t *bits, size_t rows, size_t cols, char *err,
                      size_t errlen) {
  char path[4400];
  export_path(dir, i, path, sizeof path);
  return npy_write_f32_2d_file(outfile_temp(path), (const float *)(const void *)bits, rows, cols, err, errlen);
}

/* Writes the loss curve (step, loss, cycles) to f, closing it: 0, or -1 with errno. */
static int write_csv(FILE *f, const train_job_step_t *rec, unsigned steps) {
  if (!f) return -1;
  fprintf(f, "step,loss,cycles\n");
  for (unsigned s = 0; s < steps; s++) fprintf(f, "%u,%.6f,%" PRIu64 "\n", s + 1, rec[s].loss, rec[s].cycles);
  return outfile_close(f);
}


static int do_export(const char *d, const train_job_t *j) {
  const train_job_result_t *r = train_job_result(j);
  const dataset_t *train = &train_job_config(j)->train;
  const unsigned F = train->features;
  uint32_t *xf = malloc((size_t)train->count * F * 4), *lab = malloc((size_t)train->count * 4);
  int bad = !xf || !lab;
  for (size_t i = 0; !bad && i < (size_t)train->count * F; i++) xf[i] = arith_golden_bf16_to_fp32(r->x_bf16[i]);
  for (unsigned i = 0; !bad && i < train->count; i++) lab[i] = bits_of_float((float)train->label[i]);
  char err[1024] = "out of memory";
  bad = bad || export_npy(d, 0, xf, train->count, F, err, sizeof err) ||
        export_npy(d, 1, lab, train->count, 1, err, sizeof err);
  for (unsigned l = 0; l < FW_TRAIN_LAYERS && !bad; l++) {
    const unsigned n = 2 + 4 * l;
    unsigned rows, cols;
    train_job_layer_shape(j, l, &rows, &cols);
    bad = export_npy(d, n, r->w_init[l], rows, cols, err, sizeof err) ||
          export_npy(d, n + 1, r->b_init[l], 1, cols, err, sizeof err) ||
          export_npy(d, n + 2, r->w_final[l], rows, cols, err, sizeof err) ||
          export_npy(d, n + 3, r->b_final[l], 1, cols, err, sizeof err);
  }
  free(xf), free(lab);
  return bad ? cli_fail("train", "cannot write the export files into %s: %s", d, err) : CLI_EXIT_OK;
}

/* The job's callbacks around each step: the progress line and, every so many steps, the loss. */
static void before_step(void *ctx, unsigned s) { ((train_opts_t *)ctx)->progress.step = s; }

static void on_step(void *ctx, unsigned s, const train_job_step_t *rec) {
  train_opts_t *o = ctx;
  const unsigned steps = o->steps, every = o->print_every ? o->print_every : (steps >= 10 ? steps / 10 : 1);
  o->progress.loss = rec->loss;
  o->progress.base += rec->cycles;
  o->progress.step = s + 1;
  cmd_progress(&o->progress, 0);
  if ((s + 1) % every == 0 || s + 1 == steps)
    cli_note("train: step %u/%u  loss %.4f  %" PRIu64 " cycles  (%.1f s)", s + 1, steps, rec->loss, rec->cycles,
             rec->wall_s);
}

static int report(train_opts_t *o, const train_job_t *j, double wall) {
  const train_job_result_t *r = train_job_result(j);
  const train_job_config_t *c = train_job_config(j);
  const chip_config_t *chip = &o->mach.machine.pod.chip;
  report_t rp;
  report_init(&rp);
  report_u64(&rp, "chips", r->chips);
  report_u64(&rp, "dp", o->dp);
  report_u64(&rp, "mp", o->mp);
  report_str(&rp, "data", o->data ? "synthetic" : "digits");
  report_u64(&rp, "features", c->train.features);
  report_u64(&rp, "hidden", o->hidden);
  report_u64(&rp, "classes", c->train.classes);
  report_u64(&rp, "batch", o->batch);
  report_u64(&rp, "batch_per_chip", r->batch_per_chip);
  report_u64(&rp, "steps", o->steps);
  report_f64(&rp, "lr", o->lr);
  report_u64(&rp, "train_examples", c->train.count);
  report_u64(&rp, "test_examples", c->test.count);
  report_f64(&rp, "first_loss", r->steps[0].loss);
  report_f64(&rp, "final_loss", r->steps[o->steps - 1].loss);
  report_f64(&rp, "train_accuracy", r->train_accuracy);
  report_f64(&rp, "test_accuracy", r->test_accuracy);
  report_u64(&rp, "step_cycles", r->step_cycles);
  report_u64(&rp, "compute_cycles", r->compute_cycles);
  report_u64(&rp, "comm_cycles", r->comm_cycles);
  report_u64(&rp, "exposed_comm_cycles", r->exposed_cycles);
  report_f64(&rp, "exposed_fraction", (double)r->exposed_cycles / (double)r->step_cycles);
  report_f64(&rp, "overlap_fraction", r->comm_cycles ? 1.0 - (double)r->exposed_cycles / (double)r->comm_cycles : 0.0);
  report_f64(&rp, "mxu_utilization", r->mxu_utilization);
  report_f64(&rp, "model_macs", r->model_macs);
  report_f64(&rp, "tflops", r->tflops);
  report_u64(&rp, "clock_mhz", chip->clock_mhz);
  report_bool(&rp, "reference_bit_exact", true);
  report_u64(&rp, "steps_checked", o->steps);
  report_f64(&rp, "wall_s", wall);
  report_text_u64(&rp, "rows", chip->rows);
  report_text_u64(&rp, "cols", chip->cols);
  report_text_u64(&rp, "sw", c->slice.w);
  report_text_u64(&rp, "sh", c->slice.h);
  report_line(&rp, "training on a {sw}x{sh} slice of {rows}x{cols}-MXU chips: dp {dp} x mp {mp}, {data} data");
  report_line(&rp, "  network   {features}-{hidden}-{hidden}-{classes}, batch {batch} ({batch_per_chip} a chip), "
                   "{steps} steps, lr {lr:%g}");
  report_line(&rp, "  loss      {first_loss:%.4f} -> {final_loss:%.4f}");
  report_line(&rp, "  accuracy  train {train_accuracy*100:%.2f}% ({train_examples} examples), test "
                   "{test_accuracy*100:%.2f}% ({test_examples})");
  report_line(&rp, "  step      {step_cycles} cycles: compute {compute_cycles}, communication {comm_cycles} "
                   "(alone), exposed {exposed_comm_cycles} ({exposed_fraction*100:%.1f}% of the step, "
                   "{overlap_fraction*100:%.1f}% of it hidden)");
  report_line(&rp, "  MXU       {mxu_utilization*100:%.1f}% utilised on each chip; the model's {tflops:%.3f} TFLOPS at {clock_mhz} MHz");
  report_line(&rp, "  reference every chip's parameters and probabilities agree on every bit after each of "
                   "{steps_checked} steps");
  report_line(&rp, "  host      {wall_s:%.1f} s");
  if (o->trace) {
    report_text_str(&rp, "trace", o->trace);
    report_text_u64(&rp, "trace_chip", o->trace_chip);
    report_line(&rp, "  trace     {trace} (chip {trace_chip}): make view WAVE=train");
  }
  const int prc = cmd_profile_end("train", &o->prof, &rp);
  if (prc != CLI_EXIT_OK) return prc;
  return report_print(&rp, o->json, stdout) ? cli_fail("train", "cannot write the report") : CLI_EXIT_OK;
}

/* --loss-csv and --plot: the loss curve as a CSV and as a plot (from a scratch CSV). */
static int write_loss_outputs(const train_opts_t *o, const train_job_result_t *r) {
  if (o->loss_csv && write_csv(outfile_open(o->loss_csv, "w"), r->steps, o->steps))
    return cli_fail("train", "cannot write '%s': %s", o->loss_csv, strerror(errno));
  if (!o->plot) return CLI_EXIT_OK;
  const char *csv = outfile_scratch(o->plot, "csv");
  char title[256], err[4400];
  snprintf(title, sizeof title, "%s, %ux%u slice, dp %u x mp %u, batch %u, lr %g", o->data ? "synthetic" : "digits",
           o->slice.w, o->slice.h, o->dp, o->mp, o->batch, (double)o->lr);
  if (write_csv(fopen(csv, "w"), r->steps, o->steps))
    return cli_fail("train", "cannot write the plot's data beside '%s': %s", o->plot, strerror(errno));
  if (cmd_plot(o->exe_dir, "plot_loss.py", csv, outfile_temp(o->plot), title, err, sizeof err))
    return cli_fail("train", "cannot plot the loss to '%s': %s", o->plot, err);
  return CLI_EXIT_OK;
}

int cmd_train(int argc, char **argv) {
  train_opts_t o;
  int rc = parse(argc, argv, &o);
  if (rc != CLI_EXIT_OK) {
    cmd_machine_free(&o.mach);
    return rc == CLI_HELP ? CLI_EXIT_OK : rc;
  }
  train_job_config_t cfg = {.machine = o.mach.machine.pod, .slice = o.slice, .hidden = o.hidden, .batch = o.batch,
                            .dp = o.dp, .mp = o.mp, .steps = o.steps, .lr = o.lr, .seed = o.seed,
                            .trace_path = o.trace ? outfile_temp_fst(o.trace) : NULL, .trace_chip = o.trace_chip, .trace_steps = o.trace_steps,
                            .before_step = before_step, .on_step = on_step, .ctx = &o};
  train_job_t *j = NULL;
  char err[4096];
  rt_status_t rs;
  if ((rc = load_data(&o, &cfg.train, &cfg.test)) != CLI_EXIT_OK) goto out;
  cfg.machine.progress = cmd_progress, cfg.machine.progress_ctx = &o.progress;
  if (!(j = train_job_new(&cfg, &rs, err, sizeof err))) {
    rc = cmd_job_error("train", rs, err);
    goto out;
  }
  if ((rc = cmd_profile_check("train", &o.prof, cfg.machine.size_x, cfg.machine.size_y)) != CLI_EXIT_OK) goto out;
  if (cli_check_only()) {
    rc = cli_checked("train");
    goto out;
  }
  const pod_config_t *pc = &o.mach.machine.pod;
  if ((rc = cmd_profile_begin("train", &o.prof, pc->size_x, pc->size_y, pc->chip.clock_mhz, pc->chip.rows,
                              pc->chip.cols)) != CLI_EXIT_OK)
    goto out;
  cmd_progress_init(&o.progress, "train");
  o.progress.step_total = o.steps;
  const train_job_config_t *jc = train_job_config(j);
  cli_note("train: %u chips (dp %u x mp %u), %u-%u-%u-%u, batch %u (%u a chip), %u steps, lr %g", jc->slice.w * jc->slice.h,
           o.dp, o.mp, jc->train.features, o.hidden, o.hidden, jc->train.classes, o.batch, train_job_plan(j)->batch_per_chip, o.steps,
           (double)o.lr);
  stopwatch_t sw;
  stopwatch_start(&sw);
  if ((rs = train_job_train(j, o.prof.prof, err, sizeof err)) != RT_OK) {
    rc = cmd_job_error("train", rs, err);
    goto out;
  }
  cli_note("train: measuring the step's compute and communication alone...");
  if ((rs = train_job_measure(j, err, sizeof err)) != RT_OK) {
    rc = cli_fail("train", "%s", err);
    goto out;
  }
  const double wall = stopwatch_seconds(&sw);
  if ((rc = write_loss_outputs(&o, train_job_result(j))) != CLI_EXIT_OK) goto out;
  if (o.export_dir && (rc = do_export(o.export_dir, j)) != CLI_EXIT_OK) goto out;
  rc = report(&o, j, wall); /* (the outputs are renamed into place when the command succeeds) */
out:
  dataset_free(&cfg.train), dataset_free(&cfg.test); /* (moved into the job unless it was never made) */
  train_job_free(j);
  cmd_profile_free(&o.prof);
  cmd_machine_free(&o.mach);
  return rc;
}
