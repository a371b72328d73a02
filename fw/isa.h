/*
 * isa: the chip's command format as C sees it (docs/isa.md), made from the one table in
 * fw/isa.def: opcodes, command fields, error codes, queues and their start masks, VEC
 * operations, DMA kinds, semaphore conventions; names for reports; field access. The
 * firmware HAL (fw/hal.h) encodes commands with it, the host (csim/chip/chip.c) names
 * what a queue stopped at, and the RTL package chip_isa_pkg is generated from the same
 * table, so the three cannot drift.
 */
#ifndef FW_ISA_H
#define FW_ISA_H

#include <stdbool.h>
#include <stdint.h>

#define ISA_CONST(name, value, doc) ISA_##name = (value),
enum isa_const {
#include "fw/isa.def"
};

/* A built chip's sizes, as firmware must know them (one per MXU size in the build: the
 * Makefile's CHIP_SIZES; csim/vmodel/chip_top.h lists them). Lines of VMEM are 4 * cols
 * bytes. */
typedef struct {
  unsigned rows, cols;    /* the MXU */
  unsigned acc_depth;     /* accumulator rows */
  unsigned vmem_lines;    /* VMEM lines */
  unsigned queue_depth;   /* commands per queue */
  unsigned mxus;          /* MXU units of each core (the MXU field's range; 0 reads as 1) */
  unsigned cores;         /* cores (each its queues, VMEM, MXUs; the RDMA core field's range; 0 reads as 1) */
  unsigned flit_words;    /* 64-bit words an ICI flit carries (0 reads as 1: the RTL's 64-bit flits) */
} chip_geometry_t;

/* Queues, and their bits in a start mask (chip_run, pod_run). */
#define ISA_QUEUE(name, index, doc) ISA_QUEUE_##name = (index),
typedef enum {
#include "fw/isa.def"
  ISA_NUM_QUEUES
} isa_queue_t;
#define ISA_QMASK(q) (1u << (q))
#define ISA_QMASK_COMPUTE ISA_QMASK(ISA_QUEUE_COMPUTE)
#define ISA_QMASK_DMA ISA_QMASK(ISA_QUEUE_DMA)
#define ISA_QMASK_ALL ((1u << ISA_NUM_QUEUES) - 1)

#define ISA_OP(name, code, queues, doc) ISA_OP_##name = (code),
typedef enum {
#include "fw/isa.def"
} isa_opcode_t;

#define ISA_ERR(name, code, doc) ISA_ERR_##name = (code),
typedef enum {
#include "fw/isa.def"
} isa_error_t;

#define ISA_VEC(name, code, operands, reduces, doc) ISA_VEC_##name = (code),
typedef enum {
#include "fw/isa.def"
  ISA_NUM_VEC_OPS
} isa_vec_op_t;

#define ISA_DMA_KIND(name, code, doc) ISA_DMA_##name = (code),
typedef enum {
#include "fw/isa.def"
  ISA_NUM_DMA_KINDS
} isa_dma_kind_t;

/* Field layout: ISA_<OP>_<field>_{WORD,LSB,WIDTH}; use ISA_GET / ISA_PUT. */
#define ISA_FIELD(op, name, word, lsb, width, doc) \
  ISA_##op##_##name##_WORD = (word), ISA_##op##_##name##_LSB = (lsb), ISA_##op##_##name##_WIDTH = (width),
enum isa_field_layout {
#include "fw/isa.def"
  ISA_OPCODE_WORD = 0, ISA_OPCODE_LSB = 0, ISA_OPCODE_WIDTH = 8
};

