/* collective: see collective.h and docs/collectives.md. */
#include "fw/collective.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw/fw_util.h"

/* Streams: the four directed rings through a chip, +X -X +Y -Y. A stream's sends go to
 * the next chip of its ring, its receives come from the previous one. */
/* Per stream: NSLOTS receive slots (units in flight), and semaphores: slot i filled (the
 * sender's RDMA adds 1 per line), a slot freed at the receiver (1 per unit: the ack), a
 * receive reduced/copied here (compute -> DMA), a slot read here (compute -> DMA). Stream s
 * sends on remote-DMA engine s; its acks travel on engine s^1 (the opposite direction). */
enum { NSTREAMS = 4, NSLOTS = 4, MAX_PHASES = 4 };
enum { S_RECV0 = 0, S_ACK = NSLOTS, S_DONE = NSLOTS + 1, S_FREED = NSLOTS + 2, SEMS_PER_STREAM = NSLOTS + 3 };
enum {
  SEM_PHASE = FW_SEMS_COLLECTIVE + NSTREAMS * SEMS_PER_STREAM, SEM_WIDENED = SEM_PHASE + 1,
  SEM_BAR_IN = FW_SEM_BARRIER_IN, SEM_BAR_OUT = FW_SEM_BARRIER_OUT,
  SEM_ARRIVED = FW_SEMS_COLLECTIVE  /* all_to_all: every line that lands here adds 1 */
};

static unsigned sem_of(unsigned s, unsigned which) { return FW_SEMS_COLLECTIVE + s * SEMS_PER_STREAM + which; }

typedef struct {
  bool active;
  bool reduce;           /* reduce-scatter step (ADD) or all-gather step (COPY) */
  uint32_t lo, len;      /* region of the buffer, in lines relative to data_line */
} stream_phase_t;

typedef struct {
  unsigned n;            /* ring size */
  unsigned pos;          /* this chip's position in the ring */
  unsigned next_x, next_y, prev_x, prev_y;
} ring_t;

typedef struct {
  unsigned nphases;
  stream_phase_t ph[MAX_PHASES][NSTREAMS];
  ring_t ring[NSTREAMS];
} plan_t;

/* Segment k of n of a region, and chunk c of cn of a segment (floor splits: sizes differ
 * by at most one line). */
static void split(uint32_t lo, uint32_t len, uint32_t k, uint32_t n, uint32_t *first, uint32_t *count) {
  uint32_t a = (uint32_t)((uint64_t)k * len / n), b = (uint32_t)((uint64_t)(k + 1) * len / n);
  *first = lo + a;
  *count = b - a;
}

static ring_t ring_of(const fw_slice_t *s, unsigned stream, unsigned x, unsigned y) {
  ring_t r;
  bool along_x = stream < 2, fwd = stream % 2 == 0;
  unsigned n = along_x ? s->w : s->h, c = along_x ? x - s->x0 : y - s->y0;
  unsigned next = (c + (fwd ? 1 : n - 1)) % n, prev = (c + (fwd ? n - 1 : 1)) % n;
  r.n = n;
  r.pos = fwd ? c : (n - c) % n;
  r.next_x = along_x ? s->x0 + next : x;
  r.next_y = along_x ? y : s->y0 + next;
  r.prev_x = along_x ? s->x0 + prev : x;
  r.prev_y = along_x ? y : s->y0 + prev;
  return r;
}

/* Reduce-scatter: at step s a chip sends segment pos-1-s and adds the incoming segment
 * pos-2-s into its own, so it ends owning segment pos. All-gather: at step s it sends
 * segment pos-s and copies the incoming pos-1-s. */
static uint32_t seg_sent(const stream_phase_t *p, unsigned n, unsigned pos, unsigned step) {
  return (pos + 2 * n - (p->reduce ? 1 : 0) - step) % n;
}
static uint32_t seg_recv(const stream_phase_t *p, unsigned n, unsigned pos, unsigned step) {
  return (pos + 2 * n - (p->reduce ? 2 : 1) - step) % n;
}

