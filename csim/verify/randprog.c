/* randprog: see randprog.h. */
#include "verify/randprog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/cmd_golden.h"
#include "util/rng.h"

/* Semaphores: 0 and 1 start and end the programs; each of the others is waited on by one
 * queue only (what makes the hand-overs deadlock-free), the compute queue's or the DMA
 * queue's. */
enum { SEM_INIT = 0, SEM_DONE = 1, MAX_ROWS = 8, ACC_ROWS = 64, FIXED_COMMANDS = 8, UNSEEN_LINES = 16, MAX_MXUS = 8 };
static const unsigned compute_sems[] = {2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 18, 19};
static const unsigned dma_sems[] = {10, 11, 12, 13, 14, 15, 20, 21, 22, 23};

const char *randprog_kind_name(randprog_kind_t k) {
  static const char *const names[] = {"valid", "invalid", "mutated"};
  return k < RANDPROG_KINDS ? names[k] : "?";
}

randprog_layout_t randprog_layout(const chip_geometry_t *g) {
  randprog_layout_t l;
  l.window_lines = 4 * g->rows > 64 ? 4 * g->rows : 64;
  l.compute_lines = l.window_lines * 3 / 8;
  l.dma_lines = l.window_lines / 4;
  l.remote_lines = l.window_lines - l.compute_lines - l.dma_lines;
  l.line_bytes = 4 * g->cols;
  l.in_bytes = 2ull * l.window_lines * l.line_bytes;
  l.out_addr = (l.in_bytes + 4095) & ~4095ull;
  l.out_bytes = 2ull * l.window_lines * l.line_bytes;  /* the window's contents, then DMA results */
  return l;
}

uint64_t randprog_hbm_bytes(const chip_geometry_t *g) {
  randprog_layout_t l = randprog_layout(g);
  return l.out_addr + l.out_bytes;
}

/* A wait owed to a queue: its signal is already in some program. */
typedef struct {
  unsigned sem;
  uint32_t value;
} owed_t;

typedef struct {
  fw_prog_t *q[2];
  bool weights[MAX_MXUS];     /* an MXU_LOAD was issued to that MXU */
  bool dma_writes;            /* a DMA into VMEM since the DMA queue's last FENCE (RDMA is not ordered after it) */
  bool rdma_reads;            /* an RDMA since then (it reads its lines as it sends them) */
  uint32_t remote_used;       /* lines of the remote zone given to RDMAs */
  bool acc[MAX_MXUS][ACC_ROWS]; /* accumulator rows written by this program, per MXU */
  owed_t owed[2][64];         /* waits still to place, per queue */
  unsigned n_owed[2];
} chip_state_t;

typedef struct {
  const randprog_target_t *t;
  randprog_layout_t l;
  rng_t r;
  chip_state_t *c;
  unsigned limit;             /* commands per queue before the epilogue */
  bool network;               /* RDMAs in this set (a quarter of the sets have none) */
  uint64_t cost;              /* a bound on the cycles, summed over commands */
} gen_t;

static uint32_t below(gen_t *g, uint64_t n) { return (uint32_t)rng_below(&g->r, n ? n : 1); }
static bool chance(gen_t *g, unsigned percent) { return below(g, 100) < percent; }

static unsigned room(const gen_t *g, unsigned chip, unsigned q) {
  const chip_state_t *c = &g->c[chip];
  size_t used = c->q[q]->count + c->n_owed[q];
  return used >= g->limit ? 0 : g->limit - (unsigned)used;
}

/* A semaphore that queue q of a chip waits on, and the wait it is owed (placed later). */
static unsigned owe(gen_t *g, unsigned chip, unsigned q, uint32_t value) {
  chip_state_t *c = &g->c[chip];
  const unsigned *set = q == ISA_QUEUE_COMPUTE ? compute_sems : dma_sems;
  const unsigned n = q == ISA_QUEUE_COMPUTE ? sizeof compute_sems / sizeof *set : sizeof dma_sems / sizeof *set;
  unsigned sem = set[below(g, n)];
  if (c->n_owed[q] < 64) c->owed[q][c->n_owed[q]++] = (owed_t){sem, value};
  return sem;
}

