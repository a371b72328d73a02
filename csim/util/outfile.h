/*
 * outfile: every file a `tpusim` command writes, as one transaction (docs/robustness.md,
 * "Files and signals"). An output is claimed when the command line is parsed (its path
 * checked then, before anything is simulated); the command writes it under a temporary name
 * beside its destination (same directory, so the rename is atomic); when the command
 * succeeds, outfile_finish renames every temporary into place, and on failure, or on
 * SIGINT, SIGTERM, SIGHUP or SIGPIPE, removes them. A command thus never leaves a partial
 * file, and never removes or changes a file it did not create: a destination is only ever
 * replaced whole, by a finished file, at the end of a run that succeeded.
 *
 * Process-wide on purpose (one command runs in a process; the signal handler needs the
 * list). Not thread-safe: claims and finish run on the main thread.
 */
#ifndef UTIL_OUTFILE_H
#define UTIL_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

/* Claims `path` as an output of option `opt` ("--trace"): it must be a regular file or not
 * exist yet, in a directory that exists and this process can create files in; not an input
 * of the command (outfile_input) nor another output. A symbolic link is followed: its target
 * is replaced. false with a usage error printed (exit 2). The first claim installs the
 * signal handlers. */
bool outfile_claim(const char *cmd, const char *opt, const char *path);

/* Whether `dir` is a directory this process can create files in (a command's output
 * directory: --export, --save); false with a usage error printed. */
bool outfile_dir_ok(const char *cmd, const char *opt, const char *dir);

/* Records `path` as an input of option `opt`: no output may name it. false with a usage
 * error printed when an output already does. */
bool outfile_input(const char *cmd, const char *opt, const char *path);

/* The temporary to write for a claimed `path`: `<dir>/.tpusim-<pid>-<n>.<name>` (hidden,
 * keeps the extension: plotting tools choose the format by it). Aborts when `path` was
 * not claimed (a programming error). outfile_temp_fst marks the output as an FST
 * waveform: its writer's `<temp>.hier` is removed with it, and the file is checked whole
 * (every block, to the end) before it is renamed, since the FST writer does not report
 * a short write. */
const char *outfile_temp(const char *path);
const char *outfile_temp_fst(const char *path);

/* A scratch file beside claimed `path` (`<temp>.<suffix>`), removed by outfile_finish
 * whatever the outcome (a plot's CSV input). */
const char *outfile_scratch(const char *path, const char *suffix);

/* fopen(outfile_temp(path), mode) creating the temporary; outfile_close checks everything
 * written reached the file (ferror, fflush, fclose; outfile_finish syncs the file system
 * before renaming): 0, or -1 with errno set. */
FILE *outfile_open(const char *path, const char *mode);
int outfile_close(FILE *f);

/* Ends the command with status rc: when rc is 0, the report on stdout is flushed and
 * checked (a report that cannot be written is a failure: exit 1), the FST outputs are
 * checked, the temporaries' file systems synced (syncfs, once a directory), and every
 * temporary that exists is renamed into place, in claim order; when
 * anything failed, every temporary is removed. Returns the command's final status. */
int outfile_finish(const char *cmd, int rc);

/* Forgets every claim (tests that parse several command lines in one process). */
void outfile_reset(void);

#endif