static void set(plan_t *pl, unsigned phase, unsigned stream, bool reduce, uint32_t lo, uint32_t len) {
  pl->ph[phase][stream] = (stream_phase_t){true, reduce, lo, len};
  if (phase + 1 > pl->nphases) pl->nphases = phase + 1;
}

/* Marks phase k in the compute program, for the profile: a reduce-scatter or an all-gather,
 * and which of the plan's (a 2-D torus has two of each: one a dimension). */
static void mark_phase(fw_prog_t *cq, const plan_t *pl, unsigned k) {
  static const char *const names[2][2] = {{"all-gather", "reduce-scatter"}, {"all-gather 2", "reduce-scatter 2"}};
  bool reduce = false;
  for (unsigned st = 0; st < NSTREAMS; st++)
    if (pl->ph[k][st].active) reduce = pl->ph[k][st].reduce;
  unsigned before = 0; /* earlier phases of the same kind */
  for (unsigned j = 0; j < k; j++)
    for (unsigned st = 0; st < NSTREAMS; st++)
      if (pl->ph[j][st].active) {
        before += pl->ph[j][st].reduce == reduce;
        break;
      }
  fw_prog_mark(cq, names[before ? 1 : 0][reduce]);
}

/* The region a chip owns after a reduce-scatter phase on a stream. */
static void owned(const plan_t *pl, unsigned phase, unsigned stream, uint32_t *lo, uint32_t *len) {
  const stream_phase_t *p = &pl->ph[phase][stream];
  split(p->lo, p->len, pl->ring[stream].pos, pl->ring[stream].n, lo, len);
}

static void make_plan(const fw_slice_t *s, const fw_coll_args_t *a, unsigned x, unsigned y, plan_t *pl) {
  memset(pl, 0, sizeof *pl);
  for (unsigned st = 0; st < NSTREAMS; st++) pl->ring[st] = ring_of(s, st, x, y);
  const uint32_t L = a->lines, half = L / 2;
  const bool along_x = s->w > 1;
  if (a->op != FW_COLL_ALLREDUCE) { /* forward rings; on 2-D: X then Y (gather: Y then X) */
    const bool rs = a->op == FW_COLL_REDUCE_SCATTER;
    if (s->w > 1 && s->h > 1) {
      uint32_t lo, len;
      split(0, L, pl->ring[0].pos, s->w, &lo, &len);  /* the chip's X segment */
      set(pl, 0, rs ? 0 : 2, rs, rs ? 0 : lo, rs ? L : len);
      set(pl, 1, rs ? 2 : 0, rs, rs ? lo : 0, rs ? len : L);
    } else {
      set(pl, 0, along_x ? 0 : 2, rs, 0, L);
    }
    return;
  }
  if (a->algo == FW_COLL_TORUS2D) {
    /* halves A (X first) and B (Y first), each split between the two directions */
    uint32_t a_lo[2] = {0, half / 2}, a_len[2] = {half / 2, half - half / 2};
    uint32_t b_lo[2] = {half, half + (L - half) / 2}, b_len[2] = {(L - half) / 2, (L - half) - (L - half) / 2};
    for (unsigned d = 0; d < 2; d++) {
      set(pl, 0, 0 + d, true, a_lo[d], a_len[d]);
      set(pl, 0, 2 + d, true, b_lo[d], b_len[d]);
    }
    for (unsigned d = 0; d < 2; d++) {
      uint32_t lo, len;
      owned(pl, 0, 0 + d, &lo, &len);  /* A's X-owned piece goes round Y */
      set(pl, 1, 2 + d, true, lo, len);
      set(pl, 2, 2 + d, false, lo, len);
      owned(pl, 0, 2 + d, &lo, &len);  /* B's Y-owned piece goes round X */
      set(pl, 1, 0 + d, true, lo, len);
      set(pl, 2, 0 + d, false, lo, len);
      set(pl, 3, 0 + d, false, a_lo[d], a_len[d]);
      set(pl, 3, 2 + d, false, b_lo[d], b_len[d]);
    }
    return;
  }
  /* ring: bidirectional all-reduce along X, then along Y (dimensions of size 1 skipped) */
  unsigned phase = 0;
  for (unsigned dim = 0; dim < 2; dim++) {
    if ((dim == 0 ? s->w : s->h) < 2) continue;
    for (unsigned d = 0; d < 2; d++) {
      set(pl, phase, 2 * dim + d, true, d ? half : 0, d ? L - half : half);
      set(pl, phase + 1, 2 * dim + d, false, d ? half : 0, d ? L - half : half);
    }
    phase += 2;
  }
}