/* Places the oldest owed wait of queue q (in order: the global order stays intact). */
static void pay_one(gen_t *g, unsigned chip, unsigned q) {
  chip_state_t *c = &g->c[chip];
  if (!c->n_owed[q]) return;
  fw_sem_wait(c->q[q], c->owed[q][0].sem, c->owed[q][0].value);
  memmove(&c->owed[q][0], &c->owed[q][1], --c->n_owed[q] * sizeof c->owed[q][0]);
  g->cost += 8;
}

static uint32_t rows_upto(gen_t *g, uint32_t max) { return 1 + below(g, max < MAX_ROWS ? max : MAX_ROWS); }
/* The first of `rows` lines in the compute queue's zone, the DMA queue's, or any line. */
static uint32_t compute_line(gen_t *g, uint32_t rows) { return below(g, g->l.compute_lines - rows + 1); }
static uint32_t dma_line(gen_t *g, uint32_t rows) { return g->l.compute_lines + below(g, g->l.dma_lines - rows + 1); }

/* A DMA that writes the DMA zone must not overtake an RDMA still reading it. */
static void order_after_rdma(chip_state_t *c, fw_prog_t *p) {
  if (!c->rdma_reads) return;
  fw_fence(p);
  c->dma_writes = c->rdma_reads = false;
}

static void mxu_load(gen_t *g, chip_state_t *c, unsigned m) {
  const uint32_t line = compute_line(g, g->t->geo.rows);
  if (chance(g, 30)) fw_mxu_load_transposed(c->q[ISA_QUEUE_COMPUTE], line);
  else fw_mxu_load(c->q[ISA_QUEUE_COMPUTE], line);
  c->weights[m] = true;
  g->cost += 4 * g->t->geo.rows + 20;
}

static void compute_op(gen_t *g, unsigned chip) {
  chip_state_t *c = &g->c[chip];
  fw_prog_t *p = c->q[ISA_QUEUE_COMPUTE];
  const chip_geometry_t *geo = &g->t->geo;
  unsigned pick = below(g, 100);
  /* the MXU the command names: any of the core's (a one-MXU chip draws nothing, so its
   * sequences are what they were before chips had several) */
  const unsigned mxus = isa_geometry_mxus(geo), m = mxus > 1 ? below(g, mxus < MAX_MXUS ? mxus : MAX_MXUS) : 0;
  bool *acc_written = c->acc[m];
  fw_mxu_select(p, m);
  if (pick < 15 || (pick < 55 && !c->weights[m])) {
    mxu_load(g, c, m);
  } else if (pick < 40) {
    uint32_t rows = rows_upto(g, ACC_ROWS), acc = below(g, ACC_ROWS - rows + 1);
    bool written = true;
    for (uint32_t i = 0; i < rows; i++) written &= acc_written[acc + i];
    bool accumulate = written && chance(g, 50);  /* only onto rows this program wrote */
    fw_mxu_matmul(p, compute_line(g, rows), rows, acc, accumulate);
    for (uint32_t i = 0; i < rows; i++) acc_written[acc + i] = true;
    g->cost += 4 * (rows + geo->rows + geo->cols) + 20;
  } else if (pick < 55) {
    /* a run of written accumulator rows, if there is one */
    uint32_t start = below(g, ACC_ROWS), rows = 0;
    while (start < ACC_ROWS && !acc_written[start]) start++;
    while (start + rows < ACC_ROWS && acc_written[start + rows] && rows < MAX_ROWS) rows++;
    if (rows == 0) {
      fw_fence(p);
      return;
    }
    rows = 1 + below(g, rows);
    fw_mxu_store(p, start, rows, compute_line(g, rows));
    g->cost += 4 * rows + 4 * geo->rows + 20;
  } else if (pick < 90) {
    isa_vec_op_t op = (isa_vec_op_t)below(g, ISA_NUM_VEC_OPS);
    uint32_t rows = rows_upto(g, g->l.compute_lines);
    /* a unary operation's b is not read: sometimes give it a value far outside VMEM; a binary
     * one sometimes reads one line of b for every row (b_repeat), inside the compute zone as
     * every operand is, so the race-freedom of the zones holds as before */
    const bool repeat = isa_vec_operands(op) == 2 && chance(g, 30);
    uint32_t b = isa_vec_operands(op) == 1 && chance(g, 30) ? (uint32_t)rng_next(&g->r)
                                                            : compute_line(g, repeat ? 1 : rows);
    if (repeat) fw_vec_bcast(p, op, compute_line(g, rows), b, compute_line(g, rows), rows, (uint32_t)rng_next(&g->r));
    else fw_vec(p, op, compute_line(g, rows), b, compute_line(g, rows), rows, (uint32_t)rng_next(&g->r));
    g->cost += 4 * rows + 30;
  } else {
    fw_fence(p);
    g->cost += 10;
  }
}

