/* kernels: see kernels.h. */
#include "fw/kernels.h"

#include <stdio.h>

#include "fw/fw_util.h"

enum {
  SEM_IN_READY = FW_SEMS_STREAM, SEM_IN_FREE = SEM_IN_READY + 2, SEM_OUT_READY = SEM_IN_FREE + 2,
  SEM_OUT_FREE = SEM_OUT_READY + 1, SEM_DONE = SEM_OUT_FREE + 2
};


/* Chunk c of a stream of `bytes` bytes in lines of `line` bytes, `chunk_lines` lines a chunk:
 * full lines, then the last line's bytes (0 if none). */
typedef struct {
  uint32_t first_byte, full_lines, tail_bytes;
} chunk_t;

static chunk_t chunk_of(uint32_t bytes, uint32_t line, uint32_t chunk_lines, uint32_t c) {
  chunk_t k;
  k.first_byte = c * chunk_lines * line;
  uint32_t left = bytes - k.first_byte, span = fw_min_u32(left, chunk_lines * line);
  k.full_lines = span / line;
  k.tail_bytes = span % line;
  return k;
}

/* HBM -> VMEM of one chunk; the last DMA adds 1 to `sem`. */
static void load_chunk(fw_prog_t *dq, uint32_t base, uint32_t line, chunk_t k, uint32_t vline, unsigned sem) {
  if (k.full_lines) fw_dma_hbm_to_vmem(dq, k.tail_bytes ? ISA_SEM_NONE : sem, 1, base + k.first_byte, line, vline, k.full_lines, line);
  if (k.tail_bytes) fw_dma_hbm_to_vmem(dq, sem, 1, base + k.first_byte + k.full_lines * line, line, vline + k.full_lines, 1, k.tail_bytes);
}

static void store_chunk(fw_prog_t *dq, uint32_t base, uint32_t line, chunk_t k, uint32_t vline, unsigned sem) {
  if (k.full_lines) fw_dma_vmem_to_hbm(dq, k.tail_bytes ? ISA_SEM_NONE : sem, 1, vline, base + k.first_byte, line, k.full_lines, line);
  if (k.tail_bytes) fw_dma_vmem_to_hbm(dq, sem, 1, vline + k.full_lines, base + k.first_byte + k.full_lines * line, line, 1, k.tail_bytes);
}

int fw_elementwise(const chip_geometry_t *chip, isa_vec_op_t op, uint32_t a, uint32_t b, uint32_t out, uint32_t count,
                   uint32_t scalar, fw_prog_t *cq, fw_prog_t *dq, char *err, size_t errlen) {
  const uint32_t line = 4 * chip->cols, bytes = 4 * count;
  if (count == 0 || (a | b | out) % 4) {
    snprintf(err, errlen, "need at least one element and 4-byte aligned addresses");
    return -1;
  }
  if (op == ISA_VEC_TO_BF16 || op == ISA_VEC_TO_FP32) {
    snprintf(err, errlen, "conversions change the layout; use fw_vec directly");
    return -1;
  }
  /* VMEM: two chunks of a, b and out each */
  const uint32_t cl = fw_min_u32(256, chip->vmem_lines / 6), chunks = (bytes + cl * line - 1) / (cl * line);
  for (uint32_t c = 0; c < chunks; c++) {
    chunk_t k = chunk_of(bytes, line, cl, c);
    uint32_t buf = c % 2, lines = k.full_lines + (k.tail_bytes != 0);
    uint32_t va = buf * cl, vb = 2 * cl + buf * cl, vo = 4 * cl + buf * cl;
    /* DMA: inputs into buffer `buf` once the vector unit is done with it */
    if (c >= 2) fw_sem_wait(dq, SEM_IN_FREE + buf, 1);
    load_chunk(dq, a, line, k, va, ISA_SEM_NONE);
    load_chunk(dq, b, line, k, vb, SEM_IN_READY + buf);
    /* compute: the operation; output buffer free again once its previous store left */
    fw_sem_wait(cq, SEM_IN_READY + buf, 1);
    if (c >= 2) fw_sem_wait(cq, SEM_OUT_FREE, 1);
    fw_vec(cq, op, va, vb, vo, lines, scalar);
    fw_sem_signal(cq, SEM_IN_FREE + buf, 1);
    fw_sem_signal(cq, SEM_OUT_READY, 1);
    /* DMA: the result of the previous chunk goes out (keeps loads ahead of stores) */
    if (c >= 1) {
      chunk_t p = chunk_of(bytes, line, cl, c - 1);
      fw_sem_wait(dq, SEM_OUT_READY, 1);
      store_chunk(dq, out, line, p, 4 * cl + ((c - 1) % 2) * cl, SEM_OUT_FREE);
    }
  }
  chunk_t last = chunk_of(bytes, line, cl, chunks - 1);
  fw_sem_wait(dq, SEM_OUT_READY, 1);
  store_chunk(dq, out, line, last, 4 * cl + ((chunks - 1) % 2) * cl, SEM_OUT_FREE);
  fw_fence(dq);
  /* take the signals nobody waited for */
  for (uint32_t c = chunks >= 2 ? chunks - 2 : 0; c < chunks; c++) fw_sem_wait(dq, SEM_IN_FREE + c % 2, 1);
  fw_sem_wait(dq, SEM_OUT_FREE, chunks >= 2 ? 2 : 1);
  fw_halt(dq);
  fw_halt(cq);
  char what[64];
  snprintf(what, sizeof what, "the element-wise kernel of %u elements (%u chunks)", count, chunks);
  return fw_programs_fit(chip, cq, dq, what, "", err, errlen);
}

