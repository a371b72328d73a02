/* pod: see pod.h.
 *
 * Time is event-driven (issue 13; docs/scale.md): every cycle the pod looks at what arrives on
 * each chip's links, and steps a chip only when something arrives or the chip says it may act
 * (chip_quiet_for); a chip left alone catches up the cycles it slept (chip_skip: its counters
 * move as they would) before it is stepped again or read. When no chip acts and nothing is on
 * a link, the pod jumps to the next cycle a chip wakes. A Verilated chip always says it may act,
 * so a pod of RTL chips runs every chip every cycle, as before.
 *
 * Links (pod_link.h, the link model the SystemC slice shares): each chip has a ring of
 * D = latency + 2 slots per direction (on bands, below, more). What it sends at cycle t goes
 * into slot t mod D, and the neighbour reads slot (t - latency - 1) mod D, which was written
 * latency + 1 cycles earlier: the two never touch the same slot in a cycle, so the chips can be
 * visited in any order. A slot is cleared when it is read, so a link's slots hold only what is
 * in flight; with a link rate a serialiser ahead of the ring holds flits back.
 *
 * Threads (pod_config_t.threads > 1; docs/scale.md "Threads"): the pod's rows are split into
 * bands, one per thread, and the bands run a quantum of latency + 1 cycles between two meetings.
 * A link carries what a chip sends at t to its neighbour at t + latency + 1, so within a
 * quantum no band reads anything another band writes in that quantum: the link rings hold
 * 2 x (latency + 1) slots, the quantum's reads and writes in disjoint halves. Each band records
 * per cycle its chips not quiet, the slots it wrote and read, and the chips it stepped; at the
 * meeting the main thread reads the records cycle by cycle and takes every decision one thread
 * takes after each cycle (stop when quiet, drops, time-outs, jumps), at the same cycle. The one
 * thing a band could do past the cycle the pod went quiet is to step a quiet chip whose wake
 * came due; before such a step a band makes sure the pod was not quiet in an earlier cycle of
 * the quantum, from its own records when they show it (a chip of its own not quiet, a slot of
 * its own in flight) or else by waiting for the other bands to pass that cycle and reading
 * theirs. A pod with RTL chips (always awake) meets every cycle. Results and cycles are
 * identical to one thread's; tests/test_pod_threads.c holds them to it. */
#include "pod/pod.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/dist.h"
#include "network/torus.h"

#define DIRS TORUS_DIRS /* +X, -X, +Y, -Y: the chip's net port index */
#define NEVER UINT64_MAX

typedef struct {
  chip_t *chip;
  unsigned nb[DIRS];          /* the neighbour in each direction */
  uint64_t wake;              /* the tick it must next be stepped at (UINT64_MAX: when something arrives) */
  uint64_t at;                /* the tick it has run up to */
  uint64_t busy_until;        /* the last cycle of the last run in which the chip was not quiet */
  unsigned incoming;          /* link slots in flight towards it (atomic: a neighbour may be in another band) */
  bool quiet;                 /* after its last step: no queue running, no unit busy, no flit held */
} pod_node_t;

/* A band of rows, one thread's chips, and what it did in each tick of the current quantum
 * (index tick - quantum start). */
typedef struct {
  unsigned first, end;       /* chips first..end-1 */
  unsigned nonquiet;         /* its chips whose last step left them not quiet */
  uint64_t last_write;       /* the last tick it put something on a link (NEVER: not yet) */
  uint64_t safe;             /* the ticks before this are known not to be the pod's end */
  unsigned *nonquiet_at;     /* per tick: chips not quiet after it */
  unsigned *stepped_at;      /* per tick: chips stepped */
  int64_t *flight_at;        /* per tick: slots written minus slots read */
  uint64_t *last_write_at;   /* per tick: last_write after it */
  uint64_t done;             /* (atomic) the ticks before this are finished and recorded */
  bool threaded;             /* one of several: before a quiet chip's wake step it checks the pod went on */
  bool paused;               /* (MPI) stopped before a tick only the meeting can clear */
  uint64_t from;             /* the tick it runs from in this round of the quantum */
  pthread_t thread;
  struct pod *pod;
} pod_band_t;

struct pod {
  pod_config_t cfg;
  profile_t *profile;           /* pod_set_profile, or NULL */
  unsigned n, depth;
  pod_node_t *node;
  pod_link_t *link;             /* every chip's links (pod_link.h) */
  uint64_t tick;                /* cycles the pod has run, ever: the links' slot positions */
  uint64_t in_flight;           /* link slots holding a flit or a credit */
  unsigned *checked, nchecked;  /* the chips in lockstep (CHIP_MODEL_CHECK) */
  unsigned nrtl;                /* chips always awake (RTL or lockstep): the bands meet every cycle */
  char divergence[640];
  /* threads: band 0 is the caller's, bands 1.. have a thread each */
  unsigned nbands, nband_alloc;
  pod_band_t *band;
  uint64_t q_start, q_len, run_start;  /* the quantum the bands run now */
  uint64_t flight0;                    /* in_flight before it */
  uint64_t gen;                        /* (atomic) bumped to start a quantum */
  unsigned finished;                   /* (atomic) bands 1.. done with it */
  bool quit;
  pthread_mutex_t lock;
  pthread_cond_t wake_workers;
  bool threads_started;
  unsigned spin_limit;                 /* pause loops before a waiting thread yields */
  int64_t *totals;                     /* a quantum's per-tick totals and one count (quantum()) */
  /* MPI (dist.h): this rank simulates chips own_first..own_end-1 (whole rows); the others are
   * shells. With one rank it owns them all. */
  bool dist;
  unsigned own_first, own_end;
  uint16_t *owner;                     /* per chip: its rank */
  /* per other rank k: the link slots (chip * DIRS + direction) this rank writes that k reads,
   * and those k writes that this rank reads, in chip and direction order; exchanged after
   * every quantum */
  uint32_t **send_list, **recv_list;
  size_t *send_count, *recv_count;
  pod_link_slot_t **send_buf, **recv_buf;
  noc_wide_t **send_hi, **recv_hi;  /* wide flits' other words, beside them (slot_hi pods only) */
};

