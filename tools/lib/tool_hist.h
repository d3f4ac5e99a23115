/*
 * tool_hist.h: percentiles, one definition for every tool.
 *
 * The p-th percentile of n samples is their NEAREST RANK: the smallest
 * sample x such that at least p * n of the samples are <= x.  Over the
 * samples sorted ascending, v[0] <= ... <= v[n-1], that is v[k] with
 *
 *     k = ceil(p * n) - 1,   clamped to [0, n - 1],
 *
 * so that p = 0.5 of {1, 2, 3, 4} is 2, p = 0.99 of 100 samples is the
 * 99th smallest, p = 1 is the largest and any p of one sample is that
 * sample; every result is one of the samples (never an interpolation).
 * p * n is taken as a decimal product: 0.07 * 100 is 7, although in
 * binary it comes out a hair above (tool_pct_index says how).
 *
 * Two ways to get there:
 *   - tool_pct_*: an array of every sample, sorted with tool_sort_*;
 *     exact, and memory grows with the samples;
 *   - tool_hist: a log-linear histogram (HdrHistogram's layout) of
 *     bounded memory for millions of samples, whose percentiles are the
 *     same definition to a documented relative error.
 */
#ifndef TOOL_HIST_H
#define TOOL_HIST_H

#include <stddef.h>
#include <stdint.h>

/* tool_pct_index returns the index k of the p-th percentile of |n|
   sorted samples, ceil(p * n) - 1 clamped to [0, n - 1]; |p| is a
   fraction (0.99, not 99) and is clamped to [0, 1] (NaN counts as 0).
   Before the ceiling, p * n is lowered by 4 units in its last place, so
   that a product that is an integer in decimal (0.07 * 100, 0.999 *
   1000) is not pushed to the next rank by binary rounding; a product
   that is not an integer is never that close to one.  |n| must be at
   least 1. */
size_t tool_pct_index(size_t n, double p);

/* tool_sort_u64, tool_sort_double and tool_sort_float sort |v| (|n|
   values) ascending, in place.  NaNs (double, float) sort last. */
void tool_sort_u64(uint64_t *v, size_t n);
void tool_sort_double(double *v, size_t n);
void tool_sort_float(float *v, size_t n);

/* tool_pct_u64, tool_pct_double and tool_pct_float return the p-th
   percentile of |v|, |n| samples already sorted ascending: v[k] with k
   from tool_pct_index.  For |n| = 0 they return 0. */
uint64_t tool_pct_u64(const uint64_t *v, size_t n, double p);
double tool_pct_double(const double *v, size_t n, double p);
double tool_pct_float(const float *v, size_t n, double p);

/* tool_hist counts unsigned 64-bit samples (nanoseconds, bytes) in
   log-linear buckets.  With |sub_bits| = s, values below 2^(s+1) have a
   bucket each (exact), and each range [2^m, 2^(m+1)) above them is split
   into 2^s buckets of equal width 2^(m-s).  A bucket's width is at most
   2^-s of the values in it, so a percentile read from it is off by less
   than that fraction (see tool_hist_pct).  Memory: (65 - s) * 2^s
   counters of 8 bytes, fixed at tool_hist_init: s = 7 is 58 KiB and
   within 0.79%, s = 10 is 440 KiB and within 0.1%. */
typedef struct tool_hist {
  unsigned sub_bits; /* s above */
  size_t n_buckets;  /* (65 - s) * 2^s */
  uint64_t *counts;  /* n_buckets counters */
  uint64_t total;    /* samples recorded */
  uint64_t min, max; /* smallest and largest sample, exact */
  double sum;        /* sum of the samples, for the mean */
} tool_hist;

/* TOOL_HIST_SUB_BITS_MAX is the largest |sub_bits| (0.0061% error, 6.4
   MiB of counters). */
#define TOOL_HIST_SUB_BITS_MAX 14

/* tool_hist_init prepares |h| (caller's storage) for samples at a
   relative precision of 2^-|sub_bits|, 1 <= |sub_bits| <=
   TOOL_HIST_SUB_BITS_MAX, and allocates its counters with calloc(3).
   Returns 0, -EINVAL for a |sub_bits| out of range, or -ENOMEM (then
   |h| holds nothing to release). */
int tool_hist_init(tool_hist *h, unsigned sub_bits);

/* tool_hist_fini releases |h|'s counters (an |h| zeroed or already
   finished is fine). */
void tool_hist_fini(tool_hist *h);

/* tool_hist_reset forgets every sample, keeping the counters. */
void tool_hist_reset(tool_hist *h);

/* tool_hist_record counts sample |v| once. */
void tool_hist_record(tool_hist *h, uint64_t v);

/* tool_hist_record_n counts sample |v| |count| times. */
void tool_hist_record_n(tool_hist *h, uint64_t v, uint64_t count);

/* tool_hist_merge adds every sample of |src| to |dst| (per-thread
   histograms into one).  Returns 0, or -EINVAL if their sub_bits
   differ (nothing is added). */
int tool_hist_merge(tool_hist *dst, const tool_hist *src);

/* tool_hist_pct returns the p-th percentile of the samples (the
   definition above, with the rank from tool_pct_index) as the largest
   value of the bucket that holds it, clamped to the largest sample: a
   result r with x <= r < x + x * 2^-sub_bits for the exact percentile x
   (r = x when x < 2^(sub_bits+1)), never below the exact one, and exact
   for p = 1 (the largest sample) and for one sample.  Returns 0 when no
   sample was recorded. */
uint64_t tool_hist_pct(const tool_hist *h, double p);

/* tool_hist_mean returns the mean of the samples (0 for none). */
double tool_hist_mean(const tool_hist *h);

#endif /* TOOL_HIST_H */
