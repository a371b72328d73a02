/*
 * cmd_infer: `tpusim infer`, a model from an ONNX file on a pod: parse; read the model (the
 * ONNX reader, its batch fixed) and the input .npy; run the inference job (job/infer_job: the
 * model compiled to firmware kernels, run data parallel on every chip, every step of every chip
 * held to the golden model); report the per-layer table and the whole model's figures, and write
 * the output .npy.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "job/infer_job.h"
#include "model/onnx_reader.h"
#include "util/cli.h"
#include "util/npy.h"
#include "util/outfile.h"
#include "util/stopwatch.h"

typedef struct {
  const char *onnx, *input, *out;
  uint64_t batch, seed;
  unsigned dp, mp;
  bool have_batch, json, print_plan;
  cmd_machine_t mach;
  cmd_profile_t prof;
} infer_opts_t;

static void infer_help(void) {
  printf("usage: tpusim infer --onnx FILE [--batch B] [--input X.npy] [--out Y.npy] [--pod XxY] [--dp A]\n"
         "                    [--seed S] [--print-plan] [--json] [--machine FILE | --chip small|v2|v3]\n"
         "                    [--print-machine] [machine options] [--model rtl|fast|check] [--threads N]\n"
         "                    [--profile FILE.json] [--profile-chips LIST] [--op-profile] [--quiet]\n\n"
         "Runs a model exported from PyTorch as ONNX (opsets 13-17; scripts/export_models.py writes the\n"
         "reference models) on the simulated chips: the model compiler (docs/models.md) lowers the graph\n"
         "to firmware kernels -- convolutions and fully connected layers as MXU GEMMs whose im2col rows\n"
         "the chip's DMA makes, with bias, residual add and ReLU fused in, and pooling on the vector unit\n"
         "-- with an HBM memory plan, and every chip runs its share of the batch (data parallel). Every\n"
         "layer's output on every chip is checked bit for bit against the golden model run on the same\n"
         "lowered graph. Prints a table per layer (cycles, MACs, MXU utilisation against the bound its\n"
         "shape allows) and the whole model's cycles, latency, images a second and utilisation.\n"
         "--batch B fixes a symbolic batch dimension (a model exported with a static batch keeps its\n"
         "own; default 1 for a symbolic one). --input X.npy: float32 in the model's input layout (NCHW\n"
         "for images), its shape the input's; without it the input is uniform in [-1, 1) from --seed\n"
         "(default 1). The host rounds the input to bf16 as it writes it to HBM. --out Y.npy: the\n"
         "output as float32 (written only when every bit agrees with the golden model).\n"
         "--pod XxY (default 1x1): the chips; --dp A: chips the batch is split over (default and, for\n"
         "now, only value: every chip; model parallel layers are not lowered yet, so --mp other than 1\n"
         "is refused). --print-plan prints the schedule and the memory plan and exits.\n"
         "--profile/--op-profile: each step of the schedule is a phase of the profile, named by its first\n"
         "node (the first 127; later ones share \"later phases\").\n"
         CMD_MACHINE_HELP CMD_POD_HELP CMD_PROFILE_HELP CLI_EXIT_STATUS_HELP);
}

static int parse(int argc, char **argv, infer_opts_t *o) {
  *o = (infer_opts_t){.seed = 1, .mp = 1};
  cmd_machine_init(&o->mach, 1, 1, 16, 16);
  const cli_opt_t opts[] = {
      CLI_OPT("onnx", CLI_INPUT, &o->onnx),
      CLI_OPT("batch", CLI_U64, &o->batch, .min = 1, .max = 1u << 20, .given = &o->have_batch),
      CLI_OPT("input", CLI_INPUT, &o->input),
      CLI_OPT("out", CLI_OUTPUT, &o->out),
      CLI_OPT("pod", CLI_DIMS, o->mach.pod, .min = 1, .max = POD_MAX_SIZE, .shape = "XxY", .given = &o->mach.pod_given),
      CLI_OPT("dp", CLI_UINT, &o->dp, .min = 1, .max = POD_MAX_SIZE * POD_MAX_SIZE),
      CLI_OPT("mp", CLI_UINT, &o->mp, .min = 1, .max = POD_MAX_SIZE * POD_MAX_SIZE),
      CLI_OPT("seed", CLI_U64, &o->seed, .min = 0, .max = UINT64_MAX),
      CLI_OPT("print-plan", CLI_FLAG, &o->print_plan),
      CLI_OPT("json", CLI_FLAG, &o->json),
      CMD_MACHINE_OPTS(&o->mach),
      CMD_POD_OPTS(&o->mach),
      CMD_PROFILE_OPTS(&o->prof),
      {0}};
  int rc = cli_parse("infer", argc, argv, opts, infer_help);
  if (rc != CLI_EXIT_OK) return rc;
  if (!o->onnx) return cli_usage_error("infer", "--onnx FILE is required");
  if (o->mp != 1) return cli_usage_error("infer", "--mp %u: model parallel layers are not lowered yet", o->mp);
  if (o->print_plan && (o->json || o->out)) return cli_usage_error("infer", "--print-plan prints the plan only: "
                                                                   "it takes neither --json nor --out");
  rc = cmd_machine_resolve("infer", &o->mach, CMD_POD, -1);
  if (rc != CLI_EXIT_OK) return rc;
  o->mach.machine.pod.chip.seed = o->seed;
  return CLI_EXIT_OK;
}

/* The input .npy: float32 of exactly the graph input's shape. */
static int check_input(const infer_opts_t *o, const graph_t *g, npy_array_t *x) {
  const graph_tensor_t *t = &g->tensors[g->input];
  bool same = x->rank == t->rank;
  for (unsigned i = 0; same && i < t->rank; i++) same = x->dims[i] == (size_t)t->dims[i];
  if (same) return CLI_EXIT_OK;
  char want[128] = "", got[128] = "";
  for (unsigned i = 0; i < t->rank; i++)
    snprintf(want + strlen(want), sizeof want - strlen(want), "%s%" PRId64, i ? ", " : "", t->dims[i]);
  for (unsigned i = 0; i < x->rank; i++)
    snprintf(got + strlen(got), sizeof got - strlen(got), "%s%zu", i ? ", " : "", x->dims[i]);
  free(x->data);
  x->data = NULL;
  return cli_usage_error("infer", "--input %s has shape (%s); the model's input '%s' is (%s)%s", o->input, got,
                         t->name, want, o->have_batch ? "" : " (--batch sets the first dimension)");
}

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
    else fputc(*s, f);
  }
  fputc('"', f);
}

