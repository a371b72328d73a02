/*
 * machine: the machine a command simulates as one value, and its file. A machine is a
 * pod_config_t (the pod: its size, links, threads) holding the chip_config_t every chip
 * shares (MXUs, cores, clock, HBM, flits, model), with a name. It is read from a JSON file
 * (`--machine FILE`) or a preset (`--chip small|v2|v3`, the files csim/pod/machines/NAME.json
 * built into the binary and read by the same reader), and written back in the same form
 * (`--print-machine`): docs/machines.md has the keys, their ranges and the precedence.
 */
#ifndef POD_MACHINE_H
#define POD_MACHINE_H

#include <stdio.h>

#include "pod/pod.h"

#define MACHINE_NAME_MAX 64
#define MACHINE_FILE_MAX_BYTES (1u << 20)  /* a machine file is a few hundred bytes */

/* The keys a machine file sets (bit per key), so that a caller can tell what came from the
 * file and what kept its default. */
typedef enum {
  MACHINE_HAS_MXU_ROWS = 1u << 0,
  MACHINE_HAS_MXU_COLS = 1u << 1,
  MACHINE_HAS_MXUS = 1u << 2,
  MACHINE_HAS_CORES = 1u << 3,
  MACHINE_HAS_CLOCK = 1u << 4,
  MACHINE_HAS_HBM_BYTES = 1u << 5,
  MACHINE_HAS_HBM_BW = 1u << 6,
  MACHINE_HAS_HBM_LATENCY = 1u << 7,
  MACHINE_HAS_FLIT_WORDS = 1u << 8,
  MACHINE_HAS_POD = 1u << 9,        /* pod.x or pod.y */
  MACHINE_HAS_LINK_LATENCY = 1u << 10,
  MACHINE_HAS_LINK_BYTES = 1u << 11,
  MACHINE_HAS_MODEL = 1u << 12,
  MACHINE_HAS_THREADS = 1u << 13,
} machine_key_t;

typedef struct {
  char name[MACHINE_NAME_MAX];  /* "" when unnamed */
  pod_config_t pod;             /* pod.chip: every chip's configuration */
  unsigned keys;                /* machine_key_t bits: what the file (or its preset) set */
} machine_t;

/* The machine every command starts from before its own defaults: one chip of one 16x16 MXU,
 * one core, the default clock and HBM (chip.h), 64-bit flits a cycle on links of no extra
 * latency, the RTL, one thread. */
machine_t machine_default(void);

/* "small|v2|v3": the presets' names, as the CLI's choice list. */
const char *machine_preset_names(void);
/* Applies preset i (in the order of machine_preset_names) over *m: 0, or -1 with a message. */
int machine_preset(unsigned i, machine_t *m, char *err, size_t errlen);

/* Applies a machine file's text over *m (keys it leaves out keep their values; "preset"
 * applies a preset first): 0, or -1 with a message that names `origin` (the file), the line
 * and column of a syntax error, or the key that is unknown, of the wrong type or out of
 * range. The ranges are the machine's own (a size in this build is pod_check's). */
int machine_parse(const char *text, size_t len, const char *origin, machine_t *m, char *err, size_t errlen);
/* The same for a file: refuses what is not a regular file (missing, a directory, a FIFO or a
 * device) or is larger than MACHINE_FILE_MAX_BYTES. */
int machine_load(const char *path, machine_t *m, char *err, size_t errlen);

/* Writes *m as a machine file (every key, so that machine_load of it gives the same machine).
 * Returns 0, or -1 when the stream fails. */
int machine_write(const machine_t *m, FILE *f);

#endif
