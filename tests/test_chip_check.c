/*
 * The lockstep's comparison (chip_obs_compare, csim/chip/chip_check.c) on hand-made cycles:
 * two equal views agree; a change to any one thing the RTL shows (a queue's state, an issue, a
 * semaphore of either core, a progress counter, busy flags, an accumulator write, a counter, the MXU error,
 * an HBM request or its data, a VMEM write's enable, line or lane, a remote-DMA word, a
 * router port's flit or a credit) is reported, naming the unit and both values; data behind
 * a write enable that is clear is not compared. The lockstep on real chips is the model suites
 * run under TPU_MODEL=check, and scripts/mutants_chip.sh shows it catching planted errors.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "chip/chip_core.h"

TestSuite(chip_check, .timeout = 10);

enum { COLS = 8 };

typedef struct {
  chip_obs_t r, f;
  uint32_t hbm_r[COLS], hbm_f[COLS];
  uint32_t vmem_r[CHIP_MAX_CORES][CHIP_OBS_VMEM_PORTS][COLS], vmem_f[CHIP_MAX_CORES][CHIP_OBS_VMEM_PORTS][COLS];
} pair_t;

/* A busy cycle: every event present, the same on both sides. */
static void busy_cycle(pair_t *p) {
  memset(p, 0, sizeof *p);
  chip_obs_t *o = &p->r;
  for (unsigned k = 0; k < CHIP_MAX_CORES; k++) { /* both cores busy, each its own values */
    chip_obs_core_t *c = &o->core[k];
    for (unsigned q = 0; q < ISA_NUM_QUEUES; q++) c->running[q] = true, c->pc[q] = 10 + q + 100 * k;
    for (unsigned s = 0; s < ISA_NUM_SEMS; s++) c->sems[s] = s * 3 + k;
    for (unsigned m = 0; m < CHIP_MAX_MXUS; m++)
      for (unsigned i = 0; i < 6; i++) c->progress[m][i] = 100 * (m + 1) + i + 1000 * k;
    c->vec_progress[0] = 50, c->vec_progress[1] = 49;
    c->busy = CHIP_BUSY_DMA | CHIP_BUSY_MXU;
    c->mxu_busy = 0x3, c->mxu_drained = 0x4;
    c->acc_we = 0x3, c->acc_waddr[0] = 7, c->acc_waddr[1] = 9;
    c->issue = 3;
    c->vmem_we = 0x1F;  /* DMA, MXU 0, vector unit, MXUs 1 and 2 */
    for (unsigned v = 0; v < CHIP_OBS_VMEM_PORTS; v++) c->vmem_waddr[v] = 20 + v + 1000 * k;
    for (unsigned w = 0; w < COLS; w++)
      for (unsigned v = 0; v < CHIP_OBS_VMEM_PORTS; v++) p->vmem_r[k][v][w] = p->vmem_f[k][v][w] = k << 24 | v << 16 | w;
  }
  for (unsigned i = 0; i < CHIP_OBS_COUNTERS; i++) o->counters[i] = 1000 + i;
  o->core[0].hbm_req_valid = o->core[0].hbm_req_write = true;
  o->core[0].hbm_req_addr = 0x400, o->core[0].hbm_req_bytes = 4 * COLS;
  for (unsigned w = 0; w < COLS; w++) p->hbm_r[w] = p->hbm_f[w] = 0xA0000000u + w;
  o->rdma_we = 0xF;
  for (unsigned e = 0; e < ISA_NUM_RDMA_ENGINES; e++)
    o->rdma_waddr[e] = (e & 1u) << 30 | e << 24 | (30 + e), o->rdma_wdata[e] = 0x1234ull * e;
  for (unsigned port = 0; port < CHIP_OBS_ROUTER_PORTS; port++) {
    o->rtr_in[port] = (noc_flit_t){.valid = true, .head = true, .vc = 1, .data = 0x55u + port};
    o->rtr_out[port] = (noc_flit_t){.valid = true, .tail = true, .vc = 0, .data = 0x77u + port};
  }
  o->rtr_credit_in = 0x0F0F, o->rtr_credit_out = 0x00FF;
  p->f = p->r;
  p->r.core[0].hbm_req_data = p->hbm_r, p->f.core[0].hbm_req_data = p->hbm_f;
  for (unsigned k = 0; k < CHIP_MAX_CORES; k++)
    for (unsigned v = 0; v < CHIP_OBS_VMEM_PORTS; v++)
      p->r.core[k].vmem_wdata[v] = p->vmem_r[k][v], p->f.core[k].vmem_wdata[v] = p->vmem_f[k][v];
}

