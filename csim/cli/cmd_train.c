/*
 * cmd_train: `tpusim train`, an MLP trained on a slice of a pod of RTL chips (docs/training.md):
 * load the data (digits or synthetic), initialise the network, run every step as firmware
 * on the chips (runtime/pod_train) and the reference trainer (golden/train_golden) beside
 * them, compare every chip's parameters and probabilities bit for bit after every step,
 * then report accuracy, the step's cycle split and throughput.
 */
#include <float.h>
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
#include "golden/train_golden.h"
#include "runtime/pod_train.h"
#include "chip/chip.h"
#include "util/bits.h"
#include "util/cli.h"
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
  bool json, have_slice, have_dp, have_mp, have_tchip, have_tsteps, have_examples, have_features, have_classes;
  char exe_dir[4096];
  cmd_machine_t mach;      /* mach.machine.pod: the pod (its chips' seed: --seed) */
  cmd_profile_t prof;
  cmd_progress_t progress;
} train_opts_t;

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
         "--trace-steps N: the FST holds the first N steps only.\n"
         CMD_MACHINE_HELP CMD_POD_HELP CMD_PROFILE_HELP CLI_EXIT_STATUS_HELP);
}

static bool parse_lr(const char *cmd, const char *opt, const char *text, void *dst) {
  char *end;
  double v = strtod(text, &end);
  float f = (float)v;
  /* the vector unit reads subnormals as zero (docs/numerics.md): such a rate would not train */
  if (*text == 0 || *end != 0 || !isfinite(v) || !(v > 0) || !isfinite(f) || !(f >= FLT_MIN)) {
    cli_usage_error(cmd, "%s must be a finite positive number of at least %g (fp32, not subnormal), got '%s'", opt,
                    (double)FLT_MIN, text);
    return false;
  }
  *(float *)dst = f;
  return true;
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
      CLI_OPT("print-every", CLI_UINT, &o->print_every, .min = 0, .max = 1u << 24),
      CLI_OPT("json", CLI_FLAG, &o->json),
      CMD_MACHINE_OPTS(&o->mach),
      CMD_POD_OPTS(&o->mach),
      CMD_PROFILE_OPTS(&o->prof),
      {0}};
  int rc = cli_parse("train", argc, argv, opts, train_help);
  if (rc != CLI_EXIT_OK) return rc;
  if ((o->have_tchip || o->have_tsteps) && !o->trace)
    return cli_usage_error("train", "--trace-chip and --trace-steps need --trace FILE.fst");
  if ((rc = cmd_machine_resolve("train", &o->mach, CMD_POD, o->trace ? (long)o->trace_chip : -1)) != CLI_EXIT_OK)
    return rc;
  pod_config_t *pc = &o->mach.machine.pod;
  pc->chip.seed = o->seed;
  if (o->data == 0 && (o->have_examples || o->have_features || o->have_classes))
    return cli_usage_error("train", "--examples, --features and --classes are for --data synthetic (digits has "
                           "%u examples of %u features, %u classes)", DIGITS_EXAMPLES, DIGITS_FEATURES, DIGITS_CLASSES);
  if (o->data == 1 && o->digits) return cli_usage_error("train", "--digits is for --data digits");
  if (o->export_dir) {
    struct stat st;
    if (stat(o->export_dir, &st) || !S_ISDIR(st.st_mode) || access(o->export_dir, W_OK))
      return cli_usage_error("train", "--export %s is not a directory this process can write into", o->export_dir);
  }
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

/* The data: the digits' fixed split or synthetic examples (80/20 the same way), the training
 * examples shuffled once from the seed (the steps take them in that order). */
static int load_data(const train_opts_t *o, dataset_t *train, dataset_t *test) {
  dataset_t all = {0};
  char err[1024];
  int bad = o->data == 0 ? dataset_read_digits(o->digits, &all, err, sizeof err)
                         : dataset_synthetic(o->examples, o->features, o->classes, o->seed, &all, err, sizeof err);
  if (!bad) bad = dataset_split(&all, train, test, err, sizeof err);
  dataset_free(&all);
  if (bad) return cli_usage_error("train", "%s", err);
  rng_t r;
  rng_seed(&r, o->seed ^ 0x5eedda7aull);
  float *row = malloc(train->features * sizeof *row + 4);
  if (!row) return cli_fail("train", "out of memory");
  for (unsigned i = train->count - 1; i > 0; i--) { /* Fisher-Yates */
    unsigned j = (unsigned)rng_below(&r, i + 1);
    memcpy(row, train->x + (size_t)i * train->features, train->features * sizeof *row);
    memcpy(train->x + (size_t)i * train->features, train->x + (size_t)j * train->features, train->features * sizeof *row);
    memcpy(train->x + (size_t)j * train->features, row, train->features * sizeof *row);
    uint8_t t = train->label[i];
    train->label[i] = train->label[j], train->label[j] = t;
  }
  free(row);
  return CLI_EXIT_OK;
}


