/*
 * profile_gather: a pod split over MPI ranks (profile.h, profile_gather; docs/profiling.md,
 * "MPI"): each rank's chips' records, samples, sums and run ends to rank 0, in plain
 * length-prefixed byte buffers over dist_exchange, into rank 0's empty slots for those chips.
 */
#include "profile/profile_internal.h"
#include "util/dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A byte buffer written twice: first with no memory, to count the bytes, then for real. */
typedef struct {
  uint8_t *b;
  size_t n;
} gbuf_t;

static void gput(gbuf_t *g, const void *src, size_t len) {
  if (g->b && len) memcpy(g->b + g->n, src, len);
  g->n += len;
}

/* Chip c's records: a header of counts, then its events, samples, phases' sums and waits. */
static void gput_chip(gbuf_t *g, const pchip_t *c, unsigned phases) {
  const uint64_t h[11] = {c->index,       c->cores,         c->mxus,   c->seen,    c->first,   c->end,
                          c->rec.dropped, c->rec.full_at,   c->rec.n,  c->rec.ns,  c->rec.nruns};
  gput(g, h, sizeof h);
  gput(g, c->rec.ev, c->rec.n * sizeof *c->rec.ev);
  gput(g, c->rec.smp, c->rec.ns * sizeof *c->rec.smp);
  gput(g, c->sums.ph, phases * sizeof c->sums.ph[0]);
  gput(g, c->sums.wait, sizeof c->sums.wait);
  for (unsigned r = 0; r < c->rec.nruns; r++) { /* (the runs' ends: the trace's order) */
    const uint64_t e = c->rec.runs[r];
    gput(g, &e, sizeof e);
  }
}

typedef struct {
  const uint8_t *b;
  size_t n, at;
  bool bad;
} grd_t;

static const void *gget(grd_t *r, size_t len) {
  if (r->bad || len > r->n - r->at) {
    r->bad = true;
    return NULL;
  }
  const void *p = r->b + r->at;
  r->at += len;
  return p;
}

/* Installs the chip records of buffer r (from rank `from`) into p's empty slots: 0, or -1 with a message. */
static int install_chips(profile_t *p, grd_t *r, unsigned from, char *err, size_t errlen) {
  while (r->at < r->n) {
    uint64_t h[11];
    const void *hp = gget(r, sizeof h);
    if (!hp) break;
    memcpy(h, hp, sizeof h);
    pchip_t *c = h[0] < p->nchips ? p->chip[h[0]] : NULL;
    const size_t n = (size_t)h[8], ns = (size_t)h[9];
    if (!c || c->seen || h[1] == 0 || h[1] > CHIP_MAX_CORES || h[2] == 0 || h[2] > CHIP_MAX_MXUS || n > c->rec.limit ||
        ns > (r->n - r->at) / sizeof(sample_t)) {
      r->bad = true;
      break;
    }
    const void *ev = gget(r, n * sizeof *c->rec.ev), *smp = gget(r, ns * sizeof *c->rec.smp);
    const void *ph = gget(r, p->phases * sizeof c->sums.ph[0]), *wait = gget(r, sizeof c->sums.wait);
    /* (as many runs on every rank) */
    const void *runs = h[10] == c->rec.nruns ? gget(r, c->rec.nruns * sizeof(uint64_t)) : NULL;
    if (h[10] != c->rec.nruns) r->bad = true;
    if (r->bad) break;
    profile_ev_t *e = n ? malloc(n * sizeof *e) : NULL;
    sample_t *s = ns ? malloc(ns * sizeof *s) : NULL;
    if ((n && !e) || (ns && !s)) {
      free(e), free(s);
      snprintf(err, errlen, "out of memory gathering the profile");
      return -1;
    }
    if (n) memcpy(e, ev, n * sizeof *e);
    if (ns) memcpy(s, smp, ns * sizeof *s);
    free(c->rec.ev), free(c->rec.smp);
    c->rec.ev = e, c->rec.n = c->rec.cap = n;
    c->rec.smp = s, c->rec.ns = c->rec.smp_cap = ns;
    c->cores = (unsigned)h[1], c->mxus = (unsigned)h[2], c->queues = ISA_NUM_QUEUES * c->cores;
    c->seen = h[3] != 0, c->first = h[4], c->end = h[5], c->rec.dropped = h[6], c->rec.full_at = h[7];
    memcpy(c->sums.ph, ph, p->phases * sizeof c->sums.ph[0]);
    memcpy(c->sums.wait, wait, sizeof c->sums.wait);
    for (unsigned k = 0; k < c->rec.nruns; k++) {
      uint64_t e;
      memcpy(&e, (const uint8_t *)runs + k * sizeof e, sizeof e);
      c->rec.runs[k] = e <= n ? (size_t)e : n;
    }
    c->chip = NULL; /* (the shell of another rank's chip: nothing here may step or read it) */
  }
  if (r->bad) {
    snprintf(err, errlen, "the profile records from MPI rank %u do not parse (ranks built differently?)", from);
    return -1;
  }
  return 0;
}

