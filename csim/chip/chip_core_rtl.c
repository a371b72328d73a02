/* chip_core_rtl: the chip_core (chip_core.h) of the Verilated RTL, rtl/chip_top.sv through
 * csim/vmodel/chip_top.h: each operation pokes and peeks the model's ports. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip/chip_core.h"
#include "util/bits.h"
#include "vmodel/chip_top.h"
#include "vmodel/vmodel.h"

enum { P_HOST_WE, P_HOST_Q, P_HOST_ADDR, P_HOST_DATA, P_START, P_HBM_BYTES, P_RUNNING, P_HALTED,
       P_ERROR, P_PC, P_OPCODE, P_SEM_IDX, P_SEM_VALUE, P_REQ_VALID, P_REQ_READY, P_REQ_WRITE,
       P_REQ_ADDR, P_REQ_BYTES, P_REQ_DATA, P_RESP_VALID, P_RESP_DATA, P_MXU_ERROR, P_IDLE, P_MY_X, P_MY_Y,
       P_SIZE_X, P_SIZE_Y, P_BUF_DEPTH, P_NET_IN, P_NET_OUT, P_NET_CIN, P_NET_COUT, P_NET_OCC, P_RTR_FLITS, P_SLICE,
       P_DROPS, P_START_LEN, P_ABORT,
       P_OBS_SEMS, P_OBS_VMEM_WE, P_OBS_VMEM_WADDR, P_OBS_VMEM_WDATA, P_OBS_RDMA_WE, P_OBS_RDMA_WADDR,
       P_OBS_RDMA_WDATA, P_OBS_RTR_IN, P_OBS_RTR_OUT, P_OBS_RTR_CIN, P_OBS_RTR_COUT, P_OBS_PROGRESS, P_OBS_ISSUE,
       P_OBS_BUSY, P_OBS_ACC_WE, P_OBS_ACC_WADDR, P_OBS_MXU_BUSY, P_OBS_MXU_DRAINED, P_SEM_CORE, P_COUNT };

static const char *const port_names[P_COUNT] = {
    "host_we_i", "host_queue_i", "host_addr_i", "host_data_i", "start_i", "hbm_bytes_i",
    "q_running_o", "q_halted_o", "q_error_o", "q_pc_o", "q_opcode_o", "sem_rd_idx_i",
    "sem_rd_value_o", "hbm_req_valid_o", "hbm_req_ready_i", "hbm_req_write_o", "hbm_req_addr_o",
    "hbm_req_bytes_o", "hbm_req_data_o", "hbm_resp_valid_i", "hbm_resp_data_i", "mxu_error_o", "idle_o", "my_x_i", "my_y_i", "size_x_i",
    "size_y_i", "buf_depth_i", "net_in_flit_i", "net_out_flit_o", "net_credit_in_i",
    "net_credit_out_o", "net_occupancy_o", "cnt_router_flits_o", "slice_i", "cnt_slice_drops_o", "start_len_i",
    "abort_i",
    "obs_sems_o", "obs_vmem_we_o", "obs_vmem_waddr_o", "obs_vmem_wdata_o", "obs_rdma_we_o", "obs_rdma_waddr_o",
    "obs_rdma_wdata_o", "obs_rtr_in_o", "obs_rtr_out_o", "obs_rtr_credit_in_o", "obs_rtr_credit_out_o",
    "obs_progress_o", "obs_issue_o", "obs_busy_o", "obs_acc_we_o", "obs_acc_waddr_o", "obs_mxu_busy_o",
    "obs_mxu_drained_o", "sem_rd_core_i"};

/* The counters (rtl/chip_obs.def), a port each: counter DMA_BUSY is cnt_dma_busy_o. */
static const char *const counter_names[CHIP_OBS_COUNTERS] = {
#define CHIP_COUNTER(name, doc) #name,
#include "rtl/chip_obs.def"
};

static int counter_port(vmodel_t *m, unsigned i) {
  char port[64] = "cnt_";
  size_t n = strlen(port);
  for (const char *s = counter_names[i]; *s && n < sizeof port - 3; s++) port[n++] = (char)tolower((unsigned char)*s);
  memcpy(port + n, "_o", 3);
  return vmodel_port(m, port);
}

