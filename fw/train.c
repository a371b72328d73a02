/* train: see train.h and docs/training.md. */
#include "fw/train.h"

#include <stdio.h>
#include <string.h>

#include "fw/collective.h"
#include "fw/fw_util.h"

/* Hand-over semaphores (fw/hal.h): ordered streams of tokens (a SEM_SIGNAL counts once the
 * queue's earlier work is done, and each side waits for them in the order they are given). */
enum { SEM_TO_COMPUTE = FW_SEM_TRAIN_TO_COMPUTE, SEM_TO_DMA = FW_SEM_TRAIN_TO_DMA };


static void group_of(const fw_slice_t *s, const fw_train_net_t *n, unsigned x, unsigned y, fw_train_place_t *pc) {
  const unsigned i = (y - s->y0) * s->w + (x - s->x0);
  if (n->mp == 1) {
    pc->dp_rank = i, pc->mp_rank = 0;
    pc->dp_group = *s;
    pc->mp_group = (fw_slice_t){x, y, 1, 1, s->pod_w, s->pod_h};
  } else if (n->dp == 1) {
    pc->dp_rank = 0, pc->mp_rank = i;
    pc->dp_group = (fw_slice_t){x, y, 1, 1, s->pod_w, s->pod_h};
    pc->mp_group = *s;
  } else {
    pc->dp_rank = x - s->x0, pc->mp_rank = y - s->y0;
    pc->dp_group = (fw_slice_t){s->x0, y, s->w, 1, s->pod_w, s->pod_h};
    pc->mp_group = (fw_slice_t){x, s->y0, 1, s->h, s->pod_w, s->pod_h};
  }
}

void fw_train_place(const fw_train_plan_t *pl, const fw_slice_t *s, unsigned x, unsigned y, fw_train_place_t *pc) {
  group_of(s, &pl->net, x, y, pc);
}

/* An all-reduce of `lines` fp32 lines at `line` over group g: the 2-D torus algorithm when
 * the group spans both dimensions and has the wraparound links it needs (each dimension of
 * more than 2 chips spans the pod), else the ring, whose rings close back along a mesh
 * (docs/collectives.md); the chunk follows the collectives' default (four chunks a segment,
 * at most 64 lines). */
static bool torus2d_fits(const fw_slice_t *g) {
  return g->w > 1 && g->h > 1 && (g->w <= 2 || g->w == g->pod_w) && (g->h <= 2 || g->h == g->pod_h);
}

static fw_coll_args_t allreduce(uint32_t line, uint32_t lines, const fw_slice_t *g) {
  const unsigned n = g->w > g->h ? g->w : g->h;
  uint32_t seg = fw_ceil_div(lines, 4 * n);
  uint32_t chunk = seg < 1 ? 1 : seg > 64 ? 64 : seg;
  return (fw_coll_args_t){FW_COLL_ALLREDUCE, torus2d_fits(g) ? FW_COLL_TORUS2D : FW_COLL_RING, line, lines, chunk, 0,
                          false};
}

/* Bump allocation of VMEM lines; a collective's buffer is followed by its scratch lines. */
static uint32_t take(uint32_t *next, uint32_t lines) {
  uint32_t at = *next;
  *next += lines;
  return at;
}

/* The layout's rules: what the network, the slice and the chip must satisfy. */
static int check_run(const chip_geometry_t *chip, const fw_slice_t *s, const fw_train_net_t *net, unsigned examples,
                     char *err, size_t errlen) {
  const unsigned C = chip->cols, chips = s->w * s->h;
  if (chip->rows != chip->cols) {
    snprintf(err, errlen, "training needs a square MXU (its backward pass loads weights transposed), not %ux%u",
             chip->rows, chip->cols);
    return -1;
  }
  if (fw_slice_check(s, err, errlen)) return -1;
  if (net->features == 0 || net->hidden == 0 || net->batch == 0 || net->dp == 0 || net->mp == 0) {
    snprintf(err, errlen, "features, hidden size, batch, dp and mp must be at least 1");
    return -1;
  }
  if (net->classes < 2 || net->classes > C) {
    snprintf(err, errlen, "%u classes: the logits of an example fill one VMEM line, so 2 .. %u classes on %ux%u chips",
             net->classes, C, C, C);
    return -1;
  }
  if (net->dp * net->mp != chips) {
    snprintf(err, errlen, "dp x mp = %u x %u = %u, but the slice has %u chips (%ux%u)", net->dp, net->mp,
             net->dp * net->mp, chips, s->w, s->h);
    return -1;
  }
  if (net->dp > 1 && net->mp > 1 && (s->w != net->dp || s->h != net->mp)) {
    snprintf(err, errlen, "dp %u x mp %u lays DP along X and MP along Y: the slice must be %ux%u, not %ux%u", net->dp,
             net->mp, net->dp, net->mp, s->w, s->h);
    return -1;
  }
  if (net->batch % net->dp) {
    snprintf(err, errlen, "the batch %u is not divisible by the data-parallel degree %u", net->batch, net->dp);
    return -1;
  }
  if ((net->batch / net->dp) % isa_geometry_cores(chip)) {
    snprintf(err, errlen, "the batch per chip %u is not divisible by the chip's %u cores (each core takes an equal share)",
             net->batch / net->dp, isa_geometry_cores(chip));
    return -1;
  }
  if (net->hidden % net->mp) {
    snprintf(err, errlen, "the hidden size %u is not divisible by the model-parallel degree %u", net->hidden, net->mp);
    return -1;
  }
  if (examples < net->batch) {
    snprintf(err, errlen, "%u training examples are fewer than one batch of %u", examples, net->batch);
    return -1;
  }
  return 0;
}

/* The sizes: examples per chip and core, padded dimensions, each layer's parameter lines; a
 * GEMM's two output tiles must fit the accumulator. */
