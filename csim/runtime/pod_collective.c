/* pod_collective: see pod_collective.h. */
#include "runtime/pod_collective.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw/hal.h"
#include "runtime/prog_load.h"
#include "chip/chip.h"
#include "pod/pod.h"

static uint32_t ceil_div32(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }

/* The values held by VMEM line l: [*e0, *e0 + *n) (block: values per all_to_all block, bl
 * its lines; 0 for the contiguous layout). */
static void line_values(uint64_t elems, uint64_t block, uint32_t bl, unsigned lanes, uint32_t l, uint64_t *e0,
                        uint64_t *n) {
  if (block) {
    uint64_t j = l / bl, o = (uint64_t)(l % bl) * lanes;
    *e0 = j * block + o;
    *n = o >= block ? 0 : (block - o < lanes ? block - o : lanes);
  } else {
    *e0 = (uint64_t)l * lanes;
    *n = elems - *e0 < lanes ? elems - *e0 : lanes;
  }
}

static bool in_rect(const fw_slice_t *s, unsigned x, unsigned y) {
  return x >= s->x0 && x < s->x0 + s->w && y >= s->y0 && y < s->y0 + s->h;
}

/* The job whose slice holds chip (x, y), or -1. */
static int job_of(const pod_coll_job_t *jobs, unsigned njobs, unsigned x, unsigned y) {
  for (unsigned j = 0; j < njobs; j++)
    if (in_rect(&jobs[j].slice, x, y)) return (int)j;
  return -1;
}

/* One pod run of the DMA queues: every chip of every job (of `only`, pod-indexed flags, when
 * given) copies its buffer between HBM and VMEM; the other chips run HALT. */
static int copy_stage(pod_t *pod, const pod_coll_job_t *jobs, unsigned njobs, unsigned lb, bool store,
                      const bool *only, char *err, size_t errlen) {
  const fw_slice_t *s0 = &jobs[0].slice;
  uint32_t most = 0;
  for (unsigned y = 0; y < s0->pod_h; y++)
    for (unsigned x = 0; x < s0->pod_w; x++) {
      int j = only && !only[y * s0->pod_w + x] ? -1 : job_of(jobs, njobs, x, y);
      fw_prog_t p;
      fw_prog_init(&p);
      if (j >= 0) {
        const pod_coll_job_t *jb = &jobs[j];
        pod_coll_copy_program(&p, jb->args.lines, jb->hbm_addr, lb, store);
        if (jb->args.lines > most) most = jb->args.lines;
      }
      fw_halt(&p);
      chip_t *c = pod_chip(pod, x, y);
      int rc = fw_prog_ok(&p) ? chip_load_program(c, ISA_QUEUE_DMA, p.words, p.count, err, errlen) : -1;
      fw_prog_free(&p);
      if (rc) return -1;
    }
  uint64_t cycles;
  char report[1024];
  pod_phase(pod, "HBM copies");
  if (pod_run(pod, ISA_QMASK_DMA, 100000 + 4ull * most, &cycles, report, sizeof report)) {
    snprintf(err, errlen, "HBM copy failed: %s", report);
    return -1;
  }
  return 0;
}

void pod_coll_copy_program(fw_prog_t *p, uint32_t lines, uint64_t hbm_addr, unsigned lb, bool store) {
  if (store)
    fw_dma_vmem_to_hbm(p, ISA_SEM_NONE, 0, 0, (uint32_t)hbm_addr, lb, lines, lb);
  else
    fw_dma_hbm_to_vmem(p, ISA_SEM_NONE, 0, (uint32_t)hbm_addr, lb, 0, lines, lb);
  fw_fence(p);
}

int pod_coll_programs(const chip_geometry_t *g, const fw_slice_t *s, const fw_coll_args_t *a, unsigned x, unsigned y,
                      fw_prog_t *cq, fw_prog_t *dq, char *err, size_t errlen) {
  if (fw_collective(g, s, a, x, y, cq, dq, err, errlen)) return -1;
  fw_halt(cq);
  fw_halt(dq);
  return 0;
}

