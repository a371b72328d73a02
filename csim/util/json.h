/*
 * json: a minimal streaming JSON writer for `tpusim ... --json` (one object on stdout).
 * Keys are plain identifiers chosen by the program; string values are escaped.
 */
#ifndef JSON_H
#define JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 8

typedef struct {
  FILE *out;
  int depth;
  bool first[JSON_MAX_DEPTH];
} json_t;

void json_begin(json_t *j, FILE *out);           /* opens the top-level object */
void json_end(json_t *j);                        /* closes it and ends the line */
void json_object(json_t *j, const char *key);    /* opens a nested object (key NULL: an array's item) */
void json_object_end(json_t *j);
void json_array(json_t *j, const char *key);     /* opens an array: its items are objects (key NULL) */
void json_array_end(json_t *j);
void json_u64(json_t *j, const char *key, uint64_t v);
void json_i64(json_t *j, const char *key, int64_t v);
void json_f64(json_t *j, const char *key, double v);   /* non-finite -> null */
void json_bool(json_t *j, const char *key, bool v);
void json_str(json_t *j, const char *key, const char *v);

#endif