static int plan_sizes(const chip_geometry_t *chip, const fw_train_net_t *net, unsigned examples, fw_train_plan_t *pl,
                      char *err, size_t errlen) {
  const unsigned C = chip->cols;
  pl->lanes = C;
  pl->mxus = isa_geometry_mxus(chip);
  pl->examples = examples;
  pl->cores = isa_geometry_cores(chip);
  if (pl->cores > FW_TRAIN_MAX_CORES) {
    snprintf(err, errlen, "training runs on chips of up to %u cores, not %u", FW_TRAIN_MAX_CORES, pl->cores);
    return -1;
  }
  pl->batch_per_chip = net->batch / net->dp;
  pl->batch_per_core = pl->batch_per_chip / pl->cores;
  pl->batch_per_core_padded = fw_round_up(pl->batch_per_core, C);
  pl->features_padded = fw_round_up(net->features, C);
  pl->hidden_padded = fw_round_up(net->hidden, C);
  pl->hidden_per_mp = net->hidden / net->mp;
  pl->hidden_per_mp_padded = fw_round_up(pl->hidden_per_mp, C);
  const unsigned ks[3] = {net->features, net->hidden, pl->hidden_per_mp}, kps[3] = {pl->features_padded, pl->hidden_padded, pl->hidden_per_mp_padded};
  const unsigned ns[3] = {net->hidden, pl->hidden_per_mp, net->classes}, nbs[3] = {pl->hidden_padded / C, pl->hidden_per_mp_padded / C, 1};
  for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) {
    fw_train_layer_t *ly = &pl->layer[l];
    ly->k = ks[l], ly->n = ns[l], ly->kp = kps[l], ly->nb = nbs[l];
    ly->lines = ly->nb * ly->kp + ly->nb;
    pl->param_lines += ly->lines;
  }
  /* a GEMM's output tile of m rows and the next one's share the accumulator */
  const struct { unsigned rows; const char *what; } gemms[3] = {
      {pl->batch_per_core_padded, "examples per core"}, {pl->features_padded, "features"}, {pl->hidden_padded, "hidden units"}};
  for (unsigned i = 0; i < 3; i++)
    if (2 * gemms[i].rows > chip->acc_depth) {
      snprintf(err, errlen, "%u %s (rounded up to %u) are too many: a GEMM's two output tiles of as many rows need %u "
               "accumulator rows, the chip has %u (at most %u)", i == 0 ? pl->batch_per_core : i == 1 ? net->features : net->hidden,
               gemms[i].what, gemms[i].rows, 2 * gemms[i].rows, chip->acc_depth, chip->acc_depth / 2 / C * C);
      return -1;
    }
  return 0;
}

/* HBM, in bytes: each region a whole number of lines; 64-bit sums, checked before use. */
static int plan_hbm(const fw_train_net_t *net, unsigned examples, fw_train_plan_t *pl, char *err, size_t errlen) {
  const unsigned C = pl->lanes;
  const uint64_t lb = 4ull * C;
  uint64_t at = 0, addr[9];
  const uint64_t sizes[9] = {lb, lb, (uint64_t)pl->param_lines * lb, (uint64_t)pl->batch_per_chip * lb,
                             (uint64_t)pl->batch_per_chip * 2 * pl->hidden_padded, (uint64_t)pl->batch_per_chip * 2 * pl->hidden_per_mp_padded,
                             (uint64_t)examples * 2 * pl->features_padded, (uint64_t)examples * lb,
                             pl->cores > 1 ? (uint64_t)pl->param_lines * lb : 0};
  for (unsigned i = 0; i < 9; i++) {
    addr[i] = at;
    at += (sizes[i] + lb - 1) / lb * lb;
  }
  pl->hbm_bytes = at;
  if (at > (1ull << 32)) {
    snprintf(err, errlen, "%u examples of %u features need %llu bytes of HBM; a chip has at most 4 GiB", examples,
             net->features, (unsigned long long)at);
    return -1;
  }
  pl->hbm_zero = (uint32_t)addr[0], pl->hbm_consts = (uint32_t)addr[1], pl->hbm_params = (uint32_t)addr[2];
  pl->hbm_probs = (uint32_t)addr[3], pl->hbm_a1 = (uint32_t)addr[4], pl->hbm_a2 = (uint32_t)addr[5];
  pl->hbm_x = (uint32_t)addr[6], pl->hbm_y = (uint32_t)addr[7], pl->hbm_peer = (uint32_t)addr[8];
  return 0;
}

/* VMEM, in lines. Batch-indexed blocks are bp (batch_per_core_padded) lines apart (rows
 * batch_per_core .. bp - 1 stay zero, as the MXU reads whole tiles of the gradients); weight
 * blocks kp lines apart. The all-reduces'
 * buffers are followed by their scratch lines, and must suit their groups. */
