/*
 * profile_stream: the trace written while the pod runs (profile_config_t.trace_path;
 * docs/profiling.md, "Writing the trace while the pod runs"): each run's slices go to the file
 * from a thread of their own while the next run simulates. It reads a snapshot of each chip's
 * records (records never change once added, and add_ev keeps an array it outgrows meanwhile)
 * and touches only the writer and each chip's naming state, which nothing else does until
 * stream_join.
 */
#include "profile/profile_internal.h"

#include <stdlib.h>
#include <string.h>

static void *stream_main(void *arg) {
  profile_t *p = arg;
  if (trace_write_snapped(p->stream, p)) p->stream_off = true;
  return NULL;
}

void stream_join(profile_t *p) {
  if (!p->streaming_on) return;
  pthread_join(p->streamer, NULL);
  p->streaming_on = false;
  for (unsigned i = 0; i < p->nchips; i++) {
    pchip_t *c = p->chip[i];
    for (unsigned j = 0; c && j < c->rec.nretired; j++) free(c->rec.retired[j]);
    if (c) c->rec.nretired = 0;
  }
}

void stream_run(profile_t *p) {
  if (!p->cfg.trace_path || p->stream_off) return;
  if (!p->stream) {
    char err[256];
    if (!(p->stream = trace_open(p, p->cfg.trace_path, &p->stream_tmp, err, sizeof err))) {
      p->stream_off = true;
      return;
    }
  }
  trace_snap_run(p, p->streamed++);
  if (!(p->streaming_on = pthread_create(&p->streamer, NULL, stream_main, p) == 0)) stream_main(p); /* (no thread: here) */
}

tw_t *stream_take(profile_t *p, const char *path, unsigned runs, char **tmp) {
  if (p->stream && p->cfg.trace_path && !strcmp(path, p->cfg.trace_path) && !p->stream_off) {
    trace_snap_run(p, runs - 1);
    if (!trace_write_snapped(p->stream, p)) {
      tw_t *w = p->stream;
      *tmp = p->stream_tmp;
      p->stream = NULL, p->stream_tmp = NULL;
      return w;
    }
  }
  stream_drop(p);
  return NULL;
}

void stream_drop(profile_t *p) {
  stream_join(p);
  if (!p->stream) return;
  trace_discard(p->stream, p->stream_tmp);
  p->stream = NULL, p->stream_tmp = NULL;
}