/* He-uniform initial weights (U(-a, a), a = sqrt(6 / fan_in)), zero biases. */
static int init_network(const train_opts_t *o, unsigned features, unsigned classes, uint32_t *w[3], uint32_t *bias[3]) {
  const unsigned rows[3] = {features, o->hidden, o->hidden}, cols[3] = {o->hidden, o->hidden, classes};
  rng_t r;
  rng_seed(&r, o->seed);
  for (unsigned l = 0; l < 3; l++) {
    w[l] = malloc((size_t)rows[l] * cols[l] * 4), bias[l] = calloc(cols[l], 4);
    if (!w[l] || !bias[l]) return -1;
    const double a = sqrt(6.0 / rows[l]);
    for (size_t i = 0; i < (size_t)rows[l] * cols[l]; i++)
      w[l][i] = bits_of_float((float)(a * (2.0 * (double)(rng_next(&r) >> 11) / 9007199254740992.0 - 1.0)));
  }
  return 0;
}

/* Host-side evaluation of the network (fp32 weights, float arithmetic): the fraction of
 * examples whose largest logit is their label. */
static double accuracy(const dataset_t *d, unsigned hidden, uint32_t *const w[3], uint32_t *const bias[3]) {
  const unsigned F = d->features, H = hidden, K = d->classes;
  float *a1 = malloc(H * sizeof *a1), *a2 = malloc(H * sizeof *a2);
  unsigned right = 0;
  for (unsigned e = 0; a1 && a2 && e < d->count; e++) {
    const float *x = d->x + (size_t)e * F;
    for (unsigned n = 0; n < H; n++) {
      float s = bits_to_float(bias[0][n]);
      for (unsigned k = 0; k < F; k++) s += x[k] * bits_to_float(w[0][(size_t)k * H + n]);
      a1[n] = s > 0 ? s : 0;
    }
    for (unsigned n = 0; n < H; n++) {
      float s = bits_to_float(bias[1][n]);
      for (unsigned k = 0; k < H; k++) s += a1[k] * bits_to_float(w[1][(size_t)k * H + n]);
      a2[n] = s > 0 ? s : 0;
    }
    unsigned best = 0;
    float best_z = -INFINITY;
    for (unsigned n = 0; n < K; n++) {
      float s = bits_to_float(bias[2][n]);
      for (unsigned k = 0; k < H; k++) s += a2[k] * bits_to_float(w[2][(size_t)k * K + n]);
      if (s > best_z) best_z = s, best = n;
    }
    right += best == d->label[e];
  }
  const bool ok = a1 && a2;
  free(a1), free(a2);
  return ok && d->count ? (double)right / d->count : NAN;  /* NAN (JSON null) when out of memory */
}

/* Writes a .npy of rows x cols fp32 bit patterns into dir. */
static int export_npy(const char *dir, const char *name, const uint32_t *bits, size_t rows, size_t cols) {
  char path[4400], err[512];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  return npy_write_f32_2d(path, (const float *)(const void *)bits, rows, cols, err, sizeof err);
}

typedef struct {
  double loss, wall_s;
  uint64_t cycles;
} step_record_t;

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Writes the loss curve (step, loss, cycles) atomically. */
static int write_csv(const char *path, const step_record_t *rec, unsigned steps) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return -1;
  fprintf(f, "step,loss,cycles\n");
  for (unsigned s = 0; s < steps; s++) fprintf(f, "%u,%.6f,%" PRIu64 "\n", s + 1, rec[s].loss, rec[s].cycles);
  if (fclose(f) || rename(tmp, path)) {
    remove(tmp);
    return -1;
  }
  return 0;
}

