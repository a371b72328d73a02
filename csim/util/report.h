/*
 * report: what a `tpusim` command reports, built once and printed either as one JSON object
 * (--json) or as text: an ordered list of named values, and text lines that name them. A
 * metric is set in one place; both forms read it.
 *
 *   report_u64(r, "cycles", st.cycles);
 *   report_f64(r, "utilization", util);
 *   report_line(r, "  cycles          {cycles}");
 *   report_line(r, "  utilization     {utilization*100:%.2f}%");
 *   report_print(r, json, stdout);
 *
 * In a line, {key} prints the value in its plain form (integers in decimal, reals with %g,
 * strings as they are, booleans true/false); {key:FMT} with a printf conversion for its
 * type (%u-style conversions for integers are written %d/%u/%x and take the 64-bit value);
 * {key*S:FMT} scales a number first; {key?YES|NO} prints YES or NO by a boolean. Values set
 * with report_text_* appear in the text only. Everything lives inside report_t: nothing to
 * free, no failure to handle; strings and line templates are kept by pointer, so they must
 * outlive the report (literals, argv, the caller's buffers). Misuse (an unknown key in a
 * line, too many values) is a programming error and aborts with a message.
 */
#ifndef UTIL_REPORT_H
#define UTIL_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define REPORT_MAX_VALUES 192
#define REPORT_MAX_LINES 96
#define REPORT_KEY_LEN 48

typedef enum { REPORT_U64, REPORT_I64, REPORT_F64, REPORT_BOOL, REPORT_STR, REPORT_OPEN, REPORT_CLOSE } report_kind_t;

typedef struct {
  char key[REPORT_KEY_LEN];  /* full key: "counters.compute" inside object "counters" */
  report_kind_t kind;
  bool text_only;
  union {
    uint64_t u;
    int64_t i;
    double f;
    bool b;
  } v;
  const char *s;  /* REPORT_STR */
} report_value_t;

typedef struct {
  report_value_t values[REPORT_MAX_VALUES];
  unsigned nvalues;
  const char *lines[REPORT_MAX_LINES];  /* templates: string literals, or kept alive by the caller */
  unsigned nlines;
  char prefix[REPORT_KEY_LEN];          /* the open object's key path, "" at the top */
} report_t;

void report_init(report_t *r);

void report_u64(report_t *r, const char *key, uint64_t v);
void report_i64(report_t *r, const char *key, int64_t v);
void report_f64(report_t *r, const char *key, double v);  /* non-finite: JSON null */
void report_bool(report_t *r, const char *key, bool v);
void report_str(report_t *r, const char *key, const char *v);
/* Values the text shows but JSON leaves out (presentation, e.g. one output element). */
void report_text_u64(report_t *r, const char *key, uint64_t v);
void report_text_f64(report_t *r, const char *key, double v);
void report_text_bool(report_t *r, const char *key, bool v);
void report_text_str(report_t *r, const char *key, const char *v);

/* A nested JSON object: values until report_object_end are its members, named
 * "key.member" in lines. One level deep. */
void report_object(report_t *r, const char *key);
void report_object_end(report_t *r);

/* Appends a text line (see above); the template must outlive the report. */
void report_line(report_t *r, const char *tmpl);

/* Prints the values as one JSON object on a line, or the lines as text. Returns 0, or -1
 * when writing failed. */
int report_print(const report_t *r, bool json, FILE *out);

#endif
