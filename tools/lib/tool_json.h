/*
 * tool_json.h: a small JSON writer for the tools' --json outputs.
 *
 * It writes one document (RFC 8259) to a FILE, keeps track of nesting and
 * of the commas between members, escapes every string, and prints each
 * number with the printf format the caller gives, so that a tool keeps
 * the exact digits it always printed ("%.3f", "%g").  Whatever the calls,
 * the text it writes is valid JSON:
 *
 *   - strings: '"' and '\\' are escaped, control characters (0x00-0x1f,
 *     and 0x7f) become \b \f \n \r \t or \u00XX, well-formed UTF-8 passes
 *     through as it is, and each byte of a malformed UTF-8 sequence
 *     (a stray continuation byte, an overlong form, a surrogate, a value
 *     above U+10FFFF, a truncated sequence) becomes \ufffd;
 *   - numbers: a format whose output is not a JSON number writes null
 *     instead: "nan" and "inf" silently (no JSON number says them), any
 *     other text (a format that is not a number's, "%x") as an error;
 *   - misuse (a value where a key is due, a key in an array, a closing
 *     bracket of the wrong kind or with nothing open, a second document,
 *     nesting deeper than TOOL_JSON_MAX_DEPTH) writes nothing and is
 *     recorded as an error; tool_json_finish closes what is still open
 *     (a key without its value gets null) and reports it.
 *
 * Two styles, both what the tools print today:
 *   TOOL_JSON_COMPACT   {"a":1,"b":[1,2]}
 *   TOOL_JSON_SPACED    {"a": 1, "b": [1, 2]}
 *
 * Usage:
 *   tool_json j;
 *   tool_json_init(&j, stdout, TOOL_JSON_COMPACT);
 *   tool_json_obj_begin(&j);
 *   tool_json_kv_u64(&j, "seed", 7);
 *   tool_json_kv_numf(&j, "goodput_gbps", "%.3f", g);
 *   tool_json_obj_end(&j);
 *   if (tool_json_finish(&j) != 0) ... (prints the final newline)
 *
 * The writer allocates nothing; it never closes |f|.
 */
#ifndef TOOL_JSON_H
#define TOOL_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* TOOL_JSON_MAX_DEPTH is the deepest nesting of objects and arrays. */
#define TOOL_JSON_MAX_DEPTH 32

/* Styles for tool_json_init. */
#define TOOL_JSON_COMPACT 0
#define TOOL_JSON_SPACED 1

/* tool_json is the writer's state; its fields are private. */
typedef struct tool_json {
  FILE *f;
  int style;
  int depth;                       /* open containers */
  char kind[TOOL_JSON_MAX_DEPTH];  /* '{' or '[' per level */
  char count[TOOL_JSON_MAX_DEPTH]; /* 0 before the level's first member */
  int after_key;                   /* a key was written, its value is due */
  int done;                        /* the top-level value is complete */
  const char *ws;                  /* tool_json_ws's pending blanks */
  int err;                         /* first error, 0 if none */
} tool_json;

/* tool_json_init starts a document written to |f| in |style|
   (TOOL_JSON_COMPACT or TOOL_JSON_SPACED). */
void tool_json_init(tool_json *j, FILE *f, int style);

/* tool_json_obj_begin opens an object; tool_json_obj_end closes it.
   tool_json_arr_begin opens an array; tool_json_arr_end closes it. */
void tool_json_obj_begin(tool_json *j);
void tool_json_obj_end(tool_json *j);
void tool_json_arr_begin(tool_json *j);
void tool_json_arr_end(tool_json *j);

/* tool_json_key writes the key |k| (escaped as strings are) of the next
   member of the open object. */
void tool_json_key(tool_json *j, const char *k);

/* tool_json_str writes the string |s| (NUL-terminated); tool_json_strn
   the |len| bytes at |s| (NULs included, as \u0000). */
void tool_json_str(tool_json *j, const char *s);
void tool_json_strn(tool_json *j, const char *s, size_t len);

/* tool_json_strf writes the string that printf's |fmt| makes (at most
   255 bytes; a longer one is cut there and recorded as an error). */
void tool_json_strf(tool_json *j, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* tool_json_u64 and tool_json_i64 write an integer. */
void tool_json_u64(tool_json *j, uint64_t v);
void tool_json_i64(tool_json *j, int64_t v);

/* tool_json_numf writes the number printf's |fmt| makes of the
   arguments ("%.3f", x); null (see above) when that is not a JSON
   number. */
void tool_json_numf(tool_json *j, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* tool_json_bool writes true or false (|v| nonzero or zero);
   tool_json_null writes null. */
void tool_json_bool(tool_json *j, int v);
void tool_json_null(tool_json *j);

/* The tool_json_kv_* functions write a key and its value in one call. */
void tool_json_kv_str(tool_json *j, const char *k, const char *s);
void tool_json_kv_u64(tool_json *j, const char *k, uint64_t v);
void tool_json_kv_i64(tool_json *j, const char *k, int64_t v);
void tool_json_kv_bool(tool_json *j, const char *k, int v);
void tool_json_kv_numf(tool_json *j, const char *k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* tool_json_ws sets the blanks written before the next member of the
   open container, or before its closing bracket, in place of the style's
   (after the comma, when there is one): "\n  " puts the next array
   element on a line of its own.  |ws| (kept by pointer until used) may
   hold only spaces, tabs and newlines; anything else is an error and is
   ignored. */
void tool_json_ws(tool_json *j, const char *ws);

/* tool_json_finish ends the document: it closes every container still
   open, writes null for a key that has no value (a document with no
   value at all becomes null), then a newline, and flushes |f|.  Returns
   0, -EINVAL if the calls misused the writer (the first misuse counts;
   the text is valid JSON all the same), or -EIO if writing to |f|
   failed. */
int tool_json_finish(tool_json *j);

#endif /* TOOL_JSON_H */