static int plan_vmem(const chip_geometry_t *chip, const fw_slice_t *s, const fw_train_net_t *net, fw_train_plan_t *pl,
                     char *err, size_t errlen) {
  const unsigned C = pl->lanes;
  uint32_t v = 0;
  const unsigned dpn = net->dp, mpn = net->mp, bp = pl->batch_per_core_padded;
  fw_train_place_t pc;
  group_of(s, net, s->x0, s->y0, &pc);
  const fw_slice_t *dg = &pc.dp_group, *mg = &pc.mp_group;
  for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) pl->v_params[l] = take(&v, pl->layer[l].lines);
  for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) {
    pl->v_grad[l] = take(&v, pl->layer[l].lines);
    pl->dp_coll[l] = allreduce(pl->v_grad[l], pl->layer[l].lines, dg);
    if (dpn > 1) v += fw_coll_scratch_lines(&pl->dp_coll[l]);
  }
  if (pl->cores > 1) { /* core 0: the other core's gradients; both: the hand-overs' flag line */
    for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) pl->v_peer[l] = take(&v, pl->layer[l].lines);
    pl->v_flag = take(&v, 1);
  }
  for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) {
    pl->v_wb[l] = take(&v, pl->layer[l].nb * pl->layer[l].kp);
    pl->v_bb[l] = take(&v, pl->layer[l].nb * bp);
  }
  const unsigned nb1 = pl->layer[0].nb, nb2 = pl->layer[1].nb, bts = fw_ceil_div(pl->batch_per_core, C);
  pl->v_mask = take(&v, bp);
  pl->v_x = take(&v, (pl->features_padded / C) * bp);
  pl->v_y = take(&v, bp);
  pl->v_xt = take(&v, bts * pl->features_padded);
  pl->v_z1 = take(&v, nb1 * bp);
  pl->v_tmp = take(&v, (nb1 > nb2 ? nb1 : nb2) * bp);
  pl->v_a1b = take(&v, nb1 * bp);
  pl->v_a1t = take(&v, bts * pl->hidden_padded);
  pl->v_z2 = take(&v, nb2 * bp);
  pl->v_a2b = take(&v, nb2 * bp);
  pl->v_a2t = take(&v, bts * pl->hidden_per_mp_padded);
  pl->v_zp = take(&v, bp);
  pl->mp_fwd = allreduce(pl->v_zp, pl->batch_per_core, mg);
  if (mpn > 1) v += fw_coll_scratch_lines(&pl->mp_fwd);
  pl->v_z3 = take(&v, bp);
  pl->v_zm = take(&v, bp);
  pl->v_m = take(&v, bp);
  pl->v_e = take(&v, bp);
  pl->v_sum = take(&v, bp);
  pl->v_rcp = take(&v, bp);
  pl->v_p = take(&v, bp);
  pl->v_dz3 = take(&v, bp);
  pl->v_dz3b = take(&v, bp);
  pl->v_da2 = take(&v, nb2 * bp);
  pl->v_dz2 = take(&v, nb2 * bp);
  pl->v_dz2b = take(&v, nb2 * bp);
  pl->v_da1 = take(&v, nb1 * bp);
  pl->mp_bwd = allreduce(pl->v_da1, nb1 * bp, mg);
  if (mpn > 1) v += fw_coll_scratch_lines(&pl->mp_bwd);
  pl->v_dz1 = take(&v, nb1 * bp);
  pl->v_dz1b = take(&v, nb1 * bp);
  pl->vmem_used = v;
  if (v > chip->vmem_lines) {
    snprintf(err, errlen, "the step needs %u VMEM lines (batch %u per core, hidden %u, %u features); a core has %u",
             v, pl->batch_per_core, net->hidden, net->features, chip->vmem_lines);
    return -1;
  }
  for (unsigned l = 0; l < FW_TRAIN_LAYERS && dpn > 1; l++)
    if (fw_coll_check(chip, &pc.dp_group, &pl->dp_coll[l], err, errlen)) return -1;
  if (mpn > 1 && (fw_coll_check(chip, &pc.mp_group, &pl->mp_fwd, err, errlen) ||
                  fw_coll_check(chip, &pc.mp_group, &pl->mp_bwd, err, errlen)))
    return -1;
  return 0;
}

/* Every chip's step programs must fit its queues: build them once now, before anything runs. */
static int trial_build(const chip_geometry_t *chip, const fw_slice_t *s, const fw_train_plan_t *pl, char *err,
                       size_t errlen) {
  const unsigned chips = s->w * s->h;
  int rc = 0;
  for (unsigned i = 0; i < chips && rc == 0; i++) {
    fw_prog_t cq[FW_TRAIN_MAX_CORES], dq[FW_TRAIN_MAX_CORES];
    for (unsigned c = 0; c < FW_TRAIN_MAX_CORES; c++) fw_prog_init(&cq[c]), fw_prog_init(&dq[c]);
    rc = fw_train_step(chip, pl, s, s->x0 + i % s->w, s->y0 + i / s->w, 0, FW_TRAIN_FULL, cq, dq, err, errlen);
    for (unsigned c = 0; c < FW_TRAIN_MAX_CORES; c++) fw_prog_free(&cq[c]), fw_prog_free(&dq[c]);
  }
  return rc;
}

int fw_train_plan(const chip_geometry_t *chip, const fw_slice_t *s, const fw_train_net_t *net, unsigned examples,
                  fw_train_plan_t *pl, char *err, size_t errlen) {
  memset(pl, 0, sizeof *pl);
  pl->net = *net;
  if (check_run(chip, s, net, examples, err, errlen) || plan_sizes(chip, net, examples, pl, err, errlen) ||
      plan_hbm(net, examples, pl, err, errlen) || plan_vmem(chip, s, net, pl, err, errlen))
    return -1;
  return trial_build(chip, s, pl, err, errlen);
}

uint64_t fw_train_macs(const fw_train_plan_t *pl) {
  /* forward: three GEMMs; backward: three weight gradients and the input gradients of
   * layers 3 and 2 (the data needs none) */
  uint64_t m = 0;
  for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) m += 2ull * pl->batch_per_chip * pl->layer[l].k * pl->layer[l].n;
  for (unsigned l = 1; l < FW_TRAIN_LAYERS; l++) m += (uint64_t)pl->batch_per_chip * pl->layer[l].k * pl->layer[l].n;
  return m;
}

void fw_train_pack(const fw_train_plan_t *pl, unsigned layer, const uint32_t *w, const uint32_t *bias, uint32_t *lines) {
  const fw_train_layer_t *ly = &pl->layer[layer];
  const unsigned C = pl->lanes;
  memset(lines, 0, (size_t)ly->lines * C * sizeof *lines);
  for (unsigned k = 0; k < ly->k; k++)
    for (unsigned n = 0; n < ly->n; n++) lines[((size_t)(n / C) * ly->kp + k) * C + n % C] = w[(size_t)k * ly->n + n];
  for (unsigned n = 0; n < ly->n; n++) lines[((size_t)ly->nb * ly->kp + n / C) * C + n % C] = bias[n];
}

void fw_train_unpack(const fw_train_plan_t *pl, unsigned layer, const uint32_t *lines, uint32_t *w, uint32_t *bias) {
  const fw_train_layer_t *ly = &pl->layer[layer];
  const unsigned C = pl->lanes;
  for (unsigned k = 0; k < ly->k; k++)
    for (unsigned n = 0; n < ly->n; n++) w[(size_t)k * ly->n + n] = lines[((size_t)(n / C) * ly->kp + k) * C + n % C];
  for (unsigned n = 0; n < ly->n; n++) bias[n] = lines[((size_t)ly->nb * ly->kp + n / C) * C + n % C];
}