/* One-line remote DMA to the previous chip of the stream: its slot is free again. */
static void ack(fw_prog_t *dq, const ring_t *rg, unsigned st, uint32_t ack_line) {
  fw_sem_wait(dq, sem_of(st, S_FREED), 1);
  fw_rdma_on(dq, st ^ 1u, rg->prev_x, rg->prev_y, ack_line, ack_line, 1, sem_of(st, S_ACK), 1, ISA_SEM_NONE, 0);
}

uint32_t fw_coll_scratch_lines(const fw_coll_args_t *a) {
  if (a->op == FW_COLL_ALL_TO_ALL) return a->lines;
  return NSLOTS * NSTREAMS * a->chunk_lines + 1;
}

void fw_coll_owned(const fw_slice_t *s, const fw_coll_args_t *a, unsigned x, unsigned y, uint32_t *first,
                   uint32_t *count) {
  uint32_t lo, len;
  split(0, a->lines, x - s->x0, s->w, &lo, &len);  /* segment of the X ring (all of it if w = 1) */
  split(lo, len, y - s->y0, s->h, first, count);  /* of that, segment of the Y ring */
}

int fw_slice_check(const fw_slice_t *s, char *err, size_t errlen) {
  /* Written so that no sum can wrap: an offset near UINT_MAX is outside, not at 0. */
  if (s->w == 0 || s->h == 0 || s->w > s->pod_w || s->h > s->pod_h || s->x0 > s->pod_w - s->w ||
      s->y0 > s->pod_h - s->h) {
    snprintf(err, errlen, "slice %u,%u,%ux%u is empty or outside the %ux%u pod", s->x0, s->y0, s->w, s->h, s->pod_w,
             s->pod_h);
    return -1;
  }
  return 0;
}

int fw_coll_check(const chip_geometry_t *chip, const fw_slice_t *s, const fw_coll_args_t *a, char *err, size_t errlen) {
  if (fw_slice_check(s, err, errlen)) return -1;
  if (a->lines == 0 || a->chunk_lines == 0) {
    snprintf(err, errlen, "the buffer and the chunk must be at least one line");
    return -1;
  }
  if ((uint64_t)a->data_line + a->lines + fw_coll_scratch_lines(a) > chip->vmem_lines) {
    snprintf(err, errlen, "%u lines of data plus %u of receive slots do not fit VMEM (%u lines from line %u)",
             a->lines, fw_coll_scratch_lines(a), chip->vmem_lines, a->data_line);
    return -1;
  }
  if (a->op == FW_COLL_ALL_TO_ALL && a->lines % (s->w * s->h)) {
    snprintf(err, errlen, "all_to_all needs the buffer in %u equal blocks: %u lines do not divide", s->w * s->h,
             a->lines);
    return -1;
  }
  if (a->op == FW_COLL_BROADCAST && a->root >= s->w * s->h) {
    snprintf(err, errlen, "broadcast root %u is outside the %ux%u slice", a->root, s->w, s->h);
    return -1;
  }
  if (a->bf16_in && a->op != FW_COLL_ALLREDUCE && a->op != FW_COLL_REDUCE_SCATTER) {
    snprintf(err, errlen, "bf16 inputs are for reductions (allreduce, reduce_scatter)");
    return -1;
  }
  if (a->op == FW_COLL_ALLREDUCE && a->algo == FW_COLL_TORUS2D) {
    if (s->w < 2 || s->h < 2) {
      snprintf(err, errlen, "torus2d needs a slice at least 2 chips wide and high; use ring on a %ux%u slice", s->w,
               s->h);
      return -1;
    }
    /* its rings need their wraparound links: a dimension the slice spans, or of 2 chips */
    for (unsigned d = 0; d < 2; d++) {
      unsigned n = d ? s->h : s->w, pod = d ? s->pod_h : s->pod_w;
      if (n > 2 && n < pod) {
        snprintf(err, errlen, "torus2d needs wraparound links, and the slice is a mesh in %s (%u of the pod's %u "
                 "chips); use ring, whose rings close back along a mesh", d ? "Y" : "X", n, pod);
        return -1;
      }
    }
  }
  return 0;
}

