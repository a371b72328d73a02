/* cmdq_fast: see cmdq_fast.h. Each check is the RTL's, in its order and with its widths. */
#include "fast/cmdq_fast.h"

#include <string.h>

enum { CMD_PAGE_BYTES = 8192 };

int cmdq_fast_init(cmdq_fast_t *q, bool is_dma, uint32_t depth) {
  memset(q, 0, sizeof *q);
  q->is_dma = is_dma;
  q->depth = depth;
  return paged_init(&q->mem, depth, sizeof(cmdq_fast_cmd_t), CMD_PAGE_BYTES);
}

void cmdq_fast_free(cmdq_fast_t *q) { paged_free(&q->mem); }

void cmdq_fast_reset(cmdq_fast_t *q) {
  q->view_valid = false;
  q->running = q->halted = false;
  q->error = ISA_ERR_NONE;
  q->pc = q->len = 0;
}

/* A semaphore field: an index, or ISA_SEM_NONE where none_ok. */
static bool bad_sem(uint32_t s, bool none_ok) { return s >= ISA_NUM_SEMS && !(none_ok && s == ISA_SEM_NONE); }

static bool vec_binary(uint32_t op5) {
  return op5 == ISA_VEC_ADD || op5 == ISA_VEC_SUB || op5 == ISA_VEC_MUL || op5 == ISA_VEC_MAX ||
         op5 == ISA_VEC_RELU_GRAD || op5 == ISA_VEC_AXPY;
}

static uint8_t check_dma(const uint32_t *c, const cmdq_fast_limits_t *lim) {
  const uint64_t V = lim->geo.vmem_lines;
  const uint64_t rows = ISA_GET(c, DMA, rows), bytes = ISA_GET(c, DMA, bytes), kind = ISA_GET(c, DMA, kind);
  const uint64_t line = ISA_GET(c, DMA, line), addr = ISA_GET(c, DMA, hbm_addr), stride = ISA_GET(c, DMA, stride);
  if (bad_sem(ISA_GET(c, DMA, sem), true)) return ISA_ERR_SEM;
  if (rows == 0 || bytes == 0 || (bytes & 3) || bytes > 4ull * lim->geo.cols || kind >= ISA_NUM_DMA_KINDS ||
      (kind == ISA_DMA_HBM_TO_VMEM_T && rows > lim->geo.cols))
    return ISA_ERR_SIZE;
  if (line + (kind == ISA_DMA_HBM_TO_VMEM_T ? bytes >> 1 : rows) > V) return ISA_ERR_VMEM;
  if (kind == ISA_DMA_VMEM_TO_VMEM && addr + rows > V) return ISA_ERR_VMEM;
  /* 64-bit arithmetic that wraps as the RTL's does */
  if (kind != ISA_DMA_VMEM_TO_VMEM && addr + (rows - 1) * stride + bytes > (uint64_t)lim->hbm_bytes) return ISA_ERR_HBM;
  return ISA_ERR_NONE;
}

static uint8_t check(const uint32_t *c, uint32_t op, const cmdq_fast_limits_t *lim) {
  const uint64_t V = lim->geo.vmem_lines, A = lim->geo.acc_depth;
  switch (op) {
    case ISA_OP_SEM_WAIT:
    case ISA_OP_SEM_SIGNAL: return bad_sem(ISA_GET(c, SEM_WAIT, sem), false) ? ISA_ERR_SEM : ISA_ERR_NONE;
    case ISA_OP_DMA: return check_dma(c, lim);
    case ISA_OP_RDMA: {
      const uint64_t rows = ISA_GET(c, RDMA, rows);
      if (bad_sem(ISA_GET(c, RDMA, remote_sem), true) || bad_sem(ISA_GET(c, RDMA, local_sem), true)) return ISA_ERR_SEM;
      if (rows == 0) return ISA_ERR_SIZE;
      if ((uint64_t)ISA_GET(c, RDMA, dst) + rows > V || (uint64_t)ISA_GET(c, RDMA, src) + rows > V) return ISA_ERR_VMEM;
      if (ISA_GET(c, RDMA, x) >= lim->size_x || ISA_GET(c, RDMA, y) >= lim->size_y ||
          ISA_GET(c, RDMA, core) >= isa_geometry_cores(&lim->geo) || ISA_GET(c, RDMA, dest_reserved))
        return ISA_ERR_REMOTE;
      return ISA_ERR_NONE;
    }
    case ISA_OP_MXU_LOAD:
      if (isa_mxu(c) >= isa_geometry_mxus(&lim->geo)) return ISA_ERR_MXU;
      return (uint64_t)ISA_GET(c, MXU_LOAD, line) + lim->geo.rows > V ? ISA_ERR_VMEM : ISA_ERR_NONE;
    case ISA_OP_MXU_MATMUL: {
      const uint64_t rows = ISA_GET(c, MXU_MATMUL, rows);
      if (isa_mxu(c) >= isa_geometry_mxus(&lim->geo)) return ISA_ERR_MXU;
      if (rows == 0) return ISA_ERR_SIZE;
      if (ISA_GET(c, MXU_MATMUL, line) + rows > V) return ISA_ERR_VMEM;
      if (ISA_GET(c, MXU_MATMUL, acc_row) + rows > A) return ISA_ERR_ACC;
      return ISA_ERR_NONE;
    }
    case ISA_OP_VEC: {
      const uint64_t rows = ISA_GET(c, VEC, rows), vop = ISA_GET(c, VEC, op);
      const uint32_t op5 = (uint32_t)vop & 31;
      const bool repeat = ISA_GET(c, VEC, b_repeat) != 0;
      if (vop >= ISA_NUM_VEC_OPS || (repeat && !vec_binary(op5))) return ISA_ERR_OPCODE;
      if (rows == 0) return ISA_ERR_SIZE;
      const bool reduces = op5 == ISA_VEC_SUM_LINES || op5 == ISA_VEC_MAX_LINES;
      if (ISA_GET(c, VEC, a) + rows > V || (vec_binary(op5) && ISA_GET(c, VEC, b) + (repeat ? 1 : rows) > V) ||
          ISA_GET(c, VEC, dst) + (reduces ? 1 : rows) > V)
        return ISA_ERR_VMEM;
      return ISA_ERR_NONE;
    }
    case ISA_OP_MXU_STORE: {
      const uint64_t rows = ISA_GET(c, MXU_STORE, rows);
      if (isa_mxu(c) >= isa_geometry_mxus(&lim->geo)) return ISA_ERR_MXU;
      if (rows == 0) return ISA_ERR_SIZE;
      if (ISA_GET(c, MXU_STORE, acc_row) + rows > A) return ISA_ERR_ACC;
      if (ISA_GET(c, MXU_STORE, line) + rows > V) return ISA_ERR_VMEM;
      return ISA_ERR_NONE;
    }
    default: return ISA_ERR_NONE;  /* HALT, FENCE */
  }
}

