/*
 * prog_load: loads a chip's pairs of firmware programs (fw/hal.h) into its command queues, a
 * pair per core, the one step every runtime module takes before it runs a chip.
 */
#ifndef RUNTIME_PROG_LOAD_H
#define RUNTIME_PROG_LOAD_H

#include <stddef.h>

#include "fw/hal.h"
#include "runtime/status.h"
#include "chip/chip.h"
#include "pod/pod.h"
#include "profile/profile.h"

/* RT_OK, or RT_FAILED with a message: a program ran out of memory while it was built, or the
 * chip refused it (too long for its queue, the queue running). */
rt_status_t rt_load_programs(chip_t *c, const fw_prog_t *compute, const fw_prog_t *dma, char *err, size_t errlen);
/* The same for core `core`'s two queues. */
rt_status_t rt_load_core_programs(chip_t *c, unsigned core, const fw_prog_t *compute, const fw_prog_t *dma, char *err,
                                  size_t errlen);
/* Hands the compute program's kernel phases (fw_prog_mark) of chip (x, y) to the pod's profile,
 * if any, for the phase the host has set (pod_phase before the programs are loaded). */
void rt_pod_marks(pod_t *pod, unsigned x, unsigned y, const fw_prog_t *compute);
/* The same for chip `chip` (y * w + x) of a profile, for a chip run on its own (NULL: nothing). */
void rt_profile_marks(profile_t *prof, unsigned chip, const fw_prog_t *compute);

#endif
