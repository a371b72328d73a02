/*
 * chip: one TPU chip as the host sees it: the Verilated chip (chip_top.h) with its HBM
 * model (hbm.h). The host loads tensors into HBM, writes command programs (built by the
 * firmware HAL, fw/hal.h) into the queues, starts them and runs the chip until it is idle,
 * with a timeout that reports which queue is stuck where.
 */
#ifndef CHIP_H
#define CHIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fw/isa.h"
#include "chip/chip_core.h"
#include "vmodel/chip_top.h"

#define CHIP_ROUTER_DEPTH 8    /* flits per router VC buffer in use */

/* Defaults, stated once: TPU v3's clock, and its HBM (900 GB/s) at that clock. */
#define CHIP_DEFAULT_CLOCK_MHZ 940
#define CHIP_DEFAULT_HBM_BYTES_PER_CYCLE 957 /* 900e9 / 940e6 */
#define CHIP_DEFAULT_HBM_LATENCY 100         /* cycles */
#define CHIP_MAX_HBM_LATENCY 10000           /* cycles: 10 us at 940 MHz, far beyond any HBM */
#define CHIP_MAX_HBM_BYTES_PER_CYCLE (1u << 20)
#define CHIP_DEFAULT_HBM_BYTES (1u << 22)
#define CHIP_MAX_HBM_BYTES (1ull << 32)             /* HBM addresses are 32 bits (docs/isa.md) */
#define CHIP_MAX_CLOCK_MHZ 100000

typedef struct {
  unsigned rows, cols;          /* MXU size (a size in chip_top_sizes()) */
  unsigned mxus;                /* MXU units of each core (0 means 1; chip_geometry_for) */
  unsigned cores;               /* cores (0 means 1): queue 2c + q is queue q of core c */
  unsigned x, y, pod_x, pod_y;  /* position in a pod (0, 0, 0, 0 for a lone chip) */
  uint64_t hbm_bytes;           /* up to 4 GiB */
  unsigned hbm_bytes_per_cycle; /* >= 1 */
  unsigned hbm_latency;         /* >= 1 cycles */
  uint64_t seed;                /* reset randomisation */
  chip_model_t model;           /* the Verilated RTL (default), the fast model, or both in lockstep */
  unsigned flit_words;          /* 64-bit words an ICI flit carries (0 means 1, the RTL's); wider: the fast
                                   model only (chip_flit_words_check; docs/fidelity.md "ICI") */
  unsigned clock_mhz;           /* the clock reports turn cycles into time and FLOPS with (0 means
                                   CHIP_DEFAULT_CLOCK_MHZ); the simulation itself counts cycles */
} chip_config_t;

typedef struct {  /* queue 2c + q: queue q of core c */
  bool running[CHIP_MAX_QUEUES], halted[CHIP_MAX_QUEUES];
  unsigned error[CHIP_MAX_QUEUES];  /* docs/isa.md error codes (isa_error_t) */
  unsigned pc[CHIP_MAX_QUEUES], opcode[CHIP_MAX_QUEUES];
  uint64_t cycles;    /* of the last chip_run */
  uint64_t dma_busy, mxu_busy, compute, weight_load, weight_stall, input_stall, mxu_idle, hbm_bytes;
  bool timed_out;
  char report[512];   /* why the run stopped, if not cleanly */
} chip_status_t;

typedef struct chip chip_t;

/* The configuration of a lone rows x cols chip with the default clock, HBM and reset seed 1. */
chip_config_t chip_config_default(unsigned rows, unsigned cols);

/* The geometry of a chip of `cores` cores of `mxus` rows x cols MXUs each: 0, or -1 with a
 * message when this build has no such chip. The Verilated RTL has the sizes built (CHIP_SIZES:
 * RxC, RxCxM for M MXUs, ...cK for K cores); the fast model takes a built RxC with any count up
 * to CHIP_MAX_MXUS MXUs and CHIP_MAX_CORES cores, each core's memories those of RxC. */
int chip_geometry_for(unsigned rows, unsigned cols, unsigned mxus, unsigned cores, chip_model_t model,
                      chip_geometry_t *g, char *err, size_t errlen);

/* 0 when a chip of rows x cols MXUs and this model can have flits of `flit_words` words (0 or 1:
 * any; more: the fast model, a power of two up to NOC_FLIT_MAX_WORDS and at most a VMEM line,
 * cols / 2 words), else -1 with a message. */
int chip_flit_words_check(unsigned flit_words, unsigned cols, chip_model_t model, char *err, size_t errlen);