/* The slot at ring position pos of chip i's link in direction d, and its wide words. */
static pod_link_slot_t *slot(pod_t *p, unsigned pos, unsigned i, unsigned d) {
  return pod_link_slot(p->link, pos, i, d);
}
static noc_wide_t *slot_hi(pod_t *p, unsigned pos, unsigned i, unsigned d) {
  return pod_link_slot_hi(p->link, pos, i, d);
}

/* Spinning, then yielding the core: the other bands are usually a few microseconds away. With
 * more threads than cores (pod.spin_limit 0) a waiting thread yields at once: spinning would
 * take the core from the thread it waits for. */
static void relax(unsigned *spins, unsigned limit) {
  if (++*spins < limit) __builtin_ia32_pause();
  else sched_yield();
}

int pod_check(const pod_config_t *cfg, chip_geometry_t *g, char *err, size_t errlen) {
  const chip_config_t *c = &cfg->chip;
  chip_geometry_t mine;
  if (!g) g = &mine;
  if (cfg->size_x < 1 || cfg->size_y < 1 || cfg->size_x > POD_MAX_SIZE || cfg->size_y > POD_MAX_SIZE) {
    snprintf(err, errlen, "pod %ux%u: each dimension must be 1..%u", cfg->size_x, cfg->size_y, POD_MAX_SIZE);
    return -1;
  }
  bool any_rtl = c->model != CHIP_MODEL_FAST;
  for (unsigned i = 0; cfg->rtl_chips && i < cfg->size_x * cfg->size_y; i++) any_rtl |= cfg->rtl_chips[i];
  if (any_rtl && c->model == CHIP_MODEL_FAST) { /* the chips of --rtl-chips must have an RTL build too */
    chip_geometry_t rtl;
    char why[256];
    if (chip_geometry_for(c->rows, c->cols, c->mxus, c->cores, CHIP_MODEL_RTL, &rtl, why, sizeof why) ||
        chip_flit_words_check(c->flit_words, c->cols, CHIP_MODEL_RTL, why, sizeof why)) {
      snprintf(err, errlen, "chips chosen to run the RTL: %s", why);
      return -1;
    }
  }
  if (chip_geometry_for(c->rows, c->cols, c->mxus, c->cores, c->model, g, err, errlen) ||
      chip_flit_words_check(c->flit_words, c->cols, c->model, err, errlen) ||
      pod_link_check(c->flit_words, cfg->link_bytes, err, errlen))
    return -1;
  g->flit_words = c->flit_words ? c->flit_words : 1;
  if (cfg->link_latency > POD_MAX_LINK_LATENCY) {
    snprintf(err, errlen, "a link latency of %u cycles: at most %u", cfg->link_latency, POD_MAX_LINK_LATENCY);
    return -1;
  }
  /* with more ranks than rows (a host-side pod smaller than the job) some ranks own no chip */
  const unsigned ranks = dist_size(), rank = dist_rank();
  const unsigned own_rows = (rank + 1) * cfg->size_y / ranks - rank * cfg->size_y / ranks;
  if (cfg->threads > 1 && cfg->threads > own_rows) {
    if (ranks > 1)
      snprintf(err, errlen, "%u threads for rank %u's %u rows of the pod: a thread takes whole rows (at most %u)",
               cfg->threads, rank, own_rows, own_rows);
    else
      snprintf(err, errlen, "%u threads for a pod of %u rows: a thread takes whole rows (at most %u)", cfg->threads,
               cfg->size_y, cfg->size_y);
    return -1;
  }
  return 0;
}

int pod_hbm_fit(pod_config_t *cfg, uint64_t need, char *err, size_t errlen) {
  if (need > CHIP_MAX_HBM_BYTES) {
    snprintf(err, errlen, "the run needs %llu bytes of HBM a chip: more than the %llu its 32-bit addresses reach",
             (unsigned long long)need, (unsigned long long)CHIP_MAX_HBM_BYTES);
    return -1;
  }
  if (!cfg->chip.hbm_bytes) {
    cfg->chip.hbm_bytes = need ? need : 1;
    return 0;
  }
  if (need <= cfg->chip.hbm_bytes) return 0;
  snprintf(err, errlen, "the run needs %llu bytes of HBM a chip: the machine's chips have %llu (chip.hbm_bytes)",
           (unsigned long long)need, (unsigned long long)cfg->chip.hbm_bytes);
  return -1;
}

static void *band_thread(void *arg);

/* The link slots that cross between this rank and each other one (pod.h: a link slot is its
 * writer's), and buffers for a quantum of them: at most latency + 1 ticks. */
static int make_exchange(pod_t *p) {
  const unsigned R = dist_size(), me = dist_rank(), q = p->cfg.link_latency + 1;
  p->send_list = calloc(R, sizeof *p->send_list), p->recv_list = calloc(R, sizeof *p->recv_list);
  p->send_buf = calloc(R, sizeof *p->send_buf), p->recv_buf = calloc(R, sizeof *p->recv_buf);
  p->send_count = calloc(R, sizeof *p->send_count), p->recv_count = calloc(R, sizeof *p->recv_count);
  p->send_hi = calloc(R, sizeof *p->send_hi), p->recv_hi = calloc(R, sizeof *p->recv_hi);
  if (!p->send_list || !p->recv_list || !p->send_buf || !p->recv_buf || !p->send_count || !p->recv_count ||
      !p->send_hi || !p->recv_hi)
    return -1;
  for (int pass = 0; pass < 2; pass++) {
    for (unsigned i = 0; i < p->n; i++)
      for (unsigned d = 0; d < DIRS; d++) {
        const unsigned from = p->owner[i], to = p->owner[p->node[i].nb[d]];
        if (from == to || (from != me && to != me)) continue;
        const unsigned k = from == me ? to : from;
        uint32_t **list = from == me ? p->send_list : p->recv_list;
        size_t *count = from == me ? p->send_count : p->recv_count;
        if (pass) list[k][count[k]] = i * DIRS + d;
        count[k]++;
      }
    if (pass == 0)
      for (unsigned k = 0; k < R; k++) {
        p->send_list[k] = calloc(p->send_count[k] + 1, sizeof **p->send_list);
        p->recv_list[k] = calloc(p->recv_count[k] + 1, sizeof **p->recv_list);
        p->send_buf[k] = calloc(p->send_count[k] * q + 1, sizeof **p->send_buf);
        p->recv_buf[k] = calloc(p->recv_count[k] * q + 1, sizeof **p->recv_buf);
        if (!p->send_list[k] || !p->recv_list[k] || !p->send_buf[k] || !p->recv_buf[k]) return -1;
        if (p->link->slot_hi && (!(p->send_hi[k] = calloc(p->send_count[k] * q + 1, sizeof **p->send_hi)) ||
                                 !(p->recv_hi[k] = calloc(p->recv_count[k] * q + 1, sizeof **p->recv_hi))))
          return -1;
        p->send_count[k] = p->recv_count[k] = 0;
      }
  }
  return 0;
}