/* ---- Streams for the kernels below: unit q of stream st goes to slot q % NSLOTS of the
 * receiver; the sender waits for the receiver's ack of unit q - NSLOTS first. */
typedef struct {
  const fw_coll_args_t *a;
  fw_prog_t *cq, *dq;
  ring_t ring[NSTREAMS];
  uint32_t slots, ack_line;
  uint32_t sends[NSTREAMS], recvs[NSTREAMS], done_used[NSTREAMS];
} streams_t;

static void st_send(streams_t *t, unsigned st, uint32_t line, uint32_t lines) {
  uint32_t q = t->sends[st]++;
  if (q >= NSLOTS) fw_sem_wait(t->dq, sem_of(st, S_ACK), 1);
  fw_rdma_on(t->dq, st, t->ring[st].next_x, t->ring[st].next_y, line,
             t->slots + (NSLOTS * st + q % NSLOTS) * t->a->chunk_lines, lines, sem_of(st, S_RECV0 + q % NSLOTS), 1,
             ISA_SEM_NONE, 0);
}

/* The DMA queue waits until stream st has completed `count` receives. */
static void st_wait_done(streams_t *t, unsigned st, uint32_t count) {
  if (count > t->done_used[st]) {
    fw_sem_wait(t->dq, sem_of(st, S_DONE), count - t->done_used[st]);
    t->done_used[st] = count;
  }
}

static void st_recv(streams_t *t, unsigned st, uint32_t dst, uint32_t lines, bool reduce) {
  uint32_t q = t->recvs[st]++, slot = t->slots + (NSLOTS * st + q % NSLOTS) * t->a->chunk_lines;
  fw_sem_wait(t->cq, sem_of(st, S_RECV0 + q % NSLOTS), lines);
  if (reduce)
    fw_vec(t->cq, ISA_VEC_ADD, dst, slot, dst, lines, 0);
  else
    fw_vec(t->cq, ISA_VEC_COPY, slot, slot, dst, lines, 0);
  fw_sem_signal(t->cq, sem_of(st, S_DONE), 1);
  fw_sem_signal(t->cq, sem_of(st, S_FREED), 1);
}

static void st_drain(streams_t *t) {
  for (unsigned st = 0; st < NSTREAMS; st++) {
    if (t->sends[st]) fw_sem_wait(t->dq, sem_of(st, S_ACK), fw_min_u32(NSLOTS, t->sends[st]));
    st_wait_done(t, st, t->recvs[st]);
  }
  fw_fence(t->dq);
}

/* Position in a chain from the root along one dimension: a dimension the slice spans is a
 * ring, and the chains go both ways round it (the + chain takes the nearer half); a mesh
 * dimension has a chain each way from the root. dir: +1, -1, 0 (the root); depth: hops
 * from the root; more: whether the chain goes on past this chip (per direction, for the
 * root). */
typedef struct {
  int dir;
  unsigned depth;
  bool more_plus, more_minus;
} chain_t;