chip_t *chip_new(const chip_config_t *cfg, char *err, size_t errlen);
/* A chip of a pod split over the ranks of an MPI job (dist.h, pod.c): rank `owner` simulates
 * it; on the other ranks it is a shell holding its configuration and programs. Its host
 * operations (HBM and VMEM access, programs, semaphores, memory, traces) are then collective:
 * every rank makes the same call, the owner carries it out and its answer reaches all. */
chip_t *chip_new_shared(const chip_config_t *cfg, unsigned owner, char *err, size_t errlen);
void chip_free(chip_t *c);
const chip_geometry_t *chip_geometry(const chip_t *c);
const chip_config_t *chip_config(const chip_t *c);
unsigned chip_line_bytes(const chip_t *c);

/* Host access to HBM. Returns 0, or -1 if [addr, addr+n) is outside HBM. chip_hbm_zero writes
 * zeros, and gives back the memory of every whole page in the range (hbm.h: unwritten pages
 * read as zeros): the host clears a buffer it no longer needs, so a big pod holds only what
 * is live. */
int chip_hbm_write(chip_t *c, uint64_t addr, const void *src, size_t n);
int chip_hbm_read(chip_t *c, uint64_t addr, void *dst, size_t n);
int chip_hbm_zero(chip_t *c, uint64_t addr, size_t n);
/* Direct access to HBM (a SystemC initiator's DMI, docs/systemc.md): the memory of the page
 * holding addr, *first its first address and *len its bytes (HBM_PAGE_BYTES, less for the
 * last page of a size that is not a multiple). NULL when addr is outside HBM, memory runs out
 * or the chip is another MPI rank's. The pointer stays valid until chip_hbm_zero clears the
 * whole page or chip_free. */
uint8_t *chip_hbm_direct(chip_t *c, uint64_t addr, uint64_t *first, uint64_t *len);
/* The host reads n VMEM lines from `line`: 0, or -1 when outside VMEM or when the chip's model
 * has no host path to VMEM (the Verilated RTL: DMA the lines to HBM instead). */
int chip_vmem_read(chip_t *c, uint32_t line, uint32_t n, uint32_t *dst);
/* Bytes of memory pages held for the chip's memories: its HBM's, and the model's VMEM,
 * accumulator and command memories where it pages them (the fast model; docs/scale.md). */
size_t chip_memory(chip_t *c);

/* Writes a program (n commands of ISA_CMD_WORDS words) into a queue's command memory.
 * Returns 0, or -1 with a message if it does not fit. */
int chip_load_program(chip_t *c, int queue, const uint32_t *cmds, size_t n, char *err, size_t errlen);

/* Starts the queues in `mask` (bit q = queue q) and runs until every queue has stopped
 * and every unit is idle, or `max_cycles` pass. Returns 0 when every started queue
 * halted cleanly; -1 on an error or a timeout (st->report says which queue, command and
 * semaphore). */
int chip_run(chip_t *c, unsigned mask, uint64_t max_cycles, chip_status_t *st);

/* More cycles than the loaded programs can take, however they interleave: every command's
 * longest time at this chip's HBM bandwidth and latency, summed over both queues as if
 * nothing overlapped (docs/robustness.md). A SEM_WAIT is counted as free: what it waits for
 * is another command's time, counted there. A timeout of this many cycles can only catch a
 * program that waits for ever (or a hardware defect), never a slow one. */
uint64_t chip_cycle_bound(const chip_t *c);

/* After a timeout chip_run leaves the chip ready for the next program: it aborts the queues
 * and lets the units finish what was issued (at most CHIP_DRAIN_CYCLES), else resets the chip;
 * the report says which. */
#define CHIP_DRAIN_CYCLES 1000000

/* Host-side control (docs/isa.md, "Host control"). chip_abort stops the queues in `mask`
 * before their next command (their status: error ABORTED) and runs the chip until every
 * unit has finished the work already issued: 0 when it is idle within max_cycles, else -1.
 * chip_reset puts the chip back as at power-on but for its memories (VMEM, the command
 * memories, HBM): queues, units, semaphores and router; the HBM model forgets the answers
 * it had in flight. A program cannot be loaded into a running queue (chip_load_program
 * refuses it). */
int chip_abort(chip_t *c, unsigned mask, uint64_t max_cycles);
void chip_reset(chip_t *c);
/* No queue running and no unit busy (the router may still hold flits). */
bool chip_idle(chip_t *c);

/* A run's mask for every queue of every core (a chip starts the queues it has). */
#define CHIP_QMASK_EVERY_CORE ((1u << CHIP_MAX_QUEUES) - 1)

