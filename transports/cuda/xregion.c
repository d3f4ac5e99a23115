/*
 * xregion.c: the sorted region table (xregion.h).
 */
#include "xregion.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* last_at_or_below returns the index of the last region with lo <= a,
   or -1. */
static long last_at_or_below(const xregions *rs, uintptr_t a) {
  size_t lo = 0, hi = rs->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (rs->r[mid].lo <= a) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return (long)lo - 1;
}

int xregions_add(xregions *rs, void *buf, size_t len, int owned, void *handle) {
  uintptr_t a = (uintptr_t)buf;
  long i = last_at_or_below(rs, a);
  size_t at = (size_t)(i + 1);

  if (len == 0) {
    return -EINVAL;
  }
  if ((i >= 0 && rs->r[i].hi > a) || (at < rs->n && rs->r[at].lo < a + len)) {
    return -EEXIST;
  }
  if (rs->n == rs->cap) {
    size_t nc = rs->cap ? rs->cap * 2 : 16;
    xregion *n = realloc(rs->r, nc * sizeof(*n));
    if (n == NULL) {
      return -ENOMEM;
    }
    rs->r = n;
    rs->cap = nc;
  }
  memmove(&rs->r[at + 1], &rs->r[at], (rs->n - at) * sizeof(xregion));
  rs->r[at].lo = a;
  rs->r[at].hi = a + len;
  rs->r[at].owned = owned;
  rs->r[at].handle = handle;
  ++rs->n;
  return 0;
}

int xregions_del(xregions *rs, void *buf, xregion *out) {
  uintptr_t a = (uintptr_t)buf;
  long i = last_at_or_below(rs, a);

  if (i < 0 || rs->r[i].lo != a) {
    return -ENOENT;
  }
  if (out) {
    *out = rs->r[i];
  }
  memmove(&rs->r[i], &rs->r[i + 1], (rs->n - (size_t)i - 1) * sizeof(xregion));
  --rs->n;
  return 0;
}

const xregion *xregions_find(const xregions *rs, const void *buf, size_t len) {
  uintptr_t a = (uintptr_t)buf;
  long i = last_at_or_below(rs, a);

  if (i < 0 || a >= rs->r[i].hi || len > rs->r[i].hi - a) {
    return NULL;
  }
  return &rs->r[i];
}

void xregions_free(xregions *rs) {
  free(rs->r);
  memset(rs, 0, sizeof(*rs));
}