typedef struct {
  train_opts_t *o;
  dataset_t train, test;
  uint16_t *xb;
  uint32_t *w[3], *bias[3], *final_w[3], *final_b[3];
  pod_train_config_t cfg;
  fw_train_plan_t plan;
  pod_train_t *pt;
  train_golden_t *ref;
  uint32_t *params, *probs;
  step_record_t *rec;
} run_t;

static void run_free(run_t *r) {
  pod_train_free(r->pt);
  train_golden_free(r->ref);
  dataset_free(&r->train), dataset_free(&r->test);
  free(r->xb), free(r->params), free(r->probs), free(r->rec);
  for (unsigned l = 0; l < 3; l++) free(r->w[l]), free(r->bias[l]), free(r->final_w[l]), free(r->final_b[l]);
}

/* Compares every slice chip with the reference after step s; adds the loss of its examples. */
static int check_step(run_t *r, unsigned s, unsigned batch_first, double *loss) {
  const fw_train_plan_t *pl = &r->plan;
  const unsigned C = pl->lanes, chips = r->cfg.slice.w * r->cfg.slice.h;
  const size_t plines = (size_t)pl->param_lines * C;
  double sum = 0;
  for (unsigned i = 0; i < chips; i++) {
    if (pod_train_read(r->pt, i, r->params, r->probs)) return cli_fail("train", "cannot read chip %u's HBM", i);
    size_t n;
    const uint32_t *want = train_golden_params(r->ref, i, &n), *wantp = train_golden_probs(r->ref, i);
    for (size_t j = 0; j < plines; j++)
      if (r->params[j] != want[j])
        return cli_fail("train", "step %u: chip %u's parameter line %zu lane %zu is 0x%08x, the reference trainer's "
                        "0x%08x", s + 1, i, j / C, j % C, r->params[j], want[j]);
    for (size_t j = 0; j < (size_t)pl->b * C; j++)
      if (r->probs[j] != wantp[j])
        return cli_fail("train", "step %u: chip %u's probability line %zu lane %zu is 0x%08x, the reference "
                        "trainer's 0x%08x", s + 1, i, j / C, j % C, r->probs[j], wantp[j]);
    for (size_t j = 0; j < plines; j++)
      if ((r->params[j] & 0x7F800000u) == 0x7F800000u)
        return cli_fail("train", "the weights became non-finite at step %u (chip %u, parameter line %zu): the "
                        "learning rate %g is too large", s + 1, i, j / C, (double)r->o->lr);
    fw_train_place_t pc;
    fw_train_place(pl, &r->cfg.slice, r->cfg.slice.x0 + i % r->cfg.slice.w, r->cfg.slice.y0 + i / r->cfg.slice.w, &pc);
    if (pc.mp_rank != 0) continue;
    const unsigned first = batch_first + pc.dp_rank * pl->b;
    for (unsigned e = 0; e < pl->b; e++) {
      double p = bits_to_float(r->probs[(size_t)e * C + r->train.label[first + e]]);
      sum += -log(p > 1e-30 ? p : 1e-30);
    }
  }
  *loss = sum / r->o->batch;
  return CLI_EXIT_OK;
}

/* The files --export writes into its directory. */
static const char *const EXPORTS[] = {"x_train", "y_train", "w1_init", "b1_init", "w1_final", "b1_final", "w2_init",
                                      "b2_init", "w2_final", "b2_final", "w3_init", "b3_init", "w3_final", "b3_final"};

static void remove_exports(const char *dir) {
  char path[4400];
  for (unsigned i = 0; i < sizeof EXPORTS / sizeof EXPORTS[0]; i++) {
    snprintf(path, sizeof path, "%s/%s.npy", dir, EXPORTS[i]);
    remove(path);
  }
}

