/*
 * cmdq_fast: one command queue of the fast chip (chip_fast.h), mirroring rtl/chip_cmdq.sv:
 * the command memory the host writes (with the reserved-bit flag made at the write), the
 * program counter and length, the checks in the RTL's order, and the issue, wait, signal and
 * fence handshakes. The chip evaluates a queue in two halves like the RTL's combinational and
 * clocked parts: cmdq_fast_decode (what the queue shows this cycle) and cmdq_fast_commit (the
 * clock edge). Shares no code with the golden command checker (csim/golden/cmd_golden.c).
 */
#ifndef FAST_CMDQ_FAST_H
#define FAST_CMDQ_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "fw/isa.h"
#include "util/paged.h"

/* What the checks compare commands with. */
typedef struct {
  chip_geometry_t geo;
  uint32_t hbm_bytes;          /* hbm_bytes_i */
  unsigned size_x, size_y;     /* the pod, for remote DMA */
} cmdq_fast_limits_t;

typedef struct {
  uint32_t w[ISA_CMD_WORDS];
  uint32_t reserved_set;       /* a bit no field names is set (mem_rsvd) */
} cmdq_fast_cmd_t;

typedef struct {
  const uint32_t *cmd;         /* the command at pc */
  uint32_t op;
  uint8_t err;                 /* the check's error, ISA_ERR_NONE when it passes (or not running) */
  bool ok;                     /* running and no error: the command acts */
  bool issue_valid, sem_wait;
  unsigned sem_idx;
  uint32_t sem_value;
} cmdq_fast_view_t;

typedef struct {
  bool is_dma;
  paged_t mem;                 /* queue_depth commands, allocated as written */
  bool running, halted;
  uint8_t error;
  uint32_t pc, len, depth;
  cmdq_fast_view_t view;       /* the last decode, kept while nothing it depends on changes */
  bool view_valid;
} cmdq_fast_t;


int cmdq_fast_init(cmdq_fast_t *q, bool is_dma, uint32_t depth);
void cmdq_fast_free(cmdq_fast_t *q);
void cmdq_fast_reset(cmdq_fast_t *q);
/* The queue this cycle (chip_cmdq's combinational outputs); a decode is kept until the queue
 * moves or its memory is written (a queue waiting at a command decodes it once). */
void cmdq_fast_decode(cmdq_fast_t *q, const cmdq_fast_limits_t *lim, cmdq_fast_view_t *v);
/* Whether the command may move on this cycle (the RTL's advance), given the chip's answers. */
bool cmdq_fast_advance(const cmdq_fast_view_t *v, bool drained, bool sem_grant, bool signal_ready, bool issue_ready);
/* The clock edge: abort, start (with the program's length), or the command's own effect. */
void cmdq_fast_commit(cmdq_fast_t *q, const cmdq_fast_view_t *v, bool abort, bool start, uint32_t start_len,
                      bool advance);
/* A host write into the command memory at this edge. 0, or -1 without memory. */
int cmdq_fast_write(cmdq_fast_t *q, uint32_t addr, const uint32_t cmd[ISA_CMD_WORDS]);

#endif
