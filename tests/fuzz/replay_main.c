/*
 * replay_main: runs a fuzz harness (tests/fuzz/fuzz_NAME.c) without libFuzzer, once per
 * input file, so that `make test` (and `make sanitize`) replay the seed corpus and every
 * past finding in tests/fuzz/corpus/NAME. A failed check traps: the exit status says so.
 * usage: replay_NAME FILE...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  for (int i = 1; i < argc; i++) {
    FILE *f = fopen(argv[i], "rb");
    if (!f) {
      fprintf(stderr, "replay: cannot open %s\n", argv[i]);
      return 2;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, n;
    do {
      if (len == cap && !(buf = realloc(buf, cap = cap ? 2 * cap : 4096))) return 2;
      n = fread(buf + len, 1, cap - len, f);
      len += n;
    } while (n > 0);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
  }
  return 0;
}