void pod_coll_default_chunk(const fw_slice_t *s, fw_coll_args_t *a, uint32_t vmem_lines) {
  /* four chunks per segment at least, so a ring step's sends overlap the previous step's
   * receives; at most 64 lines; and the slots must fit */
  unsigned n = s->w > s->h ? s->w : s->h;
  uint32_t seg = ceil_div32(a->lines, 4ull * (n ? n : 1)), room = vmem_lines > a->lines ? vmem_lines - a->lines : 0;
  a->chunk_lines = seg < 64 ? seg : 64;
  if (a->chunk_lines < 1) a->chunk_lines = 1;
  while (a->chunk_lines > 1 && fw_coll_scratch_lines(a) > room) a->chunk_lines /= 2;
}

/* Flits sent on the links (router ports 1..4) by every chip of the pod since reset. */
static uint64_t link_flits(pod_t *pod, unsigned pod_w, unsigned pod_h) {
  uint64_t sent = 0;
  uint32_t flits[5];
  for (unsigned y = 0; y < pod_h; y++)
    for (unsigned x = 0; x < pod_w; x++) {
      chip_router_flits(pod_chip(pod, x, y), flits);
      for (int p = 1; p < 5; p++) sent += flits[p];
    }
  return sent;
}

/* Builds and loads every chip's programs: the collective of its job, or HALT outside the
 * jobs. *limit gets a timeout that fits the largest job. */
static rt_status_t load_programs(pod_t *pod, const pod_coll_job_t *jobs, unsigned njobs, const chip_geometry_t *g,
                                 uint64_t *limit, char *err, size_t errlen) {
  const fw_slice_t *s0 = &jobs[0].slice;
  fw_prog_t cq, dq;
  fw_prog_init(&cq);
  fw_prog_init(&dq);
  rt_status_t rc = RT_OK;
  *limit = 200000;
  for (unsigned i = 0; i < s0->pod_w * s0->pod_h && rc == RT_OK; i++) {
    const unsigned x = i % s0->pod_w, y = i / s0->pod_w;
    const int j = job_of(jobs, njobs, x, y);
    fw_prog_free(&cq), fw_prog_free(&dq);
    fw_prog_init(&cq), fw_prog_init(&dq);
    if (j >= 0) {
      const pod_coll_job_t *jb = &jobs[j];
      if (pod_coll_programs(g, &jb->slice, &jb->args, x, y, &cq, &dq, err, errlen)) {
        /* the programs do not fit the queues (the chunk is too small), unless memory ran out */
        rc = fw_prog_ok(&cq) && fw_prog_ok(&dq) ? RT_INVALID : RT_FAILED;
        break;
      }
      uint64_t l = 200000 + 400ull * jb->args.lines * (jb->slice.w + jb->slice.h);
      if (l > *limit) *limit = l;
    } else {
      fw_halt(&cq);
      fw_halt(&dq);
    }
    rc = rt_load_programs(pod_chip(pod, x, y), &cq, &dq, err, errlen);
    rt_pod_marks(pod, x, y, &cq);
  }
  fw_prog_free(&cq);
  fw_prog_free(&dq);
  return rc;
}