/* After a quantum: what this rank's chips put on links to other ranks' chips in its ticks goes
 * to them, and theirs comes here, into the same slots (counted as on their way to the chip). */
static void exchange(pod_t *p) {
  const unsigned R = dist_size();
  void *send[256], *recv[256];
  size_t send_len[256], recv_len[256];
  for (unsigned k = 0; k < R; k++) {
    size_t m = 0;
    for (uint64_t t = p->q_start; t < p->q_start + p->q_len; t++) {
      const unsigned pos = (unsigned)(t % p->depth);
      for (size_t e = 0; e < p->send_count[k]; e++) {
        pod_link_slot_t *sl = slot(p, pos, p->send_list[k][e] / DIRS, p->send_list[k][e] % DIRS);
        if (p->link->slot_hi) p->send_hi[k][m] = *slot_hi(p, pos, p->send_list[k][e] / DIRS, p->send_list[k][e] % DIRS);
        p->send_buf[k][m++] = *sl;
        *sl = (pod_link_slot_t){0}; /* the copy on this rank is never read */
      }
    }
    send[k] = p->send_buf[k], send_len[k] = m * sizeof(pod_link_slot_t);
    recv[k] = p->recv_buf[k], recv_len[k] = p->recv_count[k] * p->q_len * sizeof(pod_link_slot_t);
  }
  dist_exchange(send, send_len, recv, recv_len);
  if (p->link->slot_hi) { /* and the wide flits' other words, in the same order */
    for (unsigned k = 0; k < R; k++) {
      send[k] = p->send_hi[k], send_len[k] = send_len[k] / sizeof(pod_link_slot_t) * sizeof(noc_wide_t);
      recv[k] = p->recv_hi[k], recv_len[k] = recv_len[k] / sizeof(pod_link_slot_t) * sizeof(noc_wide_t);
    }
    dist_exchange(send, send_len, recv, recv_len);
  }
  for (unsigned k = 0; k < R; k++) {
    size_t m = 0;
    for (uint64_t t = p->q_start; t < p->q_start + p->q_len; t++) {
      const unsigned pos = (unsigned)(t % p->depth);
      for (size_t e = 0; e < p->recv_count[k]; e++) {
        const unsigned i = p->recv_list[k][e] / DIRS, d = p->recv_list[k][e] % DIRS;
        if (p->link->slot_hi) *slot_hi(p, pos, i, d) = p->recv_hi[k][m];
        const pod_link_slot_t *in = &p->recv_buf[k][m++];
        *slot(p, pos, i, d) = *in;
        if (in->flit.valid || in->credits) p->node[p->node[i].nb[d]].incoming++;
      }
    }
  }
}

/* The bands: rows split as evenly as they go, band k rows k*Y/N .. (k+1)*Y/N - 1; a thread for
 * each band after the first. */
static int start_bands(pod_t *p, char *err, size_t errlen) {
  const unsigned nb = p->cfg.threads > 1 ? p->cfg.threads : 1, q = p->cfg.link_latency + 1;
  p->nbands = nb;
  p->band = calloc(nb, sizeof *p->band);
  if (!p->band) return -1;
  p->nband_alloc = nb;
  for (unsigned k = 0; k < nb; k++) {
    pod_band_t *b = &p->band[k];
    b->pod = p;
    b->threaded = nb > 1 || p->dist;
    const unsigned row0 = p->own_first / p->cfg.size_x, rows = (p->own_end - p->own_first) / p->cfg.size_x;
    b->first = (row0 + k * rows / nb) * p->cfg.size_x;
    b->end = (row0 + (k + 1) * rows / nb) * p->cfg.size_x;
    b->last_write = NEVER;
    b->nonquiet_at = calloc(q, sizeof *b->nonquiet_at);
    b->stepped_at = calloc(q, sizeof *b->stepped_at);
    b->flight_at = calloc(q, sizeof *b->flight_at);
    b->last_write_at = calloc(q, sizeof *b->last_write_at);
    if (!b->nonquiet_at || !b->stepped_at || !b->flight_at || !b->last_write_at) return -1;
  }
  if (nb == 1) return 0;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  p->spin_limit = cores > 0 && nb > (unsigned long)cores ? 0 : 2000;
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->wake_workers, NULL);
  p->threads_started = true;
  for (unsigned k = 1; k < nb; k++) {
    if (pthread_create(&p->band[k].thread, NULL, band_thread, &p->band[k])) {
      snprintf(err, errlen, "could not start thread %u of %u", k + 1, nb);
      p->nbands = k; /* the ones started are stopped by pod_free */
      return -2;
    }
  }
  return 0;
}

pod_t *pod_new(const pod_config_t *cfg, char *err, size_t errlen) {
  return pod_check(cfg, NULL, err, errlen) ? NULL : pod_build(cfg, err, errlen);
}

