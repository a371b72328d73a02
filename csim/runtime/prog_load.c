/* prog_load: see prog_load.h. */
#include "runtime/prog_load.h"

#include <stdio.h>

rt_status_t rt_load_core_programs(chip_t *c, unsigned core, const fw_prog_t *compute, const fw_prog_t *dma, char *err,
                                  size_t errlen) {
  if (!fw_prog_ok(compute) || !fw_prog_ok(dma)) {
    snprintf(err, errlen, "out of memory building the programs");
    return RT_FAILED;
  }
  const int q0 = (int)(core * ISA_NUM_QUEUES);
  if (chip_load_program(c, q0 + ISA_QUEUE_COMPUTE, compute->words, compute->count, err, errlen) ||
      chip_load_program(c, q0 + ISA_QUEUE_DMA, dma->words, dma->count, err, errlen))
    return RT_FAILED;
  return RT_OK;
}

rt_status_t rt_load_programs(chip_t *c, const fw_prog_t *compute, const fw_prog_t *dma, char *err, size_t errlen) {
  return rt_load_core_programs(c, 0, compute, dma, err, errlen);
}

void rt_pod_marks(pod_t *pod, unsigned x, unsigned y, const fw_prog_t *compute) {
  uint32_t at[FW_PROG_MARKS];
  const char *names[FW_PROG_MARKS];
  for (unsigned i = 0; i < compute->nmarks; i++) at[i] = compute->marks[i].at, names[i] = compute->marks[i].name;
  pod_marks(pod, x, y, at, names, compute->nmarks);
}

void rt_profile_marks(profile_t *prof, unsigned chip, const fw_prog_t *compute) {
  uint32_t at[FW_PROG_MARKS];
  const char *names[FW_PROG_MARKS];
  for (unsigned i = 0; i < compute->nmarks; i++) at[i] = compute->marks[i].at, names[i] = compute->marks[i].name;
  profile_marks(prof, chip, at, names, compute->nmarks);
}
