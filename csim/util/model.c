/* model: see model.h. */
#include "util/model.h"

#include <string.h>

const char *chip_model_name(chip_model_t m) {
  static const char *const names[CHIP_MODELS] = {"rtl", "fast", "check"};
  return m < CHIP_MODELS ? names[m] : "?";
}

int chip_model_parse(const char *s, chip_model_t *m) {
  for (int i = 0; i < CHIP_MODELS; i++)
    if (!strcmp(s, chip_model_name((chip_model_t)i))) {
      *m = (chip_model_t)i;
      return 0;
    }
  return -1;
}