/* pod_coll_run_jobs, with or without its copies between HBM and VMEM before and after. */
static rt_status_t run_jobs(pod_t *pod, pod_coll_job_t *jobs, unsigned njobs, const char *trace_path,
                            unsigned trace_chip, bool copy_in, bool copy_out, char *err, size_t errlen) {
  if (njobs == 0) {
    snprintf(err, errlen, "no collective to run");
    return RT_INVALID;
  }
  unsigned pod_w, pod_h;
  pod_size(pod, &pod_w, &pod_h);
  for (unsigned j = 0; j < njobs; j++) {
    const fw_slice_t *s = &jobs[j].slice;
    if (s->pod_w != pod_w || s->pod_h != pod_h) {
      snprintf(err, errlen, "slice %u,%u,%ux%u is for a %ux%u pod, not this %ux%u one", s->x0, s->y0, s->w, s->h,
               s->pod_w, s->pod_h, pod_w, pod_h);
      return RT_INVALID;
    }
    if (fw_slice_check(s, err, errlen)) return RT_INVALID;
  }
  if (trace_path && trace_chip >= pod_w * pod_h) {
    snprintf(err, errlen, "chip %u to trace is outside the %ux%u pod", trace_chip, pod_w, pod_h);
    return RT_INVALID;
  }
  const chip_geometry_t *g = chip_geometry(pod_chip(pod, 0, 0));
  for (unsigned j = 0; j < njobs; j++) {
    const fw_slice_t *s = &jobs[j].slice;
    memset(&jobs[j].stats, 0, sizeof jobs[j].stats);
    if (fw_coll_check(g, s, &jobs[j].args, err, errlen)) return RT_INVALID;
    for (unsigned i = 0; i < j; i++) {
      const fw_slice_t *o = &jobs[i].slice;
      if (s->x0 < o->x0 + o->w && o->x0 < s->x0 + s->w && s->y0 < o->y0 + o->h && o->y0 < s->y0 + s->h) {
        snprintf(err, errlen, "slices %u,%u %ux%u and %u,%u %ux%u overlap", o->x0, o->y0, o->w, o->h, s->x0, s->y0,
                 s->w, s->h);
        return RT_INVALID;
      }
    }
    jobs[j].stats.lines = jobs[j].args.lines;
    jobs[j].stats.chunk_lines = jobs[j].args.chunk_lines;
    pod_set_slice(pod, s->x0, s->y0, s->w, s->h);
  }
  const unsigned lb = chip_line_bytes(pod_chip(pod, 0, 0));
  if (copy_in && copy_stage(pod, jobs, njobs, lb, false, NULL, err, errlen)) return RT_FAILED;
  uint64_t limit;
  static const char *const op_names[] = {"allreduce", "reduce_scatter", "all_gather", "broadcast", "all_to_all"};
  const unsigned op = (unsigned)jobs[0].args.op;
  pod_phase(pod, op < sizeof op_names / sizeof *op_names ? op_names[op] : "collective"); /* (before the marks) */
  rt_status_t rc = load_programs(pod, jobs, njobs, g, &limit, err, errlen);
  if (rc != RT_OK) return rc;
  const uint64_t sent0 = link_flits(pod, pod_w, pod_h);
  if (trace_path &&
      chip_trace(pod_chip(pod, trace_chip % pod_w, trace_chip / pod_w), trace_path, err, errlen))
    return RT_FAILED;
  char report[2048];
  uint64_t cycles;
  if (pod_run(pod, ISA_QMASK_ALL, limit, &cycles, report, sizeof report)) {
    snprintf(err, errlen, "collective failed: %s", report);
    return RT_FAILED;
  }
  const uint64_t sent = link_flits(pod, pod_w, pod_h) - sent0;
  for (unsigned j = 0; j < njobs; j++) {
    jobs[j].stats.cycles = cycles;  /* the jobs run together: the pod's cycles */
    jobs[j].stats.flits_sent = sent;
    const fw_slice_t *s = &jobs[j].slice;
    for (unsigned y = s->y0; y < s->y0 + s->h; y++)
      for (unsigned x = s->x0; x < s->x0 + s->w; x++)
        for (unsigned k = 0; k < ISA_NUM_SEMS; k++) jobs[j].stats.sems_left += chip_sem(pod_chip(pod, x, y), k) != 0;
  }
  return copy_out && copy_stage(pod, jobs, njobs, lb, true, NULL, err, errlen) ? RT_FAILED : RT_OK;
}

rt_status_t pod_coll_run_jobs(pod_t *pod, pod_coll_job_t *jobs, unsigned njobs, const char *trace_path,
                              unsigned trace_chip, char *err, size_t errlen) {
  return run_jobs(pod, jobs, njobs, trace_path, trace_chip, true, true, err, errlen);
}