typedef struct {
  chip_core_t core;
  chip_geometry_t geo;
  vmodel_t *m;
  int p[P_COUNT];
  int cnt_port[CHIP_OBS_COUNTERS];
  uint32_t *line, *resp;       /* scratch: a VMEM line per core, out and in */
  unsigned mxus, cores;        /* MXU units of each core; cores */
  uint32_t *vmem_wdata;        /* obs: the line writers' data */
  uint32_t obs_sems[CHIP_MAX_CORES][ISA_NUM_SEMS], sem_epoch[CHIP_MAX_CORES]; /* obs: sem_epoch's changes */
  bool start_pending, abort_pending;
} rtl_core_t;

static rtl_core_t *rtl(chip_core_t *c) { return (rtl_core_t *)c; }

/* What the chip sees whenever the host clocks it outside a run (loading a program, reset): no
 * HBM answer or request slot, no start or abort, no flit or credit from the network. A run
 * (step) sets each of these every cycle. */
static void idle_inputs(rtl_core_t *r) {
  static const uint32_t zero[16] = {0};
  vmodel_poke(r->m, r->p[P_HOST_WE], 0);
  vmodel_poke(r->m, r->p[P_START], 0);
  vmodel_poke(r->m, r->p[P_ABORT], 0);
  vmodel_poke(r->m, r->p[P_REQ_READY], 0);
  vmodel_poke(r->m, r->p[P_RESP_VALID], 0);
  vmodel_poke(r->m, r->p[P_NET_CIN], 0);
  vmodel_poke_words(r->m, r->p[P_NET_IN], zero);
  r->start_pending = r->abort_pending = false;
}

static void rtl_free(chip_core_t *c) {
  if (!c) return;
  vmodel_free(rtl(c)->m);
  free(rtl(c)->line);
  free(rtl(c)->resp);
  free(rtl(c)->vmem_wdata);
  free(c);
}

static void rtl_reset(chip_core_t *c) {
  idle_inputs(rtl(c));
  vmodel_reset(rtl(c)->m, 2);
}

static void rtl_set_slice(chip_core_t *c, uint32_t slice) { vmodel_poke(rtl(c)->m, rtl(c)->p[P_SLICE], slice); }

static void rtl_load(chip_core_t *c, unsigned queue, const uint32_t *cmds, size_t n) {
  rtl_core_t *r = rtl(c);
  idle_inputs(r);  /* the writes clock the chip: nothing else may happen in those cycles */
  vmodel_poke(r->m, r->p[P_HOST_Q], queue);
  vmodel_poke(r->m, r->p[P_HOST_WE], 1);
  for (size_t i = 0; i < n; i++) {
    vmodel_poke(r->m, r->p[P_HOST_ADDR], i);
    vmodel_poke_words(r->m, r->p[P_HOST_DATA], cmds + i * ISA_CMD_WORDS);
    vmodel_step(r->m, 1);
  }
  vmodel_poke(r->m, r->p[P_HOST_WE], 0);
}

static unsigned queues(const rtl_core_t *r) { return ISA_NUM_QUEUES * r->cores; }

static void rtl_start(chip_core_t *c, unsigned mask, const uint32_t len[CHIP_MAX_QUEUES]) {
  rtl_core_t *r = rtl(c);
  const unsigned qaw = (unsigned)__builtin_ctz(r->geo.queue_depth);
  uint64_t lens = 0;  /* each queue's program length, so running past it is an error */
  for (unsigned q = 0; q < queues(r); q++) lens |= (uint64_t)len[q] << ((qaw + 1) * q);
  vmodel_poke(r->m, r->p[P_START_LEN], lens);
  vmodel_poke(r->m, r->p[P_START], mask & ((1u << queues(r)) - 1));
  r->start_pending = true;
}

static void rtl_abort(chip_core_t *c, unsigned mask) {
  vmodel_poke(rtl(c)->m, rtl(c)->p[P_ABORT], mask & ((1u << queues(rtl(c))) - 1));
  rtl(c)->abort_pending = true;
}