/* Copies line `src` into `rows` lines from dst by doubling (log2 rows VEC COPYs). */
static void broadcast_line(fw_prog_t *cq, uint32_t src, uint32_t dst, uint32_t rows) {
  fw_vec(cq, ISA_VEC_COPY, src, src, dst, 1, 0);
  for (uint32_t have = 1; have < rows; have *= 2) fw_vec(cq, ISA_VEC_COPY, dst, dst, dst + have, fw_min_u32(have, rows - have), 0);
}

/* A VEC over nb blocks of b lines, bp lines apart (pad rows untouched). */
static void vec_blocks(fw_prog_t *cq, const fw_train_plan_t *pl, isa_vec_op_t op, uint32_t a, uint32_t b, uint32_t dst,
                       unsigned nb, uint32_t scalar) {
  for (unsigned i = 0; i < nb; i++)
    fw_vec(cq, op, a + i * pl->batch_per_core_padded, b + i * pl->batch_per_core_padded, dst + i * pl->batch_per_core_padded, pl->batch_per_core, scalar);
}

/* out (nts blocks of m lines, `ostride` apart) = act (kts blocks of m lines, `astride`
 * apart) x W, where the weight tile of (inner tile kt, output tile nt) starts at line
 * w + nt * wn + kt * wk and is loaded plain or transposed. The output tiles go in groups of
 * one per MXU (tile g X + u on MXU u, X MXUs), each MXU multiplying the same activation
 * lines; groups alternate between two accumulator regions (in every MXU), so a group's
 * stores overlap the next group's passes. With one MXU: tile by tile. */
static void vgemm(fw_prog_t *cq, unsigned mxus, unsigned m, unsigned kts, unsigned nts, uint32_t act, uint32_t astride,
                  uint32_t w, uint32_t wk, uint32_t wn, bool transposed, uint32_t out, uint32_t ostride) {
  for (unsigned g = 0; g * mxus < nts; g++) {
    const unsigned first = g * mxus, in_group = fw_min_u32(mxus, nts - first);
    const uint32_t acc = (g % 2) * m;
    for (unsigned kt = 0; kt < kts; kt++)
      for (unsigned u = 0; u < in_group; u++) {
        const uint32_t wl = w + (first + u) * wn + kt * wk;
        fw_mxu_select(cq, u);
        if (transposed)
          fw_mxu_load_transposed(cq, wl);
        else
          fw_mxu_load(cq, wl);
        fw_mxu_matmul(cq, act + kt * astride, m, acc, kt > 0);
      }
    for (unsigned u = 0; u < in_group; u++) {
      fw_mxu_select(cq, u);
      fw_mxu_store(cq, acc, m, out + (first + u) * ostride);
    }
  }
  fw_mxu_select(cq, 0);
}

/* The forward GEMM of layer l: Z (nb blocks of b lines) = A (kp / C blocks of bf16 lines) x W. */
static void forward_gemm(fw_prog_t *cq, const fw_train_plan_t *pl, unsigned l, uint32_t act, uint32_t out) {
  const fw_train_layer_t *ly = &pl->layer[l];
  const unsigned C = pl->lanes;
  vgemm(cq, pl->mxus, pl->batch_per_core, ly->kp / C, ly->nb, act, pl->batch_per_core_padded, pl->v_wb[l], C, ly->kp, false, out, pl->batch_per_core_padded);
}

/* dW (the gradient lines of layer l) = A^T (the transposing DMA's lines: a batch tile of
 * kp lines each) x dZ (bf16, nb blocks of bp lines); db = the sum of dZ's lines. */
static void weight_gradient(fw_prog_t *cq, const fw_train_plan_t *pl, unsigned l, uint32_t act_t, uint32_t dz,
                            uint32_t dzb) {
  const fw_train_layer_t *ly = &pl->layer[l];
  const unsigned C = pl->lanes;
  vgemm(cq, pl->mxus, ly->kp, fw_ceil_div(pl->batch_per_core, C), ly->nb, act_t, ly->kp, dzb, C, pl->batch_per_core_padded, false, pl->v_grad[l], ly->kp);
  for (unsigned nt = 0; nt < ly->nb; nt++)
    fw_vec(cq, ISA_VEC_SUM_LINES, dz + nt * pl->batch_per_core_padded, dz + nt * pl->batch_per_core_padded, pl->v_grad[l] + ly->nb * ly->kp + nt, pl->batch_per_core, 0);
}

/* dA (kp / C blocks of b lines) = dZ (bf16) x W^T: W's bf16 tiles loaded transposed. */
static void input_gradient(fw_prog_t *cq, const fw_train_plan_t *pl, unsigned l, uint32_t dzb, uint32_t out) {
  const fw_train_layer_t *ly = &pl->layer[l];
  const unsigned C = pl->lanes;
  vgemm(cq, pl->mxus, pl->batch_per_core, ly->nb, ly->kp / C, dzb, pl->batch_per_core_padded, pl->v_wb[l], ly->kp, C, true, out, pl->batch_per_core_padded);
}

/* Appends the commands of b spread evenly among those of a (a's order and b's order kept). */
static void interleave(fw_prog_t *dst, const fw_prog_t *a, const fw_prog_t *b) {
  size_t taken = 0;
  for (size_t i = 0; i < a->count; i++) {
    fw_prog_append(dst, a, i, 1);
    size_t due = (i + 1) * b->count / a->count;
    fw_prog_append(dst, b, taken, due - taken);
    taken = due;
  }
  fw_prog_append(dst, b, taken, b->count - taken);
  if (a->oom || b->oom) dst->oom = true;
}