rt_status_t pod_coll_run(pod_t *pod, const fw_slice_t *s, const fw_coll_args_t *a, uint64_t hbm_addr,
                         const char *trace_path, unsigned trace_chip, pod_coll_stats_t *st, char *err, size_t errlen) {
  pod_coll_job_t job = {*s, *a, hbm_addr, {0}};
  rt_status_t rc = pod_coll_run_jobs(pod, &job, 1, trace_path, trace_chip, err, errlen);
  *st = job.stats;
  return rc;
}

/* How the host lays a chip's values out in VMEM lines: contiguous, or (all_to_all) each
 * block of `block` values starting a line of its own, bl lines a block. */
typedef struct {
  uint64_t elems, block;
  uint32_t bl;
  unsigned lanes;
} layout_t;

/* The plan of cfg's collective (pod_collective.h), or RT_INVALID with a message. */
static rt_status_t plan(const pod_coll_config_t *cfg, pod_coll_plan_t *p, char *err, size_t errlen) {
  chip_geometry_t *g = &p->geo;
  fw_slice_t *s = &p->slice;
  fw_coll_args_t *a = &p->args;
  pod_config_t *pc = &p->pod;
  layout_t l, *lay = &l;
  if (pod_check(&cfg->machine, g, err, errlen)) return RT_INVALID;
  *s = cfg->slice;
  s->pod_w = cfg->machine.size_x;
  s->pod_h = cfg->machine.size_y;
  if (fw_slice_check(s, err, errlen)) return RT_INVALID;
  const unsigned lanes = g->cols;
  if (cfg->elems == 0 || cfg->elems > (uint64_t)g->vmem_lines * lanes) {
    snprintf(err, errlen, "%llu fp32 values per chip do not fit VMEM (%u lines of %u values)",
             (unsigned long long)cfg->elems, g->vmem_lines, lanes);
    return RT_INVALID;
  }
  *a = cfg->args;
  a->data_line = 0;
  *lay = (layout_t){cfg->elems, 0, 0, lanes};
  const unsigned chips = s->w * s->h;
  if (a->op == FW_COLL_ALL_TO_ALL) {
    if (cfg->elems % chips) {
      snprintf(err, errlen, "all_to_all splits each chip's %llu values into %u equal blocks: they do not divide",
               (unsigned long long)cfg->elems, chips);
      return RT_INVALID;
    }
    lay->block = cfg->elems / chips;
    lay->bl = ceil_div32(lay->block, lanes);
    a->lines = lay->bl * chips;
  } else {
    a->lines = ceil_div32(cfg->elems, lanes);
  }
  if (a->chunk_lines == 0) pod_coll_default_chunk(s, a, g->vmem_lines);
  if (a->op == FW_COLL_ALL_TO_ALL && cfg->args.chunk_lines == 0) /* pieces of one packet (docs/isa.md) */
    a->chunk_lines = isa_rdma_packet_lines_wide(lanes, isa_geometry_flit_words(g));
  p->block = lay->block, p->block_lines = lay->bl;
  *pc = cfg->machine;
  return fw_coll_check(g, s, a, err, errlen) || pod_hbm_fit(pc, (uint64_t)a->lines * 4 * lanes, err, errlen)
             ? RT_INVALID
             : RT_OK;
}

/* Where value e of a chip lives: its VMEM line (from the buffer's first) and lane. */
static void place_of(const layout_t *lay, uint64_t e, uint32_t *line, unsigned *lane) {
  uint64_t o = e;
  uint32_t base = 0;
  if (lay->block) {
    base = (uint32_t)(e / lay->block) * lay->bl;
    o = e % lay->block;
  }
  *line = base + (uint32_t)(o / lay->lanes);
  *lane = (unsigned)(o % lay->lanes);
}