static chain_t chain_of(unsigned c, unsigned r0, unsigned n, bool ring) {
  chain_t ch = {0, 0, false, false};
  unsigned plus_len = ring ? n / 2 : n - 1 - r0, minus_len = ring ? n - 1 - n / 2 : r0;
  unsigned d_plus = ring ? (c + n - r0) % n : (c >= r0 ? c - r0 : 0);
  unsigned d_minus = ring ? (r0 + n - c) % n : (c <= r0 ? r0 - c : 0);
  if (c == r0) {
    ch.more_plus = plus_len > 0;
    ch.more_minus = minus_len > 0;
  } else if (d_plus >= 1 && d_plus <= plus_len && (ring || c > r0)) {
    ch.dir = 1, ch.depth = d_plus, ch.more_plus = d_plus < plus_len;
  } else {
    ch.dir = -1, ch.depth = d_minus, ch.more_minus = d_minus < minus_len;
  }
  return ch;
}

static void streams_init(streams_t *t, const fw_slice_t *s, const fw_coll_args_t *a, unsigned x, unsigned y,
                         fw_prog_t *cq, fw_prog_t *dq) {
  memset(t, 0, sizeof *t);
  t->a = a, t->cq = cq, t->dq = dq;
  for (unsigned st = 0; st < NSTREAMS; st++) t->ring[st] = ring_of(s, st, x, y);
  t->slots = a->data_line + a->lines;
  t->ack_line = t->slots + NSLOTS * NSTREAMS * a->chunk_lines;
}

/* Broadcast: the root's buffer goes along the root's row in two chains (one each way),
 * and from every chip of that row along its column in two chains, chunk by chunk: a chip
 * forwards chunk c as soon as it has it. A chip at depth d (hops from the root) receives
 * chunk c in round c + d - 1 and sends it in round c + d. */
static int broadcast(const chip_geometry_t *chip, const fw_slice_t *s, const fw_coll_args_t *a, unsigned x, unsigned y,
                     fw_prog_t *cq, fw_prog_t *dq, char *err, size_t errlen) {
  streams_t t;
  streams_init(&t, s, a, x, y, cq, dq);
  const unsigned rx = a->root % s->w, ry = a->root / s->w, cx = x - s->x0, cy = y - s->y0;
  const chain_t chx = chain_of(cx, rx, s->w, s->w == s->pod_w), chy = chain_of(cy, ry, s->h, s->h == s->pod_h);
  int in = -1;            /* the stream data arrives on */
  bool out[NSTREAMS] = {false};
  unsigned depth;
  if (cy == ry) {         /* the root's row: X chains, and every chip starts its column's chains */
    depth = chx.depth;
    if (chx.dir != 0) in = chx.dir > 0 ? 0 : 1;
    out[0] = chx.more_plus && chx.dir >= 0;
    out[1] = chx.more_minus && chx.dir <= 0;
    out[2] = chy.more_plus, out[3] = chy.more_minus;
  } else {
    depth = chx.depth + chy.depth;
    in = chy.dir > 0 ? 2 : 3;
    out[2] = chy.dir > 0 && chy.more_plus;
    out[3] = chy.dir < 0 && chy.more_minus;
  }
  const uint32_t chunks = fw_ceil_div(a->lines, a->chunk_lines);
  bool ack_prev = false;
  for (uint32_t r = 0; r <= chunks + depth; r++) {
    /* sends of chunk r - depth, once it is here */
    if (r >= depth && r - depth < chunks) {
      uint32_t c = r - depth, lo = c * a->chunk_lines, n = fw_min_u32(a->chunk_lines, a->lines - lo);
      if (in >= 0) st_wait_done(&t, (unsigned)in, c + 1);
      for (unsigned st = 0; st < NSTREAMS; st++)
        if (out[st]) st_send(&t, st, a->data_line + lo, n);
    }
    if (ack_prev) ack(dq, &t.ring[in], (unsigned)in, t.ack_line);
    ack_prev = false;
    /* receive of chunk r - depth + 1 */
    if (in >= 0 && r + 1 >= depth && r + 1 - depth < chunks) {
      uint32_t c = r + 1 - depth, lo = c * a->chunk_lines, n = fw_min_u32(a->chunk_lines, a->lines - lo);
      st_recv(&t, (unsigned)in, a->data_line + lo, n, false);
      ack_prev = true;
    }
  }
  if (ack_prev) ack(dq, &t.ring[in], (unsigned)in, t.ack_line);
  st_drain(&t);
  return fw_programs_fit(chip, cq, dq, "the broadcast", " (use larger chunks: --chunk-lines)", err, errlen);
}