/* Core k's HBM request is registered state: reading it costs no extra evaluation of the model.
 * The ports are vectors, core k's at [k] (chip_top.sv). */
static void rtl_hbm_request(chip_core_t *c, unsigned k, chip_hbm_req_t *q) {
  rtl_core_t *r = rtl(c);
  q->valid = (vmodel_peek(r->m, r->p[P_REQ_VALID]) >> k) & 1;
  if (!q->valid) return;
  const unsigned cols = r->geo.cols;
  q->write = (vmodel_peek(r->m, r->p[P_REQ_WRITE]) >> k) & 1;
  q->addr = (uint32_t)(vmodel_peek(r->m, r->p[P_REQ_ADDR]) >> (CHIP_HBM_REQ_WIDTH_ADDR * k));
  q->bytes = (uint32_t)(vmodel_peek(r->m, r->p[P_REQ_BYTES]) >> (CHIP_HBM_REQ_WIDTH_BYTES * k)) &
             ((1u << CHIP_HBM_REQ_WIDTH_BYTES) - 1);
  q->data = NULL;
  if (q->write) {
    vmodel_peek_words(r->m, r->p[P_REQ_DATA], r->line);  /* every core's line */
    q->data = r->line + (size_t)k * cols;
  }
}

static void rtl_drive_hbm(rtl_core_t *r, const bool *ready, const uint32_t *const *answer) {
  unsigned rdy = 0, valid = 0;
  for (unsigned k = 0; k < r->cores; k++) {
    rdy |= (unsigned)(ready && ready[k]) << k;
    valid |= (unsigned)(answer && answer[k]) << k;
  }
  vmodel_poke(r->m, r->p[P_REQ_READY], rdy);
  vmodel_poke(r->m, r->p[P_RESP_VALID], valid);
  if (!valid) return;
  const unsigned cols = r->geo.cols;
  for (unsigned k = 0; k < r->cores; k++)
    if (answer[k]) memcpy(r->resp + (size_t)k * cols, answer[k], 4ull * cols);
  vmodel_poke_words(r->m, r->p[P_RESP_DATA], r->resp);
}

static void rtl_clock(rtl_core_t *r) {
  vmodel_step(r->m, 1);
  if (r->start_pending) {
    vmodel_poke(r->m, r->p[P_START], 0);
    r->start_pending = false;
  }
  if (r->abort_pending) {
    vmodel_poke(r->m, r->p[P_ABORT], 0);
    r->abort_pending = false;
  }
}

static void rtl_observe(chip_core_t *c, chip_obs_t *o);

static void rtl_step(chip_core_t *c, const bool ready[CHIP_MAX_CORES], const uint32_t *const answer[CHIP_MAX_CORES],
                     chip_obs_t *obs) {
  rtl_drive_hbm(rtl(c), ready, answer);
  if (obs) rtl_observe(c, obs);  /* with the cycle's inputs, before the edge */
  rtl_clock(rtl(c));
}

static void rtl_net_in(chip_core_t *c, const chip_net_t *in);

static void rtl_skip(chip_core_t *c, uint64_t n) {
  static const chip_net_t none = {0};  /* nothing arrives in skipped cycles */
  rtl_net_in(c, &none);
  for (uint64_t i = 0; i < n; i++) rtl_step(c, NULL, NULL, NULL);
}

static uint64_t rtl_quiet_for(chip_core_t *c) {
  (void)c;
  return 0;
}

static void rtl_status(chip_core_t *c, chip_core_status_t *st) {
  rtl_core_t *r = rtl(c);
  vmodel_t *m = r->m;
  unsigned qaw = (unsigned)__builtin_ctz(r->geo.queue_depth);
  uint64_t running = vmodel_peek(m, r->p[P_RUNNING]), halted = vmodel_peek(m, r->p[P_HALTED]);
  uint64_t error = vmodel_peek(m, r->p[P_ERROR]), pc = vmodel_peek(m, r->p[P_PC]);
  uint64_t opcode = vmodel_peek(m, r->p[P_OPCODE]);
  memset(st, 0, sizeof *st);
  for (unsigned q = 0; q < queues(r); q++) {
    st->running[q] = (running >> q) & 1;
    st->halted[q] = (halted >> q) & 1;
    st->error[q] = (error >> (ISA_ERR_BITS * q)) & ((1u << ISA_ERR_BITS) - 1);
    st->pc[q] = (pc >> (qaw * q)) & ((1u << qaw) - 1);
    st->opcode[q] = (opcode >> (8 * q)) & 0xFF;
  }
}