/* A completion semaphore for an asynchronous operation on chip `chip`, owed to one of its
 * queues, or none. */
static unsigned completion(gen_t *g, unsigned chip, uint32_t value) {
  if (chance(g, 50)) return ISA_SEM_NONE;
  unsigned q = chance(g, 50) ? ISA_QUEUE_COMPUTE : ISA_QUEUE_DMA;
  return room(g, chip, q) ? owe(g, chip, q, value) : ISA_SEM_NONE;
}

static void dma_op(gen_t *g, unsigned chip) {
  chip_state_t *c = &g->c[chip];
  fw_prog_t *p = c->q[ISA_QUEUE_DMA];
  const randprog_layout_t *l = &g->l;
  const unsigned chips = g->t->pod_x * g->t->pod_y;
  const unsigned pick = below(g, 100);
  const uint32_t value = 1 + below(g, 3);
  if (pick < 8) {
    /* transposing: rows <= C rows of an even number of bf16, as many lines, in the DMA zone */
    const uint32_t rows = 1 + below(g, g->t->geo.cols);
    const uint32_t most = l->line_bytes / 2 < l->dma_lines ? l->line_bytes / 2 : l->dma_lines;
    const uint32_t lines = 2 * (1 + below(g, most / 2)), bytes = 2 * lines;
    const uint32_t stride = 4 * (below(g, l->line_bytes / 4) + 1);
    const uint64_t span = (uint64_t)(rows - 1) * stride + bytes;
    const uint32_t addr = 4 * below(g, (l->in_bytes - span) / 4 + 1);
    unsigned sem = completion(g, chip, value);
    order_after_rdma(c, p);
    fw_dma_hbm_to_vmem_transposed(p, sem, value, addr, stride, dma_line(g, lines), rows, bytes);
    c->dma_writes = true;
    g->cost += (uint64_t)rows * 4 + lines + 2 * g->t->hbm_latency + 40;
  } else if (pick < 30) {
    uint32_t rows = rows_upto(g, l->dma_lines), bytes = 4 * (1 + below(g, l->line_bytes / 4));
    uint32_t stride = chance(g, 10) ? 0 : 4 * below(g, l->line_bytes / 2 + 1);
    uint64_t span = (uint64_t)(rows - 1) * stride + bytes;
    uint32_t addr = 4 * below(g, (l->in_bytes - span) / 4 + 1);
    unsigned sem = completion(g, chip, value);
    order_after_rdma(c, p);
    fw_dma_hbm_to_vmem(p, sem, value, addr, stride, dma_line(g, rows), rows, bytes);
    c->dma_writes = true;
    g->cost += (uint64_t)rows * 4 + 2 * g->t->hbm_latency + 40;
  } else if (pick < 50) {
    uint32_t rows = rows_upto(g, l->dma_lines), bytes = 4 * (1 + below(g, l->line_bytes / 4));
    uint32_t stride = 4 * (below(g, l->line_bytes / 4) + 1);
    uint64_t span = (uint64_t)(rows - 1) * stride + bytes, area = l->out_bytes / 2;
    uint32_t addr = (uint32_t)(l->out_addr + area) + 4 * below(g, (area - span) / 4 + 1);
    unsigned sem = completion(g, chip, value);
    fw_dma_vmem_to_hbm(p, sem, value, dma_line(g, rows), addr, stride, rows, bytes);
    g->cost += (uint64_t)rows * 4 + 2 * g->t->hbm_latency + 40;
  } else if (pick < 65) {
    uint32_t rows = rows_upto(g, l->dma_lines);
    unsigned sem = completion(g, chip, value);
    order_after_rdma(c, p);
    fw_dma_vmem_to_vmem(p, sem, value, dma_line(g, rows), dma_line(g, rows), rows);
    c->dma_writes = true;
    g->cost += (uint64_t)rows * 8 + 40;
  } else if (pick < 92 && g->network) {
    /* remote DMA to any chip of the pod (itself included): lines of the DMA zone here to
     * lines of the destination's remote zone no other RDMA writes, waited for there by one
     * of its queues; or, with no remote semaphore, to lines past the window that nobody
     * reads. Its departure is perhaps waited for here. */
    unsigned dst = below(g, chips), dq = chance(g, 50) ? ISA_QUEUE_COMPUTE : ISA_QUEUE_DMA;
    uint32_t rows = rows_upto(g, l->dma_lines), per_line = 1 + below(g, 2), dst_line;
    chip_state_t *d = &g->c[dst];
    unsigned remote = ISA_SEM_NONE;
    if (chance(g, 85) && room(g, dst, dq) && d->remote_used < l->remote_lines) {
      if (rows > l->remote_lines - d->remote_used) rows = l->remote_lines - d->remote_used;
      dst_line = l->compute_lines + l->dma_lines + d->remote_used;
      d->remote_used += rows;
      remote = owe(g, dst, dq, rows * per_line);
    } else {
      dst_line = l->window_lines + below(g, UNSEEN_LINES - rows + 1);
    }
    unsigned local = completion(g, chip, value);
    if (c->dma_writes) {  /* docs/isa.md: an RDMA does not wait for earlier DMAs into its lines */
      fw_fence(p);
      c->dma_writes = false;
    }
    fw_rdma_on(p, below(g, ISA_NUM_RDMA_ENGINES), dst % g->t->pod_x, dst / g->t->pod_x, dma_line(g, rows), dst_line,
               rows, remote, per_line, local, value);
    c->rdma_reads = true;
    g->cost += (uint64_t)rows * (g->t->geo.cols + 8) + 64ull * (g->t->pod_x + g->t->pod_y) + 100;
  } else {
    fw_fence(p);
    c->dma_writes = c->rdma_reads = false;
    g->cost += 10;
  }
}