static bool is_unit_op(uint32_t op) {
  return op == ISA_OP_DMA || op == ISA_OP_MXU_LOAD || op == ISA_OP_MXU_MATMUL || op == ISA_OP_MXU_STORE ||
         op == ISA_OP_VEC || op == ISA_OP_RDMA;
}

void cmdq_fast_decode(cmdq_fast_t *q, const cmdq_fast_limits_t *lim, cmdq_fast_view_t *v) {
  if (q->view_valid) {
    *v = q->view;
    return;
  }
  const cmdq_fast_cmd_t *c = paged_read(&q->mem, q->pc);
  const isa_queue_t self = q->is_dma ? ISA_QUEUE_DMA : ISA_QUEUE_COMPUTE;
  v->cmd = c->w;
  v->op = isa_opcode(c->w);
  v->err = ISA_ERR_NONE;
  if (q->running) {
    if (q->pc >= q->len) v->err = ISA_ERR_END;
    else if (!isa_opcode_name(v->op)) v->err = ISA_ERR_OPCODE;
    else if (!isa_op_allowed(v->op, self)) v->err = ISA_ERR_QUEUE;
    else if (c->reserved_set) v->err = ISA_ERR_OPCODE;
    else v->err = check(c->w, v->op, lim);
  }
  v->ok = q->running && v->err == ISA_ERR_NONE;
  v->issue_valid = v->ok && is_unit_op(v->op);
  v->sem_wait = v->ok && v->op == ISA_OP_SEM_WAIT;
  v->sem_idx = ISA_GET(c->w, SEM_WAIT, sem) & 31;
  v->sem_value = ISA_GET(c->w, SEM_WAIT, value);
  q->view = *v;
  q->view_valid = true;
}

bool cmdq_fast_advance(const cmdq_fast_view_t *v, bool drained, bool sem_grant, bool signal_ready, bool issue_ready) {
  if (!v->ok) return false;
  switch (v->op) {
    case ISA_OP_FENCE: return drained;
    case ISA_OP_SEM_WAIT: return sem_grant;
    case ISA_OP_SEM_SIGNAL: return signal_ready;
    case ISA_OP_HALT: return false;
    default: return issue_ready;
  }
}

void cmdq_fast_commit(cmdq_fast_t *q, const cmdq_fast_view_t *v, bool abort, bool start, uint32_t start_len,
                      bool advance) {
  if (abort || start || (q->running && (v->err != ISA_ERR_NONE || v->op == ISA_OP_HALT || advance)))
    q->view_valid = false; /* the queue moves: decode again */
  if (abort) {
    if (q->running) {
      q->running = false;
      q->error = ISA_ERR_ABORTED;
    }
  } else if (start) {
    q->running = true;
    q->halted = false;
    q->error = ISA_ERR_NONE;
    q->pc = 0;
    q->len = start_len;
  } else if (q->running) {
    if (v->err != ISA_ERR_NONE) {
      q->running = false;
      q->error = v->err;
    } else if (v->op == ISA_OP_HALT) {
      q->running = false;
      q->halted = true;
    } else if (advance) {
      if (q->pc == q->depth - 1) {
        q->running = false;  /* past the end of the command memory (and so of the program) */
        q->error = ISA_ERR_END;
      } else {
        q->pc++;
      }
    }
  }
}

int cmdq_fast_write(cmdq_fast_t *q, uint32_t addr, const uint32_t cmd[ISA_CMD_WORDS]) {
  cmdq_fast_cmd_t *c = paged_write(&q->mem, addr & (q->depth - 1));
  if (!c) return -1;
  q->view_valid = false;
  memcpy(c->w, cmd, sizeof c->w);
  c->reserved_set = 0;
  for (unsigned w = 0; w < ISA_CMD_WORDS; w++) c->reserved_set |= cmd[w] & ~isa_defined_bits(isa_opcode(cmd), w);
  return 0;
}