/* Bytes of inputs staged in HBM at a time: the chips are loaded a group at a time, each
 * group's HBM cleared once its buffers are in VMEM, so a big pod holds its data once. */
enum { STAGE_BYTES = 256u << 20 };

/* Every slice chip's values from io->input into VMEM line 0 on (padded with zeros; with bf16_in
 * two bf16 to a 32-bit word in the line's low half), through HBM a group of chips at a time. */
static rt_status_t stage_in(pod_t *pod, pod_coll_job_t *job, const layout_t *lay, const pod_coll_io_t *io,
                            char *err, size_t errlen) {
  const fw_slice_t *s = &job->slice;
  const fw_coll_args_t *a = &job->args;
  const unsigned lb = 4 * lay->lanes, chips = s->w * s->h;
  const uint64_t chip_bytes = (uint64_t)a->lines * lb;
  const unsigned group = chip_bytes >= STAGE_BYTES ? 1 : (unsigned)(STAGE_BYTES / chip_bytes);
  uint32_t *line = calloc(lay->lanes, sizeof *line), *vals = calloc(lay->lanes, sizeof *vals);
  bool *only = calloc((size_t)s->pod_w * s->pod_h, sizeof *only);
  rt_status_t rc = line && vals && only ? RT_OK : RT_FAILED;
  if (rc != RT_OK) snprintf(err, errlen, "out of memory");
  for (unsigned g0 = 0; g0 < chips && rc == RT_OK; g0 += group) {
    const unsigned g1 = g0 + group < chips ? g0 + group : chips;
    memset(only, 0, (size_t)s->pod_w * s->pod_h * sizeof *only);
    for (unsigned i = g0; i < g1 && rc == RT_OK; i++) {
      const unsigned x = s->x0 + i % s->w, y = s->y0 + i / s->w;
      chip_t *c = pod_chip(pod, x, y);
      only[y * s->pod_w + x] = true;
      for (uint32_t l = 0; l < a->lines && rc == RT_OK; l++) {
        uint64_t e0, n;
        line_values(lay->elems, lay->block, lay->bl, lay->lanes, l, &e0, &n);
        memset(line, 0, lb);
        if (n) io->input(io->ctx, i, e0, n, vals);
        if (a->bf16_in)
          for (uint64_t k = 0; k < n; k++) line[k / 2] |= (vals[k] & 0xFFFFu) << (16 * (k % 2));
        else
          memcpy(line, vals, n * 4);
        if (chip_hbm_write(c, job->hbm_addr + (uint64_t)l * lb, line, lb)) {
          snprintf(err, errlen, "buffer outside HBM, or out of memory");
          rc = RT_FAILED;
        }
      }
    }
    if (rc == RT_OK && copy_stage(pod, job, 1, lb, false, only, err, errlen)) rc = RT_FAILED;
    for (unsigned i = g0; i < g1 && rc == RT_OK; i++)
      if (chip_hbm_zero(pod_chip(pod, s->x0 + i % s->w, s->y0 + i / s->w), job->hbm_addr, chip_bytes)) rc = RT_FAILED;
  }
  free(line), free(vals), free(only);
  return rc;
}

struct pod_coll_results {
  pod_t *pod;
  const pod_coll_job_t *job;
  layout_t lay;
  bool from_hbm;       /* the results were copied back to HBM (a model without a host path to VMEM) */
  uint32_t *line;      /* RUN_LINES lines of a chip, from line_no on (cached: values are read in runs; under
                          MPI each read is a collective call, so few and large) */
  unsigned line_chip;
  uint32_t line_no, lines;
  bool have_line;
};

#define RUN_LINES 256u

