/*
 * chip_fast: the whole chip at host speed (issue 13; docs/scale.md), cycle-equivalent to
 * rtl/chip_top.sv: the same results bit for bit and the same cycle for every event seen
 * outside a unit (command issue and completion, every semaphore change, every VMEM and HBM
 * write, every flit and credit on every router port). It is chip_top's and chip_core's wiring
 * -- per core the two command queues (cmdq_fast), the semaphore bank, the compute queue's
 * release fences, VMEM and an HBM port -- around one C model per unit: per core dma_fast, an
 * mxu_unit_fast per MXU and vec_unit_fast; for the chip four rdma_fast engines and the router,
 * noc_fast. Queue 2c + q is queue q of core c. Each cycle is evaluated as the RTL's is: every unit reads
 * the state and memories as they were before the clock edge, then every register and memory
 * takes its new value. Memories (VMEM, the accumulator, the command memories) are allocated a
 * page at a time as they are written (util/paged.h), and state nobody wrote reads as zero.
 *
 * csim/chip/chip_core_fast.c puts it behind the chip_core interface; --check runs it beside
 * the Verilated RTL and compares chip_obs_t (the cycle's visible events) every cycle.
 */
#ifndef FAST_CHIP_FAST_H
#define FAST_CHIP_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fast/chip_obs.h"
#include "fw/isa.h"

/* The chip's router has 2 VCs (chip_top's NumVcs). */
#define CHIP_FAST_VCS 2

typedef struct {
  chip_geometry_t geo;
  uint32_t hbm_bytes;            /* hbm_bytes_i */
  unsigned x, y, size_x, size_y; /* position and pod size */
  unsigned buf_depth;            /* the router's buffer depth in use */
} chip_fast_config_t;

typedef struct chip_fast chip_fast_t;

chip_fast_t *chip_fast_new(const chip_fast_config_t *cfg, char *err, size_t errlen);
void chip_fast_free(chip_fast_t *c);
/* rst_ni low for two cycles: what chip_top resets goes back to its reset value. */
void chip_fast_reset(chip_fast_t *c);
void chip_fast_set_slice(chip_fast_t *c, uint32_t slice);
/* n cycles of host writes into a queue's command memory (idle inputs otherwise). */
int chip_fast_load(chip_fast_t *c, unsigned queue, const uint32_t *cmds, size_t n);
/* start_i and abort_i for the next step. */
void chip_fast_start(chip_fast_t *c, unsigned mask, const uint32_t len[CHIP_MAX_QUEUES]);
void chip_fast_abort(chip_fast_t *c, unsigned mask);
/* The HBM request core k's port shows this cycle. */
bool chip_fast_hbm_request(chip_fast_t *c, unsigned k, bool *write, uint32_t *addr, uint32_t *bytes,
                           const uint32_t **data);
/* One cycle with each core's HBM port's ready flag and answer (ready and answer may be NULL:
 * none; answer[k] NULL: none for core k) and the network inputs in chip_fast_net_in; obs (may
 * be NULL) gets the cycle's visible events. 0, or -1 when memory runs out (the chip cannot
 * go on; chip_fast_error says so). */
int chip_fast_step(chip_fast_t *c, const bool *hbm_ready, const uint32_t *const *answer, chip_obs_t *obs);

/* The network ports: the flits arriving on the four links (+X -X +Y -Y) and the credits (bit
 * d * 2 + v) for the next step; the flits and credits the last step registered on them. */
/* (in_hi, out_hi: wide flits' other words, looked at only when the chip's flits are wide) */
void chip_fast_net_in(chip_fast_t *c, const noc_flit_t in[4], const noc_wide_t in_hi[4], uint8_t credits);
void chip_fast_net_out(const chip_fast_t *c, noc_flit_t out[4], noc_wide_t out_hi[4], uint8_t *credits);

/* Status as chip_top's ports show it. */
void chip_fast_queue(const chip_fast_t *c, unsigned q, bool *running, bool *halted, unsigned *error, unsigned *pc,
                     unsigned *opcode);
uint32_t chip_fast_sem(const chip_fast_t *c, unsigned idx);
void chip_fast_counters(const chip_fast_t *c, uint64_t cnt[CHIP_OBS_COUNTERS]);
bool chip_fast_mxu_error(const chip_fast_t *c);
bool chip_fast_idle(const chip_fast_t *c);
unsigned chip_fast_occupancy(const chip_fast_t *c);
void chip_fast_router_flits(const chip_fast_t *c, uint32_t flits[5]);
uint32_t chip_fast_slice_drops(const chip_fast_t *c);
/* Why the model stopped (out of memory), or NULL. */
const char *chip_fast_error(const chip_fast_t *c);

/* Event-driven time: the cycles from now in which nothing can change if no flit or credit
 * arrives and no HBM answer comes (0: this cycle may; UINT64_MAX: none until an input does),
 * and skipping them (the counters move as the skipped cycles would move them). */
uint64_t chip_fast_quiet_for(chip_fast_t *c);
void chip_fast_skip(chip_fast_t *c, uint64_t n);
/* The host reads n VMEM lines from `line` (cols words each): 0, or -1 outside VMEM. */
int chip_fast_vmem_read(const chip_fast_t *c, uint32_t line, uint32_t n, uint32_t *dst);
/* Bytes of memory pages the chip holds (VMEM, accumulator, command memories). */
size_t chip_fast_memory(const chip_fast_t *c);

#endif