/* A hand-over: a SEM_SIGNAL in one queue of the chip, owed as a wait to a queue (perhaps
 * the same one); or a wait for nothing (value 0 always passes). */
static void handover(gen_t *g, unsigned chip) {
  chip_state_t *c = &g->c[chip];
  unsigned from = below(g, 2), to = below(g, 2);
  if (chance(g, 5)) {
    const unsigned *set = to == ISA_QUEUE_COMPUTE ? compute_sems : dma_sems;
    fw_sem_wait(c->q[to], set[0], 0);
    return;
  }
  if (!room(g, chip, to)) return;
  uint32_t value = chance(g, 10) ? 100000 + below(g, 1000) : 1 + below(g, 4);
  fw_sem_signal(c->q[from], owe(g, chip, to, value), value);
  g->cost += 10;
}

/* The fixed start and end: the DMA queue loads the window and tells the compute queue; at
 * the end the compute queue says it is done, and the DMA queue writes the window to HBM. */
static void prologue(gen_t *g, unsigned chip) {
  chip_state_t *c = &g->c[chip];
  const randprog_layout_t *l = &g->l;
  /* the remote zone is not loaded: RDMAs from other chips may land in it before this */
  fw_dma_hbm_to_vmem(c->q[ISA_QUEUE_DMA], SEM_INIT, 1, 0, l->line_bytes, 0, l->compute_lines + l->dma_lines,
                     l->line_bytes);
  c->dma_writes = true;
  fw_sem_wait(c->q[ISA_QUEUE_COMPUTE], SEM_INIT, 1);
  g->cost += 4ull * l->window_lines + 2 * g->t->hbm_latency + 50;
}