int pod_coll_read(pod_coll_results_t *r, unsigned chip, uint64_t first, uint64_t n, uint32_t *vals) {
  const fw_slice_t *s = &r->job->slice;
  if (chip >= s->w * s->h || first > r->lay.elems || n > r->lay.elems - first) return -1;
  chip_t *c = pod_chip(r->pod, s->x0 + chip % s->w, s->y0 + chip / s->w);
  uint32_t last;
  unsigned last_lane;
  place_of(&r->lay, r->lay.elems - 1, &last, &last_lane); /* the last line holding a value */
  for (uint64_t k = 0; k < n; k++) {
    uint32_t l;
    unsigned lane;
    place_of(&r->lay, first + k, &l, &lane);
    if (!r->have_line || r->line_chip != chip || l < r->line_no || l - r->line_no >= r->lines) {
      const uint32_t count = last - l + 1 < RUN_LINES ? last - l + 1 : RUN_LINES;
      const int bad = r->from_hbm ? chip_hbm_read(c, r->job->hbm_addr + (uint64_t)l * 4 * r->lay.lanes, r->line,
                                                  (size_t)count * 4 * r->lay.lanes)
                                  : chip_vmem_read(c, l, count, r->line);
      if (bad) return -1;
      r->have_line = true, r->line_chip = chip, r->line_no = l, r->lines = count;
    }
    vals[k] = r->line[(size_t)(l - r->line_no) * r->lay.lanes + lane];
  }
  return 0;
}

rt_status_t pod_coll_check(const pod_coll_config_t *cfg, char *err, size_t errlen) {
  pod_coll_plan_t p;
  return plan(cfg, &p, err, errlen);
}

rt_status_t pod_coll_check_plan(const pod_coll_config_t *cfg, pod_coll_plan_t *p, char *err, size_t errlen) {
  return plan(cfg, p, err, errlen);
}

rt_status_t pod_coll_plan(const pod_coll_config_t *cfg, chip_geometry_t *g, fw_slice_t *s, fw_coll_args_t *a, char *err,
                          size_t errlen) {
  pod_coll_plan_t p;
  const rt_status_t rc = plan(cfg, &p, err, errlen);
  *g = p.geo, *s = p.slice, *a = p.args;
  return rc;
}

rt_status_t pod_collective_io(const pod_coll_config_t *cfg, const pod_coll_io_t *io, pod_coll_stats_t *st, char *err,
                              size_t errlen) {
  pod_coll_plan_t p;
  const rt_status_t rc = plan(cfg, &p, err, errlen);
  if (rc != RT_OK) {
    memset(st, 0, sizeof *st);
    return rc;
  }
  return pod_collective_planned(cfg, &p, io, st, err, errlen);
}

rt_status_t pod_collective_planned(const pod_coll_config_t *cfg, const pod_coll_plan_t *plan, const pod_coll_io_t *io,
                                   pod_coll_stats_t *st, char *err, size_t errlen) {
  memset(st, 0, sizeof *st);
  const chip_geometry_t g = plan->geo;
  pod_coll_job_t job = {.slice = plan->slice, .args = plan->args};
  const layout_t lay = {cfg->elems, plan->block, plan->block_lines, g.cols};
  rt_status_t rc;
  pod_t *pod = pod_build(&plan->pod, err, errlen);  /* pod_coll_check_plan checked it */
  if (!pod) return RT_FAILED;
  pod_set_profile(pod, cfg->profile);
  pod_coll_results_t res = {pod, &job, lay, false, calloc((size_t)RUN_LINES * g.cols, sizeof(uint32_t)), 0, 0, 0,
                            false};
  /* the results stay in VMEM where the host can read them there (the fast models), else come
   * back to HBM */
  for (unsigned i = 0; i < job.slice.w * job.slice.h && !res.from_hbm; i++) {
    uint32_t *one = res.line;
    res.from_hbm = !one || chip_vmem_read(pod_chip(pod, job.slice.x0 + i % job.slice.w, job.slice.y0 + i / job.slice.w),
                                          0, 1, one) != 0;
  }
  if (!res.line) {
    snprintf(err, errlen, "out of memory");
    rc = RT_FAILED;
  } else if ((rc = stage_in(pod, &job, &lay, io, err, errlen)) != RT_OK) {
  } else if ((rc = run_jobs(pod, &job, 1, cfg->trace_path, cfg->trace_chip, false, res.from_hbm, err, errlen)) == RT_OK) {
    *st = job.stats;
    for (unsigned y = 0; y < cfg->machine.size_y; y++)
      for (unsigned x = 0; x < cfg->machine.size_x; x++) st->memory_bytes += chip_memory(pod_chip(pod, x, y));
    rc = io->results(io->ctx, &res, err, errlen);
  }
  free(res.line);
  pod_free(pod);
  return rc;
}

