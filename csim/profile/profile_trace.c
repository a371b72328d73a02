/*
 * profile_trace: the profile as a Chrome / Perfetto trace-event JSON file (profile_write;
 * docs/profiling.md, "The trace"), in run order: each run's slices, then each chip's flows and
 * counters, then the host's phases and otherData. Its own JSON writer (tw_t), not util/json.c:
 * a trace is millions of events, and this one makes room once per event and writes literals
 * and numbers in place (docs/profiling.md, "Figures", measures the two).
 */
#include "profile/profile_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A chip's track ids (tids): queue q at TID_QUEUE + q, core c's units from TID_CORE + 10 c
 * (unit_tid), the RDMA engines from TID_RDMA, semaphore s of core c at sem_tid. */
enum { TID_QUEUE = 1, TID_CORE = 10, TID_RDMA = 40, TID_SEM = 100 };
static unsigned sem_tid(unsigned core, unsigned s) { return TID_SEM + ISA_NUM_SEMS * core + s; }
static unsigned unit_tid(unsigned core, unsigned unit, unsigned index) {
  switch (unit) {
    case PROFILE_UNIT_DMA: return TID_CORE + 10 * core;
    case PROFILE_UNIT_VEC: return TID_CORE + 10 * core + 1;
    case PROFILE_UNIT_MXU: return TID_CORE + 10 * core + 2 + index;
    default: return TID_RDMA + index;
  }
}

/* The trace's writer: its own buffer (stdio's locking per call was most of a trace's time),
 * room for an event made once (ev_begin), then the event's pieces appended without checks:
 * literals by their compile-time length, numbers by a two-digit table (printf's parsing and
 * strlen were most of the rest). */
#define TW_EVENT_MAX 1024 /* bytes an event (but for wprintf's, which check) may take */
typedef struct tw {
  FILE *f;                /* NULL: the text stays in buf, which grows (a writer thread's part) */
  double units_per_cycle; /* 0.1 ns units per cycle: 1e4 / MHz */
  bool first;
  char *buf;
  size_t n, cap;
  bool oom;               /* (memory mode: buf could not grow; the text is incomplete) */
} tw_t;

static void wflush(tw_t *w) {
  if (w->n && w->f) fwrite(w->buf, 1, w->n, w->f), w->n = 0;
}

static void wgrow(tw_t *w, size_t len) {
  if (w->f) {
    wflush(w);
    return;
  }
  size_t cap = w->cap;
  while (w->n + len > cap) cap *= 2;
  char *b = realloc(w->buf, cap);
  if (!b) { /* (keep writing over the old text: the caller sees oom and fails) */
    w->oom = true, w->n = 0;
    return;
  }
  w->buf = b, w->cap = cap;
}

/* Makes room for len bytes: the file's buffer flushed, or the memory's grown. */
static inline void wroom(tw_t *w, size_t len) {
  if (w->n + len > w->cap) wgrow(w, len);
}

static inline void wput(tw_t *w, const char *s, size_t len) {
  wroom(w, len);
  if (len > w->cap - w->n) {
    if (w->f) fwrite(s, 1, len, w->f);
    return;
  }
  memcpy(w->buf + w->n, s, len);
  w->n += len;
}

static inline void wputs(tw_t *w, const char *s) { wput(w, s, strlen(s)); }

/* Appends a string literal (room made by ev_begin). */
#define WLIT(w, lit) (memcpy((w)->buf + (w)->n, (lit), sizeof(lit) - 1), (w)->n += sizeof(lit) - 1)