static uint32_t rtl_sem(chip_core_t *c, unsigned idx) {
  vmodel_poke(rtl(c)->m, rtl(c)->p[P_SEM_CORE], idx / ISA_NUM_SEMS);
  vmodel_poke(rtl(c)->m, rtl(c)->p[P_SEM_IDX], idx % ISA_NUM_SEMS);
  return (uint32_t)vmodel_peek(rtl(c)->m, rtl(c)->p[P_SEM_VALUE]);
}

static void rtl_counters(chip_core_t *c, uint64_t cnt[CHIP_OBS_COUNTERS]) {
  for (int i = 0; i < CHIP_OBS_COUNTERS; i++) cnt[i] = vmodel_peek(rtl(c)->m, rtl(c)->cnt_port[i]);
}

static bool rtl_mxu_error(chip_core_t *c) { return vmodel_peek(rtl(c)->m, rtl(c)->p[P_MXU_ERROR]) != 0; }
static bool rtl_idle(chip_core_t *c) { return vmodel_peek(rtl(c)->m, rtl(c)->p[P_IDLE]) != 0; }
static unsigned rtl_occupancy(chip_core_t *c) { return (unsigned)vmodel_peek(rtl(c)->m, rtl(c)->p[P_NET_OCC]); }
static void rtl_router_flits(chip_core_t *c, uint32_t flits[5]) {
  vmodel_peek_words(rtl(c)->m, rtl(c)->p[P_RTR_FLITS], flits);
}
static uint32_t rtl_slice_drops(chip_core_t *c) { return (uint32_t)vmodel_peek(rtl(c)->m, rtl(c)->p[P_DROPS]); }

static void put_flit(uint32_t *w, unsigned port, const noc_flit_t *f) {
  const unsigned off = port * CHIP_FLIT_BITS, vcb = NOC_VC_BITS(CHIP_ROUTER_VCS);
  bits_put(w, off, NOC_DATA_BITS, f->data);
  bits_put(w, off + NOC_DATA_BITS, vcb + 3,
           (uint64_t)f->vc | (uint64_t)f->tail << vcb | (uint64_t)f->head << (vcb + 1) | (uint64_t)f->valid << (vcb + 2));
}

static noc_flit_t unpack_flit(const uint32_t *w, unsigned port);

static void rtl_net_in(chip_core_t *c, const chip_net_t *in) {
  rtl_core_t *r = rtl(c);
  uint32_t words[(4 * CHIP_FLIT_BITS + 31) / 32] = {0};
  for (unsigned d = 0; d < 4; d++) put_flit(words, d, &in->flit[d]);
  vmodel_poke_words(r->m, r->p[P_NET_IN], words);  /* (a poke: the next peek evaluates them) */
  vmodel_poke(r->m, r->p[P_NET_CIN], in->credits);
}

static void rtl_net_out(chip_core_t *c, chip_net_t *out) {
  rtl_core_t *r = rtl(c);
  const uint32_t *words = vmodel_port_ptr(r->m, r->p[P_NET_OUT]);
  for (unsigned d = 0; d < 4; d++) out->flit[d] = unpack_flit(words, d);
  out->credits = *(const uint8_t *)vmodel_port_ptr(r->m, r->p[P_NET_COUT]);
}

static int rtl_trace_open(chip_core_t *c, const char *path, char *err, size_t errlen) {
  return vmodel_trace_open(rtl(c)->m, path, err, errlen);
}

static void rtl_trace_close(chip_core_t *c) { vmodel_trace_close(rtl(c)->m); }

