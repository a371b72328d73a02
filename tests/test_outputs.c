/*
 * test_outputs: every file a command writes is a transaction (util/outfile.h,
 * docs/robustness.md "Files and signals"): on a full disk, when the report cannot be written,
 * and on SIGINT, SIGTERM and SIGHUP (a real kill), a command leaves nothing behind and never
 * touches a file it did not create; on success each output is replaced whole. The full disk is
 * a small tmpfs, mounted for the suite (CI runs as root).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_run.h"

static char dir[64];      /* a scratch directory on the real disk */
static char full[96];     /* a tmpfs inside it, filled to the last byte */
static bool mounted;

/* The names in d, sorted, one a line. */
static void listing(const char *d, char *out, size_t len) {
  struct dirent **names;
  const int n = scandir(d, &names, NULL, alphasort);
  cr_assert_geq(n, 0, "cannot list %s", d);
  size_t used = 0;
  out[0] = 0;
  for (int i = 0; i < n; i++) {
    if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
      used += (size_t)snprintf(out + used, used < len ? len - used : 0, "%s\n", names[i]->d_name);
    free(names[i]);
  }
  free(names);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "cannot create %s", path);
  fputs(text, f);
  cr_assert_eq(fclose(f), 0);
}

static bool has_text(const char *path, const char *text) {
  char buf[256] = "";
  FILE *f = fopen(path, "r");
  if (!f) return false;
  const size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  return !strcmp(buf, text);
}

static void make_dir(void) {
  snprintf(dir, sizeof dir, "/tmp/tpusim_outputs_XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void) {
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}

/* A 256 KiB tmpfs (filled by each case: fill_up). */
static void mount_full(void) {
  make_dir();
  snprintf(full, sizeof full, "%s/full", dir);
  cr_assert_eq(mkdir(full, 0755), 0);
  cr_assert_eq(geteuid(), 0, "the full-disk cases mount a tmpfs: run as root (CI does)");
  cr_assert_eq(mount("tmpfs", full, "tmpfs", 0, "size=256k"), 0, "mount tmpfs: %s", strerror(errno));
  mounted = true;
}

/* Takes every byte left on the tmpfs (files can still be created: they are empty). */
static void fill_up(const char *fill) {
  const int fd = open(fill, O_WRONLY | O_CREAT, 0644);
  cr_assert_geq(fd, 0);
  static const char block[4096];
  while (write(fd, block, sizeof block) > 0) {
  }
  cr_assert_eq(errno, ENOSPC);
  while (write(fd, block, 1) > 0) {
  }
  close(fd);
}

static void unmount_full(void) {
  if (mounted) umount(full);
  mounted = false;
  remove_dir();
}

TestSuite(outputs_full_disk, .init = mount_full, .fini = unmount_full, .timeout = 300);
TestSuite(outputs, .init = make_dir, .fini = remove_dir, .timeout = 300);

/* `tpusim ARGS` with @ standing for the full tmpfs: exit 1, the error names the cause, and the
 * directory holds what it held before (a file already at the destination untouched). */
static void fails_cleanly(const char *args, const char *keep, const char *why) {
  char keep_path[256] = "", fill[160];
  if (keep) {
    snprintf(keep_path, sizeof keep_path, "%s/%s", full, keep);
    write_text(keep_path, "the user's file");
  }
  snprintf(fill, sizeof fill, "%s/fill", full);
  fill_up(fill);
  char before[4096], after[4096], line[1024];
  listing(full, before, sizeof before);
  size_t n = 0;
  for (const char *a = args; *a && n + 100 < sizeof line; a++)
    n += *a == '@' ? (size_t)snprintf(line + n, sizeof line - n, "%s", full) : (line[n] = *a, 1);
  line[n] = 0;
  run_t r = run(line);
  cr_expect_eq(r.status, 1, "tpusim %s: exit %d\n%s", line, r.status, r.err);
  cr_expect_not_null(strstr(r.err, why), "tpusim %s: no '%s' in\n%s", line, why, r.err);
  listing(full, after, sizeof after);
  cr_expect_str_eq(after, before, "tpusim %s left or removed files", line);
  if (keep) cr_expect(has_text(keep_path, "the user's file"), "tpusim %s changed %s", line, keep);
  unlink(fill);
  if (keep) unlink(keep_path);
}

Test(outputs_full_disk, waveforms_are_checked_whole) {
  fails_cleanly("step --pod 2x2 --mxu 4x4 --m 16 --k 16 --n 16 --trace-chip 0 --trace @/s.fst", "s.fst",
                "is incomplete");
  fails_cleanly("gemm --mxu 4x4 --m 8 --k 8 --n 8 --trace @/g.fst", NULL, "is incomplete");
  fails_cleanly("collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 256 --trace-chip 1 --trace @/c.fst", NULL,
                "is incomplete");
  fails_cleanly("dot --n 16 --trace @/d.fst", NULL, "is incomplete");
  fails_cleanly("net --pod 2x2 --cycles 300 --trace @/n.fst", NULL, "is incomplete");
  fails_cleanly("train --pod 1x1 --mxu 16x16 --steps 1 --trace-chip 0 --trace @/t.fst", NULL, "is incomplete");
}

Test(outputs_full_disk, every_other_output_fails_with_nothing_left) {
  fails_cleanly("step --pod 2x2 --mxu 4x4 --m 16 --k 16 --n 16 --model fast --profile @/p.json", "p.json",
                "cannot write");
  fails_cleanly("gemm --mxu 4x4 --m 64 --k 8 --n 64 --model fast --out @/c.npy", "c.npy", "cannot");
  fails_cleanly("train --pod 1x1 --mxu 16x16 --steps 2 --model fast --loss-csv @/l.csv", "l.csv", "cannot write");
  fails_cleanly("train --pod 1x1 --mxu 16x16 --steps 2 --model fast --plot @/l.png", "l.png", "cannot");
  fails_cleanly("train --pod 1x1 --mxu 16x16 --steps 2 --model fast --export @", "w1_init.npy", "cannot write");
  fails_cleanly("randprog --pod 1x1 --mxu 4x4 --count 64 --save @", NULL, "cannot write");
  fails_cleanly("net --pod 2x2 --sweep --model fast --sweep-csv @/sw.csv", "sw.csv", "cannot");
}

/* A report that cannot be written is a failure, and the outputs go with it. */
Test(outputs, report_to_a_full_device_leaves_no_outputs) {
  static const char *const cmds[] = {
      "gemm --mxu 4x4 --m 8 --k 8 --n 8 --out %s/o.npy --profile %s/p.json --json",
      "step --pod 2x2 --mxu 4x4 --m 16 --k 16 --n 16 --profile %s/p.json --trace-chip 0 --trace %s/s.fst",
      "train --pod 1x1 --mxu 16x16 --steps 2 --model fast --loss-csv %s/l.csv --profile %s/p.json",
      "collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 256 --model fast --profile %s/p.json --json",
      "randprog --pod 1x1 --mxu 4x4 --count 2 --profile %s/p.json --save %s",
      "chip --mxu 4x4 --cycles 1000 --profile %s/p.json",
  };
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    char args[900], line[1000], after[4096];
    snprintf(args, sizeof args, cmds[i], dir, dir);
    snprintf(line, sizeof line, "%s > /dev/full", args);
    run_t r = run(line);
    cr_expect_eq(r.status, 1, "tpusim %s: exit %d\n%s", line, r.status, r.err);
    listing(dir, after, sizeof after);
    cr_expect_str_eq(after, "", "tpusim %s left files:\n%s", line, after);
  }
}

