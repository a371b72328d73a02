/*
 * commands: the `tpusim` subcommands. Each takes its own argv (argv[0] is the command
 * name), prints results on stdout (one JSON object with --json), progress and errors on
 * stderr, and returns the process exit status (cli.h: 0 ok, 1 failed check, 2 bad usage).
 */
#ifndef COMMANDS_H
#define COMMANDS_H

int cmd_dot(int argc, char **argv);
int cmd_gemm(int argc, char **argv);
int cmd_net(int argc, char **argv);
int cmd_chip(int argc, char **argv);
int cmd_collective(int argc, char **argv);
int cmd_step(int argc, char **argv);
int cmd_randprog(int argc, char **argv);

#endif
