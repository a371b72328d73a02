/*
 * commands: the `tpusim` subcommands. Each takes its own argv (argv[0] is the command
 * name), prints results on stdout (one JSON object with --json), progress and errors on
 * stderr, and returns the process exit status (cli.h: 0 ok, 1 failed check, 2 bad usage).
 */
#ifndef COMMANDS_H
#define COMMANDS_H

#include <stdbool.h>

#include "fw/collective_args.h"

int cmd_dot(int argc, char **argv);
int cmd_gemm(int argc, char **argv);
int cmd_net(int argc, char **argv);
int cmd_chip(int argc, char **argv);
int cmd_collective(int argc, char **argv);
int cmd_step(int argc, char **argv);
int cmd_randprog(int argc, char **argv);
int cmd_train(int argc, char **argv);

/* Shared by the commands (cli_shared.c). --slice X0,Y0,WxH into an fw_slice_t (a CLI_CUSTOM
 * parser: numbers 0..255, an empty slice is refused later with the pod). */
bool cmd_parse_slice(const char *cmd, const char *opt, const char *text, void *dst);
/* Runs scripts/<script_name> (found from the tpusim binary's directory) with python3 on csv,
 * writing png with a title. 0 on success. */
int cmd_plot(const char *exe_dir, const char *script_name, const char *csv, const char *png, const char *title);

#endif