static int do_export(run_t *r) {
  const char *d = r->o->export_dir;
  const unsigned F = r->train.features, H = r->o->hidden, K = r->train.classes;
  const unsigned rows[3] = {F, H, H}, cols[3] = {H, H, K};
  uint32_t *xf = malloc((size_t)r->train.count * F * 4), *lab = malloc((size_t)r->train.count * 4);
  int bad = !xf || !lab;
  for (size_t i = 0; !bad && i < (size_t)r->train.count * F; i++) xf[i] = arith_golden_bf16_to_fp32(r->xb[i]);
  for (unsigned i = 0; !bad && i < r->train.count; i++) lab[i] = bits_of_float((float)r->train.label[i]);
  bad = bad || export_npy(d, EXPORTS[0], xf, r->train.count, F) || export_npy(d, EXPORTS[1], lab, r->train.count, 1);
  for (unsigned l = 0; l < 3 && !bad; l++) {
    const char *const *n = EXPORTS + 2 + 4 * l;
    bad = export_npy(d, n[0], r->w[l], rows[l], cols[l]) || export_npy(d, n[1], r->bias[l], 1, cols[l]) ||
          export_npy(d, n[2], r->final_w[l], rows[l], cols[l]) || export_npy(d, n[3], r->final_b[l], 1, cols[l]);
  }
  free(xf), free(lab);
  if (bad) remove_exports(d);
  return bad ? cli_fail("train", "cannot write the export files into %s", d) : CLI_EXIT_OK;
}

static int train(run_t *r) {
  train_opts_t *o = r->o;
  const fw_train_plan_t *pl = &r->plan;
  const unsigned chips = r->cfg.slice.w * r->cfg.slice.h, steps = o->steps;
  const unsigned every = o->print_every ? o->print_every : (steps >= 10 ? steps / 10 : 1);
  char err[4096];
  rt_status_t rs;
  stopwatch_t sw;
  stopwatch_start(&sw);
  cli_note("train: %u chips (dp %u x mp %u), %u-%u-%u-%u, batch %u (%u a chip), %u steps, lr %g", chips,
          o->dp, o->mp, r->train.features, o->hidden, o->hidden, r->train.classes, o->batch, pl->b, steps, (double)o->lr);
  if (!(r->pt = pod_train_new(&r->cfg, &rs, err, sizeof err)))
    return rs == RT_INVALID ? cli_usage_error("train", "%s", err) : cli_fail("train", "%s", err);
  const uint32_t *wc[3] = {r->w[0], r->w[1], r->w[2]}, *bc[3] = {r->bias[0], r->bias[1], r->bias[2]};
  if (!(r->ref = train_golden_new(&r->cfg.net, &r->cfg.slice, pl->lanes, pl->cores, wc, bc, err, sizeof err)))
    return cli_fail("train", "%s", err);
  const unsigned batches = r->train.count / o->batch;
  for (unsigned s = 0; s < steps; s++) {
    const unsigned first = (s % batches) * o->batch;
    o->progress.step = s;
    if ((rs = pod_train_step(r->pt, first, &r->rec[s].cycles, err, sizeof err)) != RT_OK)
      return cli_fail("train", "step %u: %s", s + 1, err);
    if (train_golden_step(r->ref, r->xb, r->train.label, first)) return cli_fail("train", "out of memory");
    int rc = check_step(r, s, first, &r->rec[s].loss);
    if (rc != CLI_EXIT_OK) return rc;
    o->progress.loss = r->rec[s].loss;
    o->progress.base += r->rec[s].cycles;
    o->progress.step = s + 1;
    cmd_progress(&o->progress, 0);
    r->rec[s].wall_s = stopwatch_seconds(&sw);
    if (o->trace_steps && s + 1 == o->trace_steps) pod_train_trace_close(r->pt);
    if ((s + 1) % every == 0 || s + 1 == steps)
      cli_note("train: step %u/%u  loss %.4f  %" PRIu64 " cycles  (%.1f s)", s + 1, steps, r->rec[s].loss,
              r->rec[s].cycles, r->rec[s].wall_s);
  }
  return CLI_EXIT_OK;
}