/* The arrays of pod_collective as a pod_coll_io_t. */
typedef struct {
  const uint32_t *in;
  uint32_t *out;
  uint64_t elems;
} arrays_t;

static void array_input(void *ctx, unsigned chip, uint64_t first, uint64_t n, uint32_t *vals) {
  const arrays_t *x = ctx;
  memcpy(vals, x->in + chip * x->elems + first, n * sizeof *vals);
}

static rt_status_t array_results(void *ctx, pod_coll_results_t *r, char *err, size_t errlen) {
  arrays_t *x = ctx;
  for (unsigned i = 0; i < r->job->slice.w * r->job->slice.h; i++)
    if (pod_coll_read(r, i, 0, x->elems, x->out + i * x->elems)) {
      snprintf(err, errlen, "chip %u's results cannot be read", i);
      return RT_FAILED;
    }
  return RT_OK;
}

rt_status_t pod_collective(const pod_coll_config_t *cfg, const uint32_t *in, uint32_t *out, pod_coll_stats_t *st,
                           char *err, size_t errlen) {
  arrays_t x = {in, out, cfg->elems};
  const pod_coll_io_t io = {&x, array_input, array_results};
  return pod_collective_io(cfg, &io, st, err, errlen);
}

pod_coll_bw_t pod_coll_bandwidth(const fw_slice_t *s, fw_coll_op_t op, uint64_t bytes, uint64_t cycles,
                                 double clock_mhz, unsigned link_bytes) {
  pod_coll_bw_t b;
  const unsigned n = s->w * s->h;
  b.time_s = (double)cycles / (clock_mhz * 1e6);
  b.algbw = (double)bytes / b.time_s / 1e9;
  const double factor = op == FW_COLL_ALLREDUCE ? 2.0 * (n - 1) / n : op == FW_COLL_BROADCAST ? 1.0 : (double)(n - 1) / n;
  b.busbw = b.algbw * factor;
  b.link = (double)(link_bytes ? link_bytes : 8) * clock_mhz * 1e6 / 1e9; /* one way */
  /* What the topology allows, in links per chip: all-reduce drives all of a chip's links (4
   * on a 2-D slice, 2 on a ring); reduce-scatter and all-gather run one ring direction (1);
   * a broadcast chain forwards at one link's rate (1). All-to-all: every byte crosses the
   * average hop count H of the slice (ring distance in a dimension it spans, straight
   * distance in a mesh one), so with every link busy busbw is at most
   * links x (n-1) / (n H). */
  b.links = op == FW_COLL_ALLREDUCE || op == FW_COLL_ALL_TO_ALL ? (s->w > 1 && s->h > 1 ? 4 : 2) : 1;
  b.bound = b.links * b.link;
  if (op == FW_COLL_ALL_TO_ALL && n > 1) {
    double hops = 0;  /* average over all (source, destination) pairs, self included */
    const unsigned dims[2][2] = {{s->w, s->pod_w}, {s->h, s->pod_h}};
    for (unsigned d = 0; d < 2; d++) {
      const unsigned k = dims[d][0];
      double sum = 0;
      for (unsigned i = 0; i < k; i++)
        for (unsigned j = 0; j < k; j++) {
          unsigned dist = i > j ? i - j : j - i;
          if (k == dims[d][1] && k - dist < dist) dist = k - dist;
          sum += dist;
        }
      hops += sum / ((double)k * k);
    }
    b.bound *= (double)(n - 1) / (n * hops);
  }
  return b;
}
