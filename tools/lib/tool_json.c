/*
 * tool_json.c: the JSON writer (tool_json.h).  Strings are checked as
 * UTF-8 by the table of well-formed byte sequences in Unicode 15, table
 * 3-7 (the same as RFC 3629's grammar), so that no document carries a
 * byte sequence a JSON reader would refuse.
 */
#include "tool_json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>

void tool_json_init(tool_json *j, FILE *f, int style) {
  memset(j, 0, sizeof(*j));
  j->f = f;
  j->style = style;
}

static void misuse(tool_json *j) {
  if (j->err == 0) {
    j->err = -EINVAL;
  }
}

/* separate writes what goes before a member of the open container (or
   before a top-level value): a comma after the first, then the pending
   blanks or the style's. */
static void separate(tool_json *j) {
  int later = j->depth > 0 && j->count[j->depth - 1];

  if (later) {
    fputc(',', j->f);
  }
  if (j->ws) {
    fputs(j->ws, j->f);
    j->ws = NULL;
  } else if (later && j->style == TOOL_JSON_SPACED) {
    fputc(' ', j->f);
  }
  if (j->depth > 0) {
    j->count[j->depth - 1] = 1;
  }
}

/* begin_value checks that a value may come now and writes what precedes
   it; returns 0, or -EINVAL (misuse recorded) if the value must be
   skipped. */
static int begin_value(tool_json *j) {
  if (j->done) {
    misuse(j);
    return -EINVAL;
  }
  if (j->after_key) {
    j->after_key = 0;
    return 0;
  }
  if (j->depth > 0 && j->kind[j->depth - 1] == '{') {
    misuse(j);
    return -EINVAL;
  }
  separate(j);
  return 0;
}

/* end_value marks a value as written: at the top level the document's
   one value is then complete. */
static void end_value(tool_json *j) {
  if (j->depth == 0) {
    j->done = 1;
  }
}

/* utf8_len returns the length of the well-formed UTF-8 sequence at |s|
   (|n| bytes left, s[0] >= 0x80), or 0 if there is none there. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  unsigned char c = s[0], lo = 0x80, hi = 0xbf;
  size_t len, i;

  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0) {
      lo = 0xa0; /* no overlong forms */
    } else if (c == 0xed) {
      hi = 0x9f; /* no surrogates */
    }
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0) {
      lo = 0x90; /* no overlong forms */
    } else if (c == 0xf4) {
      hi = 0x8f; /* nothing above U+10FFFF */
    }
  } else {
    return 0; /* a continuation byte, C0, C1 or F5..FF */
  }
  if (n < len || s[1] < lo || s[1] > hi) {
    return 0;
  }
  for (i = 2; i < len; ++i) {
    if (s[i] < 0x80 || s[i] > 0xbf) {
      return 0;
    }
  }
  return len;
}

static void put_string(tool_json *j, const char *str, size_t n) {
  const unsigned char *s = (const unsigned char *)str;
  size_t i = 0, len;

  fputc('"', j->f);
  while (i < n) {
    unsigned char c = s[i];
    switch (c) {
    case '"':
      fputs("\\\"", j->f);
      break;
    case '\\':
      fputs("\\\\", j->f);
      break;
    case '\b':
      fputs("\\b", j->f);
      break;
    case '\f':
      fputs("\\f", j->f);
      break;
    case '\n':
      fputs("\\n", j->f);
      break;
    case '\r':
      fputs("\\r", j->f);
      break;
    case '\t':
      fputs("\\t", j->f);
      break;
    default:
      if (c < 0x20 || c == 0x7f) {
        fprintf(j->f, "\\u%04x", c);
      } else if (c < 0x80) {
        fputc(c, j->f);
      } else if ((len = utf8_len(s + i, n - i)) > 0) {
        fwrite(s + i, 1, len, j->f);
        i += len;
        continue;
      } else {
        fputs("\\ufffd", j->f);
      }
    }
    ++i;
  }
  fputc('"', j->f);
}

static void open_container(tool_json *j, char kind) {
  if (j->depth == TOOL_JSON_MAX_DEPTH) {
    misuse(j);
    return;
  }
  if (begin_value(j) != 0) {
    return;
  }
  fputc(kind, j->f);
  j->kind[j->depth] = kind;
  j->count[j->depth] = 0;
  ++j->depth;
}

static void close_container(tool_json *j, char kind) {
  if (j->depth == 0 || j->kind[j->depth - 1] != kind || j->after_key) {
    misuse(j);
    return;
  }
  if (j->ws) {
    fputs(j->ws, j->f);
    j->ws = NULL;
  }
  fputc(kind == '{' ? '}' : ']', j->f);
  --j->depth;
  end_value(j);
}

void tool_json_obj_begin(tool_json *j) {
  open_container(j, '{');
}

void tool_json_obj_end(tool_json *j) {
  close_container(j, '{');
}

void tool_json_arr_begin(tool_json *j) {
  open_container(j, '[');
}

void tool_json_arr_end(tool_json *j) {
  close_container(j, '[');
}

/* put_key writes key |k|; returns 0, or -EINVAL (misuse recorded) if no
   key may come now. */
static int put_key(tool_json *j, const char *k) {
  if (j->depth == 0 || j->kind[j->depth - 1] != '{' || j->after_key) {
    misuse(j);
    return -EINVAL;
  }
  separate(j);
  put_string(j, k, strlen(k));
  fputs(j->style == TOOL_JSON_SPACED ? ": " : ":", j->f);
  j->after_key = 1;
  return 0;
}

