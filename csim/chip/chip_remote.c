/* chip_remote: a chip of a pod split over the ranks of an MPI job (chip_new_shared; chip_host.h):
 * on its owner the chip itself, each host operation's answer broadcast from there; on the other
 * ranks a shell that takes the answers. Every rank makes the same calls in the same order. */
#include <stdio.h>
#include <string.h>

#include "chip/chip.h"
#include "chip/chip_host.h"
#include "util/dist.h"

/* A shell: no core, no memory (no HBM ports: c->ports stays 0), refused for the same reasons
 * the owner refuses the chip, so every rank agrees. */
static chip_t *shell_new(const chip_config_t *cfg, char *err, size_t errlen) {
  chip_geometry_t geo;
  if (chip_check_config(cfg, &geo, err, errlen)) return NULL;
  chip_t *c = chip_alloc(cfg, &geo, &chip_host_shell);
  if (!c) snprintf(err, errlen, "out of memory");
  return c;
}

chip_t *chip_new_shared(const chip_config_t *cfg, unsigned owner, char *err, size_t errlen) {
  const bool mine = owner == dist_rank();
  chip_t *c = mine ? chip_new(cfg, err, errlen) : shell_new(cfg, err, errlen);
  if (!c) return NULL;
  /* (a job of one rank has nothing to share: the chip is its own) */
  c->host = !mine ? &chip_host_shell : dist_active() ? &chip_host_owner : &chip_host_local;
  c->owner = owner;
  return c;
}

/* The owner's answer (rc and, on failure, its message `why`; NULL on the other ranks) on every
 * rank. */
static int share_outcome(const chip_t *c, int rc, const char *why, char *err, size_t errlen) {
  struct {
    int rc;
    char err[256];
  } a = {rc, ""};
  if (why && rc) snprintf(a.err, sizeof a.err, "%s", why);
  dist_bcast(&a, sizeof a, c->owner);
  if (a.rc) snprintf(err, errlen, "%s", a.err);
  return a.rc;
}

/* The owner's answer (rc, and n bytes at buf when rc is 0) on every rank. */
static int share(const chip_t *c, int rc, void *buf, size_t n) {
  dist_bcast(&rc, sizeof rc, c->owner);
  if (rc == 0 && n) dist_bcast(buf, n, c->owner);
  return rc;
}

/* ------------------------------------------------------------------ on the owner */

static int owner_hbm_write(chip_t *c, uint64_t addr, const void *src, size_t n) {
  return share(c, chip_host_local.hbm_write(c, addr, src, n), NULL, 0);
}

static int owner_hbm_read(chip_t *c, uint64_t addr, void *dst, size_t n) {
  return share(c, chip_host_local.hbm_read(c, addr, dst, n), dst, n);
}

static int owner_hbm_zero(chip_t *c, uint64_t addr, size_t n) {
  return share(c, chip_host_local.hbm_zero(c, addr, n), NULL, 0);
}

/* No rank reaches into another's memory: no direct access to a shared chip's, on any rank. */
static uint8_t *no_hbm_direct(chip_t *c, uint64_t addr, uint64_t *first, uint64_t *len) {
  (void)c, (void)addr, (void)first, (void)len;
  return NULL;
}

static size_t owner_memory(chip_t *c) {
  size_t bytes = chip_host_local.memory(c);
  share(c, 0, &bytes, sizeof bytes);
  return bytes;
}

static int owner_vmem_read(chip_t *c, uint32_t line, uint32_t n, uint32_t *dst) {
  return share(c, chip_host_local.vmem_read(c, line, n, dst), dst, (size_t)n * c->geo.cols * sizeof *dst);
}

static int owner_load_program(chip_t *c, int queue, const uint32_t *cmds, size_t n, char *err, size_t errlen) {
  const int rc = chip_host_local.load_program(c, queue, cmds, n, err, errlen);
  return share_outcome(c, rc, err, err, errlen);
}

static uint32_t owner_sem(chip_t *c, unsigned idx) {
  uint32_t v = chip_host_local.sem(c, idx);
  share(c, 0, &v, sizeof v);
  return v;
}

static int owner_trace(chip_t *c, const char *path, char *err, size_t errlen) {
  const int rc = chip_host_local.trace(c, path, err, errlen);
  return share_outcome(c, rc, err, err, errlen);
}

static void owner_router_flits(chip_t *c, uint32_t flits[5]) {
  chip_host_local.router_flits(c, flits);
  share(c, 0, flits, 5 * sizeof *flits);
}

static void owner_status(chip_t *c, chip_status_t *st) {
  chip_host_local.status(c, st);
  share(c, 0, st, sizeof *st);
}

/* The run's outcome and status, as one message. */
typedef struct {
  int rc;
  chip_status_t st;
} finish_t;

