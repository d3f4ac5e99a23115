/*
 * tool_hist.c: nearest-rank percentiles over sorted arrays and over a
 * log-linear histogram (tool_hist.h).  The histogram's layout is
 * HdrHistogram's (Gil Tene): for a value whose highest set bit is m, its
 * top s + 1 bits choose the bucket, so that every power-of-two range has
 * the same 2^s buckets and the relative width of a bucket stays below
 * 2^-s.
 */
#include "tool_hist.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t tool_pct_index(size_t n, double p) {
  double x;
  size_t k;
  int i;

  if (n <= 1 || !(p > 0)) {
    return 0;
  }
  if (p >= 1) {
    return n - 1;
  }
  x = p * (double)n;
  /* 0.07 * 100 is 7.000000000000001 in binary: lowered by a few units
     in the last place, it is 7 again, and the rank the decimal product
     names. */
  for (i = 0; i < 4; ++i) {
    x = nextafter(x, 0.0);
  }
  k = (size_t)ceil(x);
  if (k > 0) {
    --k;
  }
  return k < n ? k : n - 1;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* NaNs compare above everything, so that they sort last. */
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  if (isnan(x) || isnan(y)) {
    return isnan(x) - isnan(y);
  }
  return x < y ? -1 : x > y;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  if (isnan(x) || isnan(y)) {
    return isnan(x) - isnan(y);
  }
  return x < y ? -1 : x > y;
}

void tool_sort_u64(uint64_t *v, size_t n) {
  qsort(v, n, sizeof(*v), cmp_u64);
}

void tool_sort_double(double *v, size_t n) {
  qsort(v, n, sizeof(*v), cmp_double);
}

void tool_sort_float(float *v, size_t n) {
  qsort(v, n, sizeof(*v), cmp_float);
}

uint64_t tool_pct_u64(const uint64_t *v, size_t n, double p) {
  return n ? v[tool_pct_index(n, p)] : 0;
}

double tool_pct_double(const double *v, size_t n, double p) {
  return n ? v[tool_pct_index(n, p)] : 0;
}

double tool_pct_float(const float *v, size_t n, double p) {
  return n ? (double)v[tool_pct_index(n, p)] : 0;
}

/* ------------------------------------------------------------------------ */
/* The histogram                                                            */

static unsigned msb(uint64_t v) {
  return 63u - (unsigned)__builtin_clzll(v);
}

/* bucket_of returns the index of |v|'s bucket: |v| itself below
   2^(s+1), else (m - s + 1) * 2^s plus the s bits below the top one. */
static size_t bucket_of(const tool_hist *h, uint64_t v) {
  unsigned s = h->sub_bits, m;

  if (v >> (s + 1) == 0) {
    return (size_t)v;
  }
  m = msb(v);
  return ((size_t)(m - s + 1) << s) + (size_t)((v >> (m - s)) - (1ull << s));
}

/* bucket_max returns the largest value of bucket |i|. */
static uint64_t bucket_max(const tool_hist *h, size_t i) {
  unsigned s = h->sub_bits, m;
  uint64_t top, lo;

  if (i < ((size_t)2 << s)) {
    return (uint64_t)i;
  }
  m = (unsigned)(i >> s) + s - 1;
  top = (1ull << s) + (uint64_t)(i & (((size_t)1 << s) - 1));
  lo = top << (m - s);
  return lo + ((1ull << (m - s)) - 1);
}

int tool_hist_init(tool_hist *h, unsigned sub_bits) {
  memset(h, 0, sizeof(*h));
  if (sub_bits < 1 || sub_bits > TOOL_HIST_SUB_BITS_MAX) {
    return -EINVAL;
  }
  h->sub_bits = sub_bits;
  h->n_buckets = (size_t)(65 - sub_bits) << sub_bits;
  h->counts = calloc(h->n_buckets, sizeof(*h->counts));
  if (h->counts == NULL) {
    memset(h, 0, sizeof(*h));
    return -ENOMEM;
  }
  h->min = UINT64_MAX;
  return 0;
}

void tool_hist_fini(tool_hist *h) {
  free(h->counts);
  memset(h, 0, sizeof(*h));
}

void tool_hist_reset(tool_hist *h) {
  memset(h->counts, 0, h->n_buckets * sizeof(*h->counts));
  h->total = 0;
  h->min = UINT64_MAX;
  h->max = 0;
  h->sum = 0;
}

void tool_hist_record_n(tool_hist *h, uint64_t v, uint64_t count) {
  if (count == 0) {
    return;
  }
  h->counts[bucket_of(h, v)] += count;
  h->total += count;
  h->sum += (double)v * (double)count;
  if (v < h->min) {
    h->min = v;
  }
  if (v > h->max) {
    h->max = v;
  }
}

void tool_hist_record(tool_hist *h, uint64_t v) {
  tool_hist_record_n(h, v, 1);
}

int tool_hist_merge(tool_hist *dst, const tool_hist *src) {
  size_t i;

  if (dst->sub_bits != src->sub_bits) {
    return -EINVAL;
  }
  if (src->total == 0) {
    return 0;
  }
  for (i = 0; i < dst->n_buckets; ++i) {
    dst->counts[i] += src->counts[i];
  }
  dst->total += src->total;
  dst->sum += src->sum;
  if (src->min < dst->min) {
    dst->min = src->min;
  }
  if (src->max > dst->max) {
    dst->max = src->max;
  }
  return 0;
}

uint64_t tool_hist_pct(const tool_hist *h, double p) {
  uint64_t rank, seen = 0, hi;
  size_t i;

  if (h->total == 0) {
    return 0;
  }
  rank = (uint64_t)tool_pct_index((size_t)h->total, p);
  for (i = 0; i < h->n_buckets; ++i) {
    seen += h->counts[i];
    if (seen > rank) {
      break;
    }
  }
  hi = bucket_max(h, i);
  return hi < h->max ? hi : h->max;
}

double tool_hist_mean(const tool_hist *h) {
  return h->total ? h->sum / (double)h->total : 0;
}