pod_t *pod_build(const pod_config_t *cfg, char *err, size_t errlen) {
  const unsigned ranks = dist_size(), rank = dist_rank();
  pod_t *p = calloc(1, sizeof *p);
  if (!p) goto oom;
  p->cfg = *cfg;
  p->n = cfg->size_x * cfg->size_y;
  /* a slot is read latency + 1 ticks after it is written; bands keep a quantum's reads and
   * writes in separate halves of the ring */
  p->depth = cfg->threads > 1 || ranks > 1 ? 2 * (cfg->link_latency + 1) : cfg->link_latency + 2;
  p->node = calloc(p->n, sizeof *p->node);
  p->checked = calloc(p->n, sizeof *p->checked);
  p->link = pod_link_new(p->n, cfg->link_latency, p->depth, cfg->chip.flit_words, cfg->link_bytes);
  p->owner = calloc(p->n, sizeof *p->owner);
  p->totals = calloc(3 * (cfg->link_latency + 1) + 1, sizeof *p->totals);
  if (!p->node || !p->checked || !p->link || !p->owner || !p->totals) goto oom;
  p->cfg.rtl_chips = NULL;  /* the caller's array is not kept */
  p->dist = ranks > 1;
  for (unsigned r = 0; r < ranks; r++)
    for (unsigned y = r * cfg->size_y / ranks; y < (r + 1) * cfg->size_y / ranks; y++)
      for (unsigned x = 0; x < cfg->size_x; x++) p->owner[y * cfg->size_x + x] = (uint16_t)r;
  p->own_first = rank * cfg->size_y / ranks * cfg->size_x;
  p->own_end = (rank + 1) * cfg->size_y / ranks * cfg->size_x;
  for (unsigned i = 0; i < p->n; i++) {
    chip_config_t c = cfg->chip;
    c.x = i % cfg->size_x;
    c.y = i / cfg->size_x;
    c.pod_x = cfg->size_x;
    c.pod_y = cfg->size_y;
    c.seed = cfg->chip.seed * 1000003u + i;
    if (cfg->rtl_chips && cfg->rtl_chips[i]) c.model = CHIP_MODEL_RTL;
    if (c.model == CHIP_MODEL_CHECK) p->checked[p->nchecked++] = i;
    if (c.model != CHIP_MODEL_FAST) p->nrtl++;
    p->node[i].chip = p->dist ? chip_new_shared(&c, p->owner[i], err, errlen) : chip_new(&c, err, errlen);
    if (!p->node[i].chip) {
      pod_free(p);
      return NULL;
    }
    for (unsigned d = 0; d < DIRS; d++) p->node[i].nb[d] = torus_neighbour(cfg->size_x, cfg->size_y, i, (torus_dir_t)d);
  }
  if (p->dist && make_exchange(p)) goto oom;
  const int bands = start_bands(p, err, errlen);
  if (bands == -1) goto oom;
  if (bands) {
    pod_free(p);
    return NULL;
  }
  return p;
oom:
  snprintf(err, errlen, "out of memory building a %ux%u pod", cfg->size_x, cfg->size_y);
  pod_free(p);
  return NULL;
}

void pod_free(pod_t *p) {
  if (!p) return;
  if (p->threads_started) {
    pthread_mutex_lock(&p->lock);
    p->quit = true;
    __atomic_add_fetch(&p->gen, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&p->wake_workers);
    pthread_mutex_unlock(&p->lock);
    for (unsigned k = 1; k < p->nbands; k++) pthread_join(p->band[k].thread, NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake_workers);
  }
  for (unsigned k = 0; p->band && k < p->nband_alloc; k++) {
    free(p->band[k].nonquiet_at);
    free(p->band[k].stepped_at);
    free(p->band[k].flight_at);
    free(p->band[k].last_write_at);
  }
  free(p->band);
  for (unsigned k = 0; p->send_list && k < dist_size(); k++) {
    free(p->send_list[k]), free(p->recv_list[k]), free(p->send_buf[k]), free(p->recv_buf[k]);
    if (p->send_hi) free(p->send_hi[k]), free(p->recv_hi[k]);
  }
  free(p->send_list), free(p->recv_list), free(p->send_buf), free(p->recv_buf);
  free(p->send_hi), free(p->recv_hi);
  free(p->send_count), free(p->recv_count);
  free(p->owner);
  free(p->totals);
  profile_forget_chips(p->profile);
  for (unsigned i = 0; p->node && i < p->n; i++) chip_free(p->node[i].chip);
  pod_link_free(p->link);
  free(p->node);
  free(p->checked);
  free(p);
}

chip_t *pod_chip(pod_t *p, unsigned x, unsigned y) {
  return x < p->cfg.size_x && y < p->cfg.size_y ? p->node[y * p->cfg.size_x + x].chip : NULL;
}

void pod_size(const pod_t *p, unsigned *size_x, unsigned *size_y) {
  *size_x = p->cfg.size_x;
  *size_y = p->cfg.size_y;
}

/* Brings a chip up to tick t, the cycles it slept skipped (nothing happened in them). */
static void catch_up(pod_node_t *nd, uint64_t t, uint64_t run_start) {
  if (nd->at >= t) return;
  chip_skip(nd->chip, t - nd->at);
  if (!nd->quiet && t > run_start) nd->busy_until = t - run_start;
  nd->at = t;
}

static bool no_end_before(pod_t *p, pod_band_t *b, uint64_t t);

/* One tick t of band b's chips: every chip with something arriving or something to do (its
 * wake is due) is stepped, its outputs put on its links; a chip nothing is on its way to and
 * that sleeps costs a comparison. *flight gets the slots written minus those read, *stepped
 * the chips stepped. Returns false (bands only) when a quiet chip's own step is not cleared
 * (no_end_before): the pod was quiet before t, or under MPI only the meeting can tell; the band
 * stops there, its done at t. */
