/*
 * scn_load.c: reading scenarios into their raw form (a list of section,
 * key, value and line), from a file or a string with libinih, and from
 * --set assignments; and reading flow-size CDF files.  Nothing here
 * knows what a key means: sim_scn_compile (scn_compile.c) does.
 */
#include "scn_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ini.h>

/* ------------------------------------------------------------------------ */
/* Raw entries                                                              */

void sim_scn_raw_init(scn_raw *r) {
  memset(r, 0, sizeof(*r));
}

void sim_scn_raw_fini(scn_raw *r) {
  size_t i;

  for (i = 0; i < r->n; ++i) {
    free(r->e[i].section);
    free(r->e[i].key);
    free(r->e[i].value);
  }
  free(r->e);
  memset(r, 0, sizeof(*r));
}

char *scn_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);

  if (d) {
    memcpy(d, s, n);
  }
  return d;
}

int scn_raw_add(scn_raw *r, const char *sec, const char *key, const char *val,
                const char *src, int line) {
  scn_entry *e;

  if (r->n == r->cap) {
    size_t ncap = r->cap ? r->cap * 2 : 32;
    scn_entry *n = realloc(r->e, ncap * sizeof(*n));
    if (n == NULL) {
      return -1;
    }
    r->e = n;
    r->cap = ncap;
  }
  e = &r->e[r->n];
  e->section = scn_strdup(sec);
  e->key = scn_strdup(key);
  e->value = scn_strdup(val);
  e->src = src;
  e->line = line;
  if (!e->section || !e->key || !e->value) {
    free(e->section);
    free(e->key);
    free(e->value);
    return -1;
  }
  ++r->n;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Reading INI text with libinih                                            */

/* The reader counts lines, so that every entry knows its line, and
   refuses lines longer than libinih's buffer instead of letting it split
   them. */
typedef struct rd {
  FILE *f;
  const char *buf;
  size_t len, pos;
  int line;
  int long_line;
  /* indented: the line being read starts with a blank (libinih reads
     such a line after a key as a continuation of its value). */
  int indented;
  scn_raw *r;
  int oom;
  /* dup and dup_first: the first key given twice in one section, and
     the line of its first entry (0: none). */
  int dup, dup_first;
  char dup_sec[64], dup_key[64];
} rd;

/* rd_getc returns the next byte of the file or the string, or EOF. */
static int rd_getc(rd *s) {
  if (s->f) {
    return fgetc(s->f);
  }
  if (s->pos >= s->len) {
    return EOF;
  }
  return (unsigned char)s->buf[s->pos++];
}

/* reader is libinih's fgets: it reads one line of at most |num| - 1 bytes
   into |str| (NUL bytes become spaces), counts it, and hands a line that
   is too long over as a blank one, remembering the first such line in
   s->long_line.  Returns |str|, or NULL at the end. */
static char *reader(char *str, int num, void *stream) {
  rd *s = stream;
  int n = 0, ch = EOF;

  if (num < 2) {
    return NULL;
  }
  while (n < num - 1) {
    ch = rd_getc(s);
    if (ch == EOF) {
      break;
    }
    if (ch == '\0') {
      ch = ' '; /* a NUL would end the line early */
    }
    str[n++] = (char)ch;
    if (ch == '\n') {
      break;
    }
  }
  if (n == 0 && ch == EOF) {
    return NULL;
  }
  ++s->line;
  s->indented = str[0] == ' ' || str[0] == '\t';
  if (n == num - 1 && str[n - 1] != '\n') {
    /* Too long: swallow the rest and hand libinih a blank line. */
    int c2;
    do {
      c2 = rd_getc(s);
    } while (c2 != EOF && c2 != '\n');
    if (s->long_line == 0) {
      s->long_line = s->line;
    }
    str[0] = '\n';
    n = 1;
  }
  str[n] = '\0';
  return str;
}

/* find_entry returns the last entry of |r| for |sec|.|key|, or NULL. */
static scn_entry *find_entry(scn_raw *r, const char *sec, const char *key) {
  size_t i;

  for (i = r->n; i-- > 0;) {
    if (!strcmp(r->e[i].section, sec) && !strcmp(r->e[i].key, key)) {
      return &r->e[i];
    }
  }
  return NULL;
}

/* continue_value appends " " and |more| to entry |e|'s value.  Returns 0,
   or -1 when out of memory (|e| is unchanged). */
static int continue_value(scn_entry *e, const char *more) {
  size_t a = strlen(e->value), b = strlen(more);
  char *v = realloc(e->value, a + b + 2);

  if (v == NULL) {
    return -1;
  }
  v[a] = ' ';
  memcpy(v + a + 1, more, b + 1);
  e->value = v;
  return 0;
}

/* handler is libinih's callback for one key: it appends the entry with
   the current line.  An indented line that libinih hands over as the
   continuation of the key before it is joined to that value with a
   blank (so that a long list may span lines).  A key given a second time
   in its section (the section may be headed twice) is noted in s->dup
   and libinih stopped: a file says each thing once.  Returns 1, or 0
   (libinih stops) on a key given twice or when out of memory, which it
   notes in s->oom. */
static int handler(void *user, const char *section, const char *name,
                   const char *value) {
  rd *s = user;
  scn_entry *prev;

  if (s->dup) {
    return 0; /* the first key given twice is the one reported */
  }
  prev = find_entry(s->r, section, name);

  if (prev != NULL && s->indented && prev == &s->r->e[s->r->n - 1]) {
    if (continue_value(prev, value) != 0) {
      s->oom = 1;
      return 0;
    }
    return 1;
  }
  if (prev != NULL) {
    s->dup = s->line;
    s->dup_first = prev->line;
    snprintf(s->dup_sec, sizeof(s->dup_sec), "%s", section);
    snprintf(s->dup_key, sizeof(s->dup_key), "%s", name);
    return 0;
  }
  if (scn_raw_add(s->r, section, name, value, s->r->file, s->line) != 0) {
    s->oom = 1;
    return 0;
  }
  return 1;
}

/* set_dir records |path| as |r|'s file and its directory as r->dir ("."
   for a bare name), for relative file names in the scenario. */
static void set_dir(scn_raw *r, const char *path) {
  const char *slash = strrchr(path, '/');

  snprintf(r->file, sizeof(r->file), "%s", path);
  if (slash == NULL) {
    snprintf(r->dir, sizeof(r->dir), ".");
  } else {
    size_t n = (size_t)(slash - path);
    if (n >= sizeof(r->dir)) {
      n = sizeof(r->dir) - 1;
    }
    memcpy(r->dir, path, n);
    r->dir[n] = '\0';
    if (n == 0) {
      snprintf(r->dir, sizeof(r->dir), "/");
    }
  }
}

/* parse_stream reads every line of |s| into |r|.  Returns 0, -1 with a
   message naming r->file and the line (a line too long, a syntax error,
   a read error), or SIM_SCN_NOMEM. */
static int parse_stream(scn_raw *r, rd *s, char *err, size_t errlen) {
  int rv;

  s->r = r;
  rv = ini_parse_stream(reader, s, handler, s);
  if (s->oom) {
    snprintf(err, errlen, "%s: out of memory", r->file);
    return SIM_SCN_NOMEM;
  }
  if (s->dup && rv == s->dup && (s->long_line == 0 || s->dup < s->long_line)) {
    snprintf(err, errlen,
             "%s:%d: [%s] %s is given twice in its section (first at "
             "%s:%d): give each key once (--set changes a value)",
             r->file, s->dup, s->dup_sec, s->dup_key, r->file, s->dup_first);
    return -1;
  }
  if (s->long_line && (rv <= 0 || s->long_line <= rv)) {
    snprintf(err, errlen,
             "%s:%d: line too long: expected at most %d characters per line",
             r->file, s->long_line, 198);
    return -1;
  }
  if (rv > 0) {
    snprintf(err, errlen,
             "%s:%d: syntax error: expected '[section]', 'key = value', or "
             "a comment starting with ';' or '#'",
             r->file, rv);
    return -1;
  }
  if (rv < 0) {
    snprintf(err, errlen, "%s: cannot read", r->file);
    return -1;
  }
  return 0;
}

int sim_scn_load(scn_raw *r, const char *path, char *err, size_t errlen) {
  rd s;
  int rv;

  struct stat st;

  memset(&s, 0, sizeof(s));
  if (path[0] == '\0') {
    snprintf(err, errlen, "expected a scenario file, got an empty path");
    return -1;
  }
  set_dir(r, path);
  s.f = fopen(path, "r");
  if (s.f == NULL) {
    snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  /* A folder opens for reading on Linux and reads as nothing: without
     this check it would be an empty scenario, every key its default. */
  if (fstat(fileno(s.f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(s.f);
    snprintf(err, errlen, "%s: is a directory: expected a scenario file", path);
    return -1;
  }
  rv = parse_stream(r, &s, err, errlen);
  fclose(s.f);
  return rv;
}

int sim_scn_load_string(scn_raw *r, const char *name, const char *text,
                        size_t len, char *err, size_t errlen) {
  rd s;

  memset(&s, 0, sizeof(s));
  set_dir(r, name);
  s.buf = text;
  s.len = len;
  return parse_stream(r, &s, err, errlen);
}

/* ------------------------------------------------------------------------ */
/* --set section.key=value                                                  */

/* remove_key deletes every entry of |r| for |sec|.|key|, keeping the
   order of the others. */
static void remove_key(scn_raw *r, const char *sec, const char *key) {
  size_t i, j = 0;

  for (i = 0; i < r->n; ++i) {
    scn_entry *e = &r->e[i];
    if (!strcmp(e->section, sec) && !strcmp(e->key, key)) {
      free(e->section);
      free(e->key);
      free(e->value);
      continue;
    }
    r->e[j++] = *e;
  }
  r->n = j;
}

int sim_scn_set(scn_raw *r, const char *a, const char *src, int line, char *err,
                size_t errlen) {
  char buf[512], *eq, *dot;

  if (strlen(a) >= sizeof(buf)) {
    snprintf(err, errlen, "%s %.40s...: too long", src, a);
    return -1;
  }
  snprintf(buf, sizeof(buf), "%s", a);
  eq = strchr(buf, '=');
  if (eq == NULL) {
    snprintf(err, errlen, "%s %s: expected section.key=value", src, a);
    return -1;
  }
  *eq = '\0';
  dot = strrchr(buf, '.');
  if (dot == NULL || dot == buf || dot[1] == '\0') {
    snprintf(err, errlen, "%s %s: expected section.key=value", src, a);
    return -1;
  }
  *dot = '\0';
  scn_trim(buf);
  scn_trim(dot + 1);
  scn_trim(eq + 1);
  /* The value replaces the key's, whatever it is (a list included): the
     file's entry goes, and an earlier --set's. */
  remove_key(r, buf, dot + 1);
  if (scn_raw_add(r, buf, dot + 1, eq + 1, src, line) != 0) {
    snprintf(err, errlen, "out of memory");
    return SIM_SCN_NOMEM;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Flow-size CDF files                                                      */

int sim_cdf_load(const char *path, cdf_pt **pts, uint32_t *n, char *err,
                 size_t errlen) {
  FILE *fp = fopen(path, "r");
  struct stat st;
  char line[256];
  int ln = 0;
  uint32_t cap = 0;

  *pts = NULL;
  *n = 0;
  if (fp != NULL && (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode))) {
    fclose(fp);
    snprintf(err, errlen, "%s: expected a regular file of flow sizes", path);
    return -1;
  }
  if (fp == NULL) {
    snprintf(err, errlen, "%s: cannot open the flow-size CDF: %s", path,
             strerror(errno));
    return -1;
  }
  while (fgets(line, sizeof(line), fp)) {
    double sz, p;
    char *h = strchr(line, '#');
    char extra[8];
    if (++ln > 100000) {
      snprintf(err, errlen, "%s: more than 100000 lines", path);
      fclose(fp);
      free(*pts);
      return -1;
    }
    if (h) {
      *h = '\0';
    }
    if (sscanf(line, " %7s", extra) != 1) {
      continue;
    }
    if (sscanf(line, "%lf %lf %7s", &sz, &p, extra) != 2 || !(sz >= 0) ||
        !(p >= 0) || p > 1 || sz > 1e13) {
      snprintf(err, errlen,
               "%s:%d: expected 'SIZE_BYTES CUMULATIVE_PROBABILITY' with a "
               "probability from 0 to 1",
               path, ln);
      fclose(fp);
      free(*pts);
      return -1;
    }
    if (*n > 0 && (sz < (*pts)[*n - 1].size || p < (*pts)[*n - 1].p)) {
      snprintf(err, errlen,
               "%s:%d: expected sizes and probabilities that never decrease",
               path, ln);
      fclose(fp);
      free(*pts);
      return -1;
    }
    if (*n == cap) {
      cap = cap ? cap * 2 : 32;
      cdf_pt *np = realloc(*pts, cap * sizeof(*np));
      if (np == NULL) {
        fclose(fp);
        free(*pts);
        snprintf(err, errlen, "out of memory");
        return SIM_SCN_NOMEM;
      }
      *pts = np;
    }
    (*pts)[*n].size = sz;
    (*pts)[*n].p = p;
    ++*n;
  }
  fclose(fp);
  if (*n == 0 || fabs((*pts)[*n - 1].p - 1.0) > 1e-9) {
    snprintf(err, errlen,
             "%s: expected points ending at cumulative probability 1", path);
    free(*pts);
    return -1;
  }
  return 0;
}
