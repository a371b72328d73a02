/* machine: see machine.h. The file format and why JSON through jansson: docs/machines.md. */
#include "pod/machine.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "machine_presets.h" /* build/gen: csim/pod/machines/NAME.json as strings */

typedef enum { KEY_UINT, KEY_U64, KEY_MODEL } key_kind_t;

/* Every key of a machine file but "name" and "preset": where it lives in machine_t and its
 * range. The ranges are what the machine can mean at all; whether this build has such a chip
 * is pod_check's to say. */
typedef struct {
  const char *section, *key;
  key_kind_t kind;
  size_t offset;
  uint64_t min, max;
  unsigned bit;
} machine_key_info_t;

#define FIELD(member) offsetof(machine_t, member)
static const machine_key_info_t keys[] = {
    {"chip", "mxu_rows", KEY_UINT, FIELD(pod.chip.rows), 1, 4096, MACHINE_HAS_MXU_ROWS},
    {"chip", "mxu_cols", KEY_UINT, FIELD(pod.chip.cols), 1, 4096, MACHINE_HAS_MXU_COLS},
    {"chip", "mxus", KEY_UINT, FIELD(pod.chip.mxus), 1, CHIP_MAX_MXUS, MACHINE_HAS_MXUS},
    {"chip", "cores", KEY_UINT, FIELD(pod.chip.cores), 1, CHIP_MAX_CORES, MACHINE_HAS_CORES},
    {"chip", "clock_mhz", KEY_UINT, FIELD(pod.chip.clock_mhz), 1, CHIP_MAX_CLOCK_MHZ, MACHINE_HAS_CLOCK},
    {"chip", "hbm_bytes", KEY_U64, FIELD(pod.chip.hbm_bytes), 0, CHIP_MAX_HBM_BYTES, MACHINE_HAS_HBM_BYTES},
    {"chip", "hbm_bytes_per_cycle", KEY_UINT, FIELD(pod.chip.hbm_bytes_per_cycle), 1, CHIP_MAX_HBM_BYTES_PER_CYCLE,
     MACHINE_HAS_HBM_BW},
    {"chip", "hbm_latency", KEY_UINT, FIELD(pod.chip.hbm_latency), 1, CHIP_MAX_HBM_LATENCY, MACHINE_HAS_HBM_LATENCY},
    {"chip", "flit_words", KEY_UINT, FIELD(pod.chip.flit_words), 1, NOC_FLIT_MAX_WORDS, MACHINE_HAS_FLIT_WORDS},
    {"pod", "x", KEY_UINT, FIELD(pod.size_x), 1, 255, MACHINE_HAS_POD},
    {"pod", "y", KEY_UINT, FIELD(pod.size_y), 1, 255, MACHINE_HAS_POD},
    {"pod", "link_latency", KEY_UINT, FIELD(pod.link_latency), 0, POD_MAX_LINK_LATENCY, MACHINE_HAS_LINK_LATENCY},
    {"pod", "link_bytes", KEY_UINT, FIELD(pod.link_bytes), 0, 8 * NOC_FLIT_MAX_WORDS, MACHINE_HAS_LINK_BYTES},
    {"sim", "model", KEY_MODEL, FIELD(pod.chip.model), 0, CHIP_MODELS - 1, MACHINE_HAS_MODEL},
    {"sim", "threads", KEY_UINT, FIELD(pod.threads), 1, 255, MACHINE_HAS_THREADS},
};
#define NKEYS (sizeof keys / sizeof keys[0])
static const char *const sections[] = {"chip", "pod", "sim"};

typedef struct {
  const char *name, *text;
} machine_preset_file_t;
static const machine_preset_file_t presets[] = {MACHINE_PRESET_FILES};
#define NPRESETS (sizeof presets / sizeof presets[0])

machine_t machine_default(void) {
  machine_t m = {.pod = {.size_x = 1, .size_y = 1, .chip = chip_config_default(16, 16)}};
  m.pod.chip.mxus = 1, m.pod.chip.cores = 1, m.pod.chip.flit_words = 1;
  m.pod.chip.hbm_bytes = 0; /* sized to the workload */
  m.pod.threads = 1;
  return m;
}

const char *machine_preset_names(void) { return MACHINE_PRESET_NAMES; }

