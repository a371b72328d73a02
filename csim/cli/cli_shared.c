/* cli_shared: helpers more than one command uses (commands.h). */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "util/cli.h"

bool cmd_parse_slice(const char *cmd, const char *opt, const char *text, void *dst) {
  fw_slice_t *s = dst;
  char buf[64];
  uint64_t v[4];
  snprintf(buf, sizeof buf, "%s", text);
  char *c1 = strchr(buf, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL, *x = c2 ? strchr(c2 + 1, 'x') : NULL;
  if (strlen(text) < sizeof buf && x) {
    *c1 = *c2 = *x = 0;
    const char *parts[4] = {buf, c1 + 1, c2 + 1, x + 1};
    bool ok = true;
    for (int i = 0; i < 4; i++) ok = ok && cli_number(parts[i], 0, 255, &v[i]);
    if (ok) {
      s->x0 = (unsigned)v[0], s->y0 = (unsigned)v[1], s->w = (unsigned)v[2], s->h = (unsigned)v[3];
      return true;
    }
  }
  cli_usage_error(cmd, "%s expects X0,Y0,WxH (numbers 0..255), got '%s'", opt, text);
  return false;
}

int cmd_plot(const char *exe_dir, const char *script_name, const char *csv, const char *png, const char *title) {
  /* the binary is build/tpusim (or build/san/tpusim): the script is in scripts/ above it */
  char script[4200];
  snprintf(script, sizeof script, "%s/../scripts/%s", exe_dir, script_name);
  if (access(script, R_OK)) snprintf(script, sizeof script, "%s/../../scripts/%s", exe_dir, script_name);
  char *argv[] = {"/usr/bin/python3", script, (char *)csv, (char *)png, (char *)title, NULL};
  extern char **environ;
  pid_t pid;
  int status;
  if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0) return -1;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}