static void epilogue(gen_t *g, unsigned chip) {
  chip_state_t *c = &g->c[chip];
  const randprog_layout_t *l = &g->l;
  for (unsigned q = 0; q < 2; q++)
    while (c->n_owed[q]) pay_one(g, chip, q);
  fw_sem_signal(c->q[ISA_QUEUE_COMPUTE], SEM_DONE, 1);
  fw_halt(c->q[ISA_QUEUE_COMPUTE]);
  fw_sem_wait(c->q[ISA_QUEUE_DMA], SEM_DONE, 1);
  /* the zones, and the remote lines RDMAs wrote (every one has landed: its wait is above) */
  fw_dma_vmem_to_hbm(c->q[ISA_QUEUE_DMA], ISA_SEM_NONE, 0, 0, (uint32_t)l->out_addr, l->line_bytes,
                     l->compute_lines + l->dma_lines + c->remote_used, l->line_bytes);
  fw_fence(c->q[ISA_QUEUE_DMA]);
  fw_halt(c->q[ISA_QUEUE_DMA]);
  g->cost += 4ull * l->window_lines + 2 * g->t->hbm_latency + 50;
}

/* ---------------------------------------------------------------- invalid commands */

/* A command that stops queue q with `code` (q may not allow it: then the other queue). */
static void bad_command(gen_t *g, unsigned code, unsigned q, uint32_t w[ISA_CMD_WORDS]) {
  const chip_geometry_t *geo = &g->t->geo;
  const uint32_t V = geo->vmem_lines, lb = g->l.line_bytes;
  const bool dma = q == ISA_QUEUE_DMA;
  fw_prog_t t;
  fw_prog_init(&t);
  const unsigned v = below(g, 3);
  switch (code) {
    case ISA_ERR_OPCODE: {
      static const uint32_t unknown[] = {0x00, 0x05, 0x11, 0x23, 0x31, 0x41, 0x77, 0xFF};
      if (v == 0) {
        fw_raw(&t, (uint32_t[ISA_CMD_WORDS]){unknown[below(g, 8)]});
      } else if (v == 1 || dma) {
        fw_fence(&t);  /* a reserved bit: FENCE names no field beyond its opcode */
        t.words[below(g, ISA_CMD_WORDS)] |= 1u << (8 + below(g, 24));
      } else if (chance(g, 50)) {
        fw_vec(&t, (isa_vec_op_t)(ISA_NUM_VEC_OPS + below(g, 1000)), 0, 0, 0, 1, 0);
      } else {
        /* b_repeat on an operation that does not read b */
        static const isa_vec_op_t unary[] = {ISA_VEC_RELU, ISA_VEC_COPY, ISA_VEC_EXP, ISA_VEC_RSQRT, ISA_VEC_ERF,
                                             ISA_VEC_SUM_LINES};
        fw_vec_bcast(&t, unary[below(g, 6)], 0, 0, 0, 1, 0);
      }
      break;
    }
    case ISA_ERR_QUEUE:
      if (dma) fw_mxu_store(&t, 0, 1, 0);
      else fw_dma_vmem_to_vmem(&t, ISA_SEM_NONE, 0, 0, 1, 1);
      break;
    case ISA_ERR_VMEM:
      if (dma) fw_dma_hbm_to_vmem(&t, ISA_SEM_NONE, 0, 0, lb, V - below(g, 4), 8, lb);
      else if (v == 0) fw_mxu_load(&t, V - geo->rows + 1 + below(g, 100));
      else if (v == 1) fw_vec(&t, ISA_VEC_ADD, 0, V - 1, 0, 2, 0);
      else fw_mxu_matmul(&t, UINT32_MAX, 1, 0, false);
      break;
    case ISA_ERR_HBM:
      fw_dma_vmem_to_hbm(&t, ISA_SEM_NONE, 0, 0, (uint32_t)(g->t->hbm_bytes - 4 * below(g, 4)), lb, v + 2, lb);
      break;
    case ISA_ERR_ACC:
      if (v == 0) fw_mxu_store(&t, geo->acc_depth - 1, 2, 0);
      else fw_mxu_matmul(&t, 0, 4, geo->acc_depth - 3 + below(g, 3), false);
      break;
    case ISA_ERR_SIZE:
      if (dma) fw_dma_hbm_to_vmem(&t, ISA_SEM_NONE, 0, 0, lb, 0, v ? 1 : 0, v == 1 ? lb + 4 : v == 2 ? 6 : lb);
      else fw_vec(&t, ISA_VEC_RELU, 0, 0, 0, 0, 0);
      break;
    case ISA_ERR_SEM:
      fw_sem_signal(&t, ISA_NUM_SEMS + below(g, 256 - ISA_NUM_SEMS), 1);
      break;
    case ISA_ERR_MXU: {
      const unsigned mxus = isa_geometry_mxus(geo);
      fw_mxu_select(&t, mxus + below(g, 256 - mxus));
      if (v == 0) fw_mxu_load(&t, 0);
      else if (v == 1) fw_mxu_matmul(&t, 0, 1, 0, false);
      else fw_mxu_store(&t, 0, 1, 0);
      break;
    }
    case ISA_ERR_REMOTE:
      fw_rdma(&t, g->t->pod_x + below(g, 3), 0, 0, 0, 1, ISA_SEM_NONE, 0, ISA_SEM_NONE, 0);
      break;
    default: fw_halt(&t); break;
  }
  memcpy(w, t.words, ISA_CMD_WORDS * sizeof *w);
  fw_prog_free(&t);
}

