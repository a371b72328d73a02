/*
 * vmodel: the C API to every Verilated top in the project.
 *
 * Each top T (rtl/T.sv) has one thin C++ shim (csim/T_shim.cpp) whose only job is to
 * construct the model and list its ports; it exports `vmodel_t *T_new(uint64_t seed)`.
 * Everything else -- reset, clocking, port access, FST tracing -- is this common API,
 * so all code above the shim is C11.
 *
 * Reset values: each handle owns its own VerilatedContext with randReset(2) and the given
 * seed, and the models are built with --x-assign unique --x-initial unique, so every
 * register without a reset starts random and missing resets show up in tests.
 *
 * Clocking: every top has `clk_i` and active-low `rst_ni`. One cycle is a rising edge
 * followed by a falling edge; inputs poked between steps are sampled at the next rising
 * edge. Trace time runs at 10 units (ns) per cycle, so cycle N starts at time 10*N.
 */
#ifndef VMODEL_H
#define VMODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vmodel vmodel_t;

/* Port lookup: index of the named port, or -1. Look ports up once, outside hot loops. */
int vmodel_port(const vmodel_t *m, const char *name);
unsigned vmodel_port_width(const vmodel_t *m, int port);
const char *vmodel_name(const vmodel_t *m);

/* Ports up to 64 bits wide. Poking an output port or an unknown index aborts: it is a
 * programming error in the caller, not a runtime condition. */
void vmodel_poke(vmodel_t *m, int port, uint64_t value);
uint64_t vmodel_peek(vmodel_t *m, int port);

/* Ports of any width as ceil(width/32) little-endian 32-bit words. */
void vmodel_poke_words(vmodel_t *m, int port, const uint32_t *words);
void vmodel_peek_words(vmodel_t *m, int port, uint32_t *words);

/* Raw storage of a port, for hot loops that move many ports every cycle (pod wiring):
 * uint8_t/uint16_t/uint32_t/uint64_t for ports of up to 8/16/32/64 bits, else
 * ceil(width/32) little-endian uint32_t words. Writes to an input take effect at the next
 * vmodel_step; the caller keeps unused high bits zero. */
void *vmodel_port_ptr(vmodel_t *m, int port);

/* Holds rst_ni low for `cycles` cycles (at least 1), then releases it. */
void vmodel_reset(vmodel_t *m, unsigned cycles);
/* Runs `cycles` clock cycles. */
void vmodel_step(vmodel_t *m, uint64_t cycles);
/* Cycles stepped since creation (reset cycles included). */
uint64_t vmodel_cycle(const vmodel_t *m);

/* Starts an FST trace of the whole model. Returns 0, or -1 with a message in err
 * (for example when the file cannot be created); the model is unchanged on failure. */
int vmodel_trace_open(vmodel_t *m, const char *path, char *err, size_t errlen);
void vmodel_trace_close(vmodel_t *m);

/* Runs the model's final blocks, closes any trace and frees everything. NULL is allowed. */
void vmodel_free(vmodel_t *m);

#ifdef __cplusplus
}
#endif

#endif
