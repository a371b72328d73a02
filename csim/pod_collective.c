/* pod_collective: see pod_collective.h. */
#include "pod_collective.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "hal.h"
#include "pod.h"

static uint32_t ceil_div32(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }

/* Runs one DMA-queue program per slice chip (built by `build`) and returns the cycles. */
typedef void (*stage_fn)(fw_prog_t *dq, uint32_t lines, unsigned line_bytes);
static void load_stage(fw_prog_t *dq, uint32_t lines, unsigned lb) {
  fw_dma_hbm_to_vmem(dq, FW_SEM_NONE, 0, 0, lb, 0, lines, lb);
  fw_fence(dq);
  fw_halt(dq);
}
static void store_stage(fw_prog_t *dq, uint32_t lines, unsigned lb) {
  fw_dma_vmem_to_hbm(dq, FW_SEM_NONE, 0, 0, 0, lb, lines, lb);
  fw_fence(dq);
  fw_halt(dq);
}

/* Chips outside the slice run HALT on both queues (other jobs' chips, idle here). */
static int halt_outside(pod_t *pod, const fw_slice_t *s, unsigned pw, unsigned ph, char *err, size_t errlen) {
  fw_prog_t p;
  fw_prog_init(&p);
  fw_halt(&p);
  int rc = fw_prog_ok(&p) ? 0 : -1;
  for (unsigned y = 0; y < ph && !rc; y++)
    for (unsigned x = 0; x < pw && !rc; x++)
      if (x < s->x0 || x >= s->x0 + s->w || y < s->y0 || y >= s->y0 + s->h)
        rc = chip_load_program(pod_chip(pod, x, y), CHIP_QUEUE_COMPUTE, p.words, p.count, err, errlen) ||
             chip_load_program(pod_chip(pod, x, y), CHIP_QUEUE_DMA, p.words, p.count, err, errlen);
  fw_prog_free(&p);
  return rc ? -1 : 0;
}

static int run_stage(pod_t *pod, const fw_slice_t *s, stage_fn fn, uint32_t lines, unsigned lb, char *err,
                     size_t errlen) {
  for (unsigned y = s->y0; y < s->y0 + s->h; y++)
    for (unsigned x = s->x0; x < s->x0 + s->w; x++) {
      fw_prog_t p;
      fw_prog_init(&p);
      fn(&p, lines, lb);
      int rc = fw_prog_ok(&p) ? chip_load_program(pod_chip(pod, x, y), CHIP_QUEUE_DMA, p.words, p.count, err, errlen)
                              : -1;
      fw_prog_free(&p);
      if (rc) return -1;
    }
  uint64_t cycles;
  char report[1024];
  if (pod_run(pod, 2, 100000 + 4ull * lines, &cycles, report, sizeof report)) {
    snprintf(err, errlen, "HBM copy failed: %s", report);
    return -1;
  }
  return 0;
}

