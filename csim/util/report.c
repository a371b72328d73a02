/* report: see report.h. */
#include "util/report.h"

#include <stdlib.h>
#include <string.h>

#include "util/json.h"

_Noreturn static void misuse(const char *what, const char *detail) {
  fprintf(stderr, "report: %s: %s\n", what, detail);
  abort();
}

void report_init(report_t *r) { memset(r, 0, sizeof *r); }

static report_value_t *add(report_t *r, const char *key, report_kind_t kind, bool text_only) {
  if (r->nvalues == REPORT_MAX_VALUES) misuse("too many values", key);
  report_value_t *v = &r->values[r->nvalues++];
  memset(v, 0, sizeof *v);
  int n = kind == REPORT_CLOSE ? snprintf(v->key, sizeof v->key, "%s", r->prefix)
                               : snprintf(v->key, sizeof v->key, "%s%s%s", r->prefix, *r->prefix ? "." : "", key);
  if (n < 0 || (size_t)n >= sizeof v->key) misuse("key too long", key);
  v->kind = kind;
  v->text_only = text_only;
  return v;
}

void report_u64(report_t *r, const char *key, uint64_t v) { add(r, key, REPORT_U64, false)->v.u = v; }
void report_i64(report_t *r, const char *key, int64_t v) { add(r, key, REPORT_I64, false)->v.i = v; }
void report_f64(report_t *r, const char *key, double v) { add(r, key, REPORT_F64, false)->v.f = v; }
void report_bool(report_t *r, const char *key, bool v) { add(r, key, REPORT_BOOL, false)->v.b = v; }
void report_text_u64(report_t *r, const char *key, uint64_t v) { add(r, key, REPORT_U64, true)->v.u = v; }
void report_text_f64(report_t *r, const char *key, double v) { add(r, key, REPORT_F64, true)->v.f = v; }
void report_text_bool(report_t *r, const char *key, bool v) { add(r, key, REPORT_BOOL, true)->v.b = v; }

static void set_str(report_value_t *v, const char *s) { v->s = s ? s : ""; }
void report_str(report_t *r, const char *key, const char *v) { set_str(add(r, key, REPORT_STR, false), v); }
void report_text_str(report_t *r, const char *key, const char *v) { set_str(add(r, key, REPORT_STR, true), v); }

void report_object(report_t *r, const char *key) {
  if (*r->prefix) misuse("objects nest one level deep", key);
  add(r, key, REPORT_OPEN, false);
  snprintf(r->prefix, sizeof r->prefix, "%s", key);
}

void report_object_end(report_t *r) {
  if (!*r->prefix) misuse("report_object_end without report_object", "");
  add(r, "", REPORT_CLOSE, false);
  r->prefix[0] = 0;
}

void report_line(report_t *r, const char *tmpl) {
  if (r->nlines == REPORT_MAX_LINES) misuse("too many lines", tmpl);
  r->lines[r->nlines++] = tmpl;
}

/* ------------------------------------------------------------------ JSON */

static const char *last_part(const char *key) {
  const char *dot = strrchr(key, '.');
  return dot ? dot + 1 : key;
}

static void print_json(const report_t *r, FILE *out) {
  json_t j;
  json_begin(&j, out);
  for (unsigned i = 0; i < r->nvalues; i++) {
    const report_value_t *v = &r->values[i];
    if (v->text_only) continue;
    const char *k = last_part(v->key);
    switch (v->kind) {
      case REPORT_U64: json_u64(&j, k, v->v.u); break;
      case REPORT_I64: json_i64(&j, k, v->v.i); break;
      case REPORT_F64: json_f64(&j, k, v->v.f); break;
      case REPORT_BOOL: json_bool(&j, k, v->v.b); break;
      case REPORT_STR: json_str(&j, k, v->s); break;
      case REPORT_OPEN: json_object(&j, k); break;
      case REPORT_CLOSE: json_object_end(&j); break;
    }
  }
  json_end(&j);
}

/* ------------------------------------------------------------------ text */

static const report_value_t *find(const report_t *r, const char *key, size_t len) {
  for (unsigned i = 0; i < r->nvalues; i++)
    if (r->values[i].kind < REPORT_OPEN && strlen(r->values[i].key) == len && !strncmp(r->values[i].key, key, len))
      return &r->values[i];
  return NULL;
}