/* The link a packet from slice chip `from` to `to` leaves on (0 +X, 1 -X, 2 +Y, 3 -Y), by
 * the routers' rule (noc_pkg::route_in_slice): X first, the shorter way round a dimension
 * the slice spans (a tie goes + for an even destination), straight in a mesh one. */
static unsigned first_hop(const fw_slice_t *s, unsigned from, unsigned to) {
  const unsigned fx = from % s->w, tx = to % s->w, fy = from / s->w, ty = to / s->w;
  const bool ring_x = s->w == s->pod_w, ring_y = s->h == s->pod_h;
  unsigned a, b, n, dst;
  bool ring;
  if (fx != tx) a = fx, b = tx, n = s->w, ring = ring_x, dst = s->x0 + tx;
  else a = fy, b = ty, n = s->h, ring = ring_y, dst = s->y0 + ty;
  const unsigned base = fx != tx ? 0 : 2;
  if (!ring) return base + (b > a ? 0 : 1);
  unsigned d = (b + n - a) % n;  /* hops the + way */
  if (n == 2) return base + ((fx != tx ? s->x0 + a : s->y0 + a) % 2 ? 1 : 0);
  if (2 * d == n) return base + (dst % 2 ? 1 : 0);
  return base + (2 * d < n ? 0 : 1);
}

/* All-to-all: block j of the buffer goes straight to chip j (over as many hops as the
 * routers take it), into block i of the output area after the buffer, in pieces of
 * chunk_lines (one packet's worth by default), round-robin over the destinations i+1,
 * i+2, ... (slice index order, wrapping), each piece on the engine of the link it leaves
 * on, so no long transfer holds a path and a chip's engines do not compete for a link. Every line adds 1 to semaphore 0 of its
 * destination; when all (n-1) blocks have arrived and the chip's own block is copied, the
 * output replaces the buffer. */
static int all_to_all(const chip_geometry_t *chip, const fw_slice_t *s, const fw_coll_args_t *a, unsigned x, unsigned y,
                      fw_prog_t *cq, fw_prog_t *dq, char *err, size_t errlen) {
  const unsigned n = s->w * s->h, me = (y - s->y0) * s->w + (x - s->x0);
  const uint32_t bl = a->lines / n, out = a->data_line + a->lines;
  /* blocks in pieces, round-robin over the destinations, so no long transfer holds a path
   * while others wait behind it */
  const uint32_t piece = a->chunk_lines ? a->chunk_lines : bl;
  for (uint32_t lo = 0; lo < bl; lo += piece)
    for (unsigned k = 1; k < n; k++) {
      unsigned j = (me + k) % n;
      uint32_t m = fw_min_u32(piece, bl - lo);
      fw_rdma_on(dq, first_hop(s, me, j), s->x0 + j % s->w, s->y0 + j / s->w, a->data_line + j * bl + lo,
                 out + me * bl + lo, m, SEM_ARRIVED, 1, ISA_SEM_NONE, 0);
    }
  fw_dma_vmem_to_vmem(dq, ISA_SEM_NONE, 0, a->data_line + me * bl, out + me * bl, bl);
  if (n > 1) fw_sem_wait(dq, SEM_ARRIVED, (n - 1) * bl);
  fw_fence(dq);  /* every send has left: the buffer may be overwritten */
  fw_dma_vmem_to_vmem(dq, ISA_SEM_NONE, 0, out, a->data_line, a->lines);
  fw_fence(dq);
  return fw_programs_fit(chip, cq, dq, "the all-to-all", " (use larger chunks: --chunk-lines)", err, errlen);
}