static int compare(const pair_t *p, char *why, size_t len) {
  why[0] = 0;
  return chip_obs_compare(&p->r, &p->f, COLS, why, len);
}

Test(chip_check, equal_cycles_agree) {
  pair_t p;
  busy_cycle(&p);
  char why[400];
  cr_assert_eq(compare(&p, why, sizeof why), 0, "%s", why);
  cr_assert_str_empty(why);
  memset(&p.r, 0, sizeof p.r), memset(&p.f, 0, sizeof p.f);  /* and an empty cycle */
  cr_assert_eq(compare(&p, why, sizeof why), 0, "%s", why);
}

/* One change to the fast model's side, and what the report must name. */
typedef struct {
  const char *name;
  void (*change)(pair_t *p);
  const char *expect;
} mutation_t;

static void m_pc(pair_t *p) { p->f.core[0].pc[ISA_QUEUE_DMA]++; }
static void m_halted(pair_t *p) { p->f.core[0].halted[ISA_QUEUE_COMPUTE] = true; }
static void m_error(pair_t *p) { p->f.core[0].error[ISA_QUEUE_DMA] = 4; }
static void m_issue(pair_t *p) { p->f.core[0].issue = 1; }
static void m_sem(pair_t *p) { p->f.core[0].sems[5]++; }
static void m_progress(pair_t *p) { p->f.core[0].progress[0][5]--; }
static void m_progress_mxu1(pair_t *p) { p->f.core[0].progress[1][2]++; }
static void m_vec_progress(pair_t *p) { p->f.core[0].vec_progress[1]++; }
static void m_mxu_busy(pair_t *p) { p->f.core[0].mxu_busy = 0x1; }
static void m_mxu_drained(pair_t *p) { p->f.core[0].mxu_drained = 0x6; }
static void m_acc_row_mxu1(pair_t *p) { p->f.core[0].acc_waddr[1]++; }
static void m_vmem_mxu1(pair_t *p) { p->f.core[0].vmem_waddr[3]++; }
static void m_core1_sem(pair_t *p) { p->f.core[1].sems[7]++; }
static void m_core1_pc(pair_t *p) { p->f.core[1].pc[ISA_QUEUE_COMPUTE]++; }
static void m_core1_lane(pair_t *p) { p->vmem_f[1][2][5] ^= 1; }
static void m_rdma_core(pair_t *p) { p->f.rdma_waddr[1] ^= 1u << 30; }
static void m_busy(pair_t *p) { p->f.core[0].busy |= CHIP_BUSY_VEC; }
static void m_acc_row(pair_t *p) { p->f.core[0].acc_waddr[0]++; }
static void m_acc_we(pair_t *p) { p->f.core[0].acc_we = 0x2; }
static void m_counter(pair_t *p) { p->f.counters[CHIP_CNT_WEIGHT_STALL]++; }
static void m_mxu_error(pair_t *p) { p->f.mxu_error = true; }
static void m_idle(pair_t *p) { p->f.idle = true; }
static void m_hbm_valid(pair_t *p) { p->f.core[0].hbm_req_valid = false; }
static void m_hbm_addr(pair_t *p) { p->f.core[0].hbm_req_addr += 4 * COLS; }
static void m_hbm_dir(pair_t *p) { p->f.core[0].hbm_req_write = false; }
static void m_hbm_data(pair_t *p) { p->hbm_f[COLS - 1] ^= 1; }
static void m_vmem_we(pair_t *p) { p->f.core[0].vmem_we = 5; }
static void m_vmem_line(pair_t *p) { p->f.core[0].vmem_waddr[2]++; }
static void m_vmem_lane(pair_t *p) { p->vmem_f[0][1][3] ^= 0x80000000u; }
static void m_rdma_we(pair_t *p) { p->f.rdma_we = 0x7; }
static void m_rdma_word(pair_t *p) { p->f.rdma_waddr[2] += 1u << 24; }
static void m_rdma_data(pair_t *p) { p->f.rdma_wdata[3] ^= 1ull << 63; }
static void m_rtr_in(pair_t *p) { p->f.rtr_in[6].data ^= 2; }
static void m_rtr_out_valid(pair_t *p) { p->f.rtr_out[1].valid = false; }
static void m_rtr_out_vc(pair_t *p) { p->f.rtr_out[4].vc = 1; }
static void m_rtr_tail(pair_t *p) { p->f.rtr_in[0].tail = true; }
static void m_credit(pair_t *p) { p->f.rtr_credit_out ^= 0x100; }