/* Starts tpusim with argv (a fresh process: no signal ignored), its output to /dev/null. */
static pid_t start(char *const argv[]) {
  const pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO), dup2(null, STDERR_FILENO);
    execv(argv[0], argv);
    _exit(127);
  }
  return pid;
}

/* How many of d's names start with prefix. */
static unsigned count_prefixed(const char *d, const char *prefix) {
  DIR *dd = opendir(d);
  cr_assert_not_null(dd);
  unsigned n = 0;
  for (struct dirent *e; (e = readdir(dd));) n += !strncmp(e->d_name, prefix, strlen(prefix));
  closedir(dd);
  return n;
}

/* Killed mid-run, a command removes its temporaries (a 242 MB one in the hostile tester's
 * case) and dies of the signal; the user's file at the destination is untouched. */
Test(outputs, signals_leave_nothing) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    char prof[128], trace[128], csv[128], before[4096], after[4096];
    snprintf(prof, sizeof prof, "%s/s.json", dir);
    snprintf(trace, sizeof trace, "%s/t.fst", dir);
    snprintf(csv, sizeof csv, "%s/l.csv", dir);
    write_text(prof, "the user's file");
    listing(dir, before, sizeof before);
    char *argv[] = {(char *)tpusim(), "train", "--pod", "2x2", "--mxu", "16x16", "--steps", "100000", "--trace-chip",
                    "0", "--trace", trace, "--profile", prof, "--loss-csv", csv, NULL};
    const pid_t pid = start(argv);
    /* the profile's and the waveform's temporaries exist once the run is under way */
    const struct timespec tick = {0, 20 * 1000 * 1000};
    for (unsigned t = 0; t < 3000 && count_prefixed(dir, ".tpusim-") < 3; t++) nanosleep(&tick, NULL);
    cr_assert_geq(count_prefixed(dir, ".tpusim-"), 3, "the run's temporaries never appeared");
    cr_assert_eq(kill(pid, sigs[i]), 0);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == sigs[i], "signal %d: status 0x%x", sigs[i], st);
    listing(dir, after, sizeof after);
    cr_expect_str_eq(after, before, "signal %d left or removed files", sigs[i]);
    cr_expect(has_text(prof, "the user's file"), "signal %d changed the user's file", sigs[i]);
  }
}