static const char *kernel_of(const model_step_t *s) {
  return s->kind == MODEL_STEP_CONV ? "gemm" : s->kind == MODEL_STEP_MAXPOOL ? "maxpool"
                                             : s->kind == MODEL_STEP_AVGPOOL ? "avgpool" : "gap";
}

static int report(const infer_opts_t *o, const infer_job_t *j, double seconds) {
  const model_plan_t *p = infer_job_plan(j);
  const infer_job_result_t *r = infer_job_result(j);
  const pod_config_t *pc = &o->mach.machine.pod;
  const unsigned chips = pc->size_x * pc->size_y;
  const double mhz = pc->chip.clock_mhz, latency_us = (double)r->cycles / mhz;
  const double per_chip = latency_us > 0 ? p->images / (latency_us * 1e-6) : 0;
  const double tflops = r->cycles ? 2.0 * (double)r->macs * chips * mhz * 1e6 / (double)r->cycles / 1e12 : 0;
  const uint64_t macs_a_cycle = (uint64_t)p->chip.rows * p->chip.cols * isa_geometry_mxus(&p->chip) *
                                isa_geometry_cores(&p->chip);
  FILE *f = stdout;
  /* the op profile, as every command reports it (a report_t of its own, merged below) */
  static report_t pr;
  report_init(&pr);
  const int prc = cmd_profile_end("infer", (cmd_profile_t *)&o->prof, &pr);
  if (prc != CLI_EXIT_OK) return prc;
  char *pjson = NULL;
  size_t plen = 0;
  if (o->json && o->prof.prof) {
    FILE *m = open_memstream(&pjson, &plen);
    if (!m || report_print(&pr, true, m) || fclose(m) || plen < 3) {
      free(pjson);
      return cli_fail("infer", "out of memory");
    }
    while (plen && (pjson[plen - 1] == '\n' || pjson[plen - 1] == '}')) pjson[--plen] = 0; /* {"profile":{.. */
  }
  if (o->json) {
    fprintf(f, "{\"model_file\":");
    json_str(f, o->onnx);
    fprintf(f, ",\"chips\":%u,\"images_per_chip\":%u,\"batch\":%u,\"model\":\"%s\",\"cycles\":%" PRIu64
            ",\"latency_us\":%.3f,\"images_per_s_per_chip\":%.2f,\"images_per_s\":%.2f,\"tflops\":%.3f,"
            "\"utilization\":%.6f,\"utilization_bound\":%.6f,\"macs_per_chip\":%" PRIu64 ",\"bit_exact\":%s,"
            "\"mismatches\":%zu,\"hbm_bytes\":%" PRIu64 ",\"sim_seconds\":%.3f,\"layers\":[",
            chips, p->images, p->images * chips, chip_model_name(pc->chip.model), r->cycles, latency_us, per_chip,
            per_chip * chips, tflops, r->utilization, r->bound, r->macs, r->bit_exact ? "true" : "false", r->mismatches,
            p->hbm_bytes, seconds);
    for (size_t i = 0; i < p->nsteps; i++) {
      const model_step_t *s = &p->steps[i];
      const infer_step_result_t *sr = &r->steps[i];
      fprintf(f, "%s{\"name\":", i ? "," : "");
      json_str(f, s->name);
      fprintf(f, ",\"op\":\"%s\",\"kernel\":\"%s\",\"cycles\":%" PRIu64 ",\"macs\":%" PRIu64
              ",\"flops\":%" PRIu64 ",\"utilization\":%.6f,\"bound\":%.6f,\"parts\":%u}",
              s->ops, kernel_of(s), sr->cycles, sr->macs, 2 * sr->macs,
              sr->cycles ? (double)sr->macs / ((double)sr->cycles * macs_a_cycle) : 0,
              sr->padded_macs ? (double)sr->macs / sr->padded_macs : 0, s->parts);
    }
    fprintf(f, "]%s%s%s}\n", pjson ? "," : "", pjson ? pjson + 1 : "", pjson ? "}" : "");
    free(pjson);
  } else {
    fprintf(f, "%s on %u chip%s (%u image%s each), %ux%u MXUs x%u, %u core%s, %s model\n", o->onnx, chips,
            chips == 1 ? "" : "s", p->images, p->images == 1 ? "" : "s", p->chip.rows, p->chip.cols,
            isa_geometry_mxus(&p->chip), isa_geometry_cores(&p->chip), isa_geometry_cores(&p->chip) == 1 ? "" : "s",
            chip_model_name(pc->chip.model));
    fprintf(f, "%4s  %-28s %-16s %-8s %12s %14s %7s %7s\n", "step", "layer", "ops", "kernel", "cycles", "MACs", "util",
            "bound");
    for (size_t i = 0; i < p->nsteps; i++) {
      const model_step_t *s = &p->steps[i];
      const infer_step_result_t *sr = &r->steps[i];
      fprintf(f, "%4zu  %-28.28s %-16s %-8s %12" PRIu64 " %14" PRIu64 " %6.1f%% %6.1f%%\n", i, s->name, s->ops,
              kernel_of(s), sr->cycles, sr->macs,
              sr->cycles ? 100.0 * (double)sr->macs / ((double)sr->cycles * macs_a_cycle) : 0,
              sr->padded_macs ? 100.0 * (double)sr->macs / sr->padded_macs : 0);
    }
    fprintf(f, "total  %" PRIu64 " cycles, %.1f us at %.0f MHz: %.1f images/s a chip, %.1f on %u chip%s; %.2f TFLOPS, "
            "MXU utilisation %.1f%% (shape bound %.1f%%)\n", r->cycles, latency_us, mhz, per_chip, per_chip * chips,
            chips, chips == 1 ? "" : "s", tflops, 100 * r->utilization, 100 * r->bound);
    fprintf(f, "golden %s\n", r->bit_exact ? "every layer's output on every chip agrees on every bit" : "DISAGREES");
    fprintf(f, "host   %.1f s, HBM %" PRIu64 " bytes a chip, peak RSS %.0f MB\n", seconds, p->hbm_bytes,
            (double)stopwatch_peak_rss() / (1 << 20));
    if (o->prof.prof && report_print(&pr, false, f)) return cli_fail("infer", "cannot write the report");
  }
  if (ferror(f) || fflush(f)) return cli_fail("infer", "cannot write the report");
  if (!r->bit_exact)
    return cli_fail("infer", "%zu output values differ from the golden model; the first: step %d '%s' (%s) on chip %u, "
                    "element %zu (NCHW) is 0x%04x, golden 0x%04x", r->mismatches, r->first_step,
                    p->steps[r->first_step].name, p->steps[r->first_step].ops, r->first_chip, r->first_index, r->got,
                    r->want);
  return CLI_EXIT_OK;
}