int fw_train_init(const fw_train_plan_t *pl, fw_prog_t *cq, fw_prog_t *dq, char *err, size_t errlen) {
  const unsigned lb = 4 * pl->lanes;
  /* every line the run uses reads the zero line (stride 0) */
  fw_dma_hbm_to_vmem(dq, ISA_SEM_NONE, 0, pl->hbm_zero, 0, 0, pl->vmem_used, 4);
  fw_dma_hbm_to_vmem(dq, ISA_SEM_NONE, 0, pl->hbm_params, lb, pl->v_params[0], pl->param_lines, lb);
  fw_dma_hbm_to_vmem(dq, ISA_SEM_NONE, 0, pl->hbm_consts, lb, pl->v_mask, 1, lb);
  fw_sem_signal(dq, SEM_TO_COMPUTE, 1);
  fw_sem_wait(cq, SEM_TO_COMPUTE, 1);
  broadcast_line(cq, pl->v_mask, pl->v_mask, pl->batch_per_core);
  fw_fence(cq);
  fw_halt(cq);
  fw_halt(dq);
  if (!fw_prog_ok(cq) || !fw_prog_ok(dq)) {
    snprintf(err, errlen, "out of memory building the training programs");
    return -1;
  }
  return 0;
}

/* The DMA side of a collective: waits for the compute queue's token that its buffer is
 * ready, then the collective's DMA commands. */
static int coll_dma_part(const chip_geometry_t *chip, const fw_slice_t *g, const fw_coll_args_t *a, unsigned x,
                         unsigned y, fw_prog_t *cpart, fw_prog_t *dq, char *err, size_t errlen) {
  fw_sem_wait(dq, SEM_TO_DMA, 1);
  return fw_collective(chip, g, a, x, y, cpart, dq, err, errlen);
}

/* The cores hand each other lines through HBM (each core's own HBM port moves hundreds of
 * bytes a cycle; a remote DMA to the chip itself, eight): the sender writes them, fences, and
 * sends a one-line remote DMA to the other core's flag line, which adds 1 to its semaphore
 * FW_SEM_TRAIN_PEER (docs/training.md, "Cores"), in up to HANDOVER_PARTS parts so that the
 * receiver reads one part while the sender writes the next. A receiver that has counted k flags knows
 * the first k parts are in HBM: each flag leaves after its part was written. */
#define HANDOVER_PARTS 4u
#define HANDOVER_MIN_PART 256u /* lines: below this a part's fence and flag cost more than the overlap saves */

static uint32_t part_lines(uint32_t lines) {
  const uint32_t part = (lines + HANDOVER_PARTS - 1) / HANDOVER_PARTS;
  return part < HANDOVER_MIN_PART ? HANDOVER_MIN_PART : part;
}

/* Sender: lines [line, line + lines) of VMEM to HBM at hbm, a flag to core `other` after each part. */
static void hand_over(fw_prog_t *dq, const fw_train_plan_t *pl, unsigned x, unsigned y, unsigned core,
                      unsigned other, uint32_t line, uint32_t hbm, uint32_t lines) {
  const uint32_t lb = 4 * pl->lanes, part = part_lines(lines);
  for (uint32_t at = 0; at < lines; at += part) {
    const uint32_t n = fw_min_u32(part, lines - at);
    fw_dma_vmem_to_hbm(dq, ISA_SEM_NONE, 0, line + at, hbm + at * lb, lb, n, lb);
    fw_fence(dq);
    fw_rdma_core(dq, other);
    fw_rdma_on(dq, 0, x, y, pl->v_flag, pl->v_flag, 1, FW_SEM_TRAIN_PEER, 1, ISA_SEM_NONE, 0);
    fw_rdma_core(dq, core);
  }
}

/* Receiver: the same parts into VMEM at line, each once its flag has come. */
static void take_over(fw_prog_t *dq, const fw_train_plan_t *pl, uint32_t hbm, uint32_t line, uint32_t lines) {
  const uint32_t lb = 4 * pl->lanes, part = part_lines(lines);
  for (uint32_t at = 0; at < lines; at += part) {
    fw_sem_wait(dq, FW_SEM_TRAIN_PEER, 1);
    fw_dma_hbm_to_vmem(dq, ISA_SEM_NONE, 0, hbm + at * lb, lb, line + at, fw_min_u32(part, lines - at), lb);
  }
}

/* Where layer l's gradient lines are handed over in HBM. */
static uint32_t peer_hbm(const fw_train_plan_t *pl, unsigned l) {
  uint32_t at = pl->hbm_peer;
  for (unsigned j = 0; j < l; j++) at += pl->layer[j].lines * 4 * pl->lanes;
  return at;
}

/* Core 0 of a two-core chip: add core 1's gradient lines of layer l (the DMA queue's token says
 * they are in VMEM) to its own. */
static void take_peer_grads(fw_prog_t *p, const fw_train_plan_t *pl, unsigned l) {
  fw_sem_wait(p, SEM_TO_COMPUTE, 1);
  fw_vec(p, ISA_VEC_ADD, pl->v_grad[l], pl->v_peer[l], pl->v_grad[l], pl->layer[l].lines, 0);
}

/* One core's step, as its builders share it: where it is, what it does this step, and the
 * collectives' side programs (built with the DMA queue; their compute parts placed by the
 * compute queue's phases). */
typedef struct {
  const chip_geometry_t *chip;
  const fw_train_plan_t *pl;
  fw_train_place_t place;
  unsigned x, y, core;
  unsigned examples_per_core, batch_tiles;  /* pl->batch_per_core, and its tiles of C examples */
  uint32_t line_bytes;
  bool compute, lead, peer;                  /* computes; is core 0; hands lines to the other core */
  bool dp, mp, grad_token;                   /* all-reduces over dp, over mp; the DMA queue acts on gradients */
  unsigned first_example;                    /* this core's first example in HBM */
  uint32_t hbm_a1, hbm_a2;                   /* this core's activations' bf16 copies */
  fw_prog_t mp_forward, dp_layer[FW_TRAIN_LAYERS], mp_backward, work;
} core_step_t;