/* --export names 14 files in its directory: something in the way of any of them is refused
 * before the run, and nothing in the directory is touched. */
Test(outputs, export_refuses_before_the_run_and_touches_nothing) {
  char d[128], in_the_way[160], keep[160], before[4096], after[4096], args[512];
  snprintf(d, sizeof d, "%s/D", dir);
  snprintf(in_the_way, sizeof in_the_way, "%s/x_train.npy", d);
  snprintf(keep, sizeof keep, "%s/w1_init.npy", d);
  cr_assert_eq(mkdir(d, 0755), 0);
  cr_assert_eq(mkdir(in_the_way, 0755), 0);
  write_text(keep, "the user's file");
  listing(d, before, sizeof before);
  snprintf(args, sizeof args, "train --pod 1x1 --mxu 16x16 --steps 2 --model fast --export %s", d);
  run_t r = run(args);
  cr_expect_eq(r.status, 2, "%s", r.err);
  cr_expect_not_null(strstr(r.err, "x_train.npy': it is a directory"), "%s", r.err);
  cr_expect_null(strstr(r.err, "train: step"), "it simulated:\n%s", r.err);
  listing(d, after, sizeof after);
  cr_expect_str_eq(after, before);
  cr_expect(has_text(keep, "the user's file"));
  r = run("train --pod 1x1 --mxu 16x16 --steps 2 --model fast --export /proc");
  cr_expect_eq(r.status, 2, "%s", r.err);
  cr_expect_not_null(strstr(r.err, "--export /proc: cannot write files into it"), "%s", r.err);
}

/* An output may not be an input of the command, nor another output. */
Test(outputs, an_output_may_not_name_an_input_or_another_output) {
  char data[128], args[900];
  snprintf(data, sizeof data, "%s/digits.csv.gz", dir);
  snprintf(args, sizeof args, "cp /usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz %s", data);
  cr_assert_eq(system(args), 0);
  struct stat st0, st1;
  cr_assert_eq(stat(data, &st0), 0);
  snprintf(args, sizeof args, "train --pod 1x1 --mxu 16x16 --steps 2 --model fast --digits %s --loss-csv %s", data, data);
  run_t r = run(args);
  cr_expect_eq(r.status, 2, "%s", r.err);
  cr_expect_not_null(strstr(r.err, "is an input of this command"), "%s", r.err);
  snprintf(args, sizeof args, "train --pod 1x1 --mxu 16x16 --steps 2 --model fast --loss-csv %s --digits %s", data, data);
  r = run(args);
  cr_expect_eq(r.status, 2, "%s", r.err);
  cr_expect_not_null(strstr(r.err, "is an output of this command"), "%s", r.err);
  cr_assert_eq(stat(data, &st1), 0);
  cr_expect_eq(st1.st_size, st0.st_size);
  cr_expect_eq(st1.st_mtime, st0.st_mtime);
  snprintf(args, sizeof args, "train --pod 1x1 --mxu 16x16 --steps 2 --model fast --loss-csv %s/x --profile %s/./x",
           dir, dir);
  r = run(args);
  cr_expect_eq(r.status, 2, "%s", r.err);
  cr_expect_not_null(strstr(r.err, "the same file is already an output"), "%s", r.err);
}

/* On success each output replaces what was there, whole; a symbolic link's target is
 * replaced and the link kept; no temporary is left. */
Test(outputs, success_replaces_whole_and_follows_links) {
  char target[128], link[128], args[512], after[4096];
  snprintf(target, sizeof target, "%s/real.csv", dir);
  snprintf(link, sizeof link, "%s/link.csv", dir);
  write_text(target, "old");
  cr_assert_eq(symlink(target, link), 0);
  snprintf(args, sizeof args, "train --pod 1x1 --mxu 16x16 --steps 2 --model fast --loss-csv %s --quiet", link);
  run_t r = run(args);
  cr_assert_eq(r.status, 0, "%s", r.err);
  struct stat st;
  cr_expect_eq(lstat(link, &st), 0);
  cr_expect(S_ISLNK(st.st_mode), "the link was replaced by a file");
  char buf[32] = "";
  FILE *f = fopen(target, "r");
  cr_assert_not_null(f);
  cr_expect_eq(fread(buf, 1, 16, f), 16);
  fclose(f);
  cr_expect_eq(strncmp(buf, "step,loss,cycles", 16), 0, "%s", buf);
  listing(dir, after, sizeof after);
  cr_expect_str_eq(after, "link.csv\nreal.csv\n");
}
