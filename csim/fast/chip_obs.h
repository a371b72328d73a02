/*
 * chip_obs: what can be seen of a chip in one cycle (docs/scale.md, "Lockstep"): the
 * registered state as the cycle starts and the events of the cycle, exactly what
 * rtl/chip_top.sv shows on its status, HBM, counter and obs_* ports (read there by
 * csim/chip/chip_core_rtl.c) and what the fast chip (chip_fast.h) reports for the same
 * cycle. `--check` compares the two every cycle (csim/chip/chip_check.c).
 */
#ifndef FAST_CHIP_OBS_H
#define FAST_CHIP_OBS_H

#include <stdbool.h>
#include <stdint.h>

#include "fast/noc_fast.h"
#include "fw/isa.h"

enum {
  CHIP_OBS_ROUTER_PORTS = 4 + ISA_NUM_RDMA_ENGINES, /* local 0, +X -X +Y -Y, local 5..7 */
  CHIP_MAX_MXUS = 4,                                /* MXU units of a core the models take */
  CHIP_MAX_CORES = 2,                               /* cores of a chip the models take */
  CHIP_MAX_QUEUES = ISA_NUM_QUEUES * CHIP_MAX_CORES, /* queue 2c + q: queue q of core c */
  /* the line writers: DMA, MXU 0's stores, vector unit, then MXU m's stores at 2 + m */
  CHIP_OBS_VMEM_PORTS = 2 + CHIP_MAX_MXUS
};
/* The VMEM line writer that is MXU m's store port. */
static inline unsigned chip_obs_store_port(unsigned m) { return m == 0 ? 1 : 2 + m; }
/* The port layouts below come from rtl/chip_obs.def, the table the RTL package chip_obs_pkg
 * is generated from. obs_busy_o's fields (a word per core; the remote-DMA engines' are the
 * chip's, in every word): CHIP_BUSY_LSB_<field>, CHIP_BUSY_WIDTH_<field>. */
enum {
#define CHIP_BUSY_FIELD(name, lsb, width, doc) CHIP_BUSY_LSB_##name = lsb, CHIP_BUSY_WIDTH_##name = width,
#include "rtl/chip_obs.def"
#define CHIP_OBS_WORD(name, bits, doc) CHIP_OBS_##name##_BITS = bits,
#include "rtl/chip_obs.def"
};
/* (the names the models use) */
enum {
  CHIP_BUSY_DMA = 1u << CHIP_BUSY_LSB_DMA, CHIP_BUSY_MXU = 1u << CHIP_BUSY_LSB_MXU,
  CHIP_BUSY_VEC = 1u << CHIP_BUSY_LSB_VEC, CHIP_MXU_DRAINED = 1u << CHIP_BUSY_LSB_MXU_DRAINED,
  CHIP_BUSY_RDMA_SHIFT = CHIP_BUSY_LSB_RDMA, CHIP_SENDING_RDMA_SHIFT = CHIP_BUSY_LSB_SENDING,
  CHIP_FENCES_SHIFT = CHIP_BUSY_LSB_FENCES
};
/* obs_rdma_waddr_o's fields: CHIP_RDMA_WADDR_LSB_<field>, CHIP_RDMA_WADDR_WIDTH_<field>. */
enum {
#define CHIP_RDMA_WADDR_FIELD(name, lsb, width, doc) CHIP_RDMA_WADDR_LSB_##name = lsb, CHIP_RDMA_WADDR_WIDTH_##name = width,
#include "rtl/chip_obs.def"
};
/* The HBM request's fields (chip_top's hbm_req_<field>_o ports, a field per port, core k's at
 * [k * width]): CHIP_HBM_REQ_WIDTH_<field>. */
enum {
#define CHIP_HBM_REQ_FIELD(name, lsb, width, doc) CHIP_HBM_REQ_WIDTH_##name = width,
#include "rtl/chip_obs.def"
};
/* Field `name` of a word whose fields are PREFIX_LSB_name and PREFIX_WIDTH_name. */
#define CHIP_OBS_FIELD(word, prefix, name) \
  (((word) >> prefix##_LSB_##name) & ((1ull << prefix##_WIDTH_##name) - 1))
/* Counter order (chip_top's cnt_* ports); summed over the cores, the MXU's over the MXUs
 * (MXU-cycles). */
enum {
#define CHIP_COUNTER(name, doc) CHIP_CNT_##name,
#include "rtl/chip_obs.def"
  CHIP_OBS_COUNTERS
};

/* What one core shows (chip_core's obs_* ports): registered state as the cycle starts, then
 * the cycle's events. */
typedef struct {
  /* (what a profile reads every cycle first, on one cache line) */
  bool running[ISA_NUM_QUEUES], halted[ISA_NUM_QUEUES];
  uint8_t error[ISA_NUM_QUEUES];
  uint32_t pc[ISA_NUM_QUEUES];
  uint16_t busy;          /* CHIP_BUSY_* (CHIP_BUSY_MXU: any MXU; CHIP_MXU_DRAINED: every one) */
  uint8_t mxu_busy, mxu_drained; /* bit m: MXU m busy, MXU unit m drained */
  uint8_t issue;          /* the cycle's event: bit q: queue q hands its command to a unit */
  uint32_t sem_epoch;     /* changes whenever sems does (a profile's quick look; not compared) */
  uint32_t sems[ISA_NUM_SEMS];
  uint32_t progress[CHIP_MAX_MXUS][6]; /* per MXU: loads, matmuls, stores: issued then done each */
  uint32_t vec_progress[2];            /* VECs issued, done */
  uint8_t acc_we;         /* bit m: MXU m wrote an accumulator row at the last edge */
  uint32_t acc_waddr[CHIP_MAX_MXUS];
  /* the cycle's events */
  bool hbm_req_valid, hbm_req_write;            /* the core's HBM port */
  uint32_t hbm_req_addr, hbm_req_bytes;
  const uint32_t *hbm_req_data;                 /* a line (cols words) */
  uint8_t vmem_we;                              /* bit p: line writer p (chip_obs_store_port) */
  uint32_t vmem_waddr[CHIP_OBS_VMEM_PORTS];
  const uint32_t *vmem_wdata[CHIP_OBS_VMEM_PORTS];
} chip_obs_core_t;

typedef struct {
  /* Set by the caller before a step, kept by it: a profile's view (csim/profile/profile.h). The
   * fast model then fills only the queues' running flags and pcs, semaphores, busy flags,
   * issues, counters, the RDMA write enables and the router's valid masks, and leaves the rest
   * as it was (the flits themselves included); the RTL fills everything. */
  bool lite;
  /* (the chip-wide fields a profile reads every cycle, then the cores) */
  uint8_t rdma_we;                              /* the cycle's event: bit e: engine e writes a 64-bit word */
  uint16_t rtr_in_valid, rtr_out_valid;         /* bit p: rtr_in[p] / rtr_out[p] is valid */
  uint64_t counters[CHIP_OBS_COUNTERS];
  chip_obs_core_t core[CHIP_MAX_CORES];  /* the chip's cores (the others all zero) */
  bool mxu_error;
  bool idle;
  /* the cycle's events */
  uint32_t rdma_waddr[ISA_NUM_RDMA_ENGINES];    /* core << 30 | word << 24 | line */
  uint64_t rdma_wdata[ISA_NUM_RDMA_ENGINES];
  noc_flit_t rtr_in[CHIP_OBS_ROUTER_PORTS], rtr_out[CHIP_OBS_ROUTER_PORTS];
  uint32_t rtr_credit_in, rtr_credit_out;       /* bit p * vcs + v */
} chip_obs_t;

#endif