/* DMA queue: this step's examples, their transpose, the activations' transposes. */
static void dma_inputs(const core_step_t *st, fw_prog_t *dq) {
  const fw_train_plan_t *pl = st->pl;
  const unsigned C = pl->lanes, b = st->examples_per_core, bp = pl->batch_per_core_padded, ex = st->first_example;
  const uint32_t lb = st->line_bytes;
  for (unsigned kt = 0; kt < pl->features_padded / C; kt++)
    fw_dma_hbm_to_vmem(dq, ISA_SEM_NONE, 0, pl->hbm_x + ex * 2 * pl->features_padded + kt * 2 * C, 2 * pl->features_padded, pl->v_x + kt * bp, b,
                       2 * C);
  fw_dma_hbm_to_vmem(dq, ISA_SEM_NONE, 0, pl->hbm_y + ex * lb, lb, pl->v_y, b, lb);
  fw_sem_signal(dq, SEM_TO_COMPUTE, 1); /* token 0: X and Y */
  /* transposes: a batch tile of C examples at a time, 2C features (a line's bytes) a DMA */
  const struct { uint32_t hbm, pitch, width, line; } tr[3] = {
      {pl->hbm_x + ex * 2 * pl->features_padded, 2 * pl->features_padded, pl->features_padded, pl->v_xt},
      {st->hbm_a1, 2 * pl->hidden_padded, pl->hidden_padded, pl->v_a1t},
      {st->hbm_a2, 2 * pl->hidden_per_mp_padded, pl->hidden_per_mp_padded, pl->v_a2t}};
  for (unsigned t = 0; t < 3; t++) {
    if (t > 0) { /* token from compute: the activations' bf16 lines exist; write them as rows */
      const uint32_t src = t == 1 ? pl->v_a1b : pl->v_a2b;
      const unsigned nb = t == 1 ? pl->layer[0].nb : pl->layer[1].nb;
      fw_sem_wait(dq, SEM_TO_DMA, 1);
      for (unsigned nt = 0; nt < nb; nt++)
        fw_dma_vmem_to_hbm(dq, ISA_SEM_NONE, 0, src + nt * bp, tr[t].hbm + nt * 2 * C, tr[t].pitch, b, 2 * C);
    }
    for (unsigned bt = 0; bt < st->batch_tiles; bt++)
      for (unsigned f = 0; f < tr[t].width; f += 2 * C)
        fw_dma_hbm_to_vmem_transposed(dq, ISA_SEM_NONE, 0, tr[t].hbm + bt * C * tr[t].pitch + 2 * f, tr[t].pitch,
                                      tr[t].line + bt * tr[t].width + f, fw_min_u32(C, b - bt * C),
                                      2 * fw_min_u32(2 * C, tr[t].width - f));
    fw_sem_signal(dq, SEM_TO_COMPUTE, 1); /* tokens 1, 2, 3: X^T, A1^T, A2^T */
  }
}

/* DMA queue: the collectives, in the order the compute queue runs them, and the hand-overs
 * of core 1's gradients; then the results for the host once the update is done (core 0's new
 * parameters, in HBM for the host, are core 1's too). */
static int dma_collectives_and_results(core_step_t *st, fw_prog_t *dq, char *err, size_t errlen) {
  const fw_train_plan_t *pl = st->pl;
  const fw_train_place_t *pc = &st->place;
  const unsigned x = st->x, y = st->y, core = st->core;
  const bool lead = st->lead, peer = st->peer;
  for (int l = 2; l >= 0; l--) {
    if (l == 2 && st->mp && coll_dma_part(st->chip, &pc->mp_group, &pl->mp_fwd, x, y, &st->mp_forward, dq, err, errlen))
      return -1;
    if (l == 1 && st->mp && coll_dma_part(st->chip, &pc->mp_group, &pl->mp_bwd, x, y, &st->mp_backward, dq, err, errlen))
      return -1;
    if (lead && peer) { /* core 1's gradients of layer l, once in HBM, into VMEM beside core 0's */
      take_over(dq, pl, peer_hbm(pl, l), pl->v_peer[l], pl->layer[l].lines);
      fw_sem_signal(dq, SEM_TO_COMPUTE, 1);
    }
    if (st->dp && coll_dma_part(st->chip, &pc->dp_group, &pl->dp_coll[l], x, y, &st->dp_layer[l], dq, err, errlen))
      return -1;
    if (!lead && peer) { /* core 1: its gradients of layer l to core 0, through HBM */
      fw_sem_wait(dq, SEM_TO_DMA, 1);
      hand_over(dq, pl, x, y, core, 0, pl->v_grad[l], peer_hbm(pl, l), pl->layer[l].lines);
    }
  }
  const uint32_t lb = st->line_bytes;
  fw_sem_wait(dq, SEM_TO_DMA, 1);
  if (lead && peer) /* the parameters for the host, and for core 1 */
    hand_over(dq, pl, x, y, core, 1, pl->v_params[0], pl->hbm_params, pl->param_lines);
  else if (lead && st->compute)
    fw_dma_vmem_to_hbm(dq, ISA_SEM_NONE, 0, pl->v_params[0], pl->hbm_params, lb, pl->param_lines, lb);
  if (st->compute)
    fw_dma_vmem_to_hbm(dq, ISA_SEM_NONE, 0, pl->v_p, pl->hbm_probs + core * st->examples_per_core * lb, lb,
                       st->examples_per_core, lb);
  if (peer && !lead) take_over(dq, pl, pl->hbm_params, pl->v_params[0], pl->param_lines);
  fw_fence(dq);
  fw_halt(dq);
  return 0;
}

/* Compute queue of the communication-only run: the collectives alone, each handed its (stale)
 * buffer. */
static void compute_collectives_only(const core_step_t *st, fw_prog_t *cq) {
  const fw_prog_t *parts[5] = {&st->mp_forward, &st->dp_layer[2], &st->mp_backward, &st->dp_layer[1], &st->dp_layer[0]};
  const bool on[5] = {st->mp, st->grad_token, st->mp, st->grad_token, st->grad_token};
  const int layer[5] = {-1, 2, -1, 1, 0};
  for (unsigned i = 0; i < 5; i++) {
    if (st->lead && st->peer && layer[i] >= 0) fw_sem_wait(cq, SEM_TO_COMPUTE, 1); /* core 1's gradients are here */
    if (on[i]) {
      fw_sem_signal(cq, SEM_TO_DMA, 1);
      fw_prog_append(cq, parts[i], 0, parts[i]->count);
    }
  }
  fw_sem_signal(cq, SEM_TO_DMA, 1);
  fw_fence(cq);
  fw_halt(cq);
}