/* The 64 bits from bit `off` of little-endian words (they lie inside the words). */
static uint64_t word64_at(const uint32_t *w, unsigned off) {
  const unsigned i = off / 32, sh = off % 32;
  const uint64_t lo = w[i] | (uint64_t)w[i + 1] << 32;
  return sh ? lo >> sh | (uint64_t)w[i + 2] << (64 - sh) : lo;
}

static noc_flit_t unpack_flit(const uint32_t *w, unsigned port) {
  const unsigned off = port * CHIP_FLIT_BITS, vcb = NOC_VC_BITS(CHIP_ROUTER_VCS);
  const unsigned ctl = (unsigned)bits_get(w, off + NOC_DATA_BITS, vcb + 3); /* vc, tail, head, valid */
  if (!((ctl >> (vcb + 2)) & 1)) return (noc_flit_t){0};  /* no flit: the rest is not looked at */
  return (noc_flit_t){.data = word64_at(w, off), .vc = (uint8_t)(ctl & ((1u << vcb) - 1)),
                      .tail = (ctl >> vcb) & 1, .head = (ctl >> (vcb + 1)) & 1, .valid = true};
}

/* The cycle's visible events with the inputs poked so far (read before the clock edge). */
static void rtl_observe(chip_core_t *c, chip_obs_t *o) {
  rtl_core_t *r = rtl(c);
  vmodel_t *m = r->m;
  const unsigned cols = r->geo.cols, nm = r->mxus, nk = r->cores;
  memset(o, 0, sizeof *o);  /* the MXUs and cores this chip does not have read as zero, as the fast model's */
  chip_core_status_t st;
  rtl_status(c, &st);
  /* per core c, the core's share of each obs_* port from c times its width (chip_top.sv) */
  uint32_t sems[CHIP_MAX_CORES * ISA_NUM_SEMS], progress[CHIP_MAX_CORES * (6 * CHIP_MAX_MXUS + 2)];
  uint32_t acc_waddr[CHIP_MAX_CORES * CHIP_MAX_MXUS], addrs[CHIP_MAX_CORES * CHIP_OBS_VMEM_PORTS];
  vmodel_peek_words(m, r->p[P_OBS_SEMS], sems);
  vmodel_peek_words(m, r->p[P_OBS_PROGRESS], progress);
  vmodel_peek_words(m, r->p[P_OBS_ACC_WADDR], acc_waddr);
  vmodel_peek_words(m, r->p[P_OBS_VMEM_WADDR], addrs);
  vmodel_peek_words(m, r->p[P_OBS_VMEM_WDATA], r->vmem_wdata);
  const uint64_t busy = vmodel_peek(m, r->p[P_OBS_BUSY]), mxu_busy = vmodel_peek(m, r->p[P_OBS_MXU_BUSY]);
  const uint64_t mxu_drained = vmodel_peek(m, r->p[P_OBS_MXU_DRAINED]), acc_we = vmodel_peek(m, r->p[P_OBS_ACC_WE]);
  const uint64_t issue = vmodel_peek(m, r->p[P_OBS_ISSUE]), vmem_we = vmodel_peek(m, r->p[P_OBS_VMEM_WE]);
  const uint64_t mmask = (1u << nm) - 1, wmask = (1u << (2 + nm)) - 1;
  for (unsigned k = 0; k < nk; k++) {
    chip_obs_core_t *oc = &o->core[k];
    for (unsigned q = 0; q < ISA_NUM_QUEUES; q++) {
      const unsigned x = k * ISA_NUM_QUEUES + q;
      oc->running[q] = st.running[x], oc->halted[q] = st.halted[x];
      oc->error[q] = (uint8_t)st.error[x], oc->pc[q] = st.pc[x];
    }
    memcpy(oc->sems, sems + k * ISA_NUM_SEMS, sizeof oc->sems);
    if (memcmp(r->obs_sems[k], oc->sems, sizeof oc->sems)) memcpy(r->obs_sems[k], oc->sems, sizeof oc->sems), r->sem_epoch[k]++;
    oc->sem_epoch = r->sem_epoch[k];
    const uint32_t *pg = progress + k * (6 * nm + 2);  /* six words per MXU, then the VECs' two */
    memcpy(oc->progress, pg, sizeof(uint32_t) * 6 * nm);
    memcpy(oc->vec_progress, pg + 6 * nm, sizeof oc->vec_progress);
    oc->busy = (uint16_t)(busy >> (CHIP_OBS_BUSY_BITS * k));
    oc->mxu_busy = (uint8_t)((mxu_busy >> (nm * k)) & mmask);
    oc->mxu_drained = (uint8_t)((mxu_drained >> (nm * k)) & mmask);
    oc->acc_we = (uint8_t)((acc_we >> (nm * k)) & mmask);
    memcpy(oc->acc_waddr, acc_waddr + k * nm, sizeof(uint32_t) * nm);
    oc->issue = (uint8_t)((issue >> (ISA_NUM_QUEUES * k)) & 3);
    oc->vmem_we = (uint8_t)((vmem_we >> ((2 + nm) * k)) & wmask);
    for (unsigned p = 0; p < 2 + nm; p++) {
      oc->vmem_waddr[p] = addrs[k * (2 + nm) + p];
      oc->vmem_wdata[p] = r->vmem_wdata + (size_t)(k * (2 + nm) + p) * cols;
    }
  }
  rtl_counters(c, o->counters);
  o->mxu_error = rtl_mxu_error(c);
  o->idle = rtl_idle(c);
  for (unsigned k = 0; k < nk; k++) {
    chip_obs_core_t *oc = &o->core[k];
    chip_hbm_req_t q = {0};
    rtl_hbm_request(c, k, &q);
    oc->hbm_req_valid = q.valid;
    oc->hbm_req_write = q.valid && q.write;
    oc->hbm_req_addr = q.valid ? q.addr : 0;
    oc->hbm_req_bytes = q.valid ? q.bytes : 0;
    oc->hbm_req_data = oc->hbm_req_write ? q.data : NULL;
  }
  uint32_t words[ISA_NUM_RDMA_ENGINES * 2];
  o->rdma_we = (uint8_t)vmodel_peek(m, r->p[P_OBS_RDMA_WE]);
  vmodel_peek_words(m, r->p[P_OBS_RDMA_WADDR], o->rdma_waddr);
  vmodel_peek_words(m, r->p[P_OBS_RDMA_WDATA], words);
  for (int e = 0; e < ISA_NUM_RDMA_ENGINES; e++) {
    o->rdma_wdata[e] = words[2 * e] | (uint64_t)words[2 * e + 1] << 32;
    if (!((o->rdma_we >> e) & 1)) o->rdma_waddr[e] = 0;  /* (the fast model shows none either) */
  }
  uint32_t fin[(CHIP_OBS_ROUTER_PORTS * CHIP_FLIT_BITS + 31) / 32], fout[(CHIP_OBS_ROUTER_PORTS * CHIP_FLIT_BITS + 31) / 32];
  vmodel_peek_words(m, r->p[P_OBS_RTR_IN], fin);
  vmodel_peek_words(m, r->p[P_OBS_RTR_OUT], fout);
  for (unsigned p = 0; p < CHIP_OBS_ROUTER_PORTS; p++) {
    o->rtr_in[p] = unpack_flit(fin, p);
    o->rtr_out[p] = unpack_flit(fout, p);
    o->rtr_in_valid |= (uint16_t)(o->rtr_in[p].valid << p), o->rtr_out_valid |= (uint16_t)(o->rtr_out[p].valid << p);
  }
  o->rtr_credit_in = (uint32_t)vmodel_peek(m, r->p[P_OBS_RTR_CIN]);
  o->rtr_credit_out = (uint32_t)vmodel_peek(m, r->p[P_OBS_RTR_COUT]);
}