static bool band_tick(pod_t *p, pod_band_t *b, uint64_t t, int64_t *flight, unsigned *stepped) {
  const unsigned V = CHIP_ROUTER_VCS, shared = b->threaded;
  const unsigned rd = pod_link_read_pos(p->link, t), wr = pod_link_write_pos(p->link, t);
  *flight = 0;
  *stepped = 0;
  for (unsigned i = b->first; i < b->end; i++) {
    pod_node_t *nd = &p->node[i];
    if (nd->wake > t && !__atomic_load_n(&nd->incoming, __ATOMIC_RELAXED)) continue; /* asleep, nothing coming */
    /* (the counts of slots coming are atomic only when a neighbour may be another band's) */
    chip_net_t in;
    unsigned arrived = 0;
    in.credits = 0;
    for (unsigned d = 0; d < DIRS; d++)
      arrived += pod_link_take(p->link, rd, nd->nb[d], torus_opposite((torus_dir_t)d), &in, d);
    if (!arrived && nd->wake > t) continue;
    /* a quiet chip woken by its own timer is the one step that could fall after the pod's end */
    if (!arrived && nd->quiet && b->threaded && !no_end_before(p, b, t)) return false;
    if (arrived) {
      if (shared) __atomic_fetch_sub(&nd->incoming, arrived, __ATOMIC_RELAXED);
      else nd->incoming -= arrived;
      *flight -= arrived;
    }
    catch_up(nd, t, p->run_start);
    chip_net_in(nd->chip, &in);
    chip_tick(nd->chip);
    nd->at = t + 1;
    ++*stepped;
    chip_net_t out;
    chip_net_out(nd->chip, &out);
    bool held = false; /* a serialiser still holds flits: the chip's link is busy */
    for (unsigned d = 0; d < DIRS; d++) {
      const uint8_t cr = (out.credits >> (d * V)) & ((1u << V) - 1);
      if (!pod_link_put(p->link, t, wr, i, d, &out, cr, &held)) continue;
      ++*flight;
      b->last_write = t;
      if (shared) __atomic_fetch_add(&p->node[nd->nb[d]].incoming, 1, __ATOMIC_RELAXED);
      else p->node[nd->nb[d]].incoming++;
    }
    const bool quiet = chip_quiet(nd->chip) && !held;
    if (quiet != nd->quiet) b->nonquiet += quiet ? -1u : 1u;
    nd->quiet = quiet;
    if (!quiet) nd->busy_until = t + 1 - p->run_start;
    const uint64_t q = held ? 0 : chip_quiet_for(nd->chip);
    nd->wake = q == NEVER ? NEVER : t + 1 + q;
  }
  return true;
}

/* Whether the pod could have been quiet (nothing in flight, every chip quiet) after tick u of
 * the current quantum, from band b's records alone: not if one of its chips was not quiet or
 * something it put on a link was still on its way. */
static bool band_rules_out(const pod_t *p, const pod_band_t *b, uint64_t u) {
  const uint64_t j = u - p->q_start, w = b->last_write_at[j];
  return b->nonquiet_at[j] || (w != NEVER && u - w <= p->cfg.link_latency);
}

/* Band b is about to step a quiet chip at tick t: true when the pod was not quiet after any tick
 * of the quantum before t (the ticks before the quantum were looked at when it began). Each tick
 * its own records do not rule out waits for every band to pass it and reads theirs. */
static bool no_end_before(pod_t *p, pod_band_t *b, uint64_t t) {
  for (; b->safe < t; b->safe++) {
    const uint64_t u = b->safe, j = u - p->q_start;
    if (band_rules_out(p, b, u)) continue;
    if (p->dist) { /* the other ranks' records are theirs: pause here until the bands meet */
      b->paused = true;
      return false;
    }
    int64_t flight = (int64_t)p->flight0;
    unsigned nonquiet = 0;
    for (unsigned k = 0; k < p->nbands; k++) {
      pod_band_t *o = &p->band[k];
      for (unsigned spins = 0; __atomic_load_n(&o->done, __ATOMIC_ACQUIRE) <= u;)
        relax(&spins, p->spin_limit);
      nonquiet += o->nonquiet_at[j];
      for (uint64_t i = 0; i <= j; i++) flight += o->flight_at[i];
    }
    if (!nonquiet && !flight) return false; /* the pod ended at u: this band stops (done stays at t) */
  }
  return true;
}

/* Band b runs the current quantum, recording each tick. */
static void band_run(pod_t *p, pod_band_t *b) {
  if (b->from >= p->q_start + p->q_len) return; /* nothing in this round */
  b->paused = false;
  if (b->safe < b->from) b->safe = b->from;
  for (uint64_t j = b->from - p->q_start; j < p->q_len; j++) {
    int64_t flight;
    unsigned stepped;
    if (!band_tick(p, b, p->q_start + j, &flight, &stepped)) return; /* done stays at this tick */
    b->flight_at[j] = flight;
    b->stepped_at[j] = stepped;
    b->nonquiet_at[j] = b->nonquiet;
    b->last_write_at[j] = b->last_write;
    __atomic_store_n(&b->done, p->q_start + j + 1, __ATOMIC_RELEASE);
  }
}

static void *band_thread(void *arg) {
  pod_band_t *b = arg;
  pod_t *p = b->pod;
  uint64_t seen = 0;
  for (;;) {
    unsigned spins = 0;
    while (__atomic_load_n(&p->gen, __ATOMIC_ACQUIRE) == seen) {
      if (++spins < 2 * p->spin_limit) {
        __builtin_ia32_pause();
        continue;
      }
      pthread_mutex_lock(&p->lock); /* the host is doing something else: sleep */
      while (__atomic_load_n(&p->gen, __ATOMIC_ACQUIRE) == seen) pthread_cond_wait(&p->wake_workers, &p->lock);
      pthread_mutex_unlock(&p->lock);
    }
    seen = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE);
    if (p->quit) return NULL;
    band_run(p, b);
    __atomic_fetch_add(&p->finished, 1, __ATOMIC_RELEASE);
  }
}

/* The bands run their ticks from band.from to the quantum's end (band 0 on this thread). */
static void run_round(pod_t *p) {
  if (p->nbands == 1) {
    band_run(p, &p->band[0]);
    return;
  }
  __atomic_store_n(&p->finished, 0, __ATOMIC_RELAXED);
  pthread_mutex_lock(&p->lock);
  __atomic_add_fetch(&p->gen, 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&p->wake_workers);
  pthread_mutex_unlock(&p->lock);
  band_run(p, &p->band[0]);
  for (unsigned spins = 0; __atomic_load_n(&p->finished, __ATOMIC_ACQUIRE) != p->nbands - 1;)
    relax(&spins, p->spin_limit);
}