int machine_preset(unsigned i, machine_t *m, char *err, size_t errlen) {
  if (i >= NPRESETS) {
    snprintf(err, errlen, "no preset %u (presets: %s)", i, MACHINE_PRESET_NAMES);
    return -1;
  }
  char origin[96];
  snprintf(origin, sizeof origin, "preset %s", presets[i].name);
  return machine_parse(presets[i].text, strlen(presets[i].text), origin, m, err, errlen);
}

static int preset_index(const char *name) {
  for (unsigned i = 0; i < NPRESETS; i++)
    if (!strcmp(presets[i].name, name)) return (int)i;
  return -1;
}

static const char *json_kind(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "an array";
  case JSON_STRING: return "a string";
  case JSON_INTEGER: return "an integer";
  case JSON_REAL: return "a real number";
  case JSON_TRUE:
  case JSON_FALSE: return "a boolean";
  default: return "null";
  }
}

/* One key's value into *m. */
static int set_key(const machine_key_info_t *k, const json_t *v, const char *origin, machine_t *m, char *err,
                   size_t errlen) {
  char *field = (char *)m + k->offset;
  if (k->kind == KEY_MODEL) {
    chip_model_t model;
    if (!json_is_string(v)) {
      snprintf(err, errlen, "%s: %s.%s must be a string (rtl, fast or check), not %s", origin, k->section, k->key,
               json_kind(v));
      return -1;
    }
    if (chip_model_parse(json_string_value(v), &model)) {
      snprintf(err, errlen, "%s: %s.%s is \"%s\": the models are rtl, fast and check", origin, k->section, k->key,
               json_string_value(v));
      return -1;
    }
    memcpy(field, &model, sizeof model);
    m->keys |= k->bit;
    return 0;
  }
  if (!json_is_integer(v)) {
    snprintf(err, errlen, "%s: %s.%s must be an integer in %" PRIu64 "..%" PRIu64 ", not %s", origin, k->section,
             k->key, k->min, k->max, json_kind(v));
    return -1;
  }
  const json_int_t x = json_integer_value(v);
  if (x < 0 || (uint64_t)x < k->min || (uint64_t)x > k->max) {
    snprintf(err, errlen, "%s: %s.%s is %" JSON_INTEGER_FORMAT ": it must be in %" PRIu64 "..%" PRIu64, origin,
             k->section, k->key, x, k->min, k->max);
    return -1;
  }
  if (k->kind == KEY_U64) {
    const uint64_t u = (uint64_t)x;
    memcpy(field, &u, sizeof u);
  } else {
    const unsigned u = (unsigned)x;
    memcpy(field, &u, sizeof u);
  }
  m->keys |= k->bit;
  return 0;
}

static int parse_section(const char *section, const json_t *obj, const char *origin, machine_t *m, char *err,
                         size_t errlen) {
  if (!json_is_object(obj)) {
    snprintf(err, errlen, "%s: \"%s\" must be an object, not %s", origin, section, json_kind(obj));
    return -1;
  }
  const char *name;
  json_t *v;
  json_object_foreach((json_t *)obj, name, v) {
    const machine_key_info_t *k = NULL;
    for (size_t i = 0; i < NKEYS && !k; i++)
      if (!strcmp(keys[i].section, section) && !strcmp(keys[i].key, name)) k = &keys[i];
    if (!k) {
      char known[256] = "";
      for (size_t i = 0; i < NKEYS; i++)
        if (!strcmp(keys[i].section, section))
          snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", *known ? ", " : "", keys[i].key);
      snprintf(err, errlen, "%s: unknown key %s.%s (the %s keys: %s)", origin, section, name, section, known);
      return -1;
    }
    if (set_key(k, v, origin, m, err, errlen)) return -1;
  }
  return 0;
}

