/* cmd_golden: see cmd_golden.h. The order of the checks is docs/isa.md's. */
#include "golden/cmd_golden.h"

#include <stdbool.h>

/* first + count lines stay inside `size` (64-bit sums: no field can wrap them) */
static bool inside(uint64_t first, uint64_t count, uint64_t size) { return first + count <= size; }

static bool bad_sem(uint32_t sem, bool none_ok) { return sem >= ISA_NUM_SEMS && !(none_ok && sem == ISA_SEM_NONE); }

static unsigned check_dma(const cmd_golden_chip_t *c, const uint32_t *cmd) {
  const uint64_t V = c->geo.vmem_lines, line_bytes = 4ull * c->geo.cols;
  const uint32_t kind = ISA_GET(cmd, DMA, kind), rows = ISA_GET(cmd, DMA, rows), bytes = ISA_GET(cmd, DMA, bytes);
  const uint32_t addr = ISA_GET(cmd, DMA, hbm_addr);
  if (bad_sem(ISA_GET(cmd, DMA, sem), true)) return ISA_ERR_SEM;
  if (rows == 0 || bytes == 0 || bytes % 4 || bytes > line_bytes ||
      (kind != ISA_DMA_HBM_TO_VMEM && kind != ISA_DMA_VMEM_TO_HBM && kind != ISA_DMA_VMEM_TO_VMEM &&
       kind != ISA_DMA_HBM_TO_VMEM_T) ||
      (kind == ISA_DMA_HBM_TO_VMEM_T && rows > c->geo.cols))
    return ISA_ERR_SIZE;
  /* a transposing DMA writes bytes/2 lines, one per element of a row */
  if (!inside(ISA_GET(cmd, DMA, line), kind == ISA_DMA_HBM_TO_VMEM_T ? bytes / 2 : rows, V)) return ISA_ERR_VMEM;
  if (kind == ISA_DMA_VMEM_TO_VMEM) return inside(addr, rows, V) ? ISA_ERR_NONE : ISA_ERR_VMEM;
  /* the last row ends at addr + (rows - 1) * stride + bytes */
  const uint64_t end = addr + (uint64_t)(rows - 1) * ISA_GET(cmd, DMA, stride) + bytes;
  return end <= c->hbm_bytes ? ISA_ERR_NONE : ISA_ERR_HBM;
}

static unsigned check_rdma(const cmd_golden_chip_t *c, const uint32_t *cmd) {
  const uint64_t V = c->geo.vmem_lines;
  const uint32_t rows = ISA_GET(cmd, RDMA, rows);
  if (bad_sem(ISA_GET(cmd, RDMA, remote_sem), true) || bad_sem(ISA_GET(cmd, RDMA, local_sem), true))
    return ISA_ERR_SEM;
  if (rows == 0) return ISA_ERR_SIZE;
  if (!inside(ISA_GET(cmd, RDMA, dst), rows, V) || !inside(ISA_GET(cmd, RDMA, src), rows, V)) return ISA_ERR_VMEM;
  const uint32_t cores = c->geo.cores ? c->geo.cores : 1;  /* a destination core the chips have */
  if (ISA_GET(cmd, RDMA, x) >= c->pod_x || ISA_GET(cmd, RDMA, y) >= c->pod_y || ISA_GET(cmd, RDMA, core) >= cores ||
      ISA_GET(cmd, RDMA, dest_reserved))
    return ISA_ERR_REMOTE;
  return ISA_ERR_NONE;
}

static unsigned check_vec(const cmd_golden_chip_t *c, const uint32_t *cmd) {
  const uint64_t V = c->geo.vmem_lines;
  const uint32_t op = ISA_GET(cmd, VEC, op), rows = ISA_GET(cmd, VEC, rows);
  const bool repeat = ISA_GET(cmd, VEC, b_repeat) != 0;  /* b is one line; binary operations only */
  if (!isa_vec_op_name(op) || (repeat && isa_vec_operands(op) != 2)) return ISA_ERR_OPCODE;
  if (rows == 0) return ISA_ERR_SIZE;
  if (!inside(ISA_GET(cmd, VEC, a), rows, V) ||
      !inside(ISA_GET(cmd, VEC, dst), isa_vec_reduces_lines(op) ? 1 : rows, V))
    return ISA_ERR_VMEM;
  if (isa_vec_operands(op) == 2 && !inside(ISA_GET(cmd, VEC, b), repeat ? 1 : rows, V)) return ISA_ERR_VMEM;
  return ISA_ERR_NONE;
}

unsigned cmd_golden_error(const cmd_golden_chip_t *c, unsigned queue, const uint32_t cmd[ISA_CMD_WORDS], uint32_t pc,
                          uint32_t len) {
  if (pc >= len || pc >= c->geo.queue_depth) return ISA_ERR_END;
  const uint32_t op = isa_opcode(cmd);
  if (!isa_opcode_name(op)) return ISA_ERR_OPCODE;
  if (!isa_op_allowed(op, (isa_queue_t)queue)) return ISA_ERR_QUEUE;
  for (unsigned w = 0; w < ISA_CMD_WORDS; w++)
    if (cmd[w] & ~isa_defined_bits(op, w)) return ISA_ERR_OPCODE;
  const uint64_t V = c->geo.vmem_lines, A = c->geo.acc_depth;
  const uint32_t mxus = c->geo.mxus ? c->geo.mxus : 1;  /* the MXU field's range, checked first */
  switch (op) {
    case ISA_OP_SEM_WAIT: return bad_sem(ISA_GET(cmd, SEM_WAIT, sem), false) ? ISA_ERR_SEM : ISA_ERR_NONE;
    case ISA_OP_SEM_SIGNAL: return bad_sem(ISA_GET(cmd, SEM_SIGNAL, sem), false) ? ISA_ERR_SEM : ISA_ERR_NONE;
    case ISA_OP_DMA: return check_dma(c, cmd);
    case ISA_OP_RDMA: return check_rdma(c, cmd);
    case ISA_OP_VEC: return check_vec(c, cmd);
    case ISA_OP_MXU_LOAD:
      if (ISA_GET(cmd, MXU_LOAD, mxu) >= mxus) return ISA_ERR_MXU;
      return inside(ISA_GET(cmd, MXU_LOAD, line), c->geo.rows, V) ? ISA_ERR_NONE : ISA_ERR_VMEM;
    case ISA_OP_MXU_MATMUL: {
      const uint32_t rows = ISA_GET(cmd, MXU_MATMUL, rows);
      if (ISA_GET(cmd, MXU_MATMUL, mxu) >= mxus) return ISA_ERR_MXU;
      if (rows == 0) return ISA_ERR_SIZE;
      if (!inside(ISA_GET(cmd, MXU_MATMUL, line), rows, V)) return ISA_ERR_VMEM;
      return inside(ISA_GET(cmd, MXU_MATMUL, acc_row), rows, A) ? ISA_ERR_NONE : ISA_ERR_ACC;
    }
    case ISA_OP_MXU_STORE: {
      const uint32_t rows = ISA_GET(cmd, MXU_STORE, rows);
      if (ISA_GET(cmd, MXU_STORE, mxu) >= mxus) return ISA_ERR_MXU;
      if (rows == 0) return ISA_ERR_SIZE;
      if (!inside(ISA_GET(cmd, MXU_STORE, acc_row), rows, A)) return ISA_ERR_ACC;
      return inside(ISA_GET(cmd, MXU_STORE, line), rows, V) ? ISA_ERR_NONE : ISA_ERR_VMEM;
    }
    default: return ISA_ERR_NONE; /* HALT, FENCE */
  }
}
