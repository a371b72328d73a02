/*
 * chip_core: one chip's model behind the boundary of rtl/chip_top.sv, whichever model runs
 * it (issue 13; docs/scale.md): the Verilated RTL (chip_core_rtl.c), the fast C model
 * (chip_core_fast.c over csim/fast/chip_fast.h), or both in lockstep (chip_check.c), which
 * compares everything visible every cycle and stops at the first difference. csim/chip/chip.c
 * drives a core: the HBM model, program loading, runs and reports sit above it, the
 * same for every model.
 *
 * A cycle: the host reads the HBM request (registered state), the HBM model accepts it or
 * not, then chip_core_step clocks the chip with the ready flag and the answer due (if any).
 * The network ports carry a flit each way per link (+X -X +Y -Y) and a credit bit per VC:
 * csim/pod/pod.c gives the inputs before a step and takes the outputs after it.
 */
#ifndef CHIP_CHIP_CORE_H
#define CHIP_CHIP_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fast/chip_obs.h"
#include "fw/isa.h"
#include "util/model.h"

typedef struct {
  bool valid, write;
  uint32_t addr, bytes;
  const uint32_t *data;   /* the line written (valid while the cycle lasts) */
} chip_hbm_req_t;

/* Queue 2c + q is queue q of core c (the chip's cores, chip_geometry_t.cores). */
typedef struct {
  bool running[CHIP_MAX_QUEUES], halted[CHIP_MAX_QUEUES];
  unsigned error[CHIP_MAX_QUEUES], pc[CHIP_MAX_QUEUES], opcode[CHIP_MAX_QUEUES];
} chip_core_status_t;

/* What crosses a chip's four links in a cycle: a flit each (+X -X +Y -Y) and the credits, bit
 * d * vcs + v for direction d, VC v (CHIP_ROUTER_VCS VCs). */
typedef struct {
  noc_flit_t flit[4];
  uint8_t credits;
  noc_wide_t hi[4];  /* wide flits' words beyond the first (fast chips of flit_words > 1 only) */
} chip_net_t;

typedef struct chip_core chip_core_t;

typedef struct {
  void (*free)(chip_core_t *c);
  /* rst_ni low for two cycles with idle inputs: queues, units, semaphores, router reset; the
   * memories keep their contents */
  void (*reset)(chip_core_t *c);
  void (*set_slice)(chip_core_t *c, uint32_t slice);
  /* n cycles of host writes into a queue's command memory, idle inputs otherwise */
  void (*load)(chip_core_t *c, unsigned queue, const uint32_t *cmds, size_t n);
  /* start and abort: sampled at the next step only */
  void (*start)(chip_core_t *c, unsigned mask, const uint32_t len[CHIP_MAX_QUEUES]);
  void (*abort)(chip_core_t *c, unsigned mask);
  /* core k's HBM port (each core has one, into the chip's one memory) */
  void (*hbm_request)(chip_core_t *c, unsigned k, chip_hbm_req_t *r);
  /* One cycle; for core k's HBM port, ready[k] and answer[k]: the line the HBM answers with,
   * NULL for none (write answers carry zeros). obs (may be NULL) gets the cycle's visible
   * events (chip_obs.h), for the lockstep check. */
  void (*step)(chip_core_t *c, const bool ready[CHIP_MAX_CORES], const uint32_t *const answer[CHIP_MAX_CORES],
               chip_obs_t *obs);
  /* Skips n cycles in which nothing can happen (chip_core_quiet_until says how many):
   * the counters move as they would. */
  void (*skip)(chip_core_t *c, uint64_t n);
  /* The first cycle from now (0: this one) at which the chip could change anything visible
   * if no flit or credit arrives; UINT64_MAX: never. A Verilated model always says 0. */
  uint64_t (*quiet_for)(chip_core_t *c);
  void (*status)(chip_core_t *c, chip_core_status_t *st);
  uint32_t (*sem)(chip_core_t *c, unsigned idx);  /* idx: core * ISA_NUM_SEMS + semaphore */
  void (*counters)(chip_core_t *c, uint64_t cnt[CHIP_OBS_COUNTERS]);
  bool (*mxu_error)(chip_core_t *c);
  bool (*idle)(chip_core_t *c);         /* no queue running, no unit busy */
  unsigned (*occupancy)(chip_core_t *c); /* flits in the router */
  void (*router_flits)(chip_core_t *c, uint32_t flits[5]);
  uint32_t (*slice_drops)(chip_core_t *c);
  /* the network inputs of the next step; the outputs the last step registered */
  void (*net_in)(chip_core_t *c, const chip_net_t *in);
  void (*net_out)(chip_core_t *c, chip_net_t *out);
  /* -1 with a message when the model has no waveform */
  int (*trace_open)(chip_core_t *c, const char *path, char *err, size_t errlen);
  void (*trace_close)(chip_core_t *c);
  /* the first difference the lockstep found, or NULL */
  const char *(*divergence)(chip_core_t *c);
  /* The host reads n VMEM lines from `line` (cols words each): 0, or -1 where the model has no
   * such path (the Verilated chip's VMEM is inside the model: copy to HBM by DMA). */
  int (*vmem_read)(chip_core_t *c, uint32_t line, uint32_t n, uint32_t *dst);
  /* Bytes of memory pages the model holds for the chip's memories (0: not known, the RTL's) */
  size_t (*memory)(chip_core_t *c);
  /* One cycle with no input at all, as the lockstep check runs the RTL through cycles the fast
   * model skips: nonzero when anything could be seen happening in it (a command issued, a VMEM
   * write, an HBM request, a flit in the router, a unit's busy flags other than `busy`, a queue
   * moving); *busy gets the busy flags (fast/chip_obs.h), core c's at bit 16 c. Cheaper than a
   * step with obs. */
  int (*step_idle)(chip_core_t *c, uint32_t *busy);
} chip_core_ops_t;

struct chip_core {
  const chip_core_ops_t *ops;
  chip_model_t model;
};

/* What every model needs to build a chip. */
typedef struct {
  chip_geometry_t geo;
  uint32_t hbm_bytes;          /* hbm_bytes_i: the size, 0xFFFFFFFF for 4 GiB */
  unsigned x, y, size_x, size_y, buf_depth;
  uint64_t seed;               /* the RTL's reset randomisation */
} chip_core_config_t;

chip_core_t *chip_core_rtl_new(const chip_core_config_t *cfg, bool zero_init, char *err, size_t errlen);
chip_core_t *chip_core_fast_new(const chip_core_config_t *cfg, char *err, size_t errlen);
/* The RTL and the fast model side by side: the RTL starts with every register and memory
 * zero (what the fast model assumes of state nobody wrote), both get the same inputs, every
 * visible event is compared every cycle; the outputs passed on are the RTL's. */
chip_core_t *chip_core_check_new(const chip_core_config_t *cfg, char *err, size_t errlen);
/* The lockstep's comparison of one cycle: 0 when the RTL's view (r) and the fast model's (f)
 * agree on everything visible, else -1 and the first difference in why (unit, port or address,
 * both values). A line's data is compared only where its write enable is set (cols words). */
int chip_obs_compare(const chip_obs_t *r, const chip_obs_t *f, unsigned cols, char *why, size_t len);

#endif