static void step_progress(void *ctx, size_t step, size_t steps) {
  (void)ctx;
  if (step < steps) fprintf(stderr, "infer: step %zu of %zu\n", step + 1, steps);
}

int cmd_infer(int argc, char **argv) {
  infer_opts_t o;
  int rc = parse(argc, argv, &o);
  graph_t g = {0};
  npy_array_t x = {0};
  infer_job_t *j = NULL;
  char err[4096];
  if (rc != CLI_EXIT_OK) goto out;
  if (o.input && npy_read_f32(o.input, &x, err, sizeof err)) {
    rc = cli_usage_error("infer", "--input: %s", err);
    goto out;
  }
  /* the batch: --batch, else the input's first dimension, else the file's own or 1 */
  onnx_load_opts_t lo = {.batch = o.have_batch ? (int64_t)o.batch : o.input ? (int64_t)x.dims[0] : 0};
  int lrc = onnx_load(o.onnx, &lo, &g, err, sizeof err);
  if (lrc && !o.have_batch && !o.input) {
    graph_free(&g);
    lo.batch = 1;
    lrc = onnx_load(o.onnx, &lo, &g, err, sizeof err);
  }
  if (lrc) {
    rc = cli_usage_error("infer", "%s", err);
    goto out;
  }
  if (o.input && (rc = check_input(&o, &g, &x)) != CLI_EXIT_OK) goto out;
  rt_status_t rs;
  const infer_job_config_t jc = {.machine = o.mach.machine.pod, .graph = &g, .dp = o.dp, .input = x.data,
                                 .seed = o.seed, .golden = true, .progress = step_progress, .progress_ctx = &o};
  if (!(j = infer_job_new(&jc, &rs, err, sizeof err))) {
    rc = cmd_job_error("infer", rs, err);
    goto out;
  }
  if (o.print_plan) {
    rc = model_plan_print(infer_job_plan(j), stdout) ? cli_fail("infer", "cannot write the plan") : CLI_EXIT_OK;
    goto out;
  }
  if (cli_check_only()) {
    rc = cli_checked("infer");
    goto out;
  }
  if ((rc = cmd_profile_check("infer", &o.prof, o.mach.machine.pod.size_x, o.mach.machine.pod.size_y)) != CLI_EXIT_OK)
    goto out;
  const pod_config_t *pc = &o.mach.machine.pod;
  rc = cmd_profile_begin("infer", &o.prof, pc->size_x, pc->size_y, pc->chip.clock_mhz, pc->chip.rows, pc->chip.cols);
  if (rc != CLI_EXIT_OK) goto out;
  infer_job_set_profile(j, o.prof.prof);
  stopwatch_t w;
  stopwatch_start(&w);
  rs = infer_job_run(j, err, sizeof err);
  if (rs != RT_OK) {
    rc = cmd_job_error("infer", rs, err);
    goto out;
  }
  const double seconds = stopwatch_seconds(&w);
  rc = report(&o, j, seconds);
  if (rc == CLI_EXIT_OK && o.out) {
    const graph_tensor_t *t = infer_job_output(j);
    size_t dims[NPY_MAX_RANK];
    for (unsigned i = 0; i < t->rank; i++) dims[i] = (size_t)t->dims[i];
    if (npy_write_f32_file(outfile_temp(o.out), infer_job_result(j)->output, t->rank, dims, err, sizeof err))
      rc = cli_fail("infer", "--out: %s", err);
  }
out:
  infer_job_free(j);
  graph_free(&g);
  free(x.data);
  cmd_profile_free(&o.prof);
  cmd_machine_free(&o.mach);
  return rc == CLI_HELP ? CLI_EXIT_OK : rc;
}