static int owner_finish(chip_t *c, bool timed_out, chip_status_t *st) {
  finish_t f = {0};
  f.rc = chip_host_local.finish(c, timed_out, &f.st);
  dist_bcast(&f, sizeof f, c->owner);
  *st = f.st;
  return f.rc;
}

static bool owner_idle(chip_t *c) {
  bool idle = chip_host_local.idle(c);
  share(c, 0, &idle, sizeof idle);
  return idle;
}

const chip_host_ops_t chip_host_owner = {
    .hbm_write = owner_hbm_write, .hbm_read = owner_hbm_read, .hbm_zero = owner_hbm_zero, .hbm_direct = no_hbm_direct,
    .memory = owner_memory, .vmem_read = owner_vmem_read, .load_program = owner_load_program, .sem = owner_sem,
    .trace = owner_trace, .trace_close = chip_local_trace_close, .router_flits = owner_router_flits, .status = owner_status,
    .finish = owner_finish, .idle = owner_idle, .request_abort = chip_local_request_abort, .reset = chip_local_reset,
    .set_slice = chip_local_set_slice, .set_observer = chip_local_set_observer,
};

/* ------------------------------------------------------------------ on the other ranks */

static int shell_hbm_write(chip_t *c, uint64_t addr, const void *src, size_t n) {
  (void)addr, (void)src, (void)n;
  return share(c, 0, NULL, 0);
}

static int shell_hbm_read(chip_t *c, uint64_t addr, void *dst, size_t n) {
  (void)addr;
  return share(c, 0, dst, n);
}

static int shell_hbm_zero(chip_t *c, uint64_t addr, size_t n) {
  (void)addr, (void)n;
  return share(c, 0, NULL, 0);
}

static size_t shell_memory(chip_t *c) {
  size_t bytes = 0;
  share(c, 0, &bytes, sizeof bytes);
  return bytes;
}

static int shell_vmem_read(chip_t *c, uint32_t line, uint32_t n, uint32_t *dst) {
  (void)line;
  return share(c, 0, dst, (size_t)n * c->geo.cols * sizeof *dst);
}

/* The owner loads; every rank keeps the program (reports, chip_cycle_bound). */
static int shell_load_program(chip_t *c, int queue, const uint32_t *cmds, size_t n, char *err, size_t errlen) {
  const int rc = share_outcome(c, 0, NULL, err, errlen);
  return rc ? rc : chip_keep_program(c, queue, cmds, n, err, errlen);
}

static uint32_t shell_sem(chip_t *c, unsigned idx) {
  (void)idx;
  uint32_t v = 0;
  share(c, 0, &v, sizeof v);
  return v;
}

static int shell_trace(chip_t *c, const char *path, char *err, size_t errlen) {
  (void)path;
  return share_outcome(c, 0, NULL, err, errlen);
}

static void shell_router_flits(chip_t *c, uint32_t flits[5]) { share(c, 0, flits, 5 * sizeof *flits); }

static void shell_status(chip_t *c, chip_status_t *st) {
  memset(st, 0, sizeof *st);
  share(c, 0, st, sizeof *st);
}

static int shell_finish(chip_t *c, bool timed_out, chip_status_t *st) {
  (void)timed_out;
  finish_t f = {0};
  dist_bcast(&f, sizeof f, c->owner);
  *st = f.st;
  return f.rc;
}

static bool shell_idle(chip_t *c) {
  bool idle = true;
  share(c, 0, &idle, sizeof idle);
  return idle;
}

/* What the owner alone does to its chip: nothing here. */
static void shell_trace_close(chip_t *c) { (void)c; }
static void shell_request_abort(chip_t *c, unsigned mask) { (void)c, (void)mask; }
static void shell_reset(chip_t *c) { (void)c; }
static void shell_set_slice(chip_t *c, uint32_t slice) { (void)c, (void)slice; }
static void shell_set_observer(chip_t *c, const chip_observer_t *ops, void *ctx) { (void)c, (void)ops, (void)ctx; }

const chip_host_ops_t chip_host_shell = {
    .hbm_write = shell_hbm_write, .hbm_read = shell_hbm_read, .hbm_zero = shell_hbm_zero, .hbm_direct = no_hbm_direct,
    .memory = shell_memory, .vmem_read = shell_vmem_read, .load_program = shell_load_program, .sem = shell_sem,
    .trace = shell_trace, .trace_close = shell_trace_close, .router_flits = shell_router_flits, .status = shell_status,
    .finish = shell_finish, .idle = shell_idle, .request_abort = shell_request_abort, .reset = shell_reset,
    .set_slice = shell_set_slice, .set_observer = shell_set_observer,
};