int fw_copy_local(const chip_geometry_t *chip, uint32_t src, uint32_t dst, uint32_t bytes, fw_prog_t *dq, char *err,
                  size_t errlen) {
  const uint32_t line = 4 * chip->cols, cl = fw_min_u32(256, chip->vmem_lines / 2);
  if (bytes == 0 || bytes % 4 || (src | dst) % 4) {
    snprintf(err, errlen, "copies move a nonzero multiple of 4 bytes between 4-byte aligned addresses");
    return -1;
  }
  const uint32_t chunks = (bytes + cl * line - 1) / (cl * line);
  /* DMAs of one queue take effect in order, so a chunk's store follows its load, and the
   * next load into the same lines waits until that store has read them. */
  for (uint32_t c = 0; c < chunks; c++) {
    chunk_t k = chunk_of(bytes, line, cl, c);
    load_chunk(dq, src, line, k, (c % 2) * cl, ISA_SEM_NONE);
    store_chunk(dq, dst, line, k, (c % 2) * cl, ISA_SEM_NONE);
  }
  fw_fence(dq);
  fw_halt(dq);
  char what[64];
  snprintf(what, sizeof what, "the copy of %u bytes (%u chunks)", bytes, chunks);
  return fw_programs_fit(chip, NULL, dq, what, "", err, errlen);
}

int fw_copy_remote(const chip_geometry_t *chip, unsigned sx, unsigned sy, unsigned x, unsigned y, uint32_t src,
                   uint32_t dst, uint32_t bytes, fw_prog_t *sender, fw_prog_t *receiver, char *err, size_t errlen) {
  const uint32_t line = 4 * chip->cols, cl = fw_min_u32(256, (chip->vmem_lines - 1) / 2), ack_line = 2 * cl;
  if (bytes == 0 || bytes % 4 || (src | dst) % 4) {
    snprintf(err, errlen, "copies move a nonzero multiple of 4 bytes between 4-byte aligned addresses");
    return -1;
  }
  const uint32_t chunks = (bytes + cl * line - 1) / (cl * line);
  /* Lines travel whole; the receiver writes back only the bytes that belong to the copy.
   * Per chunk (two buffers on each side): the sender loads it, waits until the receiver has
   * acknowledged the chunk that last used this buffer, sends it (every line adds 1 on the
   * receiver) and waits for it to leave before loading into the lines again; the receiver
   * waits for all its lines, stores them, then acknowledges with a one-line remote DMA. */
  for (uint32_t c = 0; c < chunks; c++) {
    chunk_t k = chunk_of(bytes, line, cl, c);
    uint32_t lines = k.full_lines + (k.tail_bytes != 0), v = (c % 2) * cl;
    load_chunk(sender, src, line, k, v, SEM_IN_READY);
    fw_sem_wait(sender, SEM_IN_READY, 1);
    if (c >= 2) fw_sem_wait(sender, SEM_OUT_READY, 1);
    fw_rdma(sender, x, y, v, v, lines, SEM_IN_READY + 1, 1, SEM_DONE, 1);
    fw_sem_wait(sender, SEM_DONE, 1);
    fw_sem_wait(receiver, SEM_IN_READY + 1, lines);
    store_chunk(receiver, dst, line, k, v, SEM_OUT_FREE);
    fw_sem_wait(receiver, SEM_OUT_FREE, 1);
    fw_rdma(receiver, sx, sy, ack_line, ack_line, 1, SEM_OUT_READY, 1, ISA_SEM_NONE, 0);
  }
  /* the acknowledgements nobody waited for */
  fw_sem_wait(sender, SEM_OUT_READY, chunks >= 2 ? 2 : 1);
  fw_halt(sender);
  fw_fence(receiver);
  fw_halt(receiver);
  char what[64];
  snprintf(what, sizeof what, "the remote copy of %u bytes (%u chunks): the sender", bytes, chunks);
  if (fw_programs_fit(chip, NULL, sender, what, "", err, errlen)) return -1;
  snprintf(what, sizeof what, "the remote copy of %u bytes (%u chunks): the receiver", bytes, chunks);
  return fw_programs_fit(chip, NULL, receiver, what, "", err, errlen);
}