static void make_invalid(gen_t *g, randprog_t *p) {
  static const unsigned codes[] = {ISA_ERR_OPCODE, ISA_ERR_QUEUE, ISA_ERR_VMEM, ISA_ERR_HBM, ISA_ERR_ACC,
                                   ISA_ERR_SIZE,   ISA_ERR_SEM,   ISA_ERR_REMOTE, ISA_ERR_END, ISA_ERR_MXU};
  const unsigned code = codes[p->seed % (sizeof codes / sizeof codes[0])];  /* each in turn, by seed */
  unsigned q = below(g, 2);
  if (code == ISA_ERR_HBM || code == ISA_ERR_REMOTE) q = ISA_QUEUE_DMA;
  if (code == ISA_ERR_ACC || code == ISA_ERR_MXU) q = ISA_QUEUE_COMPUTE;
  p->bad_chip = below(g, p->chips), p->bad_queue = q, p->bad_error = code;
  fw_prog_t *prog = &p->prog[p->bad_chip][q];
  p->bad_pc = below(g, prog->count);
  if (code == ISA_ERR_END) {
    prog->count = p->bad_pc;  /* the program stops short: no HALT */
    snprintf(p->what, sizeof p->what, "chip %u %s queue cut after command %u", p->bad_chip,
             q ? "DMA" : "compute", p->bad_pc);
    return;
  }
  bad_command(g, code, q, prog->words + (size_t)p->bad_pc * ISA_CMD_WORDS);
  snprintf(p->what, sizeof p->what, "chip %u %s queue command %u replaced by one with error %u", p->bad_chip,
           q ? "DMA" : "compute", p->bad_pc, code);
}