int fw_barrier(const fw_slice_t *s, unsigned x, unsigned y, uint32_t scratch_line, fw_prog_t *cq, fw_prog_t *dq,
               char *err, size_t errlen) {
  const unsigned n = s->w * s->h, me = (y - s->y0) * s->w + (x - s->x0);
  /* Remote signals use only semaphores no collective uses (30 arrivals at the root, 31
   * releases), so a chip may enter the barrier while others still run a collective; the
   * queue-to-queue hand-overs use 29 and 28 on the chip itself (its collective is over). */
  fw_sem_signal(cq, SEM_WIDENED, 1); /* the compute queue has reached the barrier */
  fw_sem_wait(dq, SEM_WIDENED, 1);
  if (me == 0) {
    if (n > 1) fw_sem_wait(dq, SEM_BAR_IN, n - 1);
    for (unsigned j = 1; j < n; j++)
      fw_rdma_on(dq, j % NSTREAMS, s->x0 + j % s->w, s->y0 + j / s->w, scratch_line, scratch_line, 1, SEM_BAR_OUT, 1,
                 ISA_SEM_NONE, 0);
  } else {
    fw_rdma_on(dq, 0, s->x0, s->y0, scratch_line, scratch_line, 1, SEM_BAR_IN, 1, ISA_SEM_NONE, 0);
    fw_sem_wait(dq, SEM_BAR_OUT, 1);
  }
  fw_fence(dq);
  /* and may go on (on another semaphore: the compute queue's wait would take its own
   * signal above before the DMA queue could) */
  fw_sem_signal(dq, SEM_PHASE, 1);
  fw_sem_wait(cq, SEM_PHASE, 1);
  if (!fw_prog_ok(cq) || !fw_prog_ok(dq)) {
    snprintf(err, errlen, "out of memory building the barrier programs");
    return -1;
  }
  return 0;
}