static const char *rtl_divergence(chip_core_t *c) {
  (void)c;
  return NULL;
}

static int rtl_vmem_read(chip_core_t *c, uint32_t line, uint32_t n, uint32_t *dst) {
  (void)c, (void)line, (void)n, (void)dst;
  return -1;
}

static size_t rtl_memory(chip_core_t *c) {
  (void)c;
  return 0;
}

static int rtl_step_idle(chip_core_t *c, uint32_t *busy) {
  rtl_core_t *r = rtl(c);
  vmodel_t *m = r->m;
  rtl_drive_hbm(r, NULL, NULL);
  const uint64_t before = vmodel_peek(m, r->p[P_PC]) << 2 | vmodel_peek(m, r->p[P_RUNNING]);
  const int active = vmodel_peek(m, r->p[P_OBS_ISSUE]) || vmodel_peek(m, r->p[P_OBS_VMEM_WE]) ||
                     vmodel_peek(m, r->p[P_OBS_RDMA_WE]) || vmodel_peek(m, r->p[P_REQ_VALID]) ||
                     vmodel_peek(m, r->p[P_NET_OCC]) || vmodel_peek(m, r->p[P_NET_COUT]);
  *busy = (uint32_t)vmodel_peek(m, r->p[P_OBS_BUSY]);
  rtl_clock(r);
  const uint64_t after = vmodel_peek(m, r->p[P_PC]) << 2 | vmodel_peek(m, r->p[P_RUNNING]);
  return active || before != after;
}