int machine_parse(const char *text, size_t len, const char *origin, machine_t *m, char *err, size_t errlen) {
  json_error_t je;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
  if (!root) {
    snprintf(err, errlen, "%s: not a machine file: line %d, column %d: %s", origin, je.line, je.column, je.text);
    return -1;
  }
  int rc = 0;
  if (!json_is_object(root)) {
    snprintf(err, errlen, "%s: a machine file is a JSON object, not %s", origin, json_kind(root));
    rc = -1;
  }
  /* the preset first, whatever the order of the keys, so the file's own keys override it */
  const json_t *preset = rc ? NULL : json_object_get(root, "preset");
  if (preset) {
    const int i = json_is_string(preset) ? preset_index(json_string_value(preset)) : -1;
    if (!json_is_string(preset)) {
      snprintf(err, errlen, "%s: preset must be a string (%s), not %s", origin, MACHINE_PRESET_NAMES,
               json_kind(preset));
      rc = -1;
    } else if (i < 0) {
      snprintf(err, errlen, "%s: preset is \"%s\": the presets are %s", origin, json_string_value(preset),
               MACHINE_PRESET_NAMES);
      rc = -1;
    } else {
      rc = machine_preset((unsigned)i, m, err, errlen);
    }
  }
  const char *name;
  json_t *v;
  if (!rc) json_object_foreach(root, name, v) {
      if (!strcmp(name, "preset")) continue;
      if (!strcmp(name, "name")) {
        if (!json_is_string(v) || strlen(json_string_value(v)) >= MACHINE_NAME_MAX) {
          snprintf(err, errlen, "%s: name must be a string of at most %d characters", origin, MACHINE_NAME_MAX - 1);
          rc = -1;
          break;
        }
        snprintf(m->name, sizeof m->name, "%s", json_string_value(v));
        continue;
      }
      size_t s = 0;
      while (s < sizeof sections / sizeof sections[0] && strcmp(sections[s], name)) s++;
      if (s == sizeof sections / sizeof sections[0]) {
        snprintf(err, errlen, "%s: unknown key %s (a machine file has name, preset, chip, pod and sim)", origin, name);
        rc = -1;
        break;
      }
      if ((rc = parse_section(name, v, origin, m, err, errlen))) break;
    }
  json_decref(root);
  return rc;
}

int machine_load(const char *path, machine_t *m, char *err, size_t errlen) {
  /* O_NONBLOCK: a FIFO must not block the open; it is refused below as not a regular file */
  const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    snprintf(err, errlen, "machine file %s: %s", path, strerror(errno));
    return -1;
  }
  struct stat st;
  int rc = -1;
  char *text = NULL;
  if (fstat(fd, &st)) {
    snprintf(err, errlen, "machine file %s: %s", path, strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    snprintf(err, errlen, "machine file %s: not a regular file (%s)", path,
             S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket");
  } else if (st.st_size > (off_t)MACHINE_FILE_MAX_BYTES) {
    snprintf(err, errlen, "machine file %s: %lld bytes, more than a machine file's %u", path, (long long)st.st_size,
             MACHINE_FILE_MAX_BYTES);
  } else if (!(text = malloc((size_t)st.st_size + 1))) {
    snprintf(err, errlen, "machine file %s: out of memory", path);
  } else {
    size_t got = 0;
    ssize_t n = 1;
    while (got < (size_t)st.st_size && (n = read(fd, text + got, (size_t)st.st_size - got)) > 0) got += (size_t)n;
    if (n < 0) snprintf(err, errlen, "machine file %s: %s", path, strerror(errno));
    else rc = machine_parse(text, got, path, m, err, errlen);
  }
  free(text);
  close(fd);
  return rc;
}

int machine_write(const machine_t *m, FILE *f) {
  const chip_config_t *c = &m->pod.chip;
  fprintf(f, "{\n  \"name\": \"");
  for (const char *p = m->name; *p; p++) /* the name as the reader took it: a JSON string */
    if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else if ((unsigned char)*p < 0x20) fprintf(f, "\\u%04x", (unsigned char)*p);
    else fputc(*p, f);
  fprintf(f, "\",\n");
  fprintf(f, "  \"chip\": {\"mxu_rows\": %u, \"mxu_cols\": %u, \"mxus\": %u, \"cores\": %u, \"clock_mhz\": %u,\n",
          c->rows, c->cols, c->mxus ? c->mxus : 1, c->cores ? c->cores : 1, c->clock_mhz);
  fprintf(f, "           \"hbm_bytes\": %" PRIu64 ", \"hbm_bytes_per_cycle\": %u, \"hbm_latency\": %u, \"flit_words\": %u},\n",
          c->hbm_bytes, c->hbm_bytes_per_cycle, c->hbm_latency, c->flit_words ? c->flit_words : 1);
  fprintf(f, "  \"pod\": {\"x\": %u, \"y\": %u, \"link_latency\": %u, \"link_bytes\": %u},\n", m->pod.size_x,
          m->pod.size_y, m->pod.link_latency, m->pod.link_bytes);
  fprintf(f, "  \"sim\": {\"model\": \"%s\", \"threads\": %u}\n}\n", chip_model_name(c->model),
          m->pod.threads ? m->pod.threads : 1);
  return ferror(f) ? -1 : 0;
}
