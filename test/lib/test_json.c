/*
 * test_json.c: tool_json.h, the JSON writer.  Every document a test
 * writes is read back by a strict RFC 8259 reader below (its own UTF-8
 * decoder, not the writer's): the escaping of every byte 0..255 alone and
 * all together, well-formed UTF-8 passed through and malformed UTF-8
 * replaced, both styles byte for byte, numbers in the caller's format
 * (null for what is not a number), the misuses (always still valid JSON,
 * reported by tool_json_finish), a write error, and seeded random call
 * sequences.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "tool_json.h"

/* ------------------------------------------------------------------------ */
/* A strict reader                                                          */

typedef struct rd {
  const unsigned char *p, *end;
  int depth;
  /* The last string read, decoded to UTF-8. */
  unsigned char str[4096];
  size_t len;
} rd;

static void skip_ws(rd *r) {
  while (r->p < r->end &&
         (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) {
    ++r->p;
  }
}

static int put_cp(rd *r, uint32_t cp) {
  unsigned char b[4];
  size_t n, i;

  if (cp < 0x80) {
    b[0] = (unsigned char)cp;
    n = 1;
  } else if (cp < 0x800) {
    b[0] = (unsigned char)(0xc0 | cp >> 6);
    b[1] = (unsigned char)(0x80 | (cp & 0x3f));
    n = 2;
  } else if (cp < 0x10000) {
    b[0] = (unsigned char)(0xe0 | cp >> 12);
    b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
    b[2] = (unsigned char)(0x80 | (cp & 0x3f));
    n = 3;
  } else {
    b[0] = (unsigned char)(0xf0 | cp >> 18);
    b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
    b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
    b[3] = (unsigned char)(0x80 | (cp & 0x3f));
    n = 4;
  }
  if (r->len + n > sizeof(r->str)) {
    return -1;
  }
  for (i = 0; i < n; ++i) {
    r->str[r->len++] = b[i];
  }
  return 0;
}

/* utf8_cp decodes one UTF-8 sequence by its code point's arithmetic,
   refusing overlong forms, surrogates and values above U+10FFFF. */
static int utf8_cp(rd *r, uint32_t *cp) {
  unsigned char c = *r->p++;
  uint32_t v, min;
  int n, i;

  if (c < 0x80) {
    *cp = c;
    return 0;
  }
  if ((c & 0xe0) == 0xc0) {
    n = 1, v = c & 0x1f, min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    n = 2, v = c & 0x0f, min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    n = 3, v = c & 0x07, min = 0x10000;
  } else {
    return -1;
  }
  for (i = 0; i < n; ++i) {
    if (r->p == r->end || (*r->p & 0xc0) != 0x80) {
      return -1;
    }
    v = v << 6 | (*r->p++ & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) {
    return -1;
  }
  *cp = v;
  return 0;
}

static int hex4(rd *r, uint32_t *v) {
  int i;

  *v = 0;
  for (i = 0; i < 4; ++i) {
    unsigned char c;
    if (r->p == r->end) {
      return -1;
    }
    c = *r->p++;
    *v <<= 4;
    if (c >= '0' && c <= '9') {
      *v |= (uint32_t)(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      *v |= (uint32_t)(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      *v |= (uint32_t)(c - 'A' + 10);
    } else {
      return -1;
    }
  }
  return 0;
}

static int read_string(rd *r) {
  r->len = 0;
  if (r->p == r->end || *r->p++ != '"') {
    return -1;
  }
  for (;;) {
    uint32_t cp;
    if (r->p == r->end) {
      return -1;
    }
    if (*r->p == '"') {
      ++r->p;
      return 0;
    }
    if (*r->p < 0x20) {
      return -1; /* raw control characters are not allowed */
    }
    if (*r->p == '\\') {
      ++r->p;
      if (r->p == r->end) {
        return -1;
      }
      switch (*r->p++) {
      case '"':
        cp = '"';
        break;
      case '\\':
        cp = '\\';
        break;
      case '/':
        cp = '/';
        break;
      case 'b':
        cp = '\b';
        break;
      case 'f':
        cp = '\f';
        break;
      case 'n':
        cp = '\n';
        break;
      case 'r':
        cp = '\r';
        break;
      case 't':
        cp = '\t';
        break;
      case 'u':
        if (hex4(r, &cp) != 0) {
          return -1;
        }
        if (cp >= 0xd800 && cp <= 0xdbff) {
          uint32_t lo;
          if (r->end - r->p < 6 || r->p[0] != '\\' || r->p[1] != 'u') {
            return -1;
          }
          r->p += 2;
          if (hex4(r, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff) {
            return -1;
          }
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        } else if (cp >= 0xdc00 && cp <= 0xdfff) {
          return -1;
        }
        break;
      default:
        return -1;
      }
    } else if (utf8_cp(r, &cp) != 0) {
      return -1;
    }
    if (put_cp(r, cp) != 0) {
      return -1;
    }
  }
}

static int digits(rd *r) {
  const unsigned char *s = r->p;
  while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
    ++r->p;
  }
  return r->p > s ? 0 : -1;
}

static int read_number(rd *r) {
  if (r->p < r->end && *r->p == '-') {
    ++r->p;
  }
  if (r->p < r->end && *r->p == '0') {
    ++r->p;
  } else if (digits(r) != 0) {
    return -1;
  }
  if (r->p < r->end && *r->p == '.') {
    ++r->p;
    if (digits(r) != 0) {
      return -1;
    }
  }
  if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
    ++r->p;
    if (r->p < r->end && (*r->p == '+' || *r->p == '-')) {
      ++r->p;
    }
    if (digits(r) != 0) {
      return -1;
    }
  }
  return 0;
}

static int literal(rd *r, const char *w) {
  size_t n = strlen(w);
  if ((size_t)(r->end - r->p) < n || memcmp(r->p, w, n) != 0) {
    return -1;
  }
  r->p += n;
  return 0;
}

static int read_value(rd *r);

static int read_members(rd *r, char close, int object) {
  skip_ws(r);
  if (r->p < r->end && *r->p == close) {
    ++r->p;
    return 0;
  }
  for (;;) {
    skip_ws(r);
    if (object) {
      if (read_string(r) != 0) {
        return -1;
      }
      skip_ws(r);
      if (r->p == r->end || *r->p++ != ':') {
        return -1;
      }
    }
    if (read_value(r) != 0) {
      return -1;
    }
    skip_ws(r);
    if (r->p == r->end) {
      return -1;
    }
    if (*r->p == close) {
      ++r->p;
      return 0;
    }
    if (*r->p++ != ',') {
      return -1;
    }
  }
}

static int read_value(rd *r) {
  int rv;

  skip_ws(r);
  if (r->p == r->end) {
    return -1;
  }
  switch (*r->p) {
  case '{':
  case '[':
    if (++r->depth > 64) {
      return -1;
    }
    ++r->p;
    rv = read_members(r, r->p[-1] == '{' ? '}' : ']', r->p[-1] == '{');
    --r->depth;
    return rv;
  case '"':
    return read_string(r);
  case 't':
    return literal(r, "true");
  case 'f':
    return literal(r, "false");
  case 'n':
    return literal(r, "null");
  default:
    return read_number(r);
  }
}

/* valid_json says whether |s| (|n| bytes) is exactly one JSON text. */
static int valid_json(const char *s, size_t n) {
  rd r;

  memset(&r, 0, sizeof(r));
  r.p = (const unsigned char *)s;
  r.end = r.p + n;
  if (read_value(&r) != 0) {
    return 0;
  }
  skip_ws(&r);
  return r.p == r.end;
}

/* decode_string reads the JSON string document |s| into |r->str|. */
static int decode_string(rd *r, const char *s, size_t n) {
  memset(r, 0, sizeof(*r));
  r->p = (const unsigned char *)s;
  r->end = r->p + n;
  if (read_string(r) != 0) {
    return -1;
  }
  skip_ws(r);
  return r->p == r->end ? 0 : -1;
}

/* ------------------------------------------------------------------------ */
/* Capturing a document                                                     */

typedef struct doc {
  char *buf;
  size_t len;
  FILE *f;
  tool_json j;
} doc;

static void doc_begin(doc *d, int style) {
  d->buf = NULL;
  d->len = 0;
  d->f = open_memstream(&d->buf, &d->len);
  assert_non_null(d->f);
  tool_json_init(&d->j, d->f, style);
}

/* doc_end finishes the document, checks that it is valid JSON and
   returns tool_json_finish's result; d->buf holds the text. */
static int doc_end(doc *d) {
  int rv = tool_json_finish(&d->j);

  assert_int_equal(fclose(d->f), 0);
  if (!valid_json(d->buf, d->len)) {
    fail_msg("not valid JSON: %.*s", (int)d->len, d->buf);
  }
  assert_true(d->len > 0 && d->buf[d->len - 1] == '\n');
  return rv;
}

static void expect_doc(doc *d, const char *want, int want_rv) {
  assert_int_equal(doc_end(d), want_rv);
  assert_string_equal(d->buf, want);
  free(d->buf);
}

/* ------------------------------------------------------------------------ */
/* Strings                                                                  */

static void test_json_every_byte_alone(void **state) {
  static const unsigned char fffd[] = {0xef, 0xbf, 0xbd};
  int b;

  (void)state;
  for (b = 0; b < 256; ++b) {
    char c = (char)b;
    doc d;
    rd r;
    doc_begin(&d, TOOL_JSON_COMPACT);
    tool_json_strn(&d.j, &c, 1);
    assert_int_equal(doc_end(&d), 0);
    assert_int_equal(decode_string(&r, d.buf, d.len), 0);
    if (b < 0x80) {
      /* Every ASCII byte comes back as itself. */
      assert_int_equal(r.len, 1);
      assert_int_equal(r.str[0], b);
    } else {
      /* A lone byte above 0x7f is not UTF-8: U+FFFD. */
      assert_int_equal(r.len, 3);
      assert_memory_equal(r.str, fffd, 3);
      assert_string_equal(d.buf, "\"\\ufffd\"\n");
    }
    /* What is escaped, and how. */
    if (b < 0x20 || b == 0x7f || b == '"' || b == '\\') {
      assert_true(d.buf[1] == '\\');
    } else if (b < 0x80) {
      assert_true(d.len == 4 && d.buf[1] == c);
    }
    free(d.buf);
  }
}

static void test_json_escapes_exact(void **state) {
  static const struct {
    const char *in;
    size_t len;
    const char *out;
  } cases[] = {
      {"\"", 1, "\"\\\"\"\n"},
      {"\\", 1, "\"\\\\\"\n"},
      {"\b\f\n\r\t", 5, "\"\\b\\f\\n\\r\\t\"\n"},
      {"\0", 1, "\"\\u0000\"\n"},
      {"\x01\x1f", 2, "\"\\u0001\\u001f\"\n"},
      {"\x7f", 1, "\"\\u007f\"\n"},
      {"/", 1, "\"/\"\n"},
      {"a b", 3, "\"a b\"\n"},
  };
  size_t i;

  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    doc d;
    doc_begin(&d, TOOL_JSON_COMPACT);
    tool_json_strn(&d.j, cases[i].in, cases[i].len);
    expect_doc(&d, cases[i].out, 0);
  }
}

static void test_json_all_bytes_together(void **state) {
  char in[256];
  doc d;
  rd r;
  int b;

  (void)state;
  for (b = 0; b < 256; ++b) {
    in[b] = (char)b;
  }
  doc_begin(&d, TOOL_JSON_SPACED);
  tool_json_strn(&d.j, in, sizeof(in));
  assert_int_equal(doc_end(&d), 0);
  assert_int_equal(decode_string(&r, d.buf, d.len), 0);
  /* 0..127 as they were; 128..255 run together are still no UTF-8 (no
     lead byte is followed by what it needs), each one U+FFFD. */
  assert_int_equal(r.len, 128 + 128 * 3);
  assert_memory_equal(r.str, in, 128);
  for (b = 0; b < 128; ++b) {
    assert_memory_equal(r.str + 128 + 3 * b, "\xef\xbf\xbd", 3);
  }
  free(d.buf);
}

static void test_json_utf8_passthrough(void **state) {
  static const char *const good[] = {
      "\xc3\xa9",         /* U+00E9 */
      "\xc2\x80",         /* U+0080, the first two-byte form */
      "\xdf\xbf",         /* U+07FF */
      "\xe0\xa0\x80",     /* U+0800 */
      "\xe2\x82\xac",     /* U+20AC */
      "\xed\x9f\xbf",     /* U+D7FF, below the surrogates */
      "\xee\x80\x80",     /* U+E000, above them */
      "\xef\xbf\xbf",     /* U+FFFF */
      "\xf0\x90\x80\x80", /* U+10000 */
      "\xf0\x9f\x98\x80", /* U+1F600 */
      "\xf4\x8f\xbf\xbf", /* U+10FFFF */
  };
  size_t i;

  (void)state;
  for (i = 0; i < sizeof(good) / sizeof(good[0]); ++i) {
    char want[32];
    doc d;
    doc_begin(&d, TOOL_JSON_COMPACT);
    tool_json_str(&d.j, good[i]);
    snprintf(want, sizeof(want), "\"%s\"\n", good[i]);
    expect_doc(&d, want, 0);
  }
}

static void test_json_utf8_malformed(void **state) {
  static const struct {
    const char *in;
    int n_fffd; /* U+FFFD written, one per byte */
  } bad[] = {
      {"\xc0\x80", 2},         /* overlong NUL */
      {"\xc1\xbf", 2},         /* overlong */
      {"\xe0\x80\x80", 3},     /* overlong three-byte */
      {"\xf0\x80\x80\x80", 4}, /* overlong four-byte */
      {"\xed\xa0\x80", 3},     /* U+D800, a surrogate */
      {"\xed\xbf\xbf", 3},     /* U+DFFF */
      {"\xf4\x90\x80\x80", 4}, /* above U+10FFFF */
      {"\xf5\x80\x80\x80", 4}, /* no such lead byte */
      {"\xff", 1},
      {"\x80", 1},     /* a stray continuation */
      {"\xe2\x82", 2}, /* truncated at the end */
  };
  size_t i;
  doc d;
  rd r;

  (void)state;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    int k;
    doc_begin(&d, TOOL_JSON_COMPACT);
    tool_json_str(&d.j, bad[i].in);
    assert_int_equal(doc_end(&d), 0);
    assert_int_equal(decode_string(&r, d.buf, d.len), 0);
    assert_int_equal(r.len, 3 * (size_t)bad[i].n_fffd);
    for (k = 0; k < bad[i].n_fffd; ++k) {
      assert_memory_equal(r.str + 3 * k, "\xef\xbf\xbd", 3);
    }
    free(d.buf);
  }
  /* A truncated sequence followed by ASCII keeps the ASCII. */
  doc_begin(&d, TOOL_JSON_COMPACT);
  tool_json_str(&d.j, "\xe2\x82"
                      "A\xc3\xa9");
  expect_doc(&d, "\"\\ufffd\\ufffdA\xc3\xa9\"\n", 0);
}

/* ------------------------------------------------------------------------ */
/* Structure, styles, numbers                                               */

static void write_sample(tool_json *j) {
  tool_json_obj_begin(j);
  tool_json_kv_u64(j, "a", 1);
  tool_json_key(j, "b");
  tool_json_arr_begin(j);
  tool_json_u64(j, 1);
  tool_json_i64(j, -2);
  tool_json_arr_end(j);
  tool_json_key(j, "c");
  tool_json_obj_begin(j);
  tool_json_obj_end(j);
  tool_json_key(j, "d");
  tool_json_arr_begin(j);
  tool_json_arr_end(j);
  tool_json_kv_str(j, "e", "x\"y");
  tool_json_kv_bool(j, "f", 1);
  tool_json_kv_bool(j, "g", 0);
  tool_json_key(j, "h");
  tool_json_null(j);
  tool_json_kv_numf(j, "i", "%.3f", 2.0 / 3);
  tool_json_kv_i64(j, "j", INT64_MIN);
  tool_json_kv_u64(j, "k", UINT64_MAX);
  tool_json_key(j, "l");
  tool_json_strf(j, "%016llx", 0xabcULL);
  tool_json_obj_end(j);
}

static void test_json_styles(void **state) {
  doc d;

  (void)state;
  doc_begin(&d, TOOL_JSON_COMPACT);
  write_sample(&d.j);
  expect_doc(&d,
             "{\"a\":1,\"b\":[1,-2],\"c\":{},\"d\":[],\"e\":\"x\\\"y\","
             "\"f\":true,\"g\":false,\"h\":null,\"i\":0.667,"
             "\"j\":-9223372036854775808,\"k\":18446744073709551615,"
             "\"l\":\"0000000000000abc\"}\n",
             0);
  doc_begin(&d, TOOL_JSON_SPACED);
  write_sample(&d.j);
  expect_doc(&d,
             "{\"a\": 1, \"b\": [1, -2], \"c\": {}, \"d\": [], \"e\": "
             "\"x\\\"y\", \"f\": true, \"g\": false, \"h\": null, \"i\": "
             "0.667, \"j\": -9223372036854775808, \"k\": "
             "18446744073709551615, \"l\": \"0000000000000abc\"}\n",
             0);
  /* A scalar alone is a document too. */
  doc_begin(&d, TOOL_JSON_SPACED);
  tool_json_u64(&d.j, 7);
  expect_doc(&d, "7\n", 0);
}

static void test_json_ws(void **state) {
  doc d;

  (void)state;
  /* srd-sim's and srd-perf's arrays: one element per line. */
  doc_begin(&d, TOOL_JSON_SPACED);
  tool_json_arr_begin(&d.j);
  tool_json_ws(&d.j, "\n  ");
  tool_json_obj_begin(&d.j);
  tool_json_kv_u64(&d.j, "n", 1);
  tool_json_obj_end(&d.j);
  tool_json_ws(&d.j, "\n  ");
  tool_json_obj_begin(&d.j);
  tool_json_kv_u64(&d.j, "n", 2);
  tool_json_obj_end(&d.j);
  tool_json_ws(&d.j, "\n");
  tool_json_arr_end(&d.j);
  expect_doc(&d, "[\n  {\"n\": 1},\n  {\"n\": 2}\n]\n", 0);
  /* Only blanks. */
  doc_begin(&d, TOOL_JSON_COMPACT);
  tool_json_arr_begin(&d.j);
  tool_json_ws(&d.j, "x");
  tool_json_u64(&d.j, 1);
  tool_json_arr_end(&d.j);
  expect_doc(&d, "[1]\n", -EINVAL);
}

static void test_json_numbers(void **state) {
  doc d;
  char *big;

  (void)state;
  doc_begin(&d, TOOL_JSON_COMPACT);
  tool_json_arr_begin(&d.j);
  tool_json_numf(&d.j, "%.3f", 1.5);
  tool_json_numf(&d.j, "%g", 1e20);
  tool_json_numf(&d.j, "%g", 0.5);
  tool_json_numf(&d.j, "%.4f", -0.0);
  tool_json_numf(&d.j, "%e", 1.0);
  tool_json_numf(&d.j, "%.0f", 3.0);
  tool_json_numf(&d.j, "%u", 42u);
  tool_json_numf(&d.j, "%.3f", NAN);
  tool_json_numf(&d.j, "%g", -HUGE_VAL);
  tool_json_arr_end(&d.j);
  /* NaN and infinities are null, and no error: JSON has no word for
     them. */
  expect_doc(&d, "[1.500,1e+20,0.5,-0.0000,1.000000e+00,3,42,null,null]\n", 0);
  /* Formats that make no JSON number: null, and an error. */
  doc_begin(&d, TOOL_JSON_COMPACT);
  tool_json_arr_begin(&d.j);
  tool_json_numf(&d.j, "%x", 255u);
  tool_json_arr_end(&d.j);
  expect_doc(&d, "[null]\n", -EINVAL);
  doc_begin(&d, TOOL_JSON_COMPACT);
  tool_json_numf(&d.j, "%05.1f", 1.0); /* 001.0: leading zeros */
  expect_doc(&d, "null\n", -EINVAL);
  doc_begin(&d, TOOL_JSON_COMPACT);
  tool_json_numf(&d.j, "%s", "1 2");
  expect_doc(&d, "null\n", -EINVAL);
  /* The widest "%f" there is. */
  doc_begin(&d, TOOL_JSON_COMPACT);
  tool_json_numf(&d.j, "%f", 1.7976931348623157e308);
  assert_int_equal(doc_end(&d), 0);
  assert_true(d.len > 310);
  big = d.buf;
  free(big);
}

/* ------------------------------------------------------------------------ */
/* Misuse: always valid JSON, always reported                               */

static void test_json_misuse(void **state) {
  doc d;
  int i;

  (void)state;
  /* A value where a key is due: skipped. */
  doc_begin(&d, TOOL_JSON_COMPACT);
  tool_json_obj_begin(&d.j);
  tool_json_u64(&d.j, 1);
  tool_json_kv_u64(&d.j, "a", 2);
  tool_json_obj_end(&d.j);
  expect_doc(&d, "{\"a\":2}\n", -EINVAL);
  /* A key (or a pair) in an array: skipped, value and all. */
  doc_begin(&d, TOOL_JSON_COMPACT);
  tool_json_arr_begin(&d.j);
  tool_json_key(&d.j, "k");
  tool_json_kv_u64(&d.j, "k", 5);
  tool_json_u64(&d.j, 1);
  tool_json_arr_end(&d.j);
  expect_doc(&d, "[1]\n", -EINVAL);
  /* Two keys in a row: the second is skipped. */
  doc_begin(&d, TOOL_JSON_COMPACT);
  tool_json_obj_begin(&d.j);
  tool_json_key(&d.j, "a");
  tool_json_key(&d.j, "b");
  tool_json_u64(&d.j, 1);
  tool_json_obj_end(&d.j);
  expect_doc(&d, "{\"a\":1}\n", -EINVAL);
  /* The wrong closing bracket, and one with nothing open. */
  doc_begin(&d, TOOL_JSON_COMPACT);
  tool_json_arr_end(&d.j);
  tool_json_obj_begin(&d.j);
  tool_json_arr_end(&d.j);
  tool_json_obj_end(&d.j);
  tool_json_obj_end(&d.j);
  expect_doc(&d, "{}\n", -EINVAL);
  /* A second document. */
  doc_begin(&d, TOOL_JSON_COMPACT);
  tool_json_u64(&d.j, 1);
  tool_json_u64(&d.j, 2);
  tool_json_obj_begin(&d.j);
  expect_doc(&d, "1\n", -EINVAL);
  /* Left open, a key without its value: finish closes them. */
  doc_begin(&d, TOOL_JSON_SPACED);
  tool_json_obj_begin(&d.j);
  tool_json_key(&d.j, "a");
  tool_json_arr_begin(&d.j);
  tool_json_obj_begin(&d.j);
  tool_json_key(&d.j, "b");
  expect_doc(&d, "{\"a\": [{\"b\": null}]}\n", -EINVAL);
  /* Nothing written at all. */
  doc_begin(&d, TOOL_JSON_COMPACT);
  expect_doc(&d, "null\n", -EINVAL);
  /* Deeper than TOOL_JSON_MAX_DEPTH. */
  doc_begin(&d, TOOL_JSON_COMPACT);
  for (i = 0; i < TOOL_JSON_MAX_DEPTH + 5; ++i) {
    tool_json_arr_begin(&d.j);
  }
  tool_json_u64(&d.j, 1);
  assert_int_equal(doc_end(&d), -EINVAL);
  assert_int_equal(d.len, 2 * TOOL_JSON_MAX_DEPTH + 2);
  free(d.buf);
  /* A string longer than tool_json_strf's 255 bytes is cut there. */
  doc_begin(&d, TOOL_JSON_COMPACT);
  tool_json_strf(&d.j, "%300s", "x");
  assert_int_equal(doc_end(&d), -EINVAL);
  assert_int_equal(d.len, 255 + 3);
  free(d.buf);
}

static void test_json_write_error(void **state) {
  FILE *f = fopen("/dev/full", "w");
  tool_json j;
  int i;

  (void)state;
  if (f == NULL) {
    skip();
  }
  tool_json_init(&j, f, TOOL_JSON_COMPACT);
  tool_json_arr_begin(&j);
  for (i = 0; i < 10000; ++i) {
    tool_json_u64(&j, (uint64_t)i);
  }
  tool_json_arr_end(&j);
  assert_int_equal(tool_json_finish(&j), -EIO);
  fclose(f);
}

/* Random call sequences, right and wrong, in both styles: the text is
   always one valid JSON document. */
static void test_json_random_calls_stay_valid(void **state) {
  uint64_t seed = tu_seed("json_random_calls_stay_valid");
  int iter;

  (void)state;
  for (iter = 0; iter < 3000; ++iter) {
    int calls = (int)(tu_rand(&seed) % 60), k;
    char s[8];
    doc d;
    doc_begin(&d, (int)(tu_rand(&seed) % 2));
    for (k = 0; k < calls; ++k) {
      uint64_t r = tu_rand(&seed);
      size_t n = (size_t)(r >> 8) % sizeof(s), b;
      for (b = 0; b < n; ++b) {
        s[b] = (char)(tu_rand(&seed) & 0xff);
      }
      switch (r % 12) {
      case 0:
        tool_json_obj_begin(&d.j);
        break;
      case 1:
        tool_json_obj_end(&d.j);
        break;
      case 2:
        tool_json_arr_begin(&d.j);
        break;
      case 3:
        tool_json_arr_end(&d.j);
        break;
      case 4:
        tool_json_strn(&d.j, s, n);
        break;
      case 5:
        s[n] = '\0';
        tool_json_key(&d.j, s);
        break;
      case 6:
        tool_json_u64(&d.j, r);
        break;
      case 7:
        tool_json_numf(&d.j, "%.3f", (double)(int64_t)r / 1e9);
        break;
      case 8:
        tool_json_numf(&d.j, "%g", r % 3 ? NAN : 1.5);
        break;
      case 9:
        tool_json_ws(&d.j, "\n ");
        break;
      case 10:
        tool_json_bool(&d.j, (int)(r & 1));
        break;
      default:
        tool_json_kv_numf(&d.j, "k", "%d", (int)(r & 0xff));
        break;
      }
    }
    (void)doc_end(&d);
    free(d.buf);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_every_byte_alone),
      cmocka_unit_test(test_json_escapes_exact),
      cmocka_unit_test(test_json_all_bytes_together),
      cmocka_unit_test(test_json_utf8_passthrough),
      cmocka_unit_test(test_json_utf8_malformed),
      cmocka_unit_test(test_json_styles),
      cmocka_unit_test(test_json_ws),
      cmocka_unit_test(test_json_numbers),
      cmocka_unit_test(test_json_misuse),
      cmocka_unit_test(test_json_write_error),
      cmocka_unit_test(test_json_random_calls_stay_valid),
  };
  return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
