/*
 * ctl.c: the wire format of srd-perf's messages (docs/transports.md, "The
 * control protocol").  Every message starts with a 4-byte magic, so a
 * peer that answers anything else is named as not being an srd-perf
 * server.  Integers are big-endian.
 *
 * A control message ("SRPC") is CTL_SIZE (256) bytes:
 *
 *   0  u32 magic "SRPC"       4  u32 version         8  u32 type (C_*)
 *   12 u32 test               16 u32 flags           20 u32 protocol
 *   24 u64 size               32 u64 count           40 u64 v[0..5]
 *   88 ERROR: text[40], NUL-terminated; other types: u64 v[6..10]
 *   128 u64 drops[16]
 *
 * The version field is the protocol (3), but HELLO and the ERROR that
 * refuses another protocol say 2 there, and the protocol at offset 20
 * (where version 2 wrote zero): a version 2 peer reads them as its own,
 * so that either end names the mismatch, whichever is the older
 * (ctl_decode).
 *
 * A data message ("SRPD") is the message size, at least MIN_SIZE bytes:
 * u32 magic, u32 the low 32 bits of its index, then (with --verify) a
 * pattern drawn from the index (64-bit words of a splitmix-like sequence,
 * in the sender's byte order) that the receiver checks byte for byte;
 * without it, the rest is whatever the sender's buffer held.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

#define MAGIC_CTL 0x53525043u  /* "SRPC" */
#define MAGIC_DATA 0x53525044u /* "SRPD" */
/* 2: control messages of 256 bytes; RESULT carries the server engine's
   drops by reason.  3: the direction (-R, --bidir) in START, v[6..10].
   HELLO_VERSION is what HELLO says in the version field, for good. */
#define PROTO_VERSION 3
#define HELLO_VERSION 2

/* proto is this end's protocol: PROTO_VERSION, or SRD_PERF_PROTO's (a
   test's stand-in for another release; ctl_init). */
static uint32_t proto = PROTO_VERSION;

void ctl_init(void) {
  const char *e = getenv("SRD_PERF_PROTO");

  if (e && *e) {
    proto = (uint32_t)strtoul(e, NULL, 10);
  }
}

uint32_t ctl_proto(void) {
  return proto;
}

/* ------------------------------------------------------------------------ */
/* Control messages                                                         */

static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) {
    p[i] = (uint8_t)(v >> (24 - 8 * i));
  }
}

static void put64(uint8_t *p, uint64_t v) {
  put32(p, (uint32_t)(v >> 32));
  put32(p + 4, (uint32_t)v);
}

static uint32_t get32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

static uint64_t get64(const uint8_t *p) {
  return (uint64_t)get32(p) << 32 | get32(p + 4);
}

void ctl_encode(uint8_t *b, const ctl *c) {
  int old_frame = c->type == C_HELLO || c->proto_error;

  memset(b, 0, CTL_SIZE);
  put32(b, MAGIC_CTL);
  put32(b + 4, old_frame ? HELLO_VERSION : proto);
  put32(b + 8, c->type);
  put32(b + 12, c->test);
  put32(b + 16, c->flags);
  /* a version 2 end writes zero here: a stand-in for one does too */
  put32(b + 20, proto == HELLO_VERSION ? 0 : proto);
  put64(b + 24, c->size);
  put64(b + 32, c->count);
  for (int i = 0; i < 6; ++i) {
    put64(b + 40 + 8 * i, c->v[i]);
  }
  if (c->type == C_ERROR) {
    memcpy(b + 88, c->text, sizeof(c->text));
    b[88 + sizeof(c->text) - 1] = 0;
  } else {
    for (int i = 6; i < 11; ++i) {
      put64(b + 88 + 8 * (i - 6), c->v[i]);
    }
  }
  for (int i = 0; i < 16; ++i) {
    put64(b + 128 + 8 * i, c->drops[i]);
  }
}

int ctl_decode(const uint8_t *b, size_t len, ctl *c) {
  uint32_t ver;

  if (len != CTL_SIZE || get32(b) != MAGIC_CTL) {
    return -1;
  }
  memset(c, 0, sizeof(*c));
  ver = get32(b + 4);
  /* A version 2 end leaves offset 20 zero; later ones say their
     protocol there. */
  c->proto = ver == HELLO_VERSION && get32(b + 20) ? get32(b + 20) : ver;
  c->type = get32(b + 8);
  c->test = get32(b + 12);
  c->flags = get32(b + 16);
  c->size = get64(b + 24);
  c->count = get64(b + 32);
  for (int i = 0; i < 6; ++i) {
    c->v[i] = get64(b + 40 + 8 * i);
  }
  if (c->type == C_ERROR) {
    memcpy(c->text, b + 88, sizeof(c->text));
    c->text[sizeof(c->text) - 1] = 0;
  } else {
    for (int i = 6; i < 11; ++i) {
      c->v[i] = get64(b + 88 + 8 * (i - 6));
    }
  }
  for (int i = 0; i < 16; ++i) {
    c->drops[i] = get64(b + 128 + 8 * i);
  }
  return c->proto == proto ? 0 : -2;
}

/* ------------------------------------------------------------------------ */
/* Data messages: magic, index, then (with --verify) a pattern of both.    */

void data_fill(uint8_t *b, size_t len, uint64_t index, int pattern) {
  uint64_t x = 0x243F6A8885A308D3ull ^ (index * 0xD6E8FEB86659FD93ull), w;
  size_t i = 8;

  put32(b, MAGIC_DATA);
  put32(b + 4, (uint32_t)index);
  if (!pattern) {
    return;
  }
  for (; i + 8 <= len; i += 8) {
    x += 0x9E3779B97F4A7C15ull;
    w = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull;
    memcpy(b + i, &w, 8);
  }
  if (i < len) {
    x += 0x9E3779B97F4A7C15ull;
    w = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull;
    memcpy(b + i, &w, len - i);
  }
}

int data_peek(const uint8_t *b, size_t len, uint32_t *index) {
  if (len < 8 || get32(b) != MAGIC_DATA) {
    return -1;
  }
  *index = get32(b + 4);
  return 0;
}

int data_check(const uint8_t *b, size_t len, uint32_t *index) {
  uint64_t x, w;
  size_t i = 8;

  if (data_peek(b, len, index) != 0) {
    return -1;
  }
  x = 0x243F6A8885A308D3ull ^ ((uint64_t)*index * 0xD6E8FEB86659FD93ull);
  for (; i + 8 <= len; i += 8) {
    x += 0x9E3779B97F4A7C15ull;
    w = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull;
    if (memcmp(b + i, &w, 8) != 0) {
      return -2;
    }
  }
  if (i < len) {
    x += 0x9E3779B97F4A7C15ull;
    w = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull;
    if (memcmp(b + i, &w, len - i) != 0) {
      return -2;
    }
  }
  return 0;
}

int seen_mark(uint8_t **seen, uint64_t *bits, uint32_t idx) {
  if (idx >= *bits) {
    uint64_t nb = *bits ? *bits : 4096;
    uint8_t *n;
    while (nb <= idx) {
      nb *= 2;
    }
    n = realloc(*seen, nb / 8);
    if (n == NULL) {
      tool_die("out of memory");
    }
    memset(n + *bits / 8, 0, (nb - *bits) / 8);
    *seen = n;
    *bits = nb;
  }
  if ((*seen)[idx / 8] & (1u << (idx % 8))) {
    return 1;
  }
  (*seen)[idx / 8] |= (uint8_t)(1u << (idx % 8));
  return 0;
}