static const chip_core_ops_t rtl_ops = {
    rtl_free,     rtl_reset,       rtl_set_slice, rtl_load,       rtl_start,      rtl_abort,
    rtl_hbm_request, rtl_step,     rtl_skip,      rtl_quiet_for,  rtl_status,     rtl_sem,
    rtl_counters, rtl_mxu_error,   rtl_idle,      rtl_occupancy,  rtl_router_flits, rtl_slice_drops,
    rtl_net_in,   rtl_net_out,     rtl_trace_open, rtl_trace_close, rtl_divergence,
    rtl_vmem_read, rtl_memory, rtl_step_idle};

chip_core_t *chip_core_rtl_new(const chip_core_config_t *cfg, bool zero_init, char *err, size_t errlen) {
  rtl_core_t *r = calloc(1, sizeof *r);
  if (!r) goto oom;
  r->core.ops = &rtl_ops;
  r->core.model = CHIP_MODEL_RTL;
  r->geo = cfg->geo;
  r->mxus = isa_geometry_mxus(&cfg->geo);
  r->cores = isa_geometry_cores(&cfg->geo);
  r->line = calloc((size_t)CHIP_MAX_CORES * cfg->geo.cols, sizeof *r->line);
  r->resp = calloc((size_t)CHIP_MAX_CORES * cfg->geo.cols, sizeof *r->resp);
  r->vmem_wdata = calloc((size_t)CHIP_MAX_CORES * CHIP_OBS_VMEM_PORTS * cfg->geo.cols, sizeof *r->vmem_wdata);
  if (!r->line || !r->resp || !r->vmem_wdata) goto oom;
  r->m = chip_top_new(cfg->geo.rows, cfg->geo.cols, r->mxus, r->cores, cfg->seed, zero_init);
  if (!r->m) goto oom;
  for (int i = 0; i < P_COUNT; i++) r->p[i] = vmodel_port(r->m, port_names[i]);
  for (unsigned i = 0; i < CHIP_OBS_COUNTERS; i++) r->cnt_port[i] = counter_port(r->m, i);
  vmodel_poke(r->m, r->p[P_HBM_BYTES], cfg->hbm_bytes);
  vmodel_poke(r->m, r->p[P_SEM_IDX], 0);
  vmodel_poke(r->m, r->p[P_SEM_CORE], 0);
  vmodel_poke(r->m, r->p[P_START_LEN], 0);
  vmodel_poke(r->m, r->p[P_SIZE_X], cfg->size_x);
  vmodel_poke(r->m, r->p[P_SIZE_Y], cfg->size_y);
  vmodel_poke(r->m, r->p[P_MY_X], cfg->x);
  vmodel_poke(r->m, r->p[P_MY_Y], cfg->y);
  vmodel_poke(r->m, r->p[P_BUF_DEPTH], cfg->buf_depth);
  vmodel_poke(r->m, r->p[P_SLICE], 0);  /* no slice until set_slice */
  rtl_reset(&r->core);
  return &r->core;
oom:
  snprintf(err, errlen, "out of memory for a %ux%u chip", cfg->geo.rows, cfg->geo.cols);
  rtl_free(r ? &r->core : NULL);
  return NULL;
}