/* ---------------------------------------------------------------- mutations */

static void mutate(gen_t *g, randprog_t *p) {
  const unsigned n = 1 + below(g, 3);
  size_t used = 0;
  for (unsigned m = 0; m < n; m++) {
    unsigned chip = below(g, p->chips), q = below(g, 2);
    fw_prog_t *prog = &p->prog[chip][q];
    if (prog->count == 0) continue;
    size_t i = below(g, prog->count);
    uint32_t *cmd = prog->words + i * ISA_CMD_WORDS;
    const unsigned how = below(g, 100), word = below(g, ISA_CMD_WORDS);
    const char *what;
    if (how < 40) {
      cmd[word] ^= 1u << below(g, 32);
      what = "bit flipped";
    } else if (how < 70) {
      const uint32_t edge[] = {0, 1, 2, g->t->geo.vmem_lines - 1, g->t->geo.vmem_lines, g->t->geo.acc_depth,
                               (uint32_t)g->t->hbm_bytes, UINT32_MAX, 0x80000000u, ISA_NUM_SEMS, ISA_SEM_NONE,
                               g->l.window_lines};
      cmd[word] = edge[below(g, sizeof edge / sizeof edge[0])];
      what = "word set to an edge value";
    } else if (how < 80 && i + 1 < prog->count) {
      uint32_t tmp[ISA_CMD_WORDS];
      memcpy(tmp, cmd, sizeof tmp);
      memcpy(cmd, cmd + ISA_CMD_WORDS, sizeof tmp);
      memcpy(cmd + ISA_CMD_WORDS, tmp, sizeof tmp);
      what = "swapped with the next";
    } else if (how < 90) {
      memmove(cmd, cmd + ISA_CMD_WORDS, (prog->count - i - 1) * ISA_CMD_WORDS * sizeof *cmd);
      prog->count--;
      what = "dropped";
    } else if (prog->count + 1 < g->t->geo.queue_depth) {
      uint32_t copy[ISA_CMD_WORDS];
      memcpy(copy, cmd, sizeof copy);
      fw_raw(prog, copy);  /* may move the words */
      cmd = prog->words + i * ISA_CMD_WORDS;
      memmove(cmd + ISA_CMD_WORDS, cmd, (prog->count - 1 - i) * ISA_CMD_WORDS * sizeof *cmd);
      memcpy(cmd, copy, sizeof copy);
      what = "repeated";
    } else {
      continue;
    }
    if (used < sizeof p->what)
      used += (size_t)snprintf(p->what + used, sizeof p->what - used, "%schip %u %s command %zu %s", used ? "; " : "",
                               chip, q ? "DMA" : "compute", i, what);
  }
}

/* ---------------------------------------------------------------- the whole */