static const mutation_t mutations[] = {
    {"queue pc", m_pc, "DMA queue"},
    {"queue halted", m_halted, "compute queue"},
    {"queue error", m_error, "error 4"},
    {"issue", m_issue, "command issue"},
    {"semaphore", m_sem, "semaphore 5: RTL 15, fast 16"},
    {"progress", m_progress, "MXU 0 stores done"},
    {"progress of MXU 1", m_progress_mxu1, "MXU 1 matmuls issued: RTL 202, fast 203"},
    {"VEC progress", m_vec_progress, "VECs done"},
    {"MXUs busy", m_mxu_busy, "MXUs busy"},
    {"MXUs drained", m_mxu_drained, "RTL 0x3/0x4, fast 0x3/0x6"},
    {"accumulator row of MXU 1", m_acc_row_mxu1, "MXU 1 accumulator write: RTL writes row 9, fast writes row 10"},
    {"VMEM line of MXU 1", m_vmem_mxu1, "MXU 1's store"},
    {"busy flags", m_busy, "busy flags"},
    {"accumulator row", m_acc_row, "row 8"},
    {"accumulator write", m_acc_we, "MXU 0 accumulator write: RTL writes row 7, fast no write"},
    {"counter", m_counter, "weight stall"},
    {"MXU error", m_mxu_error, "MXU error"},
    {"idle", m_idle, "chip idle"},
    {"HBM request", m_hbm_valid, "none"},
    {"HBM address", m_hbm_addr, "0x420"},
    {"HBM direction", m_hbm_dir, "read"},
    {"HBM data", m_hbm_data, "word 7"},
    {"VMEM enables", m_vmem_we, "VMEM line writes"},
    {"VMEM line", m_vmem_line, "the vector unit"},
    {"VMEM lane", m_vmem_lane, "lane 3"},
    {"remote-DMA enables", m_rdma_we, "remote-DMA receivers"},
    {"remote-DMA word", m_rdma_word, "engine 2"},
    {"remote-DMA data", m_rdma_data, "engine 3"},
    {"router input", m_rtr_in, "port 6 (local 2) input"},
    {"router output", m_rtr_out_valid, "no flit"},
    {"router VC", m_rtr_out_vc, "port 4 (-Y) output"},
    {"router tail", m_rtr_tail, "port 0 (local 0) input"},
    {"credits", m_credit, "router credits"},
    {"core 1's semaphore", m_core1_sem, "core 1: semaphore 7: RTL 22, fast 23"},
    {"core 1's queue", m_core1_pc, "core 1: compute queue"},
    {"core 1's vector unit write", m_core1_lane, "core 1: VMEM write of the vector unit to line 1022, lane 5"},
    {"remote-DMA core", m_rdma_core, "engine 1 receiving: RTL core 1"},
};
enum { NMUT = sizeof mutations / sizeof mutations[0] };

Test(chip_check, every_difference_is_reported_with_its_unit) {
  for (unsigned i = 0; i < NMUT; i++) {
    pair_t p;
    busy_cycle(&p);
    mutations[i].change(&p);
    char why[400];
    cr_expect_eq(compare(&p, why, sizeof why), -1, "%s: not reported", mutations[i].name);
    cr_expect(strstr(why, mutations[i].expect) != NULL, "%s: report '%s' does not name '%s'", mutations[i].name, why,
              mutations[i].expect);
  }
}

Test(chip_check, data_behind_a_clear_write_enable_is_not_compared) {
  pair_t p;
  busy_cycle(&p);
  for (unsigned k = 0; k < CHIP_MAX_CORES; k++) {
    p.r.core[k].vmem_we = p.f.core[k].vmem_we = 0;
    p.r.core[k].acc_we = p.f.core[k].acc_we = 0;
    p.vmem_f[k][0][0] ^= 1, p.f.core[k].vmem_waddr[1]++;
    p.f.core[k].acc_waddr[0]++, p.f.core[k].acc_waddr[1]++;
  }
  p.r.rdma_we = p.f.rdma_we = 0;
  p.r.core[0].hbm_req_write = p.f.core[0].hbm_req_write = false;
  p.f.rdma_wdata[0]++;
  p.hbm_f[0] ^= 1;  /* a read request carries no data */
  p.r.rtr_out[2].valid = p.f.rtr_out[2].valid = false;
  p.f.rtr_out[2].data ^= 1;  /* an invalid flit's data is noise */
  char why[400];
  cr_assert_eq(compare(&p, why, sizeof why), 0, "%s", why);
}