/* Compute queue, forward pass: bf16 weights for the MXU, biases broadcast over the batch;
 * layer 1 (replicated over mp), layer 2 (this chip's columns), layer 3 (its rows), softmax. */
static void compute_forward(const core_step_t *st, fw_prog_t *cq) {
  const fw_train_plan_t *pl = st->pl;
  const fw_train_layer_t *L = pl->layer;
  const unsigned b = st->examples_per_core, bp = pl->batch_per_core_padded;
  fw_prog_mark(cq, "forward");
  for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) {
    fw_vec(cq, ISA_VEC_TO_BF16, pl->v_params[l], pl->v_params[l], pl->v_wb[l], L[l].nb * L[l].kp, 0);
    for (unsigned nt = 0; nt < L[l].nb; nt++)
      broadcast_line(cq, pl->v_params[l] + L[l].nb * L[l].kp + nt, pl->v_bb[l] + nt * bp, b);
  }
  fw_sem_wait(cq, SEM_TO_COMPUTE, 1); /* X, Y */
  forward_gemm(cq, pl, 0, pl->v_x, pl->v_z1);
  vec_blocks(cq, pl, ISA_VEC_ADD, pl->v_z1, pl->v_bb[0], pl->v_z1, L[0].nb, 0);
  vec_blocks(cq, pl, ISA_VEC_RELU, pl->v_z1, pl->v_z1, pl->v_tmp, L[0].nb, 0);
  vec_blocks(cq, pl, ISA_VEC_TO_BF16, pl->v_tmp, pl->v_tmp, pl->v_a1b, L[0].nb, 0);
  fw_sem_signal(cq, SEM_TO_DMA, 1); /* A1 for its transpose */
  forward_gemm(cq, pl, 1, pl->v_a1b, pl->v_z2);
  vec_blocks(cq, pl, ISA_VEC_ADD, pl->v_z2, pl->v_bb[1], pl->v_z2, L[1].nb, 0);
  vec_blocks(cq, pl, ISA_VEC_RELU, pl->v_z2, pl->v_z2, pl->v_tmp, L[1].nb, 0);
  vec_blocks(cq, pl, ISA_VEC_TO_BF16, pl->v_tmp, pl->v_tmp, pl->v_a2b, L[1].nb, 0);
  fw_sem_signal(cq, SEM_TO_DMA, 1); /* A2 */
  forward_gemm(cq, pl, 2, pl->v_a2b, pl->v_zp);
  if (st->mp) { /* the partial logits summed over the model-parallel group */
    fw_sem_signal(cq, SEM_TO_DMA, 1);
    fw_prog_append(cq, &st->mp_forward, 0, st->mp_forward.count);
  }
  fw_vec(cq, ISA_VEC_ADD, pl->v_zp, pl->v_bb[2], pl->v_z3, b, 0);
  /* softmax; pad classes get -Inf from the mask */
  fw_vec(cq, ISA_VEC_ADD, pl->v_z3, pl->v_mask, pl->v_zm, b, 0);
  fw_vec(cq, ISA_VEC_MAX_LANES, pl->v_zm, pl->v_zm, pl->v_m, b, 0);
  fw_vec(cq, ISA_VEC_SUB, pl->v_zm, pl->v_m, pl->v_e, b, 0);
  fw_vec(cq, ISA_VEC_EXP, pl->v_e, pl->v_e, pl->v_e, b, 0);
  fw_vec(cq, ISA_VEC_SUM_LANES, pl->v_e, pl->v_e, pl->v_sum, b, 0);
  fw_vec(cq, ISA_VEC_RECIP, pl->v_sum, pl->v_sum, pl->v_rcp, b, 0);
  fw_vec(cq, ISA_VEC_MUL, pl->v_e, pl->v_rcp, pl->v_p, b, 0);
}

/* Compute queue, backward pass: dZ3 = (P - Y) / batch, then each layer's input and weight
 * gradients, the previous layer's all-reduce spread among its commands. */
static void compute_backward(core_step_t *st, fw_prog_t *cq) {
  const fw_train_plan_t *pl = st->pl;
  const fw_train_layer_t *L = pl->layer;
  const unsigned b = st->examples_per_core;
  const bool combine = st->lead && st->peer; /* core 0 adds core 1's gradients */
  fw_prog_t *work = &st->work;
  fw_prog_mark(cq, "backward");
  float inv = 1.0f / (float)pl->net.batch;
  uint32_t inv_bits;
  memcpy(&inv_bits, &inv, 4);
  fw_vec(cq, ISA_VEC_SUB, pl->v_p, pl->v_y, pl->v_dz3, b, 0);
  fw_vec(cq, ISA_VEC_SCALE, pl->v_dz3, pl->v_dz3, pl->v_dz3, b, inv_bits);
  fw_vec(cq, ISA_VEC_TO_BF16, pl->v_dz3, pl->v_dz3, pl->v_dz3b, b, 0);
  fw_sem_wait(cq, SEM_TO_COMPUTE, 3); /* X^T, A1^T, A2^T */
  /* layer 3: its input gradient first (the critical path), then its weight gradient */
  input_gradient(cq, pl, 2, pl->v_dz3b, pl->v_da2);
  weight_gradient(cq, pl, 2, pl->v_a2t, pl->v_dz3, pl->v_dz3b);
  if (combine) take_peer_grads(cq, pl, 2);
  if (st->grad_token) fw_sem_signal(cq, SEM_TO_DMA, 1); /* layer 3's gradients: their all-reduce (or hand-over) starts */
  /* layer 2, with layer 3's all-reduce spread among its commands */
  vec_blocks(work, pl, ISA_VEC_RELU_GRAD, pl->v_z2, pl->v_da2, pl->v_dz2, L[1].nb, 0);
  vec_blocks(work, pl, ISA_VEC_TO_BF16, pl->v_dz2, pl->v_dz2, pl->v_dz2b, L[1].nb, 0);
  input_gradient(work, pl, 1, pl->v_dz2b, pl->v_da1);
  if (st->mp) fw_sem_signal(work, SEM_TO_DMA, 1); /* partial dA1 for the model-parallel all-reduce */
  weight_gradient(work, pl, 1, pl->v_a1t, pl->v_dz2, pl->v_dz2b);
  interleave(cq, work, &st->dp_layer[2]);
  if (st->mp) fw_prog_append(cq, &st->mp_backward, 0, st->mp_backward.count);
  /* (not inside `work`: the DMA queue hands core 1's lines over only after the collectives
   * interleaved with it) */
  if (combine) take_peer_grads(cq, pl, 1);
  if (st->grad_token) fw_sem_signal(cq, SEM_TO_DMA, 1); /* layer 2's gradients */
  /* layer 1 (its input is the data: no input gradient), with layer 2's all-reduce */
  work->count = 0;
  vec_blocks(work, pl, ISA_VEC_RELU_GRAD, pl->v_z1, pl->v_da1, pl->v_dz1, L[0].nb, 0);
  vec_blocks(work, pl, ISA_VEC_TO_BF16, pl->v_dz1, pl->v_dz1, pl->v_dz1b, L[0].nb, 0);
  weight_gradient(work, pl, 0, pl->v_xt, pl->v_dz1, pl->v_dz1b);
  interleave(cq, work, &st->dp_layer[1]);
  if (combine) take_peer_grads(cq, pl, 0);
  if (st->grad_token) fw_sem_signal(cq, SEM_TO_DMA, 1); /* layer 1's gradients */
}