/* Every band runs ticks p->tick .. p->tick + len - 1, a first round. */
static void run_quantum(pod_t *p, uint64_t len) {
  p->q_start = p->tick;
  p->q_len = len;
  p->flight0 = p->in_flight;
  for (unsigned k = 0; k < p->nbands; k++) {
    __atomic_store_n(&p->band[k].done, p->tick, __ATOMIC_RELAXED);
    p->band[k].from = p->tick;
    p->band[k].safe = p->tick;
  }
  run_round(p);
}

/* One tick of the whole pod on this thread. Returns how many chips were stepped. */
static unsigned pod_tick(pod_t *p) {
  pod_band_t all = {.first = 0, .end = p->n};
  int64_t flight;
  unsigned stepped;
  band_tick(p, &all, p->tick, &flight, &stepped);
  p->in_flight = (uint64_t)((int64_t)p->in_flight + flight);
  p->tick++;
  return stepped;
}

/* The first tick after now at which a chip wakes (or UINT64_MAX), when nothing is in flight. */
static uint64_t next_wake(const pod_t *p) {
  uint64_t w = UINT64_MAX;
  for (unsigned i = p->own_first; i < p->own_end; i++)
    if (p->node[i].wake < w) w = p->node[i].wake;
  dist_min_u64(&w, 1);
  return w;
}

/* (one process: the MPI runs decide from the bands' records) */
static bool pod_quiet(pod_t *p) {
  if (p->in_flight) return false;
  for (unsigned i = 0; i < p->n; i++)
    if (!p->node[i].quiet) return false;
  return true;
}

/* Every chip brought up to now, and to be looked at again (the host is about to act on them). */
static void sync_all(pod_t *p, uint64_t run_start) {
  for (unsigned i = p->own_first; i < p->own_end; i++) {
    catch_up(&p->node[i], p->tick, run_start);
    p->node[i].wake = p->tick;
  }
}

int pod_set_slice(pod_t *p, unsigned x0, unsigned y0, unsigned w, unsigned h) {
  if (w == 0 || h == 0 || w > p->cfg.size_x || h > p->cfg.size_y || x0 > p->cfg.size_x - w ||
      y0 > p->cfg.size_y - h)
    return -1; /* no sum that could wrap */
  for (unsigned y = y0; y < y0 + h; y++)
    for (unsigned x = x0; x < x0 + w; x++) chip_set_slice(pod_chip(p, x, y), x0, y0, w, h);
  return 0;
}

/* Chips whose router dropped packets since `base` (a hardware error: the run stops). */
static size_t report_drops(pod_t *p, const uint32_t *base, char *report, size_t len) {
  size_t used = 0;
  int64_t *drops = calloc(p->n, sizeof *drops);
  if (!drops) return (size_t)snprintf(report, len, "out of memory");
  for (unsigned i = p->own_first; i < p->own_end; i++)
    drops[i] = (uint32_t)(chip_slice_drops(p->node[i].chip) - base[i]);
  dist_sum_i64(drops, p->n);
  for (unsigned i = 0; i < p->n; i++) {
    const uint32_t d = (uint32_t)drops[i];
    if (d && used < len)
      used += (size_t)snprintf(report + used, len - used,
                               "%schip (%u,%u): its router dropped %u packet(s) addressed outside its slice",
                               used ? "; " : "", i % p->cfg.size_x, i / p->cfg.size_x, d);
  }
  free(drops);
  return used;
}

void pod_reset(pod_t *p) {
  for (unsigned i = p->own_first; i < p->own_end; i++) {
    pod_node_t *nd = &p->node[i];
    catch_up(nd, p->tick, p->tick);
    chip_reset(nd->chip);
    nd->quiet = chip_quiet(nd->chip);
    nd->wake = p->tick;
  }
  for (unsigned i = 0; i < p->n; i++) p->node[i].incoming = 0; /* the links are emptied */
  pod_link_clear(p->link, p->n, 0, p->tick); /* the serialisers emptied, their buckets full */
  p->in_flight = 0;
  for (unsigned k = 0; k < p->nbands; k++) p->band[k].last_write = NEVER;
}

static bool quantum(pod_t *p, uint64_t len, bool (*decide)(pod_t *, void *, unsigned, unsigned, bool), void *ctx);

/* Each band's count of chips not quiet, before its bands run (band_tick keeps it after). */
static void count_nonquiet(pod_t *p) {
  for (unsigned k = 0; k < p->nbands; k++) {
    pod_band_t *b = &p->band[k];
    b->nonquiet = 0;
    for (unsigned i = b->first; i < b->end; i++) b->nonquiet += !p->node[i].quiet;
  }
}

/* run_until_quiet's decision after a tick (its loop below, on bands meeting every tick). */
typedef struct {
  uint64_t start, max_cycles;
  int rc;
} quiet_state_t;

static bool decide_quiet(pod_t *p, void *ctx, unsigned stepped, unsigned nonquiet, bool last) {
  quiet_state_t *q = ctx;
  (void)last;
  const bool quiet = !p->in_flight && !nonquiet;
  if (!stepped && !p->in_flight) {
    if (quiet) return true;
    const uint64_t w = next_wake(p);
    if (w == NEVER || w - q->start >= q->max_cycles) {
      p->tick = q->start + q->max_cycles;
      q->rc = -1;
      return true;
    }
    if (w > p->tick) p->tick = w;
    return false;
  }
  return quiet;
}

