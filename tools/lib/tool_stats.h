/*
 * tool_stats.h: the mean of repeated runs and its confidence interval,
 * one definition for every tool (srd-sim sweep and merge).
 *
 * Of n values x_1..x_n (the same figure over n seeds):
 *
 *     mean  = sum(x) / n
 *     sd    = sqrt(sum((x - mean)^2) / (n - 1))      (the sample's, n >= 2)
 *     ci95  = t(0.975, n - 1) * sd / sqrt(n)
 *
 * so that [mean - ci95, mean + ci95] is the two-sided 95% confidence
 * interval of the mean under Student's t with n - 1 degrees of freedom
 * (the seeds are independent runs; their figures need not be normal for
 * n of 20 or more, the central limit theorem's usual bound, and the
 * interval is only as good as that assumption below it).  With one
 * value sd and ci95 are NaN: one seed says nothing about the spread.
 *
 * The quantile t(0.975, df) is a table for df 1 to 30 (to 9 digits, as
 * every statistics text prints it) and Cornish and Fisher's expansion
 * about the normal quantile 1.959964 above it (within 1e-6 of the exact
 * value from df 30 on).  Written here rather than linked from GSL, whose
 * GPL the project's tools do not take on for one function.
 */
#ifndef TOOL_STATS_H
#define TOOL_STATS_H

#include <stddef.h>

/* tool_stats is the summary of one figure over its values. */
typedef struct tool_stats {
  /* n counts the values that were numbers (NaNs are skipped). */
  size_t n;
  double mean, sd, ci95, min, max;
} tool_stats;

/* tool_t975 returns t(0.975, df), the 97.5th percentile of Student's t
   with |df| degrees of freedom (df >= 1; 0 gives NaN). */
double tool_t975(size_t df);

/* tool_stats_of summarises |n| values, v[0], v[stride], v[2 * stride]
...  (|stride| >= 1: a column of a row-major table), skipping NaNs: with
   none left every field but n is NaN, with one sd and ci95 are. */
tool_stats tool_stats_of(const double *v, size_t n, size_t stride);

#endif /* TOOL_STATS_H */