static double as_double(const report_value_t *v) {
  switch (v->kind) {
    case REPORT_U64: return (double)v->v.u;
    case REPORT_I64: return (double)v->v.i;
    case REPORT_F64: return v->v.f;
    default: return 0;
  }
}

/* Formats one {...} field (without the braces) of template `tmpl`. */
static void field(const report_t *r, const char *tmpl, const char *f, size_t len, FILE *out) {
  char spec[256];
  if (len >= sizeof spec) misuse("field too long", tmpl);
  memcpy(spec, f, len);
  spec[len] = 0;
  char *choice = strchr(spec, '?'), *fmt = strchr(spec, ':'), *scale = strchr(spec, '*');
  if (choice) *choice++ = 0;
  if (fmt && !choice) *fmt++ = 0;
  else fmt = NULL;
  if (scale && !choice) *scale++ = 0;
  else scale = NULL;
  const report_value_t *v = find(r, spec, strlen(spec));
  if (!v) misuse("a line names an unknown value", tmpl);
  if (choice) {
    char *bar = strchr(choice, '|');
    if (!bar || v->kind != REPORT_BOOL) misuse("{key?YES|NO} needs a boolean and a '|'", tmpl);
    if (v->v.b) fwrite(choice, 1, (size_t)(bar - choice), out);
    else fputs(bar + 1, out);
    return;
  }
  if (scale || (fmt && v->kind == REPORT_F64)) {
    double x = as_double(v) * (scale ? strtod(scale, NULL) : 1.0);
    const char *conv = fmt ? fmt + strlen(fmt) - 1 : "g";
    if (v->kind > REPORT_F64) misuse("only numbers scale", tmpl);
    if (strchr("diuxX", *conv)) {
      char f2[40];
      snprintf(f2, sizeof f2, "%.*sll%c", (int)(conv - fmt), fmt, *conv);
      fprintf(out, f2, (long long)x);
    } else {
      fprintf(out, fmt ? fmt : "%g", x);
    }
    return;
  }
  switch (v->kind) {
    case REPORT_U64:
    case REPORT_I64: {
      if (!fmt) {
        if (v->kind == REPORT_U64) fprintf(out, "%llu", (unsigned long long)v->v.u);
        else fprintf(out, "%lld", (long long)v->v.i);
        break;
      }
      const char *conv = fmt + strlen(fmt) - 1;
      if (!strchr("diuxX", *conv)) misuse("an integer needs %d, %u or %x", tmpl);
      char f2[40];
      snprintf(f2, sizeof f2, "%.*sll%c", (int)(conv - fmt), fmt, *conv);
      if (v->kind == REPORT_U64) fprintf(out, f2, (unsigned long long)v->v.u);
      else fprintf(out, f2, (long long)v->v.i);
      break;
    }
    case REPORT_F64: fprintf(out, "%g", v->v.f); break;
    case REPORT_BOOL: fputs(v->v.b ? "true" : "false", out); break;
    case REPORT_STR: fprintf(out, fmt ? fmt : "%s", v->s); break;
    default: misuse("not a value", tmpl);
  }
}

static void print_text(const report_t *r, FILE *out) {
  for (unsigned l = 0; l < r->nlines; l++) {
    const char *t = r->lines[l];
    while (*t) {
      const char *open = strchr(t, '{');
      if (!open) {
        fputs(t, out);
        break;
      }
      fwrite(t, 1, (size_t)(open - t), out);
      if (open[1] == '{') { /* "{{" is a literal brace */
        fputc('{', out);
        t = open + 2;
        continue;
      }
      const char *close = strchr(open, '}');
      if (!close) misuse("unclosed '{'", r->lines[l]);
      field(r, r->lines[l], open + 1, (size_t)(close - open - 1), out);
      t = close + 1;
    }
    fputc('\n', out);
  }
}

int report_print(const report_t *r, bool json, FILE *out) {
  if (json) print_json(r, out);
  else print_text(r, out);
  return fflush(out) || ferror(out) ? -1 : 0;
}
