/*
 * replay.c: a main() for the fuzz targets built with gcc, so that
 * `make test` runs every target over its committed corpus without
 * libFuzzer:
 *
 *   build/test/replay_fuzz_pkt test/fuzz/corpus/fuzz_pkt [FILE|DIR]...
 *
 * Each argument is a file or a directory; a directory stands for its
 * regular files, recursively, in name order (strcmp), so every run replays
 * the same inputs in the same order.  Names that start with '.' are
 * skipped.  Each input is read whole and passed once to
 * LLVMFuzzerTestOneInput.  The target reports a failure by crashing or
 * calling abort(); if it does, a signal handler names the input first.
 *
 * Exit status: 0 when every input ran; 1 when an argument could not be
 * read or no input was found.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input being run, for the crash handler. */
static const char *current_input;
static size_t n_inputs;

static void write_str(const char *s) {
  size_t n = strlen(s);

  while (n > 0) {
    ssize_t w = write(STDERR_FILENO, s, n);
    if (w <= 0) {
      return;
    }
    s += w;
    n -= (size_t)w;
  }
}

static void on_crash(int sig) {
  write_str("replay: crashed or aborted on input ");
  write_str(current_input ? current_input : "(none)");
  write_str("\n");
  signal(sig, SIG_DFL);
  raise(sig);
}

static void install_crash_handlers(void) {
  static const int sigs[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  size_t i;

  for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); ++i) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_crash;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = (int)SA_RESETHAND;
    sigaction(sigs[i], &sa, NULL);
  }
}

/* run_file reads |path| whole and runs it.  Returns 0, or -1 if it could
   not be read. */
static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  uint8_t *data = NULL, *grown;
  size_t size = 0, cap = 0;

  if (f == NULL) {
    fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
    return -1;
  }
  for (;;) {
    size_t got;
    if (size == cap) {
      cap = cap ? 2 * cap : 4096;
      grown = realloc(data, cap);
      if (grown == NULL) {
        fprintf(stderr, "replay: out of memory reading %s\n", path);
        free(data);
        fclose(f);
        return -1;
      }
      data = grown;
    }
    got = fread(data + size, 1, cap - size, f);
    size += got;
    if (got == 0) {
      break;
    }
  }
  if (ferror(f)) {
    fprintf(stderr, "replay: cannot read %s\n", path);
    free(data);
    fclose(f);
    return -1;
  }
  fclose(f);
  /* The input is exactly |size| bytes long, as under libFuzzer, so that a
     read past its end is a read past an allocation.  An empty input still
     gets a valid pointer. */
  if (size == 0) {
    free(data);
    data = malloc(1);
    if (data == NULL) {
      fprintf(stderr, "replay: out of memory\n");
      return -1;
    }
  } else {
    grown = realloc(data, size);
    if (grown != NULL) {
      data = grown;
    }
  }
  current_input = path;
  LLVMFuzzerTestOneInput(data, size);
  current_input = NULL;
  ++n_inputs;
  free(data);
  return 0;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path);

/* run_dir runs the entries of directory |path| in name order. */
static int run_dir(const char *path) {
  DIR *d = opendir(path);
  struct dirent *de;
  char **names = NULL, **grown;
  size_t n = 0, cap = 0, i;
  int rv = 0;

  if (d == NULL) {
    fprintf(stderr, "replay: cannot open directory %s: %s\n", path,
            strerror(errno));
    return -1;
  }
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.') {
      continue;
    }
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      grown = realloc(names, cap * sizeof(*names));
      if (grown == NULL) {
        rv = -1;
        break;
      }
      names = grown;
    }
    names[n] = malloc(strlen(path) + strlen(de->d_name) + 2);
    if (names[n] == NULL) {
      rv = -1;
      break;
    }
    sprintf(names[n], "%s/%s", path, de->d_name);
    ++n;
  }
  closedir(d);
  if (rv != 0) {
    fprintf(stderr, "replay: out of memory listing %s\n", path);
  } else {
    qsort(names, n, sizeof(*names), cmp_names);
    for (i = 0; i < n && rv == 0; ++i) {
      rv = run_path(names[i]);
    }
  }
  for (i = 0; i < n; ++i) {
    free(names[i]);
  }
  free(names);
  return rv;
}

static int run_path(const char *path) {
  struct stat st;

  if (stat(path, &st) != 0) {
    fprintf(stderr, "replay: cannot read %s: %s\n", path, strerror(errno));
    return -1;
  }
  if (S_ISDIR(st.st_mode)) {
    return run_dir(path);
  }
  if (S_ISREG(st.st_mode)) {
    return run_file(path);
  }
  return 0; /* not a regular file: skipped */
}

int main(int argc, char **argv) {
  int i;

  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
    return 1;
  }
  install_crash_handlers();
  for (i = 1; i < argc; ++i) {
    if (run_path(argv[i]) != 0) {
      return 1;
    }
  }
  if (n_inputs == 0) {
    fprintf(stderr, "replay: no inputs found in");
    for (i = 1; i < argc; ++i) {
      fprintf(stderr, " %s", argv[i]);
    }
    fprintf(stderr, "\n");
    return 1;
  }
  printf("replay: ran %zu inputs\n", n_inputs);
  return 0;
}