/* FNV-1a of the phases' names: every rank runs the same host program, so they must agree. */
static uint64_t phases_hash(const profile_t *p) {
  uint64_t h = 14695981039346656037ull ^ p->phases;
  for (unsigned f = 0; f < p->phases; f++)
    for (const char *s = p->phase_name[f];; s++) {
      h = (h ^ (unsigned char)*s) * 1099511628211ull;
      if (!*s) break;
    }
  return h;
}

#define GATHER_CHUNK ((size_t)1 << 30) /* MPI counts are ints: big buffers go in rounds */

int profile_gather(profile_t *p, char *err, size_t errlen) {
  if (!dist_active()) return 0;
  const unsigned R = dist_size(), me = dist_rank();
  /* the phases: the per-phase sums line up only if every rank named the same phases in order */
  uint64_t hv[2] = {phases_hash(p), ~phases_hash(p)};
  dist_min_u64(hv, 2);
  if (hv[0] != ~hv[1]) {
    snprintf(err, errlen, "the MPI ranks' profiles have different phases (%u here): the ranks did not run the same "
             "host program", p->phases);
    return -1;
  }
  /* a chip's records come from the lowest rank that watched it (its owner: a rank watches only
   * its own chips, chip_set_observer ignoring the shells of the others') */
  uint64_t *owner = malloc((p->nchips ? p->nchips : 1) * sizeof *owner);
  bool fail = !owner;
  for (unsigned i = 0; owner && i < p->nchips; i++) owner[i] = p->chip[i] && p->chip[i]->seen ? me : UINT64_MAX;
  if (dist_any(fail)) {
    free(owner);
    snprintf(err, errlen, "out of memory gathering the profile");
    return -1;
  }
  dist_min_u64(owner, p->nchips);
  gbuf_t g = {NULL, 0};
  for (int pass = 0; pass < 2 && me; pass++) {
    for (unsigned i = 0; i < p->nchips; i++)
      if (owner[i] == me) gput_chip(&g, p->chip[i], p->phases);
    if (pass == 0 && g.n && !(g.b = malloc(g.n))) fail = true;
    if (pass == 0) g.n = 0;
    if (fail) break;
  }
  free(owner);
  int64_t len[256] = {0}; /* dist_init: at most 255 ranks */
  len[me] = (int64_t)g.n;
  dist_sum_i64(len, R);
  uint8_t *recv[256] = {NULL};
  for (unsigned k = 1; me == 0 && k < R; k++)
    if (len[k] && !(recv[k] = malloc((size_t)len[k]))) fail = true;
  if (dist_any(fail)) {
    free(g.b);
    for (unsigned k = 0; k < R; k++) free(recv[k]);
    snprintf(err, errlen, "out of memory gathering the profile");
    return -1;
  }
  size_t rounds = 0;
  for (unsigned k = 1; k < R; k++) {
    const size_t r = ((size_t)len[k] + GATHER_CHUNK - 1) / GATHER_CHUNK;
    if (r > rounds) rounds = r;
  }
  for (size_t round = 0; round < rounds; round++) {
    const size_t off = round * GATHER_CHUNK;
    void *sendp[256] = {NULL}, *recvp[256] = {NULL};
    size_t send_len[256] = {0}, recv_len[256] = {0};
    if (me && g.n > off) sendp[0] = g.b + off, send_len[0] = g.n - off < GATHER_CHUNK ? g.n - off : GATHER_CHUNK;
    for (unsigned k = 1; me == 0 && k < R; k++)
      if ((size_t)len[k] > off)
        recvp[k] = recv[k] + off, recv_len[k] = (size_t)len[k] - off < GATHER_CHUNK ? (size_t)len[k] - off : GATHER_CHUNK;
    dist_exchange(sendp, send_len, recvp, recv_len);
  }
  free(g.b);
  int rc = 0;
  for (unsigned k = 1; me == 0 && k < R; k++) {
    grd_t r = {recv[k], (size_t)len[k], 0, false};
    if (!rc && recv[k]) rc = install_chips(p, &r, k, err, errlen);
    free(recv[k]);
  }
  if (dist_any(rc != 0)) { /* (rank 0's verdict, on every rank) */
    if (!rc) snprintf(err, errlen, "MPI rank 0 could not gather the profile");
    return -1;
  }
  return 0;
}
