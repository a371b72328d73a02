/*
 * chip_host: how a chip carries out what the host asks of it (chip.h), behind one table, as its
 * models are (chip_core.h): the chip itself (chip.c), or a chip of a pod split over the ranks of
 * an MPI job (chip_remote.c, chip_new_shared), whose host operations are collective: on the
 * rank that simulates it (its owner) the chip carries them out and broadcasts the answers; on
 * every other rank it is a shell (no core, no memory) holding its configuration and programs,
 * which takes the owner's answers. The table is picked when the chip is made. Private to
 * csim/chip.
 */
#ifndef CHIP_CHIP_HOST_H
#define CHIP_CHIP_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chip/chip.h"
#include "chip/chip_core.h"
#include "chip/hbm.h"

/* The host operations that differ between a chip and the shell of another rank's chip; each as
 * its chip.h function says (set_slice: the packed slice of chip_core_ops_t.set_slice). */
typedef struct chip_host_ops {
  int (*hbm_write)(chip_t *c, uint64_t addr, const void *src, size_t n);
  int (*hbm_read)(chip_t *c, uint64_t addr, void *dst, size_t n);
  int (*hbm_zero)(chip_t *c, uint64_t addr, size_t n);
  uint8_t *(*hbm_direct)(chip_t *c, uint64_t addr, uint64_t *first, uint64_t *len);
  size_t (*memory)(chip_t *c);
  int (*vmem_read)(chip_t *c, uint32_t line, uint32_t n, uint32_t *dst);
  int (*load_program)(chip_t *c, int queue, const uint32_t *cmds, size_t n, char *err, size_t errlen);
  uint32_t (*sem)(chip_t *c, unsigned idx);
  int (*trace)(chip_t *c, const char *path, char *err, size_t errlen);
  void (*trace_close)(chip_t *c);
  void (*router_flits)(chip_t *c, uint32_t flits[5]);
  void (*status)(chip_t *c, chip_status_t *st);
  int (*finish)(chip_t *c, bool timed_out, chip_status_t *st);
  bool (*idle)(chip_t *c);
  void (*request_abort)(chip_t *c, unsigned mask);
  void (*reset)(chip_t *c);
  void (*set_slice)(chip_t *c, uint32_t slice);
  void (*set_observer)(chip_t *c, const chip_observer_t *ops, void *ctx);
} chip_host_ops_t;

/* The chip itself (chip.c); an MPI chip's owner and the shells of it (chip_remote.c). */
extern const chip_host_ops_t chip_host_local, chip_host_owner, chip_host_shell;

struct chip {
  chip_config_t cfg;
  chip_geometry_t geo;
  const chip_host_ops_t *host;  /* how host operations are carried out (above) */
  chip_core_t *core;            /* NULL in a shell */
  hbm_t hbm[CHIP_MAX_CORES];  /* core k's HBM port; hbm[0] holds the memory (hbm.h) */
  unsigned ports;              /* the cores (0 in a shell) */
  uint32_t *line;  /* scratch, one VMEM line */
  unsigned queues;                 /* ISA_NUM_QUEUES a core: queue 2c + q is queue q of core c */
  uint32_t *prog[CHIP_MAX_QUEUES]; /* the programs loaded, for reports */
  size_t prog_len[CHIP_MAX_QUEUES];
  unsigned start_mask;
  uint64_t run_start;
  uint64_t base[CHIP_OBS_COUNTERS], hbm0;  /* counters at the start of the run */
  uint64_t cycle;
  unsigned owner;                  /* the rank that simulates the chip (chip_new_shared) */
  const chip_observer_t *obs_ops;  /* a profile's observer (chip_set_observer), or NULL */
  void *obs_ctx;
  chip_obs_t *obs;                 /* its buffer */
  void (*progress)(void *ctx, uint64_t cycles);  /* chip_set_progress */
  void *progress_ctx;
};

/* What a chip does to itself alone, the same on an MPI job's owner rank (nothing to share; a
 * shell does nothing): as chip.h's chip_trace_close, chip_request_abort, chip_reset,
 * chip_set_slice (packed) and chip_set_observer. */
void chip_local_trace_close(chip_t *c);
void chip_local_request_abort(chip_t *c, unsigned mask);
void chip_local_reset(chip_t *c);
void chip_local_set_slice(chip_t *c, uint32_t slice);
void chip_local_set_observer(chip_t *c, const chip_observer_t *ops, void *ctx);

/* A chip's handle for a checked configuration (geo: chip_check_config's), carrying out host
 * operations as `host` says, with no core or memory yet; NULL when out of memory. */
chip_t *chip_alloc(const chip_config_t *cfg, const chip_geometry_t *geo, const chip_host_ops_t *host);
/* 0 when cfg describes a chip this build has (its geometry in *geo), else -1 with a message:
 * a shell refuses what its owner refuses, so every rank agrees. */
int chip_check_config(const chip_config_t *cfg, chip_geometry_t *geo, char *err, size_t errlen);
/* Keeps a copy of the program loaded on `queue` (reports, chip_cycle_bound): 0, or -1 with a
 * message. */
int chip_keep_program(chip_t *c, int queue, const uint32_t *cmds, size_t n, char *err, size_t errlen);

#endif