int randprog_generate(const randprog_target_t *t, randprog_kind_t kind, uint64_t seed, randprog_t *p, char *err,
                      size_t errlen) {
  memset(p, 0, sizeof *p);
  const unsigned chips = t->pod_x * t->pod_y;
  const randprog_layout_t l = randprog_layout(&t->geo);
  if (chips == 0 || t->geo.queue_depth < 2 * FIXED_COMMANDS || t->hbm_bytes < randprog_hbm_bytes(&t->geo) ||
      t->geo.vmem_lines < l.window_lines + UNSEEN_LINES || l.compute_lines < t->geo.rows) {
    snprintf(err, errlen, "randprog: the target is too small for the programs");
    return -1;
  }
  gen_t g = {.t = t, .l = l};
  rng_seed(&g.r, seed);
  p->kind = kind;
  p->seed = seed;
  p->chips = chips;
  p->prog = calloc(chips, sizeof *p->prog);
  g.c = calloc(chips, sizeof *g.c);
  if (!p->prog || !g.c) goto oom;
  unsigned body = t->body_commands < t->geo.queue_depth - FIXED_COMMANDS ? t->body_commands
                                                                         : t->geo.queue_depth - FIXED_COMMANDS;
  g.limit = 2 + 1 + below(&g, body);  /* this set's length: short and long ones */
  g.network = chance(&g, 75);
  for (unsigned i = 0; i < chips; i++) {
    fw_prog_init(&p->prog[i][0]);
    fw_prog_init(&p->prog[i][1]);
    g.c[i].q[0] = &p->prog[i][0];
    g.c[i].q[1] = &p->prog[i][1];
    prologue(&g, i);
  }
  /* one global order over every chip's queues */
  const unsigned steps = 1 + below(&g, (uint64_t)g.limit * chips * 2);
  for (unsigned s = 0; s < steps; s++) {
    unsigned chip = below(&g, chips), what = below(&g, 100);
    if (what < 40 && room(&g, chip, ISA_QUEUE_COMPUTE) > 1) compute_op(&g, chip);
    else if (what < 75 && room(&g, chip, ISA_QUEUE_DMA) > 1) dma_op(&g, chip);
    else if (what < 90) handover(&g, chip);
    else pay_one(&g, chip, below(&g, 2));
  }
  for (unsigned i = 0; i < chips; i++) epilogue(&g, i);
  for (unsigned i = 0; i < chips; i++)
    if (!fw_prog_ok(&p->prog[i][0]) || !fw_prog_ok(&p->prog[i][1])) goto oom;
  p->max_cycles = g.cost + 2000; /* every command after the other, each at its longest */
  if (kind == RANDPROG_INVALID) make_invalid(&g, p);
  if (kind == RANDPROG_MUTATED) mutate(&g, p);
  free(g.c);
  return 0;
oom:
  free(g.c);
  randprog_free(p);
  snprintf(err, errlen, "randprog: out of memory");
  return -1;
}

void randprog_free(randprog_t *p) {
  if (p->prog)
    for (unsigned i = 0; i < p->chips; i++) fw_prog_free(&p->prog[i][0]), fw_prog_free(&p->prog[i][1]);
  free(p->prog);
  p->prog = NULL;
}

/* One command: its opcode's name and each field the command table gives it. */
static void print_command(FILE *out, const uint32_t *cmd) {
  const uint32_t op = isa_opcode(cmd);
  fprintf(out, "%-10s", isa_opcode_name(op) ? isa_opcode_name(op) : "(unknown)");
#define ISA_FIELD(o, name, word, lsb, width, doc) \
  if (op == ISA_OP_##o) fprintf(out, " %s=%u", #name, isa_get(cmd, word, lsb, width));
#include "fw/isa.def"
  for (unsigned w = 0; w < ISA_CMD_WORDS; w++)
    if (cmd[w] & ~isa_defined_bits(op, w)) fprintf(out, " reserved[w%u]=0x%08x", w, cmd[w] & ~isa_defined_bits(op, w));
  fputc('\n', out);
}

void randprog_print(FILE *out, const randprog_t *p) {
  fprintf(out, "%s set, seed %llu, %u chip(s)%s%s\n", randprog_kind_name(p->kind), (unsigned long long)p->seed,
          p->chips, p->what[0] ? ": " : "", p->what);
  for (unsigned i = 0; i < p->chips; i++)
    for (unsigned q = 0; q < 2; q++) {
      fprintf(out, "chip %u %s queue, %zu commands\n", i, q ? "DMA" : "compute", p->prog[i][q].count);
      for (size_t k = 0; k < p->prog[i][q].count; k++) {
        fprintf(out, "  %3zu  ", k);
        print_command(out, p->prog[i][q].words + k * ISA_CMD_WORDS);
      }
    }
}