/* Compute queue, SGD update: w = w - lr g; layers 3 and 2 while layer 1's gradients are
 * reduced. */
static void compute_update(core_step_t *st, fw_prog_t *cq) {
  const fw_train_plan_t *pl = st->pl;
  float neg_lr;
  memcpy(&neg_lr, &pl->net.lr, 4);
  neg_lr = -neg_lr;
  uint32_t neg_lr_bits;
  memcpy(&neg_lr_bits, &neg_lr, 4);
  st->work.count = 0;
  fw_prog_mark(cq, "update");
  if (st->lead || !st->peer) { /* (core 1 updates only in the compute-only timing run; else its DMA
                                * queue loads core 0's new parameters) */
    for (int l = 2; l >= 1; l--)
      fw_vec(&st->work, ISA_VEC_AXPY, pl->v_params[l], pl->v_grad[l], pl->v_params[l], pl->layer[l].lines, neg_lr_bits);
    interleave(cq, &st->work, &st->dp_layer[0]);
    fw_vec(cq, ISA_VEC_AXPY, pl->v_params[0], pl->v_grad[0], pl->v_params[0], pl->layer[0].lines, neg_lr_bits);
  }
  fw_sem_signal(cq, SEM_TO_DMA, 1); /* the step is done: results out */
  fw_fence(cq);
  fw_halt(cq);
}

static int step_core(const chip_geometry_t *chip, const fw_train_plan_t *pl, const fw_slice_t *s, unsigned x,
                     unsigned y, unsigned core, unsigned first, fw_train_mode_t mode, fw_prog_t *cq, fw_prog_t *dq,
                     char *err, size_t errlen) {
  if (first > pl->examples - pl->net.batch) {
    snprintf(err, errlen, "examples %u .. %u are not all in HBM (%u)", first, first + pl->net.batch - 1, pl->examples);
    return -1;
  }
  core_step_t st = {.chip = chip, .pl = pl, .x = x, .y = y, .core = core};
  group_of(s, &pl->net, x, y, &st.place);
  const bool comm = mode != FW_TRAIN_COMPUTE_ONLY;
  st.examples_per_core = pl->batch_per_core;
  st.batch_tiles = fw_ceil_div(pl->batch_per_core, pl->lanes);
  st.line_bytes = 4 * pl->lanes;
  st.compute = mode != FW_TRAIN_COMM_ONLY;
  /* core 0 combines the cores' gradients, all-reduces them over the data-parallel group and
   * updates the parameters, which it then hands to core 1 */
  st.lead = core == 0, st.peer = comm && pl->cores > 1;
  st.dp = comm && st.lead && pl->net.dp > 1, st.mp = comm && pl->net.mp > 1;
  st.grad_token = st.lead ? st.dp : st.peer;
  st.first_example = first + (st.place.dp_rank * pl->cores + core) * pl->batch_per_core;
  st.hbm_a1 = pl->hbm_a1 + core * pl->batch_per_core * 2 * pl->hidden_padded, st.hbm_a2 = pl->hbm_a2 + core * pl->batch_per_core * 2 * pl->hidden_per_mp_padded;
  fw_prog_init(&st.mp_forward), fw_prog_init(&st.mp_backward), fw_prog_init(&st.work);
  for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) fw_prog_init(&st.dp_layer[l]);
  fw_rdma_core(dq, core); /* the model-parallel all-reduces are among the chips' same cores */
  if (st.compute) dma_inputs(&st, dq);
  int rc = dma_collectives_and_results(&st, dq, err, errlen);
  if (rc == 0) {
    if (!st.compute) {
      compute_collectives_only(&st, cq);
    } else {
      compute_forward(&st, cq);
      compute_backward(&st, cq);
      compute_update(&st, cq);
    }
    /* (`work` was interleaved into cq, which carries its out-of-memory flag) */
    rc = fw_programs_fit(chip, cq, dq, "the training step", " (a smaller batch or hidden size per chip fits)", err,
                         errlen);
  }
  fw_prog_free(&st.mp_forward), fw_prog_free(&st.mp_backward), fw_prog_free(&st.work);
  for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) fw_prog_free(&st.dp_layer[l]);
  return rc;
}

int fw_train_step(const chip_geometry_t *chip, const fw_train_plan_t *pl, const fw_slice_t *s, unsigned x, unsigned y,
                  unsigned first, fw_train_mode_t mode, fw_prog_t *compute, fw_prog_t *dma, char *err, size_t errlen) {
  for (unsigned c = 0; c < pl->cores; c++)
    if (step_core(chip, pl, s, x, y, c, first, mode, &compute[c], &dma[c], err, errlen)) return -1;
  return 0;
}
