/*
 * cover.c: picks a small set of fuzz inputs that covers every edge a
 * larger set covers, so that a corpus stays small (libFuzzer's -merge=1
 * keeps every input that adds a feature, smallest first: hundreds of
 * them).  Linked with one target, built with clang and
 * -fsanitize-coverage=inline-8bit-counters (make fuzz-build builds
 * build/fuzz/cover_<target>):
 *
 *   build/fuzz/cover_fuzz_wire [-keep=PATH]... PATH...
 *
 * Each PATH is a file or a directory (its regular files, not
 * recursively; names that start with '.' are skipped).  Every input runs
 * once; the edges it reaches are recorded.  The inputs under -keep= (the
 * seeds, say) are taken first.  Then, greedily, the input that adds the
 * most edges not yet covered (the shorter one on a tie) is picked until
 * none adds any.  The picked inputs (not the kept ones) are printed, one
 * path a line, most edges first; a summary goes to stderr.
 *
 * Exit status: 0, or 1 when an argument could not be read.
 */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop);

/* The counters of the instrumented code: one region per module. */
static uint8_t *cnt_start, *cnt_stop;

void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop) {
  /* One module (a static executable): one region. */
  if (cnt_start == NULL) {
    cnt_start = start;
    cnt_stop = stop;
  }
}

typedef struct input {
  char *path;
  int keep;
  size_t size;
  uint64_t *edges; /* a bitmap */
  uint32_t n_edges;
} input;

static input *inputs;
static size_t n_inputs, cap_inputs;
static size_t n_words;
static int keeping; /* the inputs being read are kept */

static uint8_t *read_all(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  uint8_t *data = NULL, *grown;
  size_t n = 0, cap = 0, got;

  if (f == NULL) {
    fprintf(stderr, "cover: cannot open %s: %s\n", path, strerror(errno));
    return NULL;
  }
  do {
    if (n == cap) {
      cap = cap ? 2 * cap : 4096;
      grown = realloc(data, cap);
      if (grown == NULL) {
        free(data);
        fclose(f);
        return NULL;
      }
      data = grown;
    }
    got = fread(data + n, 1, cap - n, f);
    n += got;
  } while (got > 0);
  fclose(f);
  *size = n;
  return data;
}

static int run_file(const char *path) {
  size_t size, i;
  uint8_t *data = read_all(path, &size);
  input *in;

  if (data == NULL) {
    return -1;
  }
  memset(cnt_start, 0, (size_t)(cnt_stop - cnt_start));
  LLVMFuzzerTestOneInput(data, size);
  free(data);
  if (n_inputs == cap_inputs) {
    cap_inputs = cap_inputs ? 2 * cap_inputs : 256;
    inputs = realloc(inputs, cap_inputs * sizeof(*inputs));
    if (inputs == NULL) {
      return -1;
    }
  }
  in = &inputs[n_inputs++];
  in->path = strdup(path);
  in->keep = keeping;
  in->size = size;
  in->edges = calloc(n_words, sizeof(uint64_t));
  in->n_edges = 0;
  if (in->path == NULL || in->edges == NULL) {
    return -1;
  }
  for (i = 0; i < (size_t)(cnt_stop - cnt_start); ++i) {
    if (cnt_start[i]) {
      in->edges[i / 64] |= 1ULL << (i % 64);
      ++in->n_edges;
    }
  }
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_arg(const char *arg) {
  struct stat st;
  DIR *d;
  struct dirent *de;
  char **names = NULL;
  size_t n = 0, cap = 0, i;
  int rv = 0;

  if (stat(arg, &st) != 0) {
    fprintf(stderr, "cover: cannot stat %s: %s\n", arg, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    return run_file(arg);
  }
  d = opendir(arg);
  if (d == NULL) {
    fprintf(stderr, "cover: cannot open %s: %s\n", arg, strerror(errno));
    return -1;
  }
  while ((de = readdir(d)) != NULL) {
    char path[4096];
    if (de->d_name[0] == '.') {
      continue;
    }
    snprintf(path, sizeof(path), "%s/%s", arg, de->d_name);
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
      continue;
    }
    if (n == cap) {
      cap = cap ? 2 * cap : 256;
      names = realloc(names, cap * sizeof(*names));
      if (names == NULL) {
        closedir(d);
        return -1;
      }
    }
    names[n++] = strdup(path);
  }
  closedir(d);
  qsort(names, n, sizeof(*names), cmp_str);
  for (i = 0; i < n; ++i) {
    if (rv == 0 && run_file(names[i]) != 0) {
      rv = -1;
    }
    free(names[i]);
  }
  free(names);
  return rv;
}

int main(int argc, char **argv) {
  uint64_t *covered;
  size_t i, w, kept = 0, total = 0, picked = 0, bytes = 0;
  int a;

  if (cnt_start == NULL || cnt_stop <= cnt_start) {
    fprintf(stderr, "cover: built without "
                    "-fsanitize-coverage=inline-8bit-counters\n");
    return 1;
  }
  n_words = ((size_t)(cnt_stop - cnt_start) + 63) / 64;
  for (a = 1; a < argc; ++a) {
    const char *arg = argv[a];
    keeping = strncmp(arg, "-keep=", 6) == 0;
    if (run_arg(keeping ? arg + 6 : arg) != 0) {
      return 1;
    }
  }
  covered = calloc(n_words, sizeof(uint64_t));
  if (covered == NULL) {
    return 1;
  }
  for (i = 0; i < n_inputs; ++i) {
    if (inputs[i].keep) {
      for (w = 0; w < n_words; ++w) {
        covered[w] |= inputs[i].edges[w];
      }
      free(inputs[i].edges);
      inputs[i].edges = NULL;
    }
  }
  for (w = 0; w < n_words; ++w) {
    kept += (size_t)__builtin_popcountll(covered[w]);
  }
  for (;;) {
    size_t best = SIZE_MAX;
    uint32_t best_new = 0;
    for (i = 0; i < n_inputs; ++i) {
      uint32_t add = 0;
      if (inputs[i].edges == NULL) {
        continue;
      }
      for (w = 0; w < n_words; ++w) {
        add += (uint32_t)__builtin_popcountll(inputs[i].edges[w] & ~covered[w]);
      }
      if (add > best_new ||
          (add == best_new && add > 0 && inputs[i].size < inputs[best].size)) {
        best = i;
        best_new = add;
      }
    }
    if (best_new == 0) {
      break;
    }
    for (w = 0; w < n_words; ++w) {
      covered[w] |= inputs[best].edges[w];
    }
    total += best_new;
    ++picked;
    bytes += inputs[best].size;
    printf("%s\n", inputs[best].path);
    free(inputs[best].edges);
    inputs[best].edges = NULL;
  }
  fprintf(stderr,
          "cover: the kept inputs cover %zu edges; %zu more inputs (%zu "
          "bytes) of %zu add %zu\n",
          kept, picked, bytes, n_inputs, total);
  return 0;
}