/* Runs the pod until it is quiet: 0, or -1 after max_cycles. */
static int run_until_quiet(pod_t *p, uint64_t max_cycles) {
  const uint64_t start = p->tick;
  p->run_start = start;
  sync_all(p, start);
  if (p->dist) { /* the bands meet every tick: the loop below decides after each */
    count_nonquiet(p);
    quiet_state_t q = {start, max_cycles, 0};
    for (uint64_t n = 0; !quantum(p, 1, decide_quiet, &q); n++)
      if (n + 1 >= max_cycles) {
        q.rc = -1;
        break;
      }
    sync_all(p, start);
    return q.rc;
  }
  for (uint64_t n = 0;; n++) {
    if (n >= max_cycles) {
      sync_all(p, start);
      return -1;
    }
    if (!pod_tick(p) && !p->in_flight) {
      if (pod_quiet(p)) break;
      const uint64_t w = next_wake(p); /* nothing acts: jump to the next chip that wakes */
      if (w == UINT64_MAX || w - start >= max_cycles) {
        p->tick = start + max_cycles;
        sync_all(p, start);
        return -1;
      }
      if (w > p->tick) p->tick = w;
    } else if (pod_quiet(p)) {
      break;
    }
  }
  sync_all(p, start);
  return 0;
}

int pod_abort(pod_t *p, uint64_t max_cycles) {
  for (unsigned i = p->own_first; i < p->own_end; i++) chip_request_abort(p->node[i].chip, ISA_QMASK_ALL);
  return run_until_quiet(p, max_cycles + 1);
}

const char *pod_divergence(const pod_t *p) { return p->divergence[0] ? p->divergence : NULL; }

/* Whether a chip in lockstep has found a difference (kept, with the chip's place, in p). */
static bool diverged(pod_t *p) {
  if (p->divergence[0]) return true;
  uint64_t first = NEVER; /* the first chip in lockstep, in chip order, that found one */
  for (unsigned k = 0; k < p->nchecked && first == NEVER; k++) {
    const unsigned i = p->checked[k];
    if (i >= p->own_first && i < p->own_end && chip_divergence(p->node[i].chip)) first = i;
  }
  dist_min_u64(&first, 1);
  if (first == NEVER) return false;
  const unsigned i = (unsigned)first;
  if (p->owner[i] == dist_rank())
    snprintf(p->divergence, sizeof p->divergence, "chip (%u,%u): %s", i % p->cfg.size_x, i / p->cfg.size_x,
             chip_divergence(p->node[i].chip));
  dist_bcast(p->divergence, sizeof p->divergence, p->owner[i]);
  return true;
}

/* What pod_run decides after each tick, the same for one thread and for bands. */
typedef struct {
  uint64_t start, max_cycles, drop_check, progress;
  const uint32_t *drops0;
  uint64_t n;                       /* cycles run */
  bool timed_out, dropped, split;
} run_state_t;

/* After the tick that ends at p->tick (stepped: chips stepped in it; quiet: nothing in flight
 * and every chip quiet after it; may_jump: whether idle ticks may be jumped over from here):
 * whether the run stops, and why. */
static bool after_tick(pod_t *p, run_state_t *r, unsigned stepped, bool quiet, bool may_jump) {
  const uint64_t n = r->n = p->tick - r->start;
  if (p->nchecked && (r->split = diverged(p))) return true;
  if (n >= r->drop_check) { /* a dropped packet will never arrive: stop early, with the reason */
    r->drop_check = n + 256;
    for (unsigned i = p->own_first; i < p->own_end && !r->dropped; i++)
      r->dropped = chip_slice_drops(p->node[i].chip) != r->drops0[i];
    if ((r->dropped = dist_any(r->dropped))) return true;
  }
  if (quiet) return true;
  if (n >= r->max_cycles) return r->timed_out = true;
  if (n >= r->progress && p->cfg.progress && dist_rank() == 0) {
    r->progress = n + (1u << 16);
    p->cfg.progress(p->cfg.progress_ctx, n);
  }
  if (may_jump && !stepped && !p->in_flight) { /* nothing acts, nothing on a link: jump to the next chip that wakes */
    const uint64_t w = next_wake(p), start = r->start;
    p->tick = w == NEVER || w - start > r->max_cycles ? start + r->max_cycles : w > p->tick ? w : p->tick;
    if (p->tick - start >= r->max_cycles) {
      r->n = r->max_cycles;
      return r->timed_out = true;
    }
  }
  return false;
}

/* Runs a quantum of len ticks on the bands and hands each tick's totals over the pod, in
 * order, to decide (after p->tick has moved past the tick); stops at the first tick it says
 * so: returns true then. The first round runs every band to the quantum's end; with MPI a band
 * may pause before a tick only the meeting can clear (no_end_before): the ticks every band has
 * passed are decided, then the bands paused at the first undecided tick go on, and so on.
 * With MPI the slots written for other ranks travel at the end. */
static bool quantum(pod_t *p, uint64_t len, bool (*decide)(pod_t *, void *, unsigned stepped, unsigned nonquiet,
                                                          bool last), void *ctx) {
  run_quantum(p, len);
  const uint64_t q_end = p->q_start + len;
  uint64_t decided = p->q_start;
  bool stop = false;
  int64_t *const tot = p->totals;
  for (;;) {
    /* one sum over the ranks: each tick's totals and the bands short of the quantum's end; the
     * totals are right for the ticks every band has passed, which are all of them unless a
     * band stopped short (then a second meeting finds the first such tick) */
    const uint64_t j0 = decided - p->q_start, m = q_end - decided;
    uint64_t done = q_end;
    memset(tot, 0, (3 * m + 1) * sizeof *tot);
    for (unsigned k = 0; k < p->nbands; k++) {
      const uint64_t d = __atomic_load_n(&p->band[k].done, __ATOMIC_ACQUIRE);
      if (d < done) done = d;
      tot[3 * m] += d < q_end;
      for (uint64_t j = 0; j < m; j++) {
        tot[3 * j] += p->band[k].stepped_at[j0 + j];
        tot[3 * j + 1] += p->band[k].nonquiet_at[j0 + j];
        tot[3 * j + 2] += p->band[k].flight_at[j0 + j];
      }
    }
    dist_sum_i64(tot, 3 * m + 1);
    if (tot[3 * m]) dist_min_u64(&done, 1);
    else done = q_end;
    for (uint64_t j = 0; j < done - decided && !stop; j++) {
      p->in_flight = (uint64_t)((int64_t)p->in_flight + tot[3 * j + 2]);
      p->tick = decided + j + 1;
      stop = decide(p, ctx, (unsigned)tot[3 * j], (unsigned)tot[3 * j + 1], p->tick == q_end);
    }
    decided = done;
    if (stop || done == q_end) break;
    bool resumed = false;
    for (unsigned k = 0; k < p->nbands; k++) { /* the bands paused at `done` go on */
      pod_band_t *b = &p->band[k];
      b->from = b->paused && b->done == done ? done : q_end;
      if (b->from == done) b->safe = done, resumed = true;
    }
    if (!dist_any(resumed)) { /* a band stopped for an end the records do not show: a bug, not a hang */
      fprintf(stderr, "pod: internal error: the bands stopped at cycle %llu with no end found\n",
              (unsigned long long)done);
      dist_abort(70);
    }
    run_round(p);
  }
  if (p->dist) exchange(p);
  return stop;
}

