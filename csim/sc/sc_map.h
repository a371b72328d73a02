/*
 * sc_map: the memory map of the SystemC chip and slice modules (docs/systemc.md, "Memory
 * map"): the byte addresses a TLM-2.0 initiator uses on a chip's target socket (HBM, the
 * command windows, the registers) and on a slice's (a window per chip and the slice's own
 * registers). Shared by the modules (sc_chip, sc_slice) and by the host model of the example
 * (tpusim_sc_main.cpp), which reaches the chips through these addresses only.
 */
#ifndef SC_SC_MAP_H
#define SC_SC_MAP_H

#include <cstdint>

namespace tpu_sc {

/* ---- a chip's target socket */
constexpr uint64_t HBM_BASE = 0;                       /* HBM: [0, its size), up to 4 GiB; DMI */
constexpr uint64_t CMD_BASE = 0x100000000ull;          /* queue q's command memory at CMD_BASE + q * CMD_STRIDE */
constexpr uint64_t CMD_STRIDE = 0x1000000ull;          /*   (queue_depth commands of CMD_WORDS 32-bit words) */
constexpr uint64_t REG_BASE = 0x200000000ull;          /* the registers, 32-bit words */
constexpr uint64_t REG_SIZE = 0x1000;

/* Register offsets from REG_BASE (R: read-only, W: write-only, RW). */
enum : uint32_t {
  REG_ID = 0x000,          /* R  CHIP_ID */
  REG_ROWS = 0x004,        /* R  MXU rows */
  REG_COLS = 0x008,        /* R  MXU columns (a VMEM line is 4 * cols bytes) */
  REG_MXUS = 0x00C,        /* R  MXUs per core */
  REG_CORES = 0x010,       /* R  cores */
  REG_QUEUES = 0x014,      /* R  queues (2 per core: queue 2c is core c's compute queue, 2c + 1 its DMA queue) */
  REG_QUEUE_DEPTH = 0x018, /* R  commands per queue */
  REG_CMD_WORDS = 0x01C,   /* R  32-bit words per command */
  REG_HBM_BYTES_LO = 0x020, REG_HBM_BYTES_HI = 0x024, /* R */
  REG_VMEM_LINES = 0x028,  /* R */
  REG_CLOCK_MHZ = 0x02C,   /* R  the clock the module was built for */
  REG_POS = 0x030,         /* R  x | y << 8 | pod_x << 16 | pod_y << 24 */
  REG_ACC_DEPTH = 0x034,   /* R  accumulator rows of each MXU */
  REG_START = 0x040,       /* W  queue mask: start them at the next rising clock edge */
  REG_ABORT = 0x044,       /* W  queue mask: stop them before their next command (error ABORTED) */
  REG_SLICE = 0x048,       /* RW x0 | y0 << 8 | w << 16 | h << 24: the router's slice (0: none) */
  REG_TIMEOUT = 0x04C,     /* RW a run's cycle limit (0: the default, docs/systemc.md) */
  REG_STATUS = 0x050,      /* R  STATUS_* bits */
  REG_IRQ = 0x054,         /* RW 1 while the done interrupt is raised; write 1 to clear it */
  REG_RUN_CYCLES_LO = 0x058, REG_RUN_CYCLES_HI = 0x05C, /* R  cycles of the last run */
  REG_CYCLE_LO = 0x060, REG_CYCLE_HI = 0x064,           /* R  cycles the chip has been clocked */
  REG_QUEUE = 0x100,       /* queue q's block at REG_QUEUE + q * REG_QUEUE_STRIDE: */
  REG_QUEUE_STRIDE = 0x10,
  REG_Q_STATE = 0x0,       /* R  bit 0 running, bit 1 halted, bits 8..15 the error code (docs/isa.md) */
  REG_Q_PC = 0x4,          /* R  the command it is at */
  REG_Q_OPCODE = 0x8,      /* R  that command's opcode */
  REG_Q_PROG_LEN = 0xC,    /* RW write n: load commands 0..n-1 of the queue's command window as its program */
  REG_SEM = 0x200,         /* R  semaphore i (core i / ISA_NUM_SEMS's semaphore i % ISA_NUM_SEMS) at REG_SEM + 4 i */
  REG_COUNTERS = 0x300,    /* R  the last run's counters, 64 bits each (lo, hi): COUNTER_* */
  REG_REPORT = 0x400,      /* R  the last run's report, a NUL-terminated string (any length and alignment) */
  REG_REPORT_BYTES = 0x200,
};
enum : uint32_t {
  STATUS_BUSY = 1u << 0,      /* a run is pending or in progress */
  STATUS_DONE = 1u << 1,      /* a run has ended since the last start */
  STATUS_FAILED = 1u << 2,    /* the last run ended with an error (REG_REPORT says which) */
  STATUS_TIMED_OUT = 1u << 3, /* ... by its time-out */
  STATUS_IDLE = 1u << 4,      /* no queue running, no unit busy */
};
enum : uint32_t {
  COUNTER_DMA_BUSY, COUNTER_MXU_BUSY, COUNTER_COMPUTE, COUNTER_WEIGHT_LOAD, COUNTER_WEIGHT_STALL,
  COUNTER_INPUT_STALL, COUNTER_MXU_IDLE, COUNTER_HBM_BYTES, COUNTERS
};
constexpr uint32_t CHIP_ID = 0x54505543;  /* "TPUC" */

/* ---- a slice's target socket: chip (x, y) of a W x H slice at (y * W + x) * CHIP_WINDOW, its
 * map as above; the slice's registers at SLICE_REG_BASE. */
constexpr uint64_t CHIP_WINDOW = 1ull << 36;
constexpr uint64_t SLICE_REG_BASE = 1ull << 56;
enum : uint32_t {
  SREG_ID = 0x00,           /* R  SLICE_ID */
  SREG_SIZE = 0x04,         /* R  w | h << 8 */
  SREG_LINK_LATENCY = 0x08, /* R */
  SREG_START = 0x10,        /* W  queue mask: every chip's START at the same rising edge */
  SREG_ABORT = 0x14,        /* W  queue mask: every chip's ABORT */
  SREG_STATUS = 0x18,       /* R  STATUS_BUSY, STATUS_DONE, STATUS_FAILED (any chip), STATUS_TIMED_OUT */
  SREG_IRQ = 0x1C,          /* RW 1 while the slice's done interrupt is raised; write 1 to clear it */
  SREG_RUN_CYCLES_LO = 0x20, SREG_RUN_CYCLES_HI = 0x24, /* R  the last run: first start to the slice quiet */
};
constexpr uint32_t SLICE_ID = 0x54505553;  /* "TPUS" */
constexpr uint64_t SLICE_REG_SIZE = 0x100;

}  // namespace tpu_sc

#endif
