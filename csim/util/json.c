/* json: see json.h. */
#include "util/json.h"

#include <math.h>

static void key(json_t *j, const char *k) {
  if (!j->first[j->depth]) fputc(',', j->out);
  j->first[j->depth] = false;
  if (k) fprintf(j->out, "\"%s\":", k);
}

static void open_obj(json_t *j) {
  fputc('{', j->out);
  if (j->depth + 1 < JSON_MAX_DEPTH) j->depth++;
  j->first[j->depth] = true;
}

void json_begin(json_t *j, FILE *out) {
  j->out = out;
  j->depth = 0;
  j->first[0] = true;
  open_obj(j);
}

void json_end(json_t *j) {
  fputs("}\n", j->out);
  j->depth = 0;
  fflush(j->out);
}

void json_object(json_t *j, const char *k) {
  key(j, k);
  open_obj(j);
}

void json_object_end(json_t *j) {
  fputc('}', j->out);
  if (j->depth > 1) j->depth--;
}

void json_array(json_t *j, const char *k) {
  key(j, k);
  fputc('[', j->out);
  if (j->depth + 1 < JSON_MAX_DEPTH) j->depth++;
  j->first[j->depth] = true;
}

void json_array_end(json_t *j) {
  fputc(']', j->out);
  if (j->depth > 1) j->depth--;
}

void json_u64(json_t *j, const char *k, uint64_t v) {
  key(j, k);
  fprintf(j->out, "%llu", (unsigned long long)v);
}

void json_i64(json_t *j, const char *k, int64_t v) {
  key(j, k);
  fprintf(j->out, "%lld", (long long)v);
}

void json_f64(json_t *j, const char *k, double v) {
  key(j, k);
  if (isfinite(v)) fprintf(j->out, "%.17g", v);
  else fputs("null", j->out);
}

void json_bool(json_t *j, const char *k, bool v) {
  key(j, k);
  fputs(v ? "true" : "false", j->out);
}

void json_str(json_t *j, const char *k, const char *v) {
  key(j, k);
  fputc('"', j->out);
  for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(j->out, "\\%c", *p);
    else if (*p < 0x20) fprintf(j->out, "\\u%04x", *p);
    else fputc(*p, j->out);
  }
  fputc('"', j->out);
}