void tool_json_key(tool_json *j, const char *k) {
  (void)put_key(j, k);
}

void tool_json_strn(tool_json *j, const char *s, size_t len) {
  if (begin_value(j) != 0) {
    return;
  }
  put_string(j, s, len);
  end_value(j);
}

void tool_json_str(tool_json *j, const char *s) {
  tool_json_strn(j, s, strlen(s));
}

void tool_json_strf(tool_json *j, const char *fmt, ...) {
  char buf[256];
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n < 0) {
    n = 0;
    misuse(j);
  } else if ((size_t)n >= sizeof(buf)) {
    n = (int)sizeof(buf) - 1;
    misuse(j);
  }
  tool_json_strn(j, buf, (size_t)n);
}

/* put_raw writes |text|, which is a JSON scalar, as the next value. */
static void put_raw(tool_json *j, const char *text) {
  if (begin_value(j) != 0) {
    return;
  }
  fputs(text, j->f);
  end_value(j);
}

void tool_json_u64(tool_json *j, uint64_t v) {
  char buf[24];

  snprintf(buf, sizeof(buf), "%" PRIu64, v);
  put_raw(j, buf);
}

void tool_json_i64(tool_json *j, int64_t v) {
  char buf[24];

  snprintf(buf, sizeof(buf), "%" PRId64, v);
  put_raw(j, buf);
}

static int is_digit(char c) {
  return c >= '0' && c <= '9';
}

/* is_number says whether |s| is exactly a JSON number:
   -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int is_number(const char *s) {
  if (*s == '-') {
    ++s;
  }
  if (*s == '0') {
    ++s;
  } else if (*s >= '1' && *s <= '9') {
    while (is_digit(*s)) {
      ++s;
    }
  } else {
    return 0;
  }
  if (*s == '.') {
    ++s;
    if (!is_digit(*s)) {
      return 0;
    }
    while (is_digit(*s)) {
      ++s;
    }
  }
  if (*s == 'e' || *s == 'E') {
    ++s;
    if (*s == '+' || *s == '-') {
      ++s;
    }
    if (!is_digit(*s)) {
      return 0;
    }
    while (is_digit(*s)) {
      ++s;
    }
  }
  return *s == '\0';
}

/* is_nonfinite says whether |s| is how printf writes a NaN or an
   infinity ("nan", "-inf", "INF", "-nan"). */
static int is_nonfinite(const char *s) {
  if (*s == '-' || *s == '+') {
    ++s;
  }
  return strncasecmp(s, "nan", 3) == 0 || strncasecmp(s, "inf", 3) == 0;
}

static void vnumf(tool_json *j, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void vnumf(tool_json *j, const char *fmt, va_list ap) {
  /* Room for "%f" of the largest double (309 digits and the fraction). */
  char buf[400];
  int n = vsnprintf(buf, sizeof(buf), fmt, ap);

  if (n >= 0 && (size_t)n < sizeof(buf) && is_number(buf)) {
    put_raw(j, buf);
    return;
  }
  if (n < 0 || (size_t)n >= sizeof(buf) || !is_nonfinite(buf)) {
    misuse(j);
  }
  put_raw(j, "null");
}

void tool_json_numf(tool_json *j, const char *fmt, ...) {
  va_list ap;

  va_start(ap, fmt);
  vnumf(j, fmt, ap);
  va_end(ap);
}

void tool_json_bool(tool_json *j, int v) {
  put_raw(j, v ? "true" : "false");
}

void tool_json_null(tool_json *j) {
  put_raw(j, "null");
}

/* The kv functions write the value only after a key: a misplaced pair
   writes nothing. */
void tool_json_kv_str(tool_json *j, const char *k, const char *s) {
  if (put_key(j, k) == 0) {
    tool_json_str(j, s);
  }
}

void tool_json_kv_u64(tool_json *j, const char *k, uint64_t v) {
  if (put_key(j, k) == 0) {
    tool_json_u64(j, v);
  }
}

void tool_json_kv_i64(tool_json *j, const char *k, int64_t v) {
  if (put_key(j, k) == 0) {
    tool_json_i64(j, v);
  }
}

void tool_json_kv_bool(tool_json *j, const char *k, int v) {
  if (put_key(j, k) == 0) {
    tool_json_bool(j, v);
  }
}

void tool_json_kv_numf(tool_json *j, const char *k, const char *fmt, ...) {
  va_list ap;

  if (put_key(j, k) != 0) {
    return;
  }
  va_start(ap, fmt);
  vnumf(j, fmt, ap);
  va_end(ap);
}

void tool_json_ws(tool_json *j, const char *ws) {
  if (ws[strspn(ws, " \t\n")] != '\0') {
    misuse(j);
    return;
  }
  j->ws = ws;
}

int tool_json_finish(tool_json *j) {
  if (j->after_key) {
    misuse(j);
    j->after_key = 0;
    fputs("null", j->f);
  }
  if (j->depth > 0) {
    misuse(j);
    j->ws = NULL;
    while (j->depth > 0) {
      close_container(j, j->kind[j->depth - 1]);
    }
  }
  if (!j->done) {
    misuse(j);
    fputs("null", j->f);
    j->done = 1;
  }
  fputc('\n', j->f);
  if (fflush(j->f) != 0 || ferror(j->f)) {
    return -EIO;
  }
  return j->err;
}