static int report(run_t *r, uint64_t compute, uint64_t comm, double wall) {
  train_opts_t *o = r->o;
  const fw_train_plan_t *pl = &r->plan;
  const unsigned chips = r->cfg.slice.w * r->cfg.slice.h;
  uint64_t *cyc = malloc(o->steps * sizeof *cyc);
  if (!cyc) return cli_fail("train", "out of memory");
  for (unsigned s = 0; s < o->steps; s++) cyc[s] = r->rec[s].cycles;
  qsort(cyc, o->steps, sizeof *cyc, cmp_u64);
  const uint64_t step = cyc[o->steps / 2];
  free(cyc);
  const uint64_t exposed = step > compute ? step - compute : 0;
  /* the MXU's work on each chip (replicated layers included) against its peak; the model's
   * work once (forward, weight and input gradients but the data's) per second */
  const uint64_t macs = fw_train_macs(pl);
  const chip_config_t *chip = &o->mach.machine.pod.chip;
  const double mxus = chip->mxus ? chip->mxus : 1;
  const double util = (double)macs / ((double)step * chip->rows * chip->cols * mxus);
  const double F = r->train.features, H = o->hidden, K = r->train.classes;
  const double model_macs = (double)o->batch * (2 * F * H + 3 * H * H + 3 * H * K);
  const double tflops = 2.0 * model_macs / ((double)step / (chip->clock_mhz * 1e6)) / 1e12;
  const double train_acc = accuracy(&r->train, o->hidden, r->final_w, r->final_b);
  const double test_acc = accuracy(&r->test, o->hidden, r->final_w, r->final_b);
  report_t rp;
  report_init(&rp);
  report_u64(&rp, "chips", chips);
  report_u64(&rp, "dp", o->dp);
  report_u64(&rp, "mp", o->mp);
  report_str(&rp, "data", o->data ? "synthetic" : "digits");
  report_u64(&rp, "features", r->train.features);
  report_u64(&rp, "hidden", o->hidden);
  report_u64(&rp, "classes", r->train.classes);
  report_u64(&rp, "batch", o->batch);
  report_u64(&rp, "batch_per_chip", pl->b);
  report_u64(&rp, "steps", o->steps);
  report_f64(&rp, "lr", o->lr);
  report_u64(&rp, "train_examples", r->train.count);
  report_u64(&rp, "test_examples", r->test.count);
  report_f64(&rp, "first_loss", r->rec[0].loss);
  report_f64(&rp, "final_loss", r->rec[o->steps - 1].loss);
  report_f64(&rp, "train_accuracy", train_acc);
  report_f64(&rp, "test_accuracy", test_acc);
  report_u64(&rp, "step_cycles", step);
  report_u64(&rp, "compute_cycles", compute);
  report_u64(&rp, "comm_cycles", comm);
  report_u64(&rp, "exposed_comm_cycles", exposed);
  report_f64(&rp, "exposed_fraction", (double)exposed / (double)step);
  report_f64(&rp, "overlap_fraction", comm ? 1.0 - (double)exposed / (double)comm : 0.0);
  report_f64(&rp, "mxu_utilization", util);
  report_f64(&rp, "model_macs", model_macs);
  report_f64(&rp, "tflops", tflops);
  report_u64(&rp, "clock_mhz", chip->clock_mhz);
  report_bool(&rp, "reference_bit_exact", true);
  report_u64(&rp, "steps_checked", o->steps);
  report_f64(&rp, "wall_s", wall);
  report_text_u64(&rp, "rows", chip->rows);
  report_text_u64(&rp, "cols", chip->cols);
  report_text_u64(&rp, "sw", r->cfg.slice.w);
  report_text_u64(&rp, "sh", r->cfg.slice.h);
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

int cmd_train(int argc, char **argv) {
  train_opts_t o;
  int rc = parse(argc, argv, &o);
  if (rc != CLI_EXIT_OK) {
    cmd_machine_free(&o.mach);
    return rc == CLI_HELP ? CLI_EXIT_OK : rc;
  }
  run_t r = {.o = &o};
  if ((rc = load_data(&o, &r.train, &r.test)) != CLI_EXIT_OK) goto out;
  const unsigned F = r.train.features, K = r.train.classes;
  const pod_config_t *pc = &o.mach.machine.pod;
  r.cfg = (pod_train_config_t){.machine = *pc, .slice = o.slice,
                               .net = {F, o.hidden, K, o.batch, o.dp, o.mp, bits_of_float(o.lr)},
                               .examples = r.train.count, .trace_path = o.trace, .trace_chip = o.trace_chip};
  r.cfg.slice.pod_w = pc->size_x, r.cfg.slice.pod_h = pc->size_y;
  char err[4096];
  if (pod_train_check(&r.cfg, &r.plan, err, sizeof err) != RT_OK) {
    rc = cli_usage_error("train", "%s", err);
    goto out;
  }
  if (cli_check_only()) {
    rc = cli_checked("train");
    goto out;
  }
  if ((rc = cmd_profile_begin("train", &o.prof, pc->size_x, pc->size_y, pc->chip.clock_mhz, pc->chip.rows,
                              pc->chip.cols)) != CLI_EXIT_OK)
    goto out;
  r.cfg.profile = o.prof.prof;
  cmd_progress_init(&o.progress, "train");
  o.progress.step_total = o.steps;
  r.cfg.machine.progress = cmd_progress;
  r.cfg.machine.progress_ctx = &o.progress;
  r.xb = malloc((size_t)r.train.count * F * sizeof *r.xb);
  const unsigned rows[3] = {F, o.hidden, o.hidden}, cols[3] = {o.hidden, o.hidden, K};
  for (unsigned l = 0; l < 3; l++)
    r.final_w[l] = malloc((size_t)rows[l] * cols[l] * 4), r.final_b[l] = malloc(cols[l] * 4);
  r.params = malloc((size_t)r.plan.param_lines * r.plan.lanes * 4);
  r.probs = malloc((size_t)r.plan.b * r.plan.lanes * 4);
  r.rec = calloc(o.steps, sizeof *r.rec);
  bool finals = true;
  for (unsigned l = 0; l < 3; l++) finals = finals && r.final_w[l] && r.final_b[l];
  if (!r.xb || !r.params || !r.probs || !r.rec || !finals || init_network(&o, F, K, r.w, r.bias)) {
    rc = cli_fail("train", "out of memory");
    goto out;
  }
  for (size_t i = 0; i < (size_t)r.train.count * F; i++) r.xb[i] = arith_golden_fp32_to_bf16(bits_of_float(r.train.x[i]));
  r.cfg.x = r.xb, r.cfg.label = r.train.label;
  for (unsigned l = 0; l < 3; l++) r.cfg.w[l] = r.w[l], r.cfg.bias[l] = r.bias[l];
  stopwatch_t sw;
  stopwatch_start(&sw);
  bool wrote_csv = false, wrote_plot = false;
  if ((rc = train(&r)) != CLI_EXIT_OK) goto fail;
  train_golden_network(r.ref, 0, r.final_w, r.final_b);
  /* what the step's two halves cost alone */
  uint64_t compute = 0, comm = 0;
  rt_status_t rs;
  pod_train_trace_close(r.pt); /* the trace holds the training steps, not the measurements */
  cli_note("train: measuring the step's compute and communication alone...");
  if ((rs = pod_train_compute_cycles(&r.cfg, &compute, err, sizeof err)) != RT_OK ||
      ((o.dp > 1 || o.mp > 1) && (rs = pod_train_comm_cycles(r.pt, &comm, err, sizeof err)) != RT_OK)) {
    rc = cli_fail("train", "%s", err);
    goto fail;
  }
  const double wall = stopwatch_seconds(&sw);
  if (o.loss_csv && write_csv(o.loss_csv, r.rec, o.steps)) {
    rc = cli_fail("train", "cannot write '%s'", o.loss_csv);
    goto fail;
  }
  wrote_csv = o.loss_csv != NULL;
  if (o.plot) {
    char csv[4200], title[256];
    snprintf(csv, sizeof csv, "%s.csv.tmp", o.plot);
    snprintf(title, sizeof title, "%s, %ux%u slice, dp %u x mp %u, batch %u, lr %g", o.data ? "synthetic" : "digits",
             o.slice.w, o.slice.h, o.dp, o.mp, o.batch, (double)o.lr);
    int bad = write_csv(csv, r.rec, o.steps) || cmd_plot(o.exe_dir, "plot_loss.py", csv, o.plot, title);
    remove(csv);
    wrote_plot = !bad;
    if (bad) {
      rc = cli_fail("train", "plotting failed (scripts/plot_loss.py needs python3-matplotlib: make deps)");
      goto fail;
    }
  }
  if (o.export_dir && (rc = do_export(&r)) != CLI_EXIT_OK) goto fail;
  rc = report(&r, compute, comm, wall);
  if (rc != CLI_EXIT_OK && o.export_dir) remove_exports(o.export_dir);
  if (rc == CLI_EXIT_OK) goto out;
fail:
  cli_remove_output(o.trace);
  if (wrote_csv) cli_remove_output(o.loss_csv);
  if (wrote_plot) cli_remove_output(o.plot);
out:
  run_free(&r);
  cmd_profile_free(&o.prof);
  cmd_machine_free(&o.mach);
  return rc;
}