int fw_collective(const chip_geometry_t *chip, const fw_slice_t *s, const fw_coll_args_t *a, unsigned x, unsigned y,
                  fw_prog_t *cq, fw_prog_t *dq, char *err, size_t errlen) {
  if (fw_coll_check(chip, s, a, err, errlen)) return -1;
  if (a->op == FW_COLL_BROADCAST) return broadcast(chip, s, a, x, y, cq, dq, err, errlen);
  if (a->op == FW_COLL_ALL_TO_ALL) return all_to_all(chip, s, a, x, y, cq, dq, err, errlen);
  if (a->bf16_in) { /* widen in place before anything is sent or reduced */
    fw_vec(cq, ISA_VEC_TO_FP32, a->data_line, a->data_line, a->data_line, a->lines, 0);
    fw_sem_signal(cq, SEM_WIDENED, 1);
    fw_sem_wait(dq, SEM_WIDENED, 1);
  }
  plan_t pl;
  make_plan(s, a, x, y, &pl);
  streams_t t;
  streams_init(&t, s, a, x, y, cq, dq);

  /* Rounds: phase k runs steps x chunks rounds on each stream, and starts when the longest
   * stream of phase k-1 is done, so every dependency points to an earlier round. */
  uint32_t cn[MAX_PHASES][NSTREAMS] = {{0}}, start[MAX_PHASES + 1] = {0};
  for (unsigned k = 0; k < pl.nphases; k++) {
    uint32_t longest = 0;
    for (unsigned st = 0; st < NSTREAMS; st++) {
      const stream_phase_t *p = &pl.ph[k][st];
      if (!p->active) continue;
      uint32_t n = pl.ring[st].n, maxseg = fw_ceil_div(p->len, n);
      cn[k][st] = maxseg ? fw_ceil_div(maxseg, a->chunk_lines) : 0;
      if ((n - 1) * cn[k][st] > longest) longest = (n - 1) * cn[k][st];
    }
    start[k + 1] = start[k] + longest;
  }
  const uint32_t rounds = start[pl.nphases];

  uint32_t recvs_before_phase[MAX_PHASES + 1][NSTREAMS] = {{0}};
  /* the receive sequence number of (phase, stream, step, chunk), for send dependencies */
  uint32_t *recv_seq[MAX_PHASES][NSTREAMS] = {{0}};
  for (unsigned k = 0; k < pl.nphases; k++)
    for (unsigned st = 0; st < NSTREAMS; st++) {
      uint32_t units = (pl.ring[st].n - 1) * cn[k][st];
      recv_seq[k][st] = calloc(units ? units : 1, sizeof(uint32_t));
      if (!recv_seq[k][st]) goto oom;
    }

  unsigned k = 0;
  bool acks[NSTREAMS] = {0}, prev_acks[NSTREAMS] = {0};
  mark_phase(cq, &pl, 0);
  for (uint32_t r = 0; r < rounds; r++) {
    while (r >= start[k + 1]) {
      /* Phase k's sends have all been issued. Its regions are overwritten by later phases,
       * so the compute queue waits until they have left (a DMA-queue signal waits for that). */
      fw_sem_signal(dq, SEM_PHASE, 1);
      fw_sem_wait(cq, SEM_PHASE, 1);
      k++;
      mark_phase(cq, &pl, k);
      memcpy(recvs_before_phase[k], t.recvs, sizeof t.recvs);
    }
    memcpy(prev_acks, acks, sizeof acks);
    memset(acks, 0, sizeof acks);
    for (unsigned st = 0; st < NSTREAMS; st++) {
      const stream_phase_t *p = &pl.ph[k][st];
      if (!p->active || r - start[k] >= (pl.ring[st].n - 1) * cn[k][st]) continue;
      const ring_t *rg = &t.ring[st];
      uint32_t step = (r - start[k]) / cn[k][st], c = (r - start[k]) % cn[k][st];
      uint32_t sf, sc, rf, rc, first, count;
      split(p->lo, p->len, seg_sent(p, rg->n, rg->pos, step), rg->n, &first, &count);
      split(first, count, c, cn[k][st], &sf, &sc);
      split(p->lo, p->len, seg_recv(p, rg->n, rg->pos, step), rg->n, &first, &count);
      split(first, count, c, cn[k][st], &rf, &rc);
      if (sc) {
        /* the data sent was completed by this stream's receive one step earlier, or (first
         * step) by every receive of the earlier phases */
        if (step > 0)
          st_wait_done(&t, st, recv_seq[k][st][(step - 1) * cn[k][st] + c] + 1);
        else if (k > 0)
          for (unsigned o = 0; o < NSTREAMS; o++) st_wait_done(&t, o, recvs_before_phase[k][o]);
        st_send(&t, st, a->data_line + sf, sc);
      }
      if (rc) {
        recv_seq[k][st][step * cn[k][st] + c] = t.recvs[st];
        st_recv(&t, st, a->data_line + rf, rc, p->reduce);
        acks[st] = true;
      }
    }
    /* acknowledge the previous round's receives (after this round's sends, so the wait for
     * the compute queue does not hold them up): their slots are free once read */
    for (unsigned st = 0; st < NSTREAMS; st++)
      if (prev_acks[st]) ack(dq, &t.ring[st], st, t.ack_line);
  }
  for (unsigned st = 0; st < NSTREAMS; st++)
    if (acks[st]) ack(dq, &t.ring[st], st, t.ack_line);
  /* take the signals nobody waited for (the last acknowledgements, the receives no send
   * depended on); then every semaphore is zero */
  st_drain(&t);
  for (unsigned i = 0; i < MAX_PHASES; i++)
    for (unsigned st = 0; st < NSTREAMS; st++) free(recv_seq[i][st]);
  return fw_programs_fit(chip, cq, dq, "the collective", " (use larger chunks: --chunk-lines)", err, errlen);
oom:
  for (unsigned i = 0; i < MAX_PHASES; i++)
    for (unsigned st = 0; st < NSTREAMS; st++) free(recv_seq[i][st]);
  snprintf(err, errlen, "out of memory");
  return -1;
}
