/*
 * stopwatch: host time, for the simulation-speed figures the commands report (cycles per
 * second of host time), and a ticker that lets a progress line through at most once per
 * interval, for long runs that report progress on stderr.
 */
#ifndef UTIL_STOPWATCH_H
#define UTIL_STOPWATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

typedef struct {
  struct timespec t0;
} stopwatch_t;

static inline double stopwatch_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline void stopwatch_start(stopwatch_t *w) { clock_gettime(CLOCK_MONOTONIC, &w->t0); }

/* Seconds since stopwatch_start. */
static inline double stopwatch_seconds(const stopwatch_t *w) {
  return stopwatch_now() - ((double)w->t0.tv_sec + 1e-9 * (double)w->t0.tv_nsec);
}

/* The most memory this process has held so far (its peak resident set), in bytes. */
static inline uint64_t stopwatch_peak_rss(void) {
  struct rusage u;
  return getrusage(RUSAGE_SELF, &u) ? 0 : (uint64_t)u.ru_maxrss * 1024;
}

typedef struct {
  double last, every;
} ticker_t;

/* A ticker that is due every `every` seconds, the first time `every` seconds from now. */
static inline void ticker_init(ticker_t *t, double every) {
  t->every = every;
  t->last = stopwatch_now();
}

/* True at most once per interval. */
static inline bool ticker_due(ticker_t *t) {
  double now = stopwatch_now();
  if (now - t->last < t->every) return false;
  t->last = now;
  return true;
}

#endif