static bool decide_run(pod_t *p, void *ctx, unsigned stepped, unsigned nonquiet, bool last) {
  return after_tick(p, ctx, stepped, !p->in_flight && !nonquiet, last);
}

/* pod_run's loop on bands: quanta of latency + 1 ticks (one tick with chips always awake), cut
 * short so that a drop check or the time-out falls on a quantum's last tick, as one thread
 * checks them; each tick's records are decided on in order as one thread decides after each
 * tick. Idle ticks are jumped over only from a quantum's end. */
static void run_bands(pod_t *p, run_state_t *r) {
  count_nonquiet(p);
  for (;;) {
    const uint64_t n = p->tick - r->start;
    uint64_t len = p->nrtl ? 1 : p->cfg.link_latency + 1;
    if (len > r->max_cycles - n) len = r->max_cycles - n;
    if (n >= r->drop_check) len = 1;
    else if (len > r->drop_check - n) len = r->drop_check - n;
    if (len == 0) len = 1;
    if (quantum(p, len, decide_run, r)) return;
  }
}

/* With MPI every rank learns every chip's last busy cycle (pod_busy_until). */
static void share_busy_until(pod_t *p) {
  if (!p->dist) return;
  int64_t *v = calloc(p->n, sizeof *v);
  if (!v) abort(); /* a word a chip */
  for (unsigned i = p->own_first; i < p->own_end; i++) v[i] = (int64_t)p->node[i].busy_until;
  dist_sum_i64(v, p->n);
  for (unsigned i = 0; i < p->n; i++) p->node[i].busy_until = (uint64_t)v[i];
  free(v);
}

int pod_run(pod_t *p, unsigned mask, uint64_t max_cycles, uint64_t *cycles, char *report, size_t len) {
  uint32_t *drops0 = calloc(p->n, sizeof *drops0);
  if (!drops0) {
    snprintf(report, len, "out of memory");
    return -1;
  }
  for (unsigned i = 0; i < p->n; i++) p->node[i].busy_until = 0;
  for (unsigned i = p->own_first; i < p->own_end; i++) {
    chip_begin(p->node[i].chip, mask);
    drops0[i] = chip_slice_drops(p->node[i].chip);
  }
  run_state_t r = {.start = p->tick, .max_cycles = max_cycles, .drop_check = 256, .progress = 1u << 16,
                   .drops0 = drops0};
  const uint64_t start = r.start;
  p->run_start = start;
  sync_all(p, start);
  if (p->nbands > 1 || p->dist) run_bands(p, &r);
  else
    for (;;) {
      const unsigned stepped = pod_tick(p);
      if (after_tick(p, &r, stepped, pod_quiet(p), true)) break;
    }
  uint64_t n = r.n;
  const bool timed_out = r.timed_out, dropped = r.dropped, split = r.split;
  sync_all(p, start);
  profile_run_end(p->profile);
  *cycles = n;
  int rc = 0;
  size_t used = 0;
  if (len) report[0] = 0;

  if (timed_out) used = (size_t)snprintf(report, len, "timed out after %llu cycles: ", (unsigned long long)max_cycles);
  const size_t head = used;
  if (used < len) used += report_drops(p, drops0, report + used, len - used);
  if (used > head) rc = -1;
  free(drops0);
  share_busy_until(p);
  for (unsigned i = 0; i < p->n; i++) {
    chip_status_t st; /* (collective with MPI: the owner's) */
    if (chip_finish(p->node[i].chip, timed_out || dropped || split, &st) && used < len) {
      used += (size_t)snprintf(report + used, len - used, "%schip (%u,%u): %s", used > head ? "; " : "",
                               i % p->cfg.size_x, i / p->cfg.size_x, st.report);
      rc = -1;
    }
  }
  if (timed_out && rc == 0) {
    if (used < len) used += (size_t)snprintf(report + used, len - used, "flits still in the network");
    rc = -1;
  }
  if (timed_out || dropped || split) { /* leave the pod ready for the next programs */
    bool drained = pod_abort(p, CHIP_DRAIN_CYCLES) == 0;
    if (!drained) pod_reset(p);
    /* the abort ticked the chips: the profile ends its run again (its cached commands are the
     * aborted programs', which the next loads free) */
    profile_run_end(p->profile);
    if (used < len)
      snprintf(report + used, len - used, "%s", drained ? " (every queue was aborted; the pod is quiet)"
                                                        : " (every queue was aborted and the pod did not drain: it was "
                                                          "reset)");
  }
  return rc;
}

void pod_set_profile(pod_t *p, profile_t *prof) {
  p->profile = prof;
  for (unsigned i = 0; prof && i < p->n; i++) profile_attach(prof, i, p->node[i].chip);
}

void pod_phase(pod_t *p, const char *name) { profile_phase(p->profile, name, p->tick); }

void pod_marks(pod_t *p, unsigned x, unsigned y, const uint32_t *at, const char *const *names, unsigned n) {
  if (p->profile && x < p->cfg.size_x && y < p->cfg.size_y) profile_marks(p->profile, y * p->cfg.size_x + x, at, names, n);
}

uint64_t pod_busy_until(const pod_t *p, unsigned x, unsigned y) {
  return p->node[y * p->cfg.size_x + x].busy_until;
}