/* The queues' state now (running, halted, error, pc, opcode; the rest of *st zero), between
 * cycles, for a host that polls (the SystemC module's status registers). */
void chip_status(chip_t *c, chip_status_t *st);

/* Semaphore idx of core 0, or idx % ISA_NUM_SEMS of core idx / ISA_NUM_SEMS. */
uint32_t chip_sem(chip_t *c, unsigned idx);

/* ---- for pods (csim/pod/pod.c): the chip stepped one cycle at a time among others */
/* The flits and credits arriving on the chip's links this cycle (for the next chip_tick), and
 * what the last chip_tick sent (chip_core.h). */
void chip_net_in(chip_t *c, const chip_net_t *in);
void chip_net_out(chip_t *c, chip_net_t *out);
/* Starts queues (mask), remembering the counters, for chip_finish. */
void chip_begin(chip_t *c, unsigned mask);
void chip_tick(chip_t *c);
/* Asks the queues in mask to stop at the next chip_tick (for pods: pod_run's recovery). */
void chip_request_abort(chip_t *c, unsigned mask);
/* Flits each router output port has sent since reset: local (ejected), +X, -X, +Y, -Y. */
void chip_router_flits(chip_t *c, uint32_t flits[5]);
/* No queue running, no unit busy, no flit in the router. */
bool chip_quiet(chip_t *c);
/* Reads the status after a run that chip_begin started; 0 if the started queues halted. */
int chip_finish(chip_t *c, bool timed_out, chip_status_t *st);
int chip_trace(chip_t *c, const char *path, char *err, size_t errlen);
/* Ends the chip's trace (if any), flushing it; the file stays. */
void chip_trace_close(chip_t *c);
uint64_t chip_cycle(const chip_t *c);
/* CHIP_MODEL_CHECK: the first difference between the RTL and the fast model (cycle, unit,
 * port or address, both values), or NULL while they agree. Runs stop at it. */
const char *chip_divergence(const chip_t *c);

/* Event-driven time: the cycles from now in which the chip cannot change anything unless a flit
 * or credit arrives (0: it must be stepped now; UINT64_MAX: not before an input), its HBM
 * answers included; and skipping n <= that many cycles (the counters move as they would). A
 * Verilated chip always says 0. */
uint64_t chip_quiet_for(chip_t *c);
void chip_skip(chip_t *c, uint64_t n);

/* The chip's slice (docs/collectives.md): its router routes inside the rectangle and drops
 * (and counts) packets injected here for chips outside it. w = 0: no slice, the pod. */
void chip_set_slice(chip_t *c, unsigned x0, unsigned y0, unsigned w, unsigned h);
/* Packets this chip's router dropped for leaving its slice. */
uint32_t chip_slice_drops(chip_t *c);

/* ---- for profiles (csim/profile/profile.h): an observer of every cycle the chip runs. tick gets
 * what the chip shows in a stepped cycle (chip_obs.h: the state as the cycle starts and its
 * events) and the HBM bytes moved so far; skip gets a stretch of n cycles the chip jumped over
 * (chip_skip: nothing changes in them but counters), with the queues' state in it and the
 * counters before and after. Both are called on the thread that steps the chip. */
typedef struct {
  void (*tick)(void *ctx, uint64_t cycle, const chip_obs_t *obs, uint64_t hbm_bytes);
  void (*skip)(void *ctx, uint64_t cycle, uint64_t n, const chip_core_status_t *st,
               const uint64_t before[CHIP_OBS_COUNTERS], const uint64_t after[CHIP_OBS_COUNTERS]);
} chip_observer_t;
/* Attaches an observer (NULL detaches): a chip with one is stepped with its obs filled, which
 * costs a little host time. Not for a shell of another MPI rank's chip. */
void chip_set_observer(chip_t *c, const chip_observer_t *ops, void *ctx);
/* NULL, or called about every 65,536 cycles of a chip_run with the cycles run so far (the
 * commands print progress on stderr from it, as pod_config_t.progress for pods). */
void chip_set_progress(chip_t *c, void (*progress)(void *ctx, uint64_t cycles), void *ctx);
/* The program loaded on a queue (n commands of ISA_CMD_WORDS words), for reports; NULL if none. */
const uint32_t *chip_program(const chip_t *c, unsigned queue, size_t *n);
/* The counters now (chip_obs.h order) and the queues' state. */
void chip_counters(chip_t *c, uint64_t cnt[CHIP_OBS_COUNTERS]);
void chip_core_state(chip_t *c, chip_core_status_t *st);

#endif