static void wprintf(tw_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wprintf(tw_t *w, const char *fmt, ...) {
  char b[1024];
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(b, sizeof b, fmt, ap);
  va_end(ap);
  if (n > 0) wput(w, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

/* Cycle t in units of 0.1 ns (the trace's timestamps are microseconds with four decimals:
 * slices that touch in cycles touch in the file). */
static inline int64_t units(const tw_t *w, uint64_t t) { return (int64_t)((double)t * w->units_per_cycle + 0.5); }

static const char digits2[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                              "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                              "8081828384858687888990919293949596979899";

/* v's decimal digits, at least `min` of them (zeros in front), ending at end: their start. */
static inline char *digits(char *end, uint64_t v, int min) {
  char *p = end;
  while (v >= 100) {
    const unsigned r = (unsigned)(v % 100);
    v /= 100;
    p -= 2, memcpy(p, digits2 + 2 * r, 2);
  }
  if (v >= 10) p -= 2, memcpy(p, digits2 + 2 * v, 2);
  else *--p = (char)('0' + v);
  while (end - p < min) *--p = '0';
  return p;
}

/* How many decimal digits v has. */
static inline unsigned ndigits(uint64_t v) {
  unsigned n = 1;
  for (; v >= 10000; v /= 10000) n += 4;
  return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* Appends v (room made), its digits written in place. */
static inline void put_u(tw_t *w, uint64_t v) {
  const unsigned n = ndigits(v);
  digits(w->buf + w->n + n, v, 1);
  w->n += n;
}

/* Appends v, a non-negative count of 0.1 ns units, as microseconds "123.4567" (room made), in
 * place, without printf's floats. */
static inline void put_fix4(tw_t *w, int64_t v) {
  const uint64_t u = v < 0 ? 0 : (uint64_t)v, whole = u / 10000;
  const unsigned n = ndigits(whole);
  char *o = w->buf + w->n;
  digits(o + n, whole, 1);
  o[n] = '.';
  digits(o + n + 5, u % 10000, 4);
  w->n += n + 5;
}

/* Starts an event, with room for TW_EVENT_MAX bytes of it. */
static void ev_begin(tw_t *w) {
  wroom(w, TW_EVENT_MAX);
  if (w->first) WLIT(w, "\n");
  else WLIT(w, ",\n");
  w->first = false;
}

static void meta(tw_t *w, unsigned pid, int tid, const char *what, const char *name, int sort) {
  ev_begin(w);
  if (tid < 0)
    wprintf(w, "{\"ph\":\"M\",\"pid\":%u,\"name\":\"%s\",\"args\":{\"%s\":", pid, what,
            strcmp(what, "process_sort_index") ? "name" : "sort_index");
  else
    wprintf(w, "{\"ph\":\"M\",\"pid\":%u,\"tid\":%d,\"name\":\"%s\",\"args\":{\"%s\":", pid, tid, what,
            strcmp(what, "thread_sort_index") ? "name" : "sort_index");
  if (name) wprintf(w, "\"%s\"}}", name);
  else wprintf(w, "%d}}", sort);
}

static void thread(tw_t *w, unsigned pid, unsigned tid, const char *name) {
  meta(w, pid, (int)tid, "thread_name", name, 0);
  meta(w, pid, (int)tid, "thread_sort_index", NULL, (int)tid);
}

/* ,"key":v (room made) */
#define KV(w, key, v) (WLIT(w, ",\"" key "\":"), put_u(w, v))

static void queue_args(tw_t *w, const uint32_t *cmd, uint32_t op) {
  if (!cmd) return;
  switch (op) {
    case ISA_OP_SEM_WAIT:
    case ISA_OP_SEM_SIGNAL:
      KV(w, "sem", ISA_GET(cmd, SEM_WAIT, sem)), KV(w, "value", ISA_GET(cmd, SEM_WAIT, value));
      break;
    case ISA_OP_DMA:
      KV(w, "kind", ISA_GET(cmd, DMA, kind)), KV(w, "hbm_addr", ISA_GET(cmd, DMA, hbm_addr));
      KV(w, "line", ISA_GET(cmd, DMA, line)), KV(w, "rows", ISA_GET(cmd, DMA, rows));
      KV(w, "bytes", ISA_GET(cmd, DMA, bytes)), KV(w, "sem", ISA_GET(cmd, DMA, sem));
      break;
    case ISA_OP_MXU_LOAD:
      KV(w, "mxu", ISA_GET(cmd, MXU_LOAD, mxu)), KV(w, "line", ISA_GET(cmd, MXU_LOAD, line));
      KV(w, "transpose", ISA_GET(cmd, MXU_LOAD, transpose));
      break;
    case ISA_OP_MXU_MATMUL:
      KV(w, "mxu", ISA_GET(cmd, MXU_MATMUL, mxu)), KV(w, "line", ISA_GET(cmd, MXU_MATMUL, line));
      KV(w, "rows", ISA_GET(cmd, MXU_MATMUL, rows)), KV(w, "acc_row", ISA_GET(cmd, MXU_MATMUL, acc_row));
      KV(w, "accumulate", ISA_GET(cmd, MXU_MATMUL, accumulate));
      break;
    case ISA_OP_MXU_STORE:
      KV(w, "mxu", ISA_GET(cmd, MXU_STORE, mxu)), KV(w, "acc_row", ISA_GET(cmd, MXU_STORE, acc_row));
      KV(w, "rows", ISA_GET(cmd, MXU_STORE, rows)), KV(w, "line", ISA_GET(cmd, MXU_STORE, line));
      break;
    case ISA_OP_VEC:
      KV(w, "op", ISA_GET(cmd, VEC, op)), KV(w, "a", ISA_GET(cmd, VEC, a)), KV(w, "b", ISA_GET(cmd, VEC, b));
      KV(w, "dst", ISA_GET(cmd, VEC, dst)), KV(w, "rows", ISA_GET(cmd, VEC, rows));
      break;
    case ISA_OP_RDMA:
      KV(w, "dest_x", ISA_GET(cmd, RDMA, x)), KV(w, "dest_y", ISA_GET(cmd, RDMA, y));
      KV(w, "dest_core", ISA_GET(cmd, RDMA, core)), KV(w, "engine", ISA_GET(cmd, RDMA, engine));
      KV(w, "rows", ISA_GET(cmd, RDMA, rows)), KV(w, "remote_sem", ISA_GET(cmd, RDMA, remote_sem));
      break;
    default: break;
  }
}

/* {"ph":"X","pid":P,"tid":T,"ts":TS,"dur":DUR,"name":" (room made) */
static void x_head(tw_t *w, unsigned pid, unsigned tid, uint64_t t0, uint64_t t1) {
  const int64_t u0 = units(w, t0), u1 = units(w, t1);
  WLIT(w, "{\"ph\":\"X\",\"pid\":");
  put_u(w, pid);
  WLIT(w, ",\"tid\":");
  put_u(w, tid);
  WLIT(w, ",\"ts\":");
  put_fix4(w, u0);
  WLIT(w, ",\"dur\":");
  put_fix4(w, u1 - u0);
  WLIT(w, ",\"name\":\"");
}

/* A counter event's start: {"ph":"C","pid":P,"ts":TS (room made) */
static void c_head(tw_t *w, unsigned pid, uint64_t t) {
  ev_begin(w);
  WLIT(w, "{\"ph\":\"C\",\"pid\":");
  put_u(w, pid);
  WLIT(w, ",\"ts\":");
  put_fix4(w, units(w, t));
}

/* A chip's semaphore landings sorted by (core * ISA_NUM_SEMS + semaphore, first cycle), for the
 * flows' ends. */
typedef struct {
  uint64_t key, t0;
} land_ix_t;
typedef struct {
  land_ix_t *ix;
  size_t n;
} land_index_t;

/* (A semaphore's landings are recorded in the order they happen, one closing before the next
 * opens, so a stable counting sort by key orders them by (key, first cycle): no qsort, whose
 * calls back were half a trace's writing.) */
static int land_index(const pchip_t *c, land_index_t *li) {
  enum { KEYS = CHIP_MAX_CORES * ISA_NUM_SEMS };
  const profile_ev_t *ev = c->rec.ev;
  li->n = 0;
  li->ix = NULL;
  size_t start[KEYS + 1] = {0};
  for (size_t i = 0; i < c->rec.n; i++)
    if (ev[i].kind == PROFILE_EV_SEM) start[1 + (ev[i].core % CHIP_MAX_CORES) * ISA_NUM_SEMS + ev[i].index % ISA_NUM_SEMS]++;
  for (unsigned k = 0; k < KEYS; k++) start[k + 1] += start[k];
  const size_t n = start[KEYS];
  if (!n) return 0;
  if (!(li->ix = malloc(n * sizeof *li->ix))) return -1;
  for (size_t i = 0; i < c->rec.n; i++)
    if (ev[i].kind == PROFILE_EV_SEM) {
      const uint64_t key = (uint64_t)(ev[i].core % CHIP_MAX_CORES) * ISA_NUM_SEMS + ev[i].index % ISA_NUM_SEMS;
      li->ix[start[key]++] = (land_ix_t){key, ev[i].t0};
    }
  li->n = n;
  return 0;
}

/* Where the flow of RDMA send e ends: the receiving chip ri's first landing on the RDMA's
 * semaphore after the send, at cycle *at (landings: land_index). False: none. */
static bool flow_end(const profile_t *p, const land_index_t *lands, const profile_ev_t *e, unsigned *ri, uint64_t *at) {
  const unsigned dx = send_dest_x(e->a), dy = send_dest_y(e->a), dk = send_dest_core(e->a);
  if (dx >= p->cfg.pod_w || dy >= p->cfg.pod_h) return false;
  const unsigned r = dy * p->cfg.pod_w + dx;
  if (!p->chip[r] || !lands[r].n) return false;
  const uint64_t key = (uint64_t)dk * ISA_NUM_SEMS + e->b;
  size_t lo = 0, hi = lands[r].n; /* the first (key, t0) after (key, e->t0) */
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    const land_ix_t *m = &lands[r].ix[mid];
    if (m->key < key || (m->key == key && m->t0 <= e->t0)) lo = mid + 1;
    else hi = mid;
  }
  if (lo == lands[r].n || lands[r].ix[lo].key != key) return false;
  *ri = r, *at = lands[r].ix[lo].t0;
  return true;
}

/* The trace is in run order (so that it can be written while the runs go on, profile_run_end):
 * for each run, each chip's slices of the run (queue commands, unit intervals, semaphore
 * landings), a chip's process and tracks named before its first slices and a semaphore's track
 * before its first landing; then each chip's flows and counters (write_chip_tail); then the
 * host's phases and otherData. The writer that streams and the one that writes at the end
 * (profile_write) make the same bytes. */

/* Names chip c's process and its tracks but the semaphores' (its first slices follow). */
static void name_chip(tw_t *w, const pchip_t *c) {
  const unsigned pid = c->index + 1;
  static const char *const qn[ISA_NUM_QUEUES] = {"compute queue", "DMA queue"};
  char name[96];
  snprintf(name, sizeof name, "chip %u (%u,%u)", c->index, c->x, c->y);
  meta(w, pid, -1, "process_name", name, 0);
  meta(w, pid, -1, "process_sort_index", NULL, (int)c->index);
  for (unsigned k = 0; k < c->cores; k++) {
    for (unsigned q = 0; q < ISA_NUM_QUEUES; q++) {
      snprintf(name, sizeof name, "core %u %s", k, qn[q]);
      thread(w, pid, TID_QUEUE + k * ISA_NUM_QUEUES + q, name);
    }
    snprintf(name, sizeof name, "core %u DMA engine", k);
    thread(w, pid, unit_tid(k, PROFILE_UNIT_DMA, 0), name);
    snprintf(name, sizeof name, "core %u vector unit", k);
    thread(w, pid, unit_tid(k, PROFILE_UNIT_VEC, 0), name);
    for (unsigned m = 0; m < c->mxus; m++) {
      snprintf(name, sizeof name, "core %u MXU %u", k, m);
      thread(w, pid, unit_tid(k, PROFILE_UNIT_MXU, m), name);
    }
  }
  for (unsigned e = 0; e < ISA_NUM_RDMA_ENGINES; e++) {
    snprintf(name, sizeof name, "remote-DMA engine %u", e);
    thread(w, pid, unit_tid(0, PROFILE_UNIT_RDMA, e), name);
  }
}

/* Chip c's slices of records ev[from, to) (one run's), after the names they need. */
static void write_slices(tw_t *w, pchip_t *c, const profile_ev_t *ev, size_t from, size_t to) {
  if (from >= to) return;
  const unsigned pid = c->index + 1;
  if (!c->out.named) name_chip(w, c), c->out.named = true;
  uint32_t fresh[CHIP_MAX_CORES] = {0}; /* semaphore tracks first used here, named in (core, semaphore) order */
  for (size_t i = from; i < to; i++)
    if (ev[i].kind == PROFILE_EV_SEM) fresh[ev[i].core % CHIP_MAX_CORES] |= 1u << (ev[i].index % ISA_NUM_SEMS);
  for (unsigned k = 0; k < CHIP_MAX_CORES; k++) {
    for (uint32_t m = fresh[k] & ~c->out.sems_named[k]; m; m &= m - 1) {
      const unsigned s = (unsigned)__builtin_ctz(m);
      char name[96];
      snprintf(name, sizeof name, "core %u semaphore %u raised", k, s);
      thread(w, pid, sem_tid(k, s), name);
    }
    c->out.sems_named[k] |= fresh[k];
  }
  for (size_t i = from; i < to; i++) {
    const profile_ev_t *e = &ev[i];
    if (e->kind == PROFILE_EV_SEND) continue; /* (flows: write_chip_tail) */
    ev_begin(w);
    if (e->kind == PROFILE_EV_QUEUE) {
      const unsigned q = e->core * ISA_NUM_QUEUES + e->unit;
      const uint32_t op = e->b, *cmd = isa_opcode(e->cmd) == op && op ? e->cmd : NULL;
      const char *on = isa_opcode_name(op) ? isa_opcode_name(op) : "?";
      x_head(w, pid, TID_QUEUE + q, e->t0, e->t1);
      if (op == ISA_OP_SEM_WAIT && cmd) {
        WLIT(w, "wait sem ");
        put_u(w, ISA_GET(cmd, SEM_WAIT, sem));
        WLIT(w, "\",\"cat\":\"wait\",\"args\":{\"pc\":");
      } else {
        const size_t len = strnlen(on, 32);
        memcpy(w->buf + w->n, on, len), w->n += len;
        WLIT(w, "\",\"cat\":\"command\",\"args\":{\"pc\":");
      }
      put_u(w, e->a);
      KV(w, "cycles", e->t1 - e->t0);
      queue_args(w, cmd, op);
      WLIT(w, "}}");
    } else if (e->kind == PROFILE_EV_UNIT) {
      static const char *const un[4] = {"DMA\",\"args\":{\"cycles\":", "VEC\",\"args\":{\"cycles\":",
                                        "MXU\",\"args\":{\"cycles\":", "RDMA\",\"args\":{\"cycles\":"};
      static const size_t unl[4] = {sizeof "DMA\",\"args\":{\"cycles\":" - 1, sizeof "VEC\",\"args\":{\"cycles\":" - 1,
                                    sizeof "MXU\",\"args\":{\"cycles\":" - 1, sizeof "RDMA\",\"args\":{\"cycles\":" - 1};
      x_head(w, pid, unit_tid(e->core, e->unit, e->index), e->t0, e->t1);
      WLIT(w, "busy\",\"cat\":\"");
      memcpy(w->buf + w->n, un[e->unit & 3], unl[e->unit & 3]), w->n += unl[e->unit & 3];
      put_u(w, e->t1 - e->t0);
      WLIT(w, "}}");
    } else {
      x_head(w, pid, sem_tid(e->core, e->index), e->t0, e->t1);
      WLIT(w, "sem ");
      put_u(w, e->index);
      WLIT(w, " +");
      put_u(w, e->b);
      WLIT(w, "\",\"cat\":\"semaphore\",\"args\":{\"added\":");
      put_u(w, e->b);
      KV(w, "cycles", e->t1 - e->t0);
      WLIT(w, "}}");
    }
  }
}

/* Chip c's flows and counters (after every run's slices). */
static void write_chip_tail(tw_t *w, const profile_t *p, const pchip_t *c, const land_index_t *lands, uint64_t *flow_id) {
  const unsigned pid = c->index + 1;
  /* flows: each RDMA with a remote semaphore to the first landing on that semaphore at the
   * receiver after the send (flow_end) */
  for (size_t i = 0; i < c->rec.n; i++) {
    const profile_ev_t *e = &c->rec.ev[i];
    unsigned ri;
    uint64_t at;
    if (e->kind != PROFILE_EV_SEND || !flow_end(p, lands, e, &ri, &at)) continue;
    const pchip_t *r = p->chip[ri];
    const unsigned dk = send_dest_core(e->a);
    const uint64_t id = ++*flow_id;
    ev_begin(w);
    WLIT(w, "{\"ph\":\"s\",\"id\":");
    put_u(w, id);
    WLIT(w, ",\"pid\":");
    put_u(w, pid);
    WLIT(w, ",\"tid\":");
    put_u(w, TID_QUEUE + e->core * ISA_NUM_QUEUES + ISA_QUEUE_DMA);
    WLIT(w, ",\"ts\":");
    put_fix4(w, units(w, e->t0));
    WLIT(w, ",\"name\":\"RDMA\",\"cat\":\"rdma\"}");
    ev_begin(w);
    WLIT(w, "{\"ph\":\"f\",\"bp\":\"e\",\"id\":");
    put_u(w, id);
    WLIT(w, ",\"pid\":");
    put_u(w, r->index + 1);
    WLIT(w, ",\"tid\":");
    put_u(w, sem_tid(dk, e->b));
    WLIT(w, ",\"ts\":");
    put_fix4(w, units(w, at));
    WLIT(w, ",\"name\":\"RDMA\",\"cat\":\"rdma\"}");
  }
  /* counters: each link's utilisation and the HBM's bandwidth, per bucket */
  for (size_t i = 0; i < c->rec.ns; i++) {
    const sample_t *s = &c->rec.smp[i];
    const double cyc = s->len ? (double)s->len : 1.0;
    c_head(w, pid, s->t);
    wprintf(w, ",\"name\":\"link utilisation\",\"args\":{\"+X\":%.4f,\"-X\":%.4f,\"+Y\":%.4f,\"-Y\":%.4f}}",
            s->flits[0] / cyc, s->flits[1] / cyc, s->flits[2] / cyc, s->flits[3] / cyc);
    c_head(w, pid, s->t);
    wprintf(w, ",\"name\":\"HBM GB/s\",\"args\":{\"GB/s\":%.3f}}", (double)s->hbm / cyc * p->cfg.clock_mhz * 1e-3);
  }
}

/* The host's phases as slices on a process of their own ("host phases", after the chips'), each
 * from its start to the next one's (the last to the end of the profiled chips' runs): where a
 * run (a randprog set, a training step) lies on the timeline. */
static void write_host_phases(tw_t *w, const profile_t *p) {
  uint64_t end = 0;
  for (unsigned i = 0; i < p->nchips; i++)
    if (p->chip[i] && p->chip[i]->seen && p->chip[i]->end > end) end = p->chip[i]->end;
  if (!p->nhost || !end) return;
  const unsigned pid = p->nchips + 1;
  meta(w, pid, -1, "process_name", "host phases", 0);
  meta(w, pid, -1, "process_sort_index", NULL, -1);
  thread(w, pid, 1, "phase");
  for (size_t i = 0; i < p->nhost; i++) {
    const uint64_t t0 = p->host[i].cycle;
    uint64_t t1 = i + 1 < p->nhost ? p->host[i + 1].cycle : p->host_full ? p->host_cut : end;
    if (t1 > end) t1 = end;
    if (t0 >= t1) continue; /* (nothing ran in it) */
    ev_begin(w);
    x_head(w, pid, 1, t0, t1);
    wputs(w, p->host[i].name);
    wputs(w, "\",\"cat\":\"phase\",\"args\":{\"cycles\":");
    put_u(w, t1 - t0);
    wputs(w, "}}");
  }
}

/* The chips' events, formatted by up to PROFILE_MAX_WRITERS threads (profile_config_t.writers),
 * each a run of chips into memory (the first straight into w), then written in order. The
 * flows' ids are numbered from each chip's count of flows before it, so the file is the same
 * bytes on any number of threads. */
typedef struct {
  const profile_t *p;
  const land_index_t *lands; /* NULL: the chips' slices of snap_ev[snap_from, snap_to); else their flows and counters */
  unsigned from, to;   /* chips [from, to) */
  uint64_t flow0;      /* the flows before chip `from` */
  tw_t w;
} wpart_t;

static size_t part_records(const pchip_t *c, bool slices) { return (slices ? c->out.to - c->out.from : c->rec.n) + 1; }

static void *write_part(void *arg) {
  wpart_t *a = arg;
  uint64_t flow = a->flow0;
  for (unsigned i = a->from; i < a->to; i++) {
    pchip_t *c = a->p->chip[i];
    if (!c || !c->seen) continue;
    if (a->lands) write_chip_tail(&a->w, a->p, c, a->lands, &flow);
    else write_slices(&a->w, c, c->out.ev, c->out.from, c->out.to);
  }
  return NULL;
}

/* lands NULL: every chip's slices of snap_ev[snap_from, snap_to) (a run's); else every chip's
 * flows and counters. */
static int write_chips(tw_t *w, const profile_t *p, const land_index_t *lands) {
  /* parts of about equal records, as many as there are processors to spare (formatting is
   * nearly all of a trace's writing) */
  const bool slices = !lands;
  size_t records = 0;
  for (unsigned i = 0; i < p->nchips; i++)
    if (p->chip[i] && p->chip[i]->seen) records += part_records(p->chip[i], slices);
  unsigned parts = p->cfg.writers;
  if (!parts) {
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    parts = records < 100000 ? 1 : cpus > PROFILE_MAX_WRITERS ? PROFILE_MAX_WRITERS : cpus > 1 ? (unsigned)cpus : 1;
  }
  if (parts > PROFILE_MAX_WRITERS) parts = PROFILE_MAX_WRITERS;
  wpart_t part[PROFILE_MAX_WRITERS];
  uint64_t flows = 0;
  size_t acc = 0;
  unsigned k = 0;
  part[0] = (wpart_t){p, lands, 0, 0, 0, *w};
  for (unsigned i = 0; i < p->nchips; i++) {
    const pchip_t *c = p->chip[i];
    if (c && c->seen && k + 1 < parts && acc >= records / parts * (k + 1)) {
      part[k].to = i;
      k++;
      part[k] = (wpart_t){p, lands, i, i, flows, {NULL, w->units_per_cycle, false, malloc(1 << 20), 0, 1 << 20, false}};
      if (!part[k].w.buf) part[k].w.oom = true;
    }
    if (c && c->seen) {
      acc += part_records(c, slices);
      if (parts > 1 && !slices) { /* the flows this chip will draw */
        unsigned ri;
        uint64_t at;
        for (size_t j = 0; j < c->rec.n; j++)
          flows += c->rec.ev[j].kind == PROFILE_EV_SEND && flow_end(p, lands, &c->rec.ev[j], &ri, &at);
      }
    }
  }
  part[k].to = p->nchips;
  parts = k + 1;
  pthread_t th[PROFILE_MAX_WRITERS];
  bool started[PROFILE_MAX_WRITERS] = {false};
  for (unsigned j = 1; j < parts; j++) started[j] = !part[j].w.oom && pthread_create(&th[j], NULL, write_part, &part[j]) == 0;
  write_part(&part[0]);
  *w = part[0].w;
  bool oom = w->oom;
  for (unsigned j = 1; j < parts; j++) {
    if (started[j]) pthread_join(th[j], NULL);
    else if (!part[j].w.oom) write_part(&part[j]); /* (no thread: done here) */
    oom = oom || part[j].w.oom;
    if (!oom && part[j].w.n) {
      const bool lead = w->first; /* (nothing written yet: its first event needs no comma) */
      wput(w, part[j].w.buf + lead, part[j].w.n - lead);
      w->first = false;
    }
    free(part[j].w.buf);
  }
  return oom ? -1 : 0;
}

tw_t *trace_open(const profile_t *p, const char *path, char **tmp, char *err, size_t errlen) {
  const size_t len = strlen(path) + 32;
  tw_t *w = calloc(1, sizeof *w);
  *tmp = malloc(len);
  if (!w || !*tmp || !(w->buf = malloc(1 << 20))) {
    if (w) free(w->buf);
    free(w), free(*tmp), *tmp = NULL;
    snprintf(err, errlen, "out of memory writing '%s'", path);
    return NULL;
  }
  /* (written in place: a command gives a temporary it renames on success, util/outfile.h;
   * *tmp is the name a failure removes) */
  snprintf(*tmp, len, "%s", path);
  if (!(w->f = fopen(*tmp, "w"))) {
    snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
    free(w->buf), free(w), free(*tmp), *tmp = NULL;
    return NULL;
  }
  w->units_per_cycle = 1e4 / p->cfg.clock_mhz, w->first = true, w->cap = 1 << 20;
  wputs(w, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
  return w;
}

void trace_snap_run(profile_t *p, unsigned r) {
  for (unsigned i = 0; i < p->nchips; i++) {
    pchip_t *c = p->chip[i];
    if (!c) continue;
    c->out.ev = c->rec.ev;
    c->out.from = r ? (r - 1 < c->rec.nruns ? c->rec.runs[r - 1] : c->rec.n) : 0;
    c->out.to = r < c->rec.nruns ? c->rec.runs[r] : c->rec.n;
  }
}

int trace_write_snapped(tw_t *w, const profile_t *p) { return write_chips(w, p, NULL); }

/* Run r's slices, every chip's. */
static int write_run(tw_t *w, profile_t *p, unsigned r) {
  trace_snap_run(p, r);
  return write_chips(w, p, NULL);
}

void trace_discard(tw_t *w, char *tmp) {
  fclose(w->f);
  remove(tmp);
  free(w->buf), free(w), free(tmp);
}

/* The trace's rest after the runs: flows, counters, the host's phases, otherData; then the file
 * is closed (and removed on failure). 0, or -1 with a message. */
static int trace_finish(profile_t *p, tw_t *w, char *tmp, const char *path, char *err, size_t errlen) {
  land_index_t *lands = calloc(p->nchips ? p->nchips : 1, sizeof *lands);
  bool oom = !lands;
  for (unsigned i = 0; i < p->nchips && !oom; i++)
    if (p->chip[i] && land_index(p->chip[i], &lands[i])) oom = true;
  if (!oom) oom = write_chips(w, p, lands) != 0;
  if (!oom) write_host_phases(w, p);
  for (unsigned i = 0; lands && i < p->nchips; i++) free(lands[i].ix);
  free(lands);
  uint64_t dropped = 0;
  for (unsigned i = 0; i < p->nchips; i++)
    if (p->chip[i]) dropped += p->chip[i]->rec.dropped;
  wprintf(w, "\n],\"otherData\":{\"generator\":\"tpusim --profile\",\"clock_mhz\":%.3f,\"pod\":\"%ux%u\","
          "\"chips_profiled\":%u,\"bucket_cycles\":%u,\"events_dropped\":%" PRIu64 ",\"left_out\":\"%s\","
          "\"link_utilisation\":{", p->cfg.clock_mhz, p->cfg.pod_w, p->cfg.pod_h, p->selected, p->cfg.bucket, dropped,
          p->left_out);
  /* each profiled chip's outgoing links over the whole profile (flits / cycles), for the heat
   * map (scripts/plot_profile.py): "x,y": [+X, -X, +Y, -Y] */
  bool firstl = true;
  for (unsigned i = 0; i < p->nchips; i++) {
    const pchip_t *c = p->chip[i];
    if (!c || !c->seen) continue;
    uint64_t fl[4] = {0}, cyc = 0;
    for (unsigned ph = 0; ph < p->phases; ph++) {
      for (int d = 0; d < LINK_DIRS; d++) fl[d] += c->sums.ph[ph].link_flits[d];
      cyc += c->sums.ph[ph].chip_cycles;
    }
    const double n = cyc ? (double)cyc : 1.0;
    wprintf(w, "%s\"%u,%u\":[%.4f,%.4f,%.4f,%.4f]", firstl ? "" : ",", c->x, c->y, (double)fl[0] / n, (double)fl[1] / n,
            (double)fl[2] / n, (double)fl[3] / n);
    firstl = false;
  }
  wputs(w, "}}}\n");
  wflush(w);
  free(w->buf);
  const bool bad = ferror(w->f) != 0;
  const int closed = fclose(w->f);
  free(w);
  int rc = 0;
  if (oom) {
    snprintf(err, errlen, "out of memory writing '%s'", path);
    rc = -1;
  } else if (closed || bad) {
    snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno ? errno : EIO));
    rc = -1;
  }
  if (rc) remove(tmp);
  free(tmp);
  return rc;
}

int profile_write(profile_t *p, const char *path, char *err, size_t errlen) {
  stream_join(p);
  unsigned runs = 0; /* (the runs, and the records after the last, if any) */
  for (unsigned i = 0; i < p->nchips; i++)
    if (p->chip[i] && p->chip[i]->rec.nruns + 1 > runs) runs = p->chip[i]->rec.nruns + 1;
  char *tmp;
  tw_t *w = stream_take(p, path, runs, &tmp); /* (the runs are in the file) */
  if (w) return trace_finish(p, w, tmp, path, err, errlen);
  if (!(w = trace_open(p, path, &tmp, err, errlen))) return -1;
  for (unsigned i = 0; i < p->nchips; i++)
    if (p->chip[i]) p->chip[i]->out.named = false, memset(p->chip[i]->out.sems_named, 0, sizeof p->chip[i]->out.sems_named);
  bool oom = false;
  for (unsigned r = 0; r < runs && !oom; r++) oom = write_run(w, p, r) != 0;
  if (oom) {
    trace_discard(w, tmp);
    snprintf(err, errlen, "out of memory writing '%s'", path);
    return -1;
  }
  return trace_finish(p, w, tmp, path, err, errlen);
}
