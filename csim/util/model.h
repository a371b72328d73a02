/*
 * model: which model runs a block that has more than one (a chip, chip/chip_core.h; a router,
 * network/noc_net.h): the Verilated RTL, the fast C model of it, or both in lockstep, every
 * visible output compared every cycle. One enum for every block, so one --model names them all.
 */
#ifndef UTIL_MODEL_H
#define UTIL_MODEL_H

typedef enum { CHIP_MODEL_RTL, CHIP_MODEL_FAST, CHIP_MODEL_CHECK, CHIP_MODELS } chip_model_t;

/* The names in enum order, as a CLI_CHOICE shape (util/cli.h): the option's index is the model. */
#define CHIP_MODEL_CHOICES "rtl|fast|check"

/* "rtl", "fast", "check" ("?" for anything else); chip_model_parse returns -1 for any other text. */
const char *chip_model_name(chip_model_t m);
int chip_model_parse(const char *s, chip_model_t *m);

#endif