static inline uint32_t isa_field_mask(unsigned width) { return width >= 32 ? 0xFFFFFFFFu : (1u << width) - 1; }
static inline uint32_t isa_get(const uint32_t *cmd, unsigned word, unsigned lsb, unsigned width) {
  return (cmd[word] >> lsb) & isa_field_mask(width);
}
static inline void isa_put(uint32_t *cmd, unsigned word, unsigned lsb, unsigned width, uint32_t v) {
  cmd[word] = (cmd[word] & ~(isa_field_mask(width) << lsb)) | (v & isa_field_mask(width)) << lsb;
}
/* Field `name` of command `op` in the ISA_CMD_WORDS words at cmd: ISA_GET(cmd, DMA, rows). */
#define ISA_GET(cmd, op, name) isa_get((cmd), ISA_##op##_##name##_WORD, ISA_##op##_##name##_LSB, ISA_##op##_##name##_WIDTH)
#define ISA_PUT(cmd, op, name, v) \
  isa_put((cmd), ISA_##op##_##name##_WORD, ISA_##op##_##name##_LSB, ISA_##op##_##name##_WIDTH, (v))
static inline uint32_t isa_opcode(const uint32_t *cmd) { return isa_get(cmd, 0, ISA_OPCODE_LSB, ISA_OPCODE_WIDTH); }

/* The opcode's name ("SEM_WAIT"), or NULL when it is not an opcode. */
/* The MXU an MXU_LOAD, MXU_MATMUL or MXU_STORE names; 0 for any other command. */
static inline unsigned isa_mxu(const uint32_t *cmd) {
  switch (isa_opcode(cmd)) {
    case ISA_OP_MXU_LOAD: return ISA_GET(cmd, MXU_LOAD, mxu);
    case ISA_OP_MXU_MATMUL: return ISA_GET(cmd, MXU_MATMUL, mxu);
    case ISA_OP_MXU_STORE: return ISA_GET(cmd, MXU_STORE, mxu);
    default: return 0;
  }
}
/* MXU units of a geometry (0 in an old initialiser means 1). */
static inline unsigned isa_geometry_mxus(const chip_geometry_t *g) { return g->mxus ? g->mxus : 1; }
static inline unsigned isa_geometry_cores(const chip_geometry_t *g) { return g->cores ? g->cores : 1; }
static inline unsigned isa_geometry_flit_words(const chip_geometry_t *g) { return g->flit_words ? g->flit_words : 1; }

static inline const char *isa_opcode_name(uint32_t op) {
  switch (op) {
#define ISA_OP(name, code, queues, doc) case code: return #name;
#include "fw/isa.def"
    default: return 0;
  }
}

/* The error code's meaning, or NULL when it is not one. */
static inline const char *isa_error_name(unsigned code) {
  switch (code) {
#define ISA_ERR(name, code, doc) case code: return doc;
#include "fw/isa.def"
    default: return 0;
  }
}

/* The VEC operation's name ("TO_BF16"), or NULL. */
static inline const char *isa_vec_op_name(uint32_t op) {
  switch (op) {
#define ISA_VEC(name, code, operands, reduces, doc) case code: return #name;
#include "fw/isa.def"
    default: return 0;
  }
}

/* The operands a VEC operation reads: 2 (a and b) or 1 (a; b is ignored and not checked). 0
 * for an unknown operation. */
static inline unsigned isa_vec_operands(uint32_t op) {
  switch (op) {
#define ISA_VEC(name, code, operands, reduces, doc) case code: return operands;
#include "fw/isa.def"
    default: return 0;
  }
}

/* Whether a VEC operation folds its rows lines into one destination line (SUM_LINES,
 * MAX_LINES): then dst names one line. */
static inline bool isa_vec_reduces_lines(uint32_t op) {
  switch (op) {
#define ISA_VEC(name, code, operands, reduces, doc) case code: return reduces;
#include "fw/isa.def"
    default: return false;
  }
}

/* The bits of word `word` that command `op` defines (its opcode and fields); the others are
 * reserved. 0 for an unknown opcode. */
static inline uint32_t isa_defined_bits(uint32_t op, unsigned word) {
  if (!isa_opcode_name(op)) return 0;
  uint32_t bits = word == 0 ? isa_field_mask(ISA_OPCODE_WIDTH) : 0;
#define ISA_FIELD(o, name, w, lsb, width, doc) \
  if (op == ISA_OP_##o && word == (w)) bits |= isa_field_mask(width) << (lsb);
#include "fw/isa.def"
  return bits;
}

/* Whether command `op` may run on queue q (the command processor's ERR_QUEUE check). */
static inline bool isa_op_allowed(uint32_t op, isa_queue_t q) {
  enum { ISA_ON_BOTH = 3, ISA_ON_COMPUTE = 1 << ISA_QUEUE_COMPUTE, ISA_ON_DMA = 1 << ISA_QUEUE_DMA };
  switch (op) {
#define ISA_OP(name, code, queues, doc) case code: return (ISA_ON_##queues >> q) & 1;
#include "fw/isa.def"
    default: return false;
  }
}

/* Lines per remote-DMA packet on a chip of `cols` MXU columns (a line is cols/2 flits of 64
 * bits): RDMA_PACKET_LINES, or RDMA_SHORT_PACKET_LINES where those and the header flits
 * would exceed the length field, else one (the same rule as rtl/chip_rdma.sv PktLines). */
static inline unsigned isa_rdma_packet_lines_wide(unsigned cols, unsigned flit_words);
static inline unsigned isa_rdma_packet_lines(unsigned cols) { return isa_rdma_packet_lines_wide(cols, 1); }

/* The same with flits of `flit_words` 64-bit words (a line is cols / 2 / flit_words flits;
 * fast model only, docs/fidelity.md "ICI"). */
static inline unsigned isa_rdma_packet_lines_wide(unsigned cols, unsigned flit_words) {
  unsigned flits = cols / 2 ? cols / 2 : 1;
  if (flit_words > 1) flits = flits / flit_words ? flits / flit_words : 1;
  if (flits * ISA_RDMA_PACKET_LINES + ISA_RDMA_HEADER_FLITS <= ISA_RDMA_MAX_PACKET_FLITS) return ISA_RDMA_PACKET_LINES;
  if (flits * ISA_RDMA_SHORT_PACKET_LINES + ISA_RDMA_HEADER_FLITS <= ISA_RDMA_MAX_PACKET_FLITS)
    return ISA_RDMA_SHORT_PACKET_LINES;
  return 1;
}

#endif