int pod_collective(const pod_coll_config_t *cfg, const uint32_t *in, uint32_t *out, pod_coll_stats_t *st,
                   char *err, size_t errlen) {
  memset(st, 0, sizeof *st);
  chip_geometry_t g;
  if (chip_top_geometry(cfg->mxu_rows, cfg->mxu_cols, &g)) {
    snprintf(err, errlen, "no chip with a %ux%u MXU; built: %s", cfg->mxu_rows, cfg->mxu_cols, chip_top_sizes());
    return -1;
  }
  fw_slice_t s = cfg->slice;
  s.pod_w = cfg->pod_w;
  s.pod_h = cfg->pod_h;
  const unsigned lanes = g.cols, lb = 4 * lanes;
  if (cfg->elems == 0 || cfg->elems > (uint64_t)g.vmem_lines * lanes) {
    snprintf(err, errlen, "%llu fp32 values per chip do not fit VMEM (%u lines of %u values)",
             (unsigned long long)cfg->elems, g.vmem_lines, lanes);
    return -1;
  }
  fw_coll_args_t a = cfg->args;
  a.data_line = 0;
  a.lines = ceil_div32(cfg->elems, lanes);
  if (a.chunk_lines == 0) {
    /* four chunks per segment at least, so a ring step's sends overlap the previous
     * step's receives; at most 64 lines; and the slots must fit */
    unsigned n = s.w > s.h ? s.w : s.h;
    uint32_t seg = ceil_div32(a.lines, 4ull * (n ? n : 1)), room = g.vmem_lines > a.lines ? g.vmem_lines - a.lines : 0;
    a.chunk_lines = seg < 64 ? seg : 64;
    if (a.chunk_lines < 1) a.chunk_lines = 1;
    while (a.chunk_lines > 1 && fw_coll_scratch_lines(&a) > room) a.chunk_lines /= 2;
  }
  fw_chip_t fc = {g.rows, g.cols, g.vmem_lines, g.acc_depth, g.queue_depth};
  if (fw_coll_check(&fc, &s, &a, err, errlen)) return -1;
  st->lines = a.lines;
  st->chunk_lines = a.chunk_lines;

  pod_config_t pc = {cfg->pod_w, cfg->pod_h, cfg->link_latency,
                     {g.rows, g.cols, 0, 0, 0, 0, 1ull << 22, 957, 20, cfg->seed}};
  if ((uint64_t)a.lines * lb > pc.chip.hbm_bytes) pc.chip.hbm_bytes = (uint64_t)a.lines * lb;
  pod_t *pod = pod_new(&pc, err, errlen);
  if (!pod) return -1;
  int rc = -1;
  uint32_t *line = calloc(lanes, sizeof *line);
  fw_prog_t cq, dq;
  fw_prog_init(&cq);
  fw_prog_init(&dq);
  if (!line) goto oom;
  /* host: buffers into HBM at 0, padded to whole lines with zeros */
  for (unsigned j = 0; j < s.h; j++)
    for (unsigned i = 0; i < s.w; i++) {
      chip_t *c = pod_chip(pod, s.x0 + i, s.y0 + j);
      const uint32_t *src = in + (uint64_t)(j * s.w + i) * cfg->elems;
      for (uint32_t l = 0; l < a.lines; l++) {
        uint64_t e0 = (uint64_t)l * lanes, n = cfg->elems - e0 < lanes ? cfg->elems - e0 : lanes;
        memset(line, 0, lb);
        memcpy(line, src + e0, n * 4);
        if (chip_hbm_write(c, (uint64_t)l * lb, line, lb)) goto hbm;
      }
    }
  if (halt_outside(pod, &s, cfg->pod_w, cfg->pod_h, err, errlen)) goto out;
  if (run_stage(pod, &s, load_stage, a.lines, lb, err, errlen)) goto out;
  /* the collective */
  uint32_t flits0[5] = {0}, flits1[5];
  uint64_t sent0 = 0;
  for (unsigned y = s.y0; y < s.y0 + s.h; y++)
    for (unsigned x = s.x0; x < s.x0 + s.w; x++) {
      chip_t *c = pod_chip(pod, x, y);
      fw_prog_free(&cq), fw_prog_free(&dq);
      fw_prog_init(&cq), fw_prog_init(&dq);
      if (fw_collective(&fc, &s, &a, x, y, &cq, &dq, err, errlen)) goto out;
      fw_halt(&cq);
      fw_halt(&dq);
      if (!fw_prog_ok(&cq) || !fw_prog_ok(&dq)) goto oom;
      if (chip_load_program(c, CHIP_QUEUE_COMPUTE, cq.words, cq.count, err, errlen) ||
          chip_load_program(c, CHIP_QUEUE_DMA, dq.words, dq.count, err, errlen))
        goto out;
      chip_router_flits(c, flits0);
      for (int p = 1; p < 5; p++) sent0 += flits0[p];
    }
  if (cfg->trace_path) {
    unsigned tx = cfg->trace_chip % cfg->pod_w, ty = cfg->trace_chip / cfg->pod_w;
    if (chip_trace(pod_chip(pod, tx, ty), cfg->trace_path, err, errlen)) goto out;
  }
  char report[2048];
  uint64_t limit = 200000 + 400ull * a.lines * (s.w + s.h);
  if (pod_run(pod, 3, limit, &st->cycles, report, sizeof report)) {
    snprintf(err, errlen, "collective failed: %s", report);
    goto out;
  }
  for (unsigned y = s.y0; y < s.y0 + s.h; y++)
    for (unsigned x = s.x0; x < s.x0 + s.w; x++) {
      chip_router_flits(pod_chip(pod, x, y), flits1);
      for (int p = 1; p < 5; p++) st->flits_sent += flits1[p];
    }
  st->flits_sent -= sent0;
  if (run_stage(pod, &s, store_stage, a.lines, lb, err, errlen)) goto out;
  for (unsigned j = 0; j < s.h; j++)
    for (unsigned i = 0; i < s.w; i++) {
      chip_t *c = pod_chip(pod, s.x0 + i, s.y0 + j);
      uint32_t *dst = out + (uint64_t)(j * s.w + i) * cfg->elems;
      for (uint32_t l = 0; l < a.lines; l++) {
        uint64_t e0 = (uint64_t)l * lanes, n = cfg->elems - e0 < lanes ? cfg->elems - e0 : lanes;
        if (chip_hbm_read(c, (uint64_t)l * lb, line, lb)) goto hbm;
        memcpy(dst + e0, line, n * 4);
      }
    }
  rc = 0;
  goto out;
hbm:
  snprintf(err, errlen, "buffer outside HBM");
  goto out;
oom:
  snprintf(err, errlen, "out of memory");
out:
  fw_prog_free(&cq);
  fw_prog_free(&dq);
  free(line);
  pod_free(pod);
  return rc;
}
